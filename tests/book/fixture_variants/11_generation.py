"""Fixture variants for Chapter 11: edits a reader might make."""

VARIANTS = {
    "other-sizes": """# Fixture: every number on this page is computed from these values.
seed = 5  # SplitMix64 seed: the demo decoder's weights and every sampled token
toy_logits = (1.0, 0.8, 0.2, -1.0, -2.0)  # the scores of the sampling examples
toy_labels = ("cat", "dog", "cow", "owl", "eel")  # the tokens those scores belong to
temperatures = (0.25, 1.0, 4.0)  # the τ drawn as bars in the temperature figure
sweep_range = (0.1, 10.0)  # the τ range of the entropy curve (log-spaced)
top_k, top_p = 2, 0.9  # the two truncation rules, compared on the same scores
demo_sizes = (24, 12, 3, 3, 24)  # (V, D, layers, heads, FFN width) of the cache demo decoder
demo_prompts = ((1, 2), (3, 4, 5, 6), (7,))  # token IDs, prompts of different lengths
demo_steps = 2  # decoding steps printed one by one
check_steps = 20  # steps over which cached and uncached logits are compared
work_positions = 128  # the work per token is counted up to this position
run_name = "book-prose"  # the stored Chapter 10 run the samples come from (book/runs/)
sample_prompt = "A model "  # the prompt of those samples
sample_temperatures = (0.8, 1.2)  # sampling temperatures for the stored model
sample_tokens = 60  # new characters per sample
end_text = " "  # the character treated as the end token in the stopping example
stop_prompts = ("A model ", "The loss ")  # the prompts of that example
penalties, penalty_window = (1.0, 1.3), 24  # repetition penalties θ, over the last characters
gpt2_small = (24, 1024, 1024)  # (layers, positions, width): GPT-2 medium this time
serving_batch = 8  # rows served at once in the memory comparison
""",
    "same-sizes": """# Fixture: every number on this page is computed from these values.
seed = 3  # SplitMix64 seed: the demo decoder's weights and every sampled token
toy_logits = (1.5, 1.2, 0.1, 0.0, -0.7, -2.5)  # the scores of the sampling examples
toy_labels = ("the", "a", "one", "this", "that", "no")  # the tokens those scores belong to
temperatures = (0.5, 1.0, 2.0)  # the τ drawn as bars in the temperature figure
sweep_range = (0.05, 20.0)  # the τ range of the entropy curve (log-spaced)
top_k, top_p = 4, 0.5  # the two truncation rules, compared on the same scores
demo_sizes = (20, 16, 2, 2, 32)  # (V, D, layers, heads, FFN width) of the cache demo decoder
demo_prompts = ((2, 7), (1, 8, 2, 8, 1), (8, 2, 8))  # token IDs, prompts of different lengths
demo_steps = 3  # decoding steps printed one by one
check_steps = 40  # steps over which cached and uncached logits are compared
work_positions = 256  # the work per token is counted up to this position
run_name = "book-prose"  # the stored Chapter 10 run the samples come from (book/runs/)
sample_prompt = "The cache "  # the prompt of those samples
sample_temperatures = (0.7, 1.3, 2.0)  # sampling temperatures for the stored model
sample_tokens = 120  # new characters per sample
end_text = ","  # the character treated as the end token in the stopping example
stop_prompts = ("The cache ", "A token ", "Each row ", "The loop ")  # the prompts of that example
penalties, penalty_window = (1.0, 1.25, 2.0), 12  # penalties θ, over the last characters
gpt2_small = (12, 1024, 768)  # (layers, positions, width) of a GPT-2-small-sized model
serving_batch = 32  # rows served at once in the memory comparison
""",
}
MUST_CHANGE = [
    "p_top_warm",
    "kept_k_mass",
    "entropy_low",
    "demo_lengths_text",
]
# With penalties (1.0, 1.3) the strongest penalty is also the mildest, so it cannot spell worse
# than itself: the sentence that the strongest one bends the spelling is flagged there.
CLAIM_FLIPS = {
    "other-sizes": ["the strongest penalty bends the spelling"],
}
