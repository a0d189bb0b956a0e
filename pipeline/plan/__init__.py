"""Stage package ``plan``: what a config will run for each of the papers' published rows, and what it costs
(``python -m pipeline plan``; docs/stages/report.md "The plan").

It owns the plan (:mod:`.plan`: each published row related to the run a config makes for it, its settings
beside the paper's, every deviation with its reason), the papers' stated training settings
(``paper_settings.yaml``), the GPU-hours of each job (:mod:`.plan_costs`), the plan's view of its models
(:mod:`.plan_models`: commits, memory per GPU), the choices it shows (:mod:`.plan_choices`) and its output
(:mod:`.plan_output`). It imports the ground floor only: the GPU cost and memory model
(:mod:`pipeline.budget`), the grouping of fused runs (:mod:`pipeline.fused_groups`), the experiments,
presets and training settings of a config, and itself. It reads the tables stage's published rows as a file
(``pipeline/report/published.yaml``), never importing that stage. The scoreboard reads the plan; the plan
does not read the scoreboard.
"""
