"""Fixture variants for Chapter 1: edits a reader might make."""

VARIANTS = {
    "same-shapes": """\
# The chapter's fixture: every number on this page is computed from these values.
x_value, w_value, b_value = 0.8, 1.25, -0.3  # the running example L = tanh(x·w + b)·x
matrix_values = [[0.5, -1.0, 2.0], [3.0, 0.0, -2.5]]  # A, shape [2, 3]
row_values = [1.0, 0.25, -0.75]  # c, shape [3]: broadcast across A's rows
upstream_values = [[2.0, -1.0, 0.5], [1.0, 3.0, -2.0]]  # G, the gradient arriving at A + c
stream_seed = 1234567  # SplitMix64 seed for the stream demonstration
fan_in, fan_out = 2, 3  # widths of the initialised layer
init_seed = 7  # SplitMix64 seed for that layer
noise_bound = 1e-8  # gaps below this are rounding noise, shown as "below 1e-8"
""",
    "other-widths": """\
# The chapter's fixture: every number on this page is computed from these values.
x_value, w_value, b_value = -2.0, 0.4, 1.1  # the running example L = tanh(x·w + b)·x
matrix_values = [[1.0, 0.0, -1.0, 2.0], [0.5, 0.5, 0.5, 0.5], [-3.0, 1.0, 4.0, -1.0]]  # [3, 4]
row_values = [[1.0], [2.0], [-1.0]]  # c, shape [3, 1]: broadcast along the other axis
upstream_values = [[1.0, 2.0, 3.0, 4.0], [0.0, -1.0, 0.0, 1.0], [2.0, 2.0, -2.0, -2.0]]
stream_seed = 42  # SplitMix64 seed for the stream demonstration
fan_in, fan_out = 4, 5  # widths of the initialised layer
init_seed = 20  # SplitMix64 seed for that layer
noise_bound = 1e-8  # gaps below this are rounding noise, shown as "below 1e-8"
""",
}

MUST_CHANGE = [
    "z_value",
    "loss_value",
    "grad_x",
    "grad_w",
    "grad_z",
    "c_grad_first",
    "stream_first",
    "weight_first",
    "order_exact",  # dc/dx of the ordering example, (1 + 2a)·w with a = x·w
    "bfs_grad",  # what the breadth-first walk reports: w alone
]
