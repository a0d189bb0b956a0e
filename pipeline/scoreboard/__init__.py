"""Top-floor package ``scoreboard``: how far a run reproduced the papers (``python -m pipeline scoreboard``;
docs/stages/report.md "The scoreboard").

It owns the reproduction scoreboard: the papers' comparative claims (``claims.yaml``), the run's tables and
config read and checked (:mod:`.scoreboard_inputs`), the per-item and per-seed statistics of a verdict
(:mod:`.scoreboard_items`, :mod:`.scoreboard_bootstrap`, :mod:`.scoreboard_stats`), and its Markdown / HTML (:mod:`.scoreboard_render`).
It stands above two stage packages and reads them: the tables stage's registry, published rows and
renderer (:mod:`pipeline.report`), and the plan (:mod:`pipeline.plan`), which maps each published number to
a run. Nothing imports it.
"""
