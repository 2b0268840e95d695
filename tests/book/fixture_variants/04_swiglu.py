"""Fixture variants for Chapter 4: edits a reader might make."""

VARIANTS = {
    "same-shapes": """\
X = np.array([[0.5, -1.0], [2.0, 1.5]])  # two positions, d_in = 2: [T, d_in]
W_gate = np.array([[0.3, -0.7, 1.2], [0.9, 0.4, -0.5]])  # [d_in, d_ff]
W_up = np.array([[1.5, -0.5, 2.0], [0.25, 1.0, -1.0]])  # [d_in, d_ff]
W_down = np.array([[0.5, -1.0], [1.5, 0.25], [-0.75, 1.0]])  # [d_ff, d_out]
G = np.array([[1.0, -0.5], [0.25, 2.0]])  # upstream gradient dL/dY: [T, d_out]

silu_points = np.array([-2.0, 0.0, 3.0])
large_z = 1e5
curve_range = (-5.0, 5.0)
changed_position = 1
replacement = np.array([0.5, 0.5])
init_seed = 7
init_widths = (2, 3, 2)
leading_shapes = [(), (3,), (2, 3)]
fd_step, fd_tolerance = 1e-6, 3e-6
small_scale = 1e-3
""",
    "other-widths": """\
X = np.array([[1.0, 0.0, -1.0], [0.5, 2.0, 0.0], [0.0, -1.0, 1.5]])  # T = 3, d_in = 3
W_gate = np.array(
    [[0.5, -1.0, 0.0, 1.0], [1.0, 0.5, -0.5, 0.0], [-0.5, 0.0, 1.0, 0.25]]
)  # [d_in, d_ff] = [3, 4]
W_up = np.array(
    [[1.0, 0.0, 2.0, -1.0], [0.0, 1.0, 0.5, 1.0], [2.0, -1.0, 0.0, 0.5]]
)  # [3, 4]
W_down = np.array([[1.0, 0.5], [-0.5, 1.0], [0.25, -1.0], [1.0, 1.0]])  # [d_ff, d_out] = [4, 2]
G = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5]])  # [T, d_out]

silu_points = np.array([-0.5, 0.0, 2.0])
large_z = 1e4
curve_range = (-6.0, 6.0)
changed_position = 2
replacement = np.array([0.0, 0.0, 0.0])
init_seed = 21
init_widths = (3, 4, 5)
leading_shapes = [(), (4,), (2, 4)]
fd_step, fd_tolerance = 1e-6, 3e-6
small_scale = 1e-3
""",
}

MUST_CHANGE = [
    "h0_last",
    "y00",
    "y01",
    "silu_neg",
    "silu_pos",
    "da0_last",
    "dx00",
    "silu_slope",
    "observed_y0",
    "homogeneity_gap",
    "jac_gap",
]
