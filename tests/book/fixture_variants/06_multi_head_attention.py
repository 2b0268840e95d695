"""Fixture variants for Chapter 6: edits a reader might make."""

VARIANTS = {
    "same-shapes": """# The fixture: every number on this page is computed from these values.
hand_tokens = [[2.0, 0.0], [0.0, 1.0], [1.0, -1.0]]  # X for the hand example: 3 tokens, width 2
hand_query_weight = [[1.0, 1.0], [0.5, 1.0]]  # W_Q of the hand example
hand_key_weight = [[1.0, 0.0], [1.0, 2.0]]  # W_K
hand_value_weight = [[1.0, 2.0], [3.0, 0.0]]  # W_V
scale_widths = (1, 4, 16, 64, 256)  # head widths d_k for the 1/√d_k study
scale_keys, scale_rows, scale_seed = 16, 400, 32  # keys per row, rows per width, SplitMix64 seed
batch, tokens, model_width, num_heads = 2, 4, 8, 2  # X is [B, T, D], split into H heads
small_case = (1, 2, 4, 2)  # (B, T, D, H) with T == H: split and permuted shapes coincide
seed = 7  # SplitMix64 seed: the four projection weights first, then the inputs
valid_lengths = (3, 4)  # real tokens in each batch row; later positions are padding
token_order = (0, 2, 1, 3)  # a rearrangement of the T positions (a permutation of 0..T-1)
float_mask_shift = -0.5  # a float-mask entry added to one score
causal_queries = 3  # L < S = tokens: fewer queries than keys, for the causal alignment
value_factor = 3.0  # a second layer's W_V is this multiple of the first's
probe_position = 2  # the causal output whose gradient is probed
exercise_heads = 4  # exercises: another head count that divides the width
exercise_value = [0.5, 0.5]  # exercises: a new value vector for the last hand token
""",
    "other-widths": """# The fixture: every number on this page is computed from these values.
hand_tokens = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]]  # 4 tokens
hand_query_weight = [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]  # W_Q
hand_key_weight = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]  # W_K
hand_value_weight = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]  # W_V: values of width 2
scale_widths = (2, 8, 32, 128)  # head widths d_k for the 1/√d_k study
scale_keys, scale_rows, scale_seed = 8, 300, 44  # keys per row, rows per width, SplitMix64 seed
batch, tokens, model_width, num_heads = 3, 5, 12, 3  # X is [B, T, D], split into H heads
small_case = (1, 3, 6, 3)  # (B, T, D, H) with T == H: split and permuted shapes coincide
seed = 2026  # SplitMix64 seed: the four projection weights first, then the inputs
valid_lengths = (5, 2, 4)  # real tokens in each batch row; later positions are padding
token_order = (1, 0, 2, 4, 3)  # a rearrangement of the T positions (a permutation of 0..T-1)
float_mask_shift = 1.0  # a float-mask entry added to one score
causal_queries = 2  # L < S = tokens: fewer queries than keys, for the causal alignment
value_factor = -0.5  # a second layer's W_V is this multiple of the first's
probe_position = 3  # the causal output whose gradient is probed
exercise_heads = 6  # exercises: another head count that divides the width
exercise_value = [4.0, -4.0]  # exercises: a new value vector for the last hand token
""",
}
MUST_CHANGE = [
    "silent_gap",
    "causal_gap",
    "output_change",
    "head_spread",
    "odds_factor",
    "asked_weight",
    "hand_second_causal",
    "var_unscaled_last",
    "grad_unscaled_last",
    "max_scaled_last",
]
