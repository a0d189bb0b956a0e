"""Universal language representation pipeline (BURT / ULR-BERT reproduction).

The importable package behind the Snakemake workflow: every rule calls one
``python -m pipeline STAGE`` entry point, and all logic lives here.
"""

import os

__version__ = "0.1.0"

# Before any stage imports torch: OpenMP workers that spin while waiting (GNU OpenMP's default)
# make a CPU forward pass up to 10x slower when other processes share the cores (measured:
# 0.09 s vs 0.9-1.1 s per batch of 64 on 2 busy cores; training steps 3-4x); passive waiting
# costs little on an idle machine. A user's setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
