"""Fixture variants for Chapter 10: edits a reader might make (seed, rates, steps, sizes)."""

VARIANTS = {
    "other-seed-and-rate": """# Fixture: every live number on this page comes from these values.
seed = 7  # SplitMix64 seed of the live runs: the weights, then the training batches
vocab_size = 16  # V of the live copying task
context = 24  # T, tokens per training row
half_lengths = (4, 12)  # each row: L distinct tokens then the same L again, L drawn in this range
model_width, num_layers, num_heads, hidden_width = 32, 2, 2, 64  # the live decoder
batch_size = 16  # rows per training step
steps = 160  # steps of the live run, and of the SGD run on the same budget
peak_lr, min_lr, warmup_steps = 5e-3, 5e-4, 16  # AdamW's warm-up + cosine schedule
weight_decay, grad_clip = 0.1, 0.5  # decoupled decay (matrices only); global-norm threshold
sgd_lr, sgd_momentum = 0.1, 0.9  # SGD's peak rate (same schedule shape) and its momentum
overfit_steps, overfit_lr = 40, 1e-2  # the one-batch sanity check (constant rate)
stress_lr, stress_steps = 0.08, 60  # a high peak rate for the warm-up and clipping comparison
sweep_rates = (1e-3, 1e-2, 1e-1, 1.0, 3.0)  # the learning-rate sweep
sweep_steps, sweep_width, sweep_batch = 40, 16, 8  # its short runs of a one-layer decoder
short_warmups = (2, 3, 6)  # exercise 1: shorter warm-ups at that rate, first ten steps only
tiny_logits = ((2.0, -1.0, 0.5), (0.0, 0.0, 0.0), (-3.0, 4.0, 1.0))  # gradient check: z [N, V]
tiny_targets = (0, 2, 1)  # its target classes
ignored_row = 2  # this row's target is replaced by the ignore index
decay_theta, decay_grad = (1.0, 1.0, 1.0), (0.0, 0.01, 1.0)  # one AdamW step, three weights
decay_lr, decay_lambda = 0.02, 0.1  # η and λ of that step
init_std = 0.01  # σ of the N(0, σ²) embedding table that fixes the initial loss (nanoGPT's)
torch_adamw_lr = 1e-3  # torch.optim.AdamW's default rate, for comparison
""",
    "wider-rows": """# Fixture: every live number on this page comes from these values.
seed = 2026  # SplitMix64 seed of the live runs: the weights, then the training batches
vocab_size = 20  # V of the live copying task
context = 28  # T, tokens per training row
half_lengths = (5, 14)  # each row: L distinct tokens then the same L again, L drawn in this range
model_width, num_layers, num_heads, hidden_width = 48, 2, 4, 96  # the live decoder
batch_size = 12  # rows per training step
steps = 120  # steps of the live run, and of the SGD run on the same budget
peak_lr, min_lr, warmup_steps = 1e-2, 1e-3, 12  # AdamW's warm-up + cosine schedule
weight_decay, grad_clip = 0.05, 1.0  # decoupled decay (matrices only); global-norm threshold
sgd_lr, sgd_momentum = 0.3, 0.8  # SGD's peak rate (same schedule shape) and its momentum
overfit_steps, overfit_lr = 30, 1e-2  # the one-batch sanity check (constant rate)
stress_lr, stress_steps = 0.12, 60  # a high peak rate for the warm-up and clipping comparison
sweep_rates = (3e-3, 3e-2, 3e-1, 3.0)  # the learning-rate sweep
sweep_steps, sweep_width, sweep_batch = 50, 24, 6  # its short runs of a one-layer decoder
short_warmups = (3, 6)  # exercise 1: shorter warm-ups at that rate, first ten steps only
tiny_logits = ((1.0, 0.0, -1.0, 2.0), (0.5, 0.5, 0.5, 0.5))  # gradient check: z [N, V]
tiny_targets = (3, 1)  # its target classes
ignored_row = 0  # this row's target is replaced by the ignore index
decay_theta, decay_grad = (2.0, -1.0, 0.5), (0.0, -0.5, 0.001)  # one AdamW step, three weights
decay_lr, decay_lambda = 0.02, 0.05  # η and λ of that step
init_std = 0.03  # σ of the N(0, σ²) embedding table that fixes the initial loss (nanoGPT's)
torch_adamw_lr = 1e-3  # torch.optim.AdamW's default rate, for comparison
""",
}
MUST_CHANGE = [
    "init_loss",
    "logit_variance",
    "gaussian_estimate",
    "overfit_start",
    "live_final_ratio",
    "context_baseline",
    "adamw_shrink",
    "start_loss",
    "cold_peak",
    "sgd_ratio",
    "small_table_var",
    "sweep_start",
]
# At η = 0.12 on the wider rows the first ten steps no longer split the runs the way the shipped
# fixture's do, so the sentence that warm-up alone prevents the early rise is flagged there.
CLAIM_FLIPS = {
    "wider-rows": [
        "at the full rate the loss rises above its start in the first ten steps; with warm-up not"
    ],
}
