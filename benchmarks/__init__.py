"""Speed and memory measurements of the engine, run by hand (never timed tests).

Every benchmark runs BLAS on one thread, as PyTorch is run here (``torch.set_num_threads(1)``)
and as the training command runs: a second BLAS thread on a 2-core machine shared with anything
else makes the medium block's times jump by a factor of three, and the ratios with them. Set
before numpy loads: this package's ``__init__`` runs before any of its modules.
"""

import os

SET_HERE = [  # the variables set here, not by the caller (benchmarks.test_suite unsets them)
    name
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    if name not in os.environ
]
for _name in SET_HERE:
    os.environ[_name] = "1"


def caller_environment() -> dict[str, str]:
    """This process's environment without the variables set above: what its caller passed."""
    return {name: value for name, value in os.environ.items() if name not in SET_HERE}
