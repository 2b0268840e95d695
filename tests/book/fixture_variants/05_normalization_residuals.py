"""Fixture variants for Chapter 5: edits a reader might make."""

VARIANTS = {
    "same-shapes": """\
# The chapter's fixture: every number on this page is computed from these values.
residual_input, branch_output = 1.5, -0.4  # a scalar residual coordinate and a branch output
jacobian_point = [1.0, 0.5, -0.5]  # x for the vector example y = x + tanh(x W)
jacobian_weight = [[-0.1, 0.2, 0.3], [0.0, -0.3, 0.1], [0.2, 0.1, -0.1]]  # W, [3, 3]
layernorm_tokens = [[5.0, 1.0], [0.0, 2.0]]  # two tokens for LayerNorm
rmsnorm_token = [1.0, 2.0]  # one token for RMSNorm
scaling_token = [1.0, -2.0, 0.5, 3.0]  # the token we rescale
scale_exponents = (-5, 3)  # scales c from 10^-5 to 10^3 for the figure
table_scales = [0.1, 3.0, 1000.0]  # scales for the table
batch_shape = (2, 3, 4)  # [B, T, D] for the batch-statistics comparison
batch_seed = 3  # SplitMix64 seed for that batch
changed_token = (0, 1)  # (example, position) whose vector we replace
stack_width, stack_tokens, max_depth = 8, 16, 12  # D, tokens and the deepest stack
stack_hidden = 32  # hidden width of each stacked block's FFN
stack_seed, stack_input_seed, upstream_seed = 6, 8, 9  # SplitMix64 seeds of the experiment
input_scales = (1.0, 10.0)  # token scales at which the stacks are measured
constant_token = [-2.0, -2.0, -2.0, -2.0]  # exercises: a token with zero variance
centred_token = [3.0, -1.0, -2.0]  # exercises: a token whose coordinates sum to zero
""",
    "other-widths": """\
# The chapter's fixture: every number on this page is computed from these values.
residual_input, branch_output = -1.0, 0.75  # a scalar residual coordinate and a branch output
jacobian_point = [0.5, -1.0, 2.0, 1.0]  # x for the vector example y = x + tanh(x W)
jacobian_weight = [
    [0.2, -0.1, 0.0, 0.1],
    [0.3, 0.1, -0.2, 0.0],
    [0.0, 0.4, 0.1, -0.3],
    [0.1, 0.0, 0.2, 0.2],
]  # W, [4, 4]
layernorm_tokens = [[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]]  # two tokens for LayerNorm
rmsnorm_token = [1.0, 2.0, 2.0]  # one token for RMSNorm
scaling_token = [3.0, 4.0, -1.0, 0.5, 2.0, -2.5]  # the token we rescale
scale_exponents = (-6, 2)  # scales c from 10^-6 to 10^2 for the figure
table_scales = [0.25, 4.0, 50.0]  # scales for the table
batch_shape = (3, 2, 5)  # [B, T, D] for the batch-statistics comparison
batch_seed = 21  # SplitMix64 seed for that batch
changed_token = (2, 1)  # (example, position) whose vector we replace
stack_width, stack_tokens, max_depth = 6, 10, 8  # D, tokens and the deepest stack
stack_hidden = 24  # hidden width of each stacked block's FFN
stack_seed, stack_input_seed, upstream_seed = 13, 14, 15  # SplitMix64 seeds of the experiment
input_scales = (1.0, 20.0)  # token scales at which the stacks are measured
constant_token = [0.5, 0.5]  # exercises: a token with zero variance
centred_token = [2.0, -2.0, 1.0, -1.0]  # exercises: a token whose coordinates sum to zero
""",
}

MUST_CHANGE = [
    "scalar_sum",
    "residual_input",
    "rms_ones_norm",
    "ln_first",
    "rms_denominator",
    "rms_out",
    "rms_passes_ones",
    "moved_batch",
    "pre_big_last",
    "post_big_last",
    "pre_small_last",
]
