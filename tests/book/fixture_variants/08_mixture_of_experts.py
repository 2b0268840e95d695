"""Fixture variants for Chapter 8: edits a reader might make."""

VARIANTS = {
    "same-shapes": """\
worked_probabilities = [0.5, 0.35, 0.15]  # one token's router probabilities over E = 3 experts
worked_k = 2  # experts kept for that token
worked_outputs = [1.0, 4.0, 7.0]  # each expert's scalar output for that token
tie_probabilities = [0.2, 0.4, 0.4]  # a tie for first place
balance_gates = [0.6, 0.4]  # one token's gates over two selected experts
balance_tokens = 5  # how many tokens route exactly this way
balanced_gates = [0.5, 0.5]  # an even split, for contrast
penalty_tokens, penalty_experts, penalty_seed = 6, 4, 11  # random scores for the top-1 check
switch_alpha = 1e-2  # α, the weight of the Switch Transformer balancing loss
capacity_router = [[2.0, -1.0], [-1.0, 0.5]]  # router weight [D = 2, E = 2], bias-free
capacity_inputs = [[0.9, 0.1], [0.5, -0.4], [0.7, 0.2], [0.6, 0.8]]  # four tokens [4, 2]
capacity = 2  # slots per expert in that routing batch
capacity_hidden, capacity_seed = 3, 9  # the two SwiGLU experts of the capacity example
batch_shape = (2, 4)  # B, T of the larger example
model_width, hidden_width = 8, 12  # D and each expert's SwiGLU hidden width
num_experts, k = 4, 2  # E experts, k chosen per token
moe_seed, input_seed = 21, 22  # SplitMix64 seeds for the mixture's weights and its input
capacity_factors = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]  # positions of the slider
ffn_expansion = 4  # hidden width / model width of the dense FFN in the opening count
dense_hidden = 24  # hidden width of a dense SwiGLU in the cost comparison
narrow_hidden = 6  # a narrower expert width for the same comparison
""",
    "other-widths": """\
worked_probabilities = [0.1, 0.45, 0.3, 0.15]  # one token's router probabilities over E = 4
worked_k = 3  # experts kept for that token
worked_outputs = [9.0, -1.0, 3.0, 2.0]  # each expert's scalar output for that token
tie_probabilities = [0.25, 0.25, 0.25, 0.25]  # a four-way tie
balance_gates = [0.5, 0.3, 0.2]  # one token's gates over three selected experts
balance_tokens = 3  # how many tokens route exactly this way
balanced_gates = [1 / 3, 1 / 3, 1 / 3]  # an even split, for contrast
penalty_tokens, penalty_experts, penalty_seed = 9, 5, 4  # random scores for the top-1 check
switch_alpha = 1e-2  # α, the weight of the Switch Transformer balancing loss
capacity_router = [[1.0, -1.0, 0.0], [0.5, 0.0, -0.5], [0.0, 0.3, 0.1]]  # [D = 3, E = 3]
capacity_inputs = [[1.0, 0.0, 0.2], [0.8, 0.3, -0.1], [0.9, -0.2, 0.0], [0.7, 0.1, 0.4],
                   [-0.9, 0.2, 0.3], [0.1, -1.0, 0.5]]  # six tokens [6, 3]
capacity = 2  # slots per expert in that routing batch
capacity_hidden, capacity_seed = 5, 13  # the SwiGLU experts of the capacity example
batch_shape = (3, 5)  # B, T of the larger example
model_width, hidden_width = 6, 10  # D and each expert's SwiGLU hidden width
num_experts, k = 6, 2  # E experts, k chosen per token
moe_seed, input_seed = 31, 32  # SplitMix64 seeds for the mixture's weights and its input
capacity_factors = [0.5, 1.0, 1.5, 2.0, 3.0]  # positions of the slider
ffn_expansion = 2  # a narrower dense FFN: its share of the block's weights drops
dense_hidden = 20  # hidden width of a dense SwiGLU in the cost comparison
narrow_hidden = 4  # a narrower expert width for the same comparison
""",
}

MUST_CHANGE = [
    "worked_gates",
    "worked_mass",
    "worked_mixture",
    "score_gradient",
    "jump",
    "importance",
    "importance_cv2",
    "batch_importance_cv2",
    "requested",
    "output_gap",
    "switch_loss",
]
