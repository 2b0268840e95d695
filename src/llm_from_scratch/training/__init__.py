"""Training a small decoder: loss, optimizers, clipping, schedule, data, tokenizers, checkpoints.

Built on the engine's public API (Tensor, ops, Module, Parameter, Decoder); the training
command is ``python -m llm_from_scratch.train`` (see :mod:`llm_from_scratch.train`).
"""

from .checkpoint import CheckpointInfo, load_checkpoint, save_checkpoint
from .clip import clip_grad_norm
from .config import TrainConfig
from .corpus import TextSplit, bigram_bits_per_char, book_prose_split, markdown_prose
from .data import IGNORE_INDEX, induction_batch, random_windows, uniform_integers
from .loss import cross_entropy
from .optim import SGD, AdamW, Optimizer
from .schedule import warmup_cosine_lr
from .tokenizers import ByteTokenizer, CharTokenizer

__all__ = [
    "IGNORE_INDEX",
    "SGD",
    "AdamW",
    "ByteTokenizer",
    "CharTokenizer",
    "CheckpointInfo",
    "Optimizer",
    "TextSplit",
    "TrainConfig",
    "bigram_bits_per_char",
    "book_prose_split",
    "clip_grad_norm",
    "cross_entropy",
    "induction_batch",
    "load_checkpoint",
    "markdown_prose",
    "random_windows",
    "save_checkpoint",
    "uniform_integers",
    "warmup_cosine_lr",
]
