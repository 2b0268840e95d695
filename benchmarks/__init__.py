"""Speed and memory measurements of the engine, run by hand (never timed tests).

Every benchmark runs BLAS on one thread, as PyTorch is run here (``torch.set_num_threads(1)``)
and as the training command runs: a second BLAS thread on a 2-core machine shared with anything
else makes the medium block's times jump by a factor of three, and the ratios with them. Set
before numpy loads: this package's ``__init__`` runs before any of its modules.
"""

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
