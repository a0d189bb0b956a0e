"""Evaluation harness (docs/method.md §5): any encoder, one task at a time, metrics as JSON.

Encoders (:mod:`.encoder` for transformers, :mod:`.bags` for bag-of-vectors baselines) share
one interface, ``encode(list[str]) -> np.ndarray``; the tasks (:mod:`.analogy`, :mod:`.sts`,
:mod:`.wordsim`, :mod:`.geogranno`, :mod:`.faq`) only see that interface, or, for retrieval,
a scorer (:mod:`.retrieval`, :mod:`.lexical`). :mod:`.cli` is the ``evaluate`` stage.
"""
