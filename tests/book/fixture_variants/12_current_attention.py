"""Fixture variants for Chapter 12: edits a reader might make (sizes, a config, the window)."""

VARIANTS = {
    "fewer-kv-heads": """# Fixture: every number on this page is computed from these values.
seed = 5  # SplitMix64 seed: every layer's weights and every random input
# config.json fields as published: layers, heads, key/value heads, width D, head width d_h,
# FFN width, vocabulary, context (max_position_embeddings), dtype, tied embeddings
published = {
    "Llama 2 7B": dict(layers=32, heads=32, kv_heads=32, width=4096, head_width=128,
                       ffn=11008, vocab=32000, context=4096, dtype="float16", tied=False),
    "Llama 3 8B": dict(layers=32, heads=32, kv_heads=4, width=4096, head_width=128,
                       ffn=14336, vocab=128256, context=8192, dtype="bfloat16", tied=False),
    "Mistral 7B": dict(layers=32, heads=32, kv_heads=8, width=4096, head_width=128,
                       ffn=14336, vocab=32000, context=32768, dtype="bfloat16", tied=False,
                       window=2048),
    "Qwen3 8B": dict(layers=36, heads=32, kv_heads=8, width=4096, head_width=128,
                     ffn=12288, vocab=151936, context=40960, dtype="bfloat16", tied=False,
                     qk_norm=True),
    "GPT-2": dict(layers=12, heads=12, kv_heads=12, width=768, head_width=64, ffn=3072,
                  vocab=50257, context=1024, dtype="float32", tied=True, family="gpt2"),
}
deepseek_v2 = dict(layers=60, heads=128, head_width=128, latent_width=512, rope_width=64,
                   dtype="bfloat16")  # DeepSeek-V2's config.json: kv_lora_rank, qk_rope_head_dim
serving = (8, 8192)  # (sequences, tokens each) served at once in the memory comparison
gqa_sizes = (12, 6, 3, 4)  # (D, H, G, T) of the step-by-step grouped-query example
window, window_depth, window_tokens = 4, 3, 12  # w, the layers stacked, the positions
rolling_sizes = (20, 16, 2, 4, 2, 32)  # (V, D, layers, H, G, FFN width) of the rolling-cache demo
rolling_window = 4  # its window w
rolling_capacities = (16, 64, 256, 1024)  # positions each cache is built to hold
rolling_steps = 20  # decoding steps whose cached logits are compared with the uncached decoder
qk_sizes = (12, 3, 5)  # (D, H, T) of the QK-norm layer
qk_scales = (1.0, 10.0, 100.0)  # factors applied to W_Q and W_K
ablation_runs = ("ablation-g4", "ablation-g2", "ablation-g1")  # stored runs in book/runs/
live_sizes = (32, 2, 4, 64)  # (D, layers, H, FFN width) of the live short ablation
live_kv_heads = (4, 1)  # the G values trained live
live_steps, live_batch, live_context = 12, 8, 32  # its budget, the same for every G
live_validation = 1024  # validation characters the live runs are scored on
""",
    "other-sizes": """# Fixture: every number on this page is computed from these values.
seed = 99  # SplitMix64 seed: every layer's weights and every random input
# config.json fields as published: layers, heads, key/value heads, width D, head width d_h,
# FFN width, vocabulary, context (max_position_embeddings), dtype, tied embeddings
published = {
    "Llama 2 7B": dict(layers=32, heads=32, kv_heads=32, width=4096, head_width=128,
                       ffn=11008, vocab=32000, context=4096, dtype="float16", tied=False),
    "Llama 3 8B": dict(layers=32, heads=32, kv_heads=8, width=4096, head_width=128,
                       ffn=14336, vocab=128256, context=8192, dtype="bfloat16", tied=False),
    "Mistral 7B": dict(layers=32, heads=32, kv_heads=8, width=4096, head_width=128,
                       ffn=14336, vocab=32000, context=32768, dtype="bfloat16", tied=False,
                       window=4096),
    "Qwen3 8B": dict(layers=36, heads=32, kv_heads=8, width=4096, head_width=128,
                     ffn=12288, vocab=151936, context=40960, dtype="bfloat16", tied=False,
                     qk_norm=True),
    "GPT-2": dict(layers=12, heads=12, kv_heads=12, width=768, head_width=64, ffn=3072,
                  vocab=50257, context=1024, dtype="float32", tied=True, family="gpt2"),
}
deepseek_v2 = dict(layers=60, heads=128, head_width=128, latent_width=512, rope_width=64,
                   dtype="bfloat16")  # DeepSeek-V2's config.json: kv_lora_rank, qk_rope_head_dim
serving = (48, 2048)  # (sequences, tokens each) served at once in the memory comparison
gqa_sizes = (16, 8, 2, 5)  # (D, H, G, T) of the step-by-step grouped-query example
window, window_depth, window_tokens = 2, 5, 10  # w, the layers stacked, the positions
rolling_sizes = (24, 24, 3, 6, 3, 32)  # (V, D, layers, H, G, FFN width) of the rolling-cache demo
rolling_window = 6  # its window w
rolling_capacities = (32, 512)  # positions each cache is built to hold
rolling_steps = 30  # decoding steps whose cached logits are compared with the uncached decoder
qk_sizes = (32, 4, 4)  # (D, H, T) of the QK-norm layer
qk_scales = (0.5, 2.0, 10.0, 50.0)  # factors applied to W_Q and W_K
ablation_runs = ("ablation-g4", "ablation-g2", "ablation-g1")  # stored runs in book/runs/
live_sizes = (32, 2, 4, 64)  # (D, layers, H, FFN width) of the live short ablation
live_kv_heads = (4, 2, 1)  # the G values trained live
live_steps, live_batch, live_context = 10, 4, 24  # its budget, the same for every G
live_validation = 512  # validation characters the live runs are scored on
""",
}
MUST_CHANGE = [
    "serve_l2",
    "gqa_weights",
    "qk_plain_last",
    "window_tokens",
    "roll_held",
    "live_steps",
]
CLAIM_FLIPS = {
    "fewer-kv-heads": [],
    "other-sizes": [],
}
