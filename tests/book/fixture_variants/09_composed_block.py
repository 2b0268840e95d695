"""Fixture variants for Chapter 9: edits a reader might make."""

VARIANTS = {
    "same-shapes": """# Fixture: every number on this page is computed from these values.
seed = 7  # SplitMix64 seed: weights and inputs are drawn from it, in the order used below
small_shape = (1, 2, 4)  # (B, T, D) of the compatibility example
small_heads, small_hidden = 2, 16  # its attention heads and its FFN width (16 = 4D)
block_shape = (2, 4, 8)  # (B, T, D) of the composed block
num_heads, hidden_width = 2, 16  # heads and FFN width of the composed block
changed_position = 2  # the position the token-mixing probe changes
perturbation_scale = 0.8  # size of that (non-uniform) change
uniform_shift = -1.5  # a constant added to every feature of one token
reference_noise = 0.3  # spread of the nonzero gains and biases in the independent check
vocab_size, num_layers = 10, 2  # V and the number of blocks of the decoder
prompts = ((2, 7, 1, 8), (0, 4, 4, 3))  # two prompts of token IDs, one per batch row
padded_lengths = (3, 4)  # real tokens per prompt in the padded case
targets = (5, 9)  # the IDs the gradient example treats as the true next tokens
glu_inputs = (1.5, 1.0)  # (a, b) of the gating exercise: linear branch and gate input
overview_experts, overview_k = 4, 2  # the router drawn in the overview figure
""",
    "other-widths": """# Fixture: every number on this page is computed from these values.
seed = 2026  # SplitMix64 seed: weights and inputs are drawn from it, in the order used below
small_shape = (1, 3, 6)  # (B, T, D) of the compatibility example
small_heads, small_hidden = 3, 24  # its attention heads and its FFN width (24 = 4D)
block_shape = (3, 5, 12)  # (B, T, D) of the composed block
num_heads, hidden_width = 3, 24  # heads and FFN width of the composed block
changed_position = 2  # the position the token-mixing probe changes
perturbation_scale = 0.5  # size of that (non-uniform) change
uniform_shift = 3.0  # a constant added to every feature of one token
reference_noise = 0.2  # spread of the nonzero gains and biases in the independent check
vocab_size, num_layers = 13, 3  # V and the number of blocks of the decoder
prompts = ((3, 1, 4, 1, 5), (9, 2, 6, 5, 3), (5, 8, 9, 7, 9))  # three prompts of five IDs
padded_lengths = (5, 3, 1)  # real tokens per prompt in the padded case
targets = (2, 7, 1)  # the IDs the gradient example treats as the true next tokens
glu_inputs = (-1.0, 2.0)  # (a, b) of the gating exercise: linear branch and gate input
overview_experts, overview_k = 3, 1  # the router drawn in the overview figure
""",
}
MUST_CHANGE = [
    "ffn_change",
    "spill",
    "order_gap",
    "pre_std_max",
    "open_leak",
    "unselected_tied",
    "tied_direction_text",
    "wrong_gap",
    "default_change_max",
]
