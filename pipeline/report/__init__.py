"""Stage package ``report``: the papers' result tables from metrics JSONs (stage ``tables``), with their
published numbers, and the report pages of corpus statistics (``corpus-stats``) and training curves
(``training-curves``).

It owns what a paper table is (:mod:`.spec`), every table the stage writes (:mod:`.table_specs`, the
registry, and the ``*_tables`` modules of each paper family), how rows are assembled (:mod:`.assemble`)
and written (:mod:`.render`). It imports the ground floor only (``pipeline.errors``, ``atomic``,
``provenance``, ``pipeline.tasks`` for the tasks' own constants such as the GEOGRANNO buckets, ...) and
itself, never another stage package: it reads other stages' outputs as files (docs/design.md "Layout").
The plan of a paper run and its GPU budget live in :mod:`pipeline.plan` and :mod:`pipeline.budget`, the
reproduction scoreboard, which reads these tables, in :mod:`pipeline.scoreboard`.
"""
