"""Fixture variants for Chapter 2 (Linear layers): edits a reader might make."""

VARIANTS = {
    "same-shapes": """\
X = np.array([[[0.5, -1.0], [2.0, 1.0]]])  # [batch, position, feature]
W = np.array([[2.0, -1.0, 0.5], [1.0, 1.0, -2.0]])  # [input_width, output_width]
b = np.array([-1.0, 0.25, 2.0])  # [output_width]
G = np.array([[[0.5, 1.0, 0.0], [-1.0, 0.5, 2.0]]])  # dL/dY, same shape as Y

G_SMALL_LAYER = np.array([[2.0, 1.0], [1.0, -1.0], [0.0, 3.0]])
INIT_SEED = 23
STACKED_WIDTH = 5
LEADING_SHAPES = [(), (2,), (1, 2), (4, 7), (0,)]
STEP, TOLERANCE = 1e-6, 2e-6  # central-difference step, and the largest gap it may leave
ROUNDING = 1e-12  # results closer than this are equal up to rounding
""",
    "other-widths": """\
X = np.array(
    [
        [[1.0, 0.0, -2.0], [0.5, 1.5, 1.0], [-1.0, 2.0, 0.0]],
        [[0.0, 1.0, 1.0], [2.0, -0.5, 0.5], [1.0, 1.0, 1.0]],
    ]
)  # [batch, position, feature] = [2, 3, 3]
W = np.array([[1.0, -1.0], [0.5, 2.0], [-0.5, 1.0]])  # [3, 2]
b = np.array([0.25, -0.75])
G = np.array(
    [
        [[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]],
        [[0.5, 0.5], [-1.0, 2.0], [0.0, 0.25]],
    ]
)
G_SMALL_LAYER = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0], [2.0, 0.0, -1.0], [1.0, 1.0, 1.0]])
INIT_SEED = 7
STACKED_WIDTH = 3
LEADING_SHAPES = [(), (3,), (2, 3), (5, 1, 2), (2, 0)]
STEP, TOLERANCE = 1e-6, 2e-6  # central-difference step, and the largest gap it may leave
ROUNDING = 1e-12  # results closer than this are equal up to rounding
""",
}

# Glued values that every variant above must change.
MUST_CHANGE = [
    "x_first",
    "w_value",
    "b_value",
    "y_value",
    "y_first",
    "sums_first",
    "unit",
    "origin_affine",
    "plain_value",
    "g_value",
    "dx_value",
    "dw_value",
    "db_value",
    "dx_first",
    "db_three",
    "g_three",
    "init_weight",
    "expansion",
]
