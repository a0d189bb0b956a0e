"""The ``evaluate`` and ``figures`` stages (docs/method.md §5): any model, one task at a time, metrics as JSON.

:mod:`.evaluate` loads the model named by ``--model`` (:mod:`pipeline.models.spec`), runs one task of
:mod:`pipeline.tasks` on it and writes the metrics JSON with its provenance; :mod:`.figures` draws the
PCA / t-SNE figures of the analogy embeddings. Imports only the ground floor (:mod:`pipeline.models`,
:mod:`pipeline.tasks`, ...).
"""
