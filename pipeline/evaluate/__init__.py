"""Evaluation harness (SPEC §5): any encoder, one task at a time, metrics as JSON.

Encoders (:mod:`.encoder` for transformers, :mod:`.bags` for bag-of-vectors baselines) share
one interface, ``encode(list[str]) -> np.ndarray``; the tasks (:mod:`.analogy`, :mod:`.sts`,
:mod:`.wordsim`, :mod:`.geogranno`, :mod:`.faq`) only see that interface, or, for retrieval,
a scorer (:mod:`.retrieval`, :mod:`.lexical`). :mod:`.cli` is the ``evaluate`` stage.
"""

import os

# Before torch is first imported (the stages import it lazily, after this package): OpenMP
# workers that spin while waiting (GNU OpenMP's default) make a CPU forward pass up to 10x
# slower when other processes share the cores (measured: 0.09 s vs 0.9-1.1 s per batch of 64
# on 2 busy cores); passive waiting costs little on an idle machine. A user's setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
