"""Fixture variants for Chapter 6: edits a reader might make."""

VARIANTS = {
    "same-shapes": """# The fixture: every number on this page is computed from these values.
batch, tokens, model_width, num_heads = 2, 4, 8, 2  # X is [B, T, D], split into H heads
small_case = (1, 2, 4, 2)  # (B, T, D, H) with T == H: split and permuted shapes coincide
seed = 7  # SplitMix64 seed: the four projection weights first, then the inputs
valid_lengths = (3, 4)  # real tokens in each batch row; later positions are padding
token_order = (1, 3, 0, 2)  # a rearrangement of the T positions (a permutation of 0..T-1)
float_mask_shift = -0.5  # a float-mask entry added to one score
""",
    "other-widths": """# The fixture: every number on this page is computed from these values.
batch, tokens, model_width, num_heads = 3, 5, 12, 3  # X is [B, T, D], split into H heads
small_case = (1, 3, 6, 3)  # (B, T, D, H) with T == H: split and permuted shapes coincide
seed = 2026  # SplitMix64 seed: the four projection weights first, then the inputs
valid_lengths = (5, 2, 4)  # real tokens in each batch row; later positions are padding
token_order = (4, 2, 0, 1, 3)  # a rearrangement of the T positions (a permutation of 0..T-1)
float_mask_shift = 1.0  # a float-mask entry added to one score
""",
}
MUST_CHANGE = ["silent_gap", "causal_gap", "output_change", "head_spread", "odds_factor"]
