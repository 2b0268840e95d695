"""Fixture variants for Chapter 13: edits a reader might make."""

VARIANTS = {
    "other-model": """# Fixture: every number on this page is computed from these values.
seed = 7  # torch seed of the tiny reference models (transformers draws their weights)
tiny = {"vocab": 64, "width": 32, "layers": 2, "heads": 4, "kv_heads": 2, "hidden": 48}
mistral_window = 4  # Mistral's sliding window, shorter than the generated text
qwen_head_dim = 16  # Qwen3's head width, not D / H = 8
mixtral_experts = (4, 2)  # Mixtral's experts and top-k
prompts = ((9, 8, 7, 6, 5, 4, 3), (21, 43, 13, 34, 55, 8, 1, 62), (30, 31))
greedy_tokens = 24  # tokens generated greedily by both implementations
published = {
    "GPT-2 small": ("https://huggingface.co/openai-community/gpt2/blob/main/config.json",
        124_439_808, {"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12,
        "n_head": 12, "n_positions": 1024}),
    "Llama 3.1 8B": ("https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json",
        8_030_261_248, {"model_type": "llama", "vocab_size": 128256, "hidden_size": 4096,
        "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "tie_word_embeddings": False, "rope_theta": 500000.0,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}),
    "Mistral 7B": ("https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json",
        7_241_732_096, {"model_type": "mistral", "vocab_size": 32000, "hidden_size": 4096,
        "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "sliding_window": 4096, "tie_word_embeddings": False}),
    "Qwen3-0.6B": ("https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json",
        0.6e9, {"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 1024,
        "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
        "num_key_value_heads": 8, "head_dim": 128, "tie_word_embeddings": True}),
    "Mixtral 8x22B": ("https://huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json",
        141e9, {"model_type": "mixtral", "vocab_size": 32768, "hidden_size": 6144,
        "intermediate_size": 16384, "num_hidden_layers": 56, "num_attention_heads": 48,
        "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2,
        "tie_word_embeddings": False}),
    "SmolLM2-135M": ("https://huggingface.co/HuggingFaceTB/SmolLM2-135M/blob/main/config.json",
        134_515_008, {"model_type": "llama", "vocab_size": 49152, "hidden_size": 576,
        "intermediate_size": 1536, "num_hidden_layers": 30, "num_attention_heads": 9,
        "num_key_value_heads": 3, "tie_word_embeddings": True}),
}
mixtral_active_published = 39e9  # https://mistral.ai/news/mixtral-8x22b
context_tokens = 8192  # the context the memory and FLOP columns are computed at
""",
}
MUST_CHANGE = [
    "mixtral_active",
    "active_fraction",
    "greedy_tokens",
]
