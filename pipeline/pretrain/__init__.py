"""Pre-training (SPEC §3): token datasets, masking collators, MiSAD / NSP / SOP objectives, the training loop."""

import os

# Before torch is first imported (stages import it after this package): OpenMP workers that
# spin while waiting make CPU steps several times slower when other processes share the cores
# (see pipeline.evaluate, which measured up to 10x); passive waiting costs little on an idle
# machine. A user's setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
