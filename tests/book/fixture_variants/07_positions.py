"""Fixture variants for Chapter 7: edits a reader might make."""

VARIANTS = {
    "same-shapes": """\
sentence = ["dog", "bites", "man"]  # one ordering of three distinct words
reordered = ["man", "dog", "bites"]  # the same words in another order
model_width = 8  # D: width of token vectors and of the sinusoidal table
num_heads = 2  # heads of the attention layer in the order experiments
seed = 11  # SplitMix64 seed for embeddings and attention weights
base = 100.0  # frequency base of the sinusoidal table and of RoPE
table_positions = 16  # rows of the sinusoidal table that are drawn
probe_position = 3  # the table row inspected in the text
alibi_slope = 0.25  # a hand-picked ALiBi slope m
alibi_distance = 2  # query index minus key index, i - j
alibi_head_count = 8  # heads whose paper slopes are listed
same_token_count = 5  # length of the identical-token sequence in the ALiBi section
odd_head_count = 6  # a head count that is not a power of two
q_pair = [0.6, 0.8]  # one query coordinate pair
k_pair = [1.0, 0.0]  # one key coordinate pair
quarter_turn = math.pi / 2  # the key's turn in the rotation check (90°)
common_shift = 3.0  # added to both positions in the shift check
track_frequency = 0.3  # ω of the rotation picture
track_positions = [0, 1, 2, 3, 4, 5]  # positions drawn on the circle
slider_query = [0.0, 1.0]  # the pair the slider moves
slider_key = [0.6, -0.8]
slider_offset = 3  # key position minus query position in the slider
slider_positions = list(range(13))  # query positions the slider offers
rope_query_position = 2.0  # query position of the whole-vector RoPE check
train_length = 256  # a "training" length for the extrapolation check at the end
long_context_factor = 3  # how many times longer than training the last section looks
large_head_width = 64  # a head width of a typical large model, for the same check
""",
    "other-widths": """\
sentence = ["the", "cat", "saw", "a", "bird"]  # one ordering of five distinct words
reordered = ["a", "bird", "saw", "the", "cat"]  # the same words in another order
model_width = 12  # D: width of token vectors and of the sinusoidal table
num_heads = 3  # heads of the attention layer: head width 4
seed = 3  # SplitMix64 seed for embeddings and attention weights
base = 10000.0  # frequency base of the sinusoidal table and of RoPE
table_positions = 24  # rows of the sinusoidal table that are drawn
probe_position = 5  # the table row inspected in the text
alibi_slope = 0.125  # a hand-picked ALiBi slope m
alibi_distance = 6  # query index minus key index, i - j
alibi_head_count = 16  # heads whose paper slopes are listed
same_token_count = 7  # length of the identical-token sequence in the ALiBi section
odd_head_count = 12  # a head count that is not a power of two
q_pair = [0.0, 2.0]  # one query coordinate pair
k_pair = [1.5, 0.0]  # one key coordinate pair
quarter_turn = math.pi / 2  # the key's turn in the rotation check (90°)
common_shift = 9.0  # added to both positions in the shift check
track_frequency = 0.8  # ω of the rotation picture
track_positions = [0, 1, 2, 3, 4, 5, 6, 7]  # positions drawn on the circle
slider_query = [1.0, 1.0]  # the pair the slider moves
slider_key = [2.0, 0.0]
slider_offset = 1  # key position minus query position in the slider
slider_positions = list(range(20))  # query positions the slider offers
rope_query_position = 4.0  # query position of the whole-vector RoPE check
train_length = 1024  # a "training" length for the extrapolation check at the end
long_context_factor = 8  # how many times longer than training the last section looks
large_head_width = 128  # a head width of a large model, for the same check
""",
}

MUST_CHANGE = [
    "probe_row_first",
    "alibi_penalty",
    "rope_aligned_score",
    "rope_quarter_score",
    "probe_angle_second",
    "absolute_gap",
    "relative_score",
    "vector_score",
    "slowest_long_angle",
    "alibi_gap",
    "mask_gap",
    "unconverted_gap",
]
