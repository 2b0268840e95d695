"""Training a small decoder: loss, optimizers, clipping, schedule, data, tokenizers, checkpoints.

Built on the engine's public API (Tensor, ops, Module, Parameter, Decoder); the training
command is ``python -m llm_from_scratch.train`` (see :mod:`llm_from_scratch.train`). Sampling
from a trained model is :func:`llm_from_scratch.generation.generate`.
"""

from .checkpoint import CheckpointInfo, load_checkpoint, save_checkpoint
from .clip import clip_grad_norm
from .config import TrainConfig
from .corpus import (
    TextSplit,
    bigram_bits_per_char,
    book_prose_split,
    load_corpus,
    markdown_prose,
    save_corpus,
)
from .data import IGNORE_INDEX, induction_batch, random_windows, uniform_integers
from .loop import RunResult, build_model, build_optimizer, learning_rate, train
from .loss import cross_entropy
from .optim import SGD, AdamW, Optimizer
from .probes import attention_maps, induction_scores
from .runs import StoredRun, load_run
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
    "RunResult",
    "StoredRun",
    "TextSplit",
    "TrainConfig",
    "attention_maps",
    "bigram_bits_per_char",
    "book_prose_split",
    "build_model",
    "build_optimizer",
    "clip_grad_norm",
    "cross_entropy",
    "induction_batch",
    "induction_scores",
    "learning_rate",
    "load_checkpoint",
    "load_corpus",
    "load_run",
    "markdown_prose",
    "random_windows",
    "save_checkpoint",
    "save_corpus",
    "train",
    "uniform_integers",
    "warmup_cosine_lr",
]
