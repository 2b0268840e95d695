"""Fixture variants for Chapter 3: edits a reader might make."""

VARIANTS = {
    "same-shapes": """\
# The chapter's fixture: every number on this page is computed from these values.
model_width = 1024  # D for the parameter budget
ffn_multiplier = 4  # D_ff = multiplier · D
num_layers = 24  # blocks in the stack
vocab_size = 32000  # V: rows of the token embedding (and of an untied output head)
scalar_x, scalar_W1, scalar_b1, scalar_W2, scalar_b2 = 1.5, -0.5, 0.25, 2.0, -1.0  # a 1-wide FFN
gelu_probe = 0.5  # where GELU(x) = x Φ(x) is evaluated
branch_u, gate_a = 3.0, 1.0  # linear branch u = x W_u and gate pre-activation a = x W_g
gate_probe = 4.0  # a larger gate projection, to see whether a gate factor stays below 1
small_width, small_positions = 4, 3  # a random FFN for the shape and independence checks
ffn_seed, input_seed = 5, 9  # SplitMix64 seeds for its weights and its input
changed_position = 2  # the position whose input we replace
paper_widths = (512, 2048)  # the original transformer's base model: d_model and inner width
llama_width, llama_multiple = 5120, 256  # LLaMA 13B's model width and its FFN width's multiple
""",
    "other-widths": """\
# The chapter's fixture: every number on this page is computed from these values.
model_width = 512  # D for the parameter budget
ffn_multiplier = 4  # D_ff = multiplier · D
num_layers = 6  # blocks in the stack
vocab_size = 10  # V: rows of the token embedding (and of an untied output head)
scalar_x, scalar_W1, scalar_b1, scalar_W2, scalar_b2 = 2.0, 1.0, -0.5, -2.0, 0.5  # a 1-wide FFN
gelu_probe = -1.0  # where GELU(x) = x Φ(x) is evaluated
branch_u, gate_a = 1.5, -2.0  # linear branch u = x W_u and gate pre-activation a = x W_g
gate_probe = 3.0  # a larger gate projection, to see whether a gate factor stays below 1
small_width, small_positions = 6, 5  # a random FFN for the shape and independence checks
ffn_seed, input_seed = 1, 2  # SplitMix64 seeds for its weights and its input
changed_position = 0  # the position whose input we replace
paper_widths = (1024, 4096)  # a wider base model with the same factor
llama_width, llama_multiple = 8, 1  # a toy width, no rounding beyond whole features
""",
}

MUST_CHANGE = [
    "scalar_ffn_out",
    "budget_per_block",
    "budget_stack",
    "embedding_count",
    "gelu_value",
    "glu_out",
    "swiglu_out",
    "silu_factor",
    "gated_hidden",
    "llama_hidden",
]
# paper_d_model / paper_d_inner change only in "other-widths"; the shrink ratio is structural.
