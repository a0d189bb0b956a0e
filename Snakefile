# Universal language representation (BURT / ULR-BERT): Wikipedia dumps -> corpus -> n-grams
# -> pre-training -> evaluation tables and figures. See README.md.
from snakemake.utils import min_version, validate

min_version("9.0")


# The embedded demo is the default; `--configfile workflow/config/X.yaml` replaces it
# (rather than being merged into it, which a plain `configfile:` would do).
if not workflow.overwrite_configfiles:

    configfile: "workflow/config/demo.yaml"


# Nested --config overrides arrive as strings ("{top_k: 100}" gives "100"): give them the
# schema's types, then report what is still wrong one line per key (pipeline/workflow_config.py).
import sys

import yaml

sys.path.insert(0, workflow.basedir)
from pipeline.workflow_config import check, check_unique_keys, coerce, load_schema

check_unique_keys(workflow.overwrite_configfiles or ["workflow/config/demo.yaml"])

# the schema with the objectives' names filled in from their registry (pipeline/objective_registry.py)
_schema = load_schema()
coerce(config, _schema)
check(config, _schema)
validate(config, "workflow/schemas/config.schema.yaml", set_default=True)


# The landing page of `snakemake --report`: what ran, with which config.
report: "workflow/report/workflow.rst"


# Read in order: each file may use what the files above it define while it is read (input
# functions run later, once all are read). download.smk comes last: its rules' wildcards are the
# downloads and hub models that the stage files registered.
include: "workflow/rules/common.smk"
include: "workflow/rules/corpus.smk"
include: "workflow/rules/ngrams.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/finetune.smk"
include: "workflow/rules/bilstm.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/classify.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/download.smk"


rule all:
    default_target: True
    input:
        corpus_outputs(),
        ngram_outputs(),
        rules.tables.output,
        rules.scoreboard.output,
        [f"{d}/analogy_pca_male_female.png" for d in figure_dirs()],
        rules.corpus_stats.output,
        [f"{RESULTS}/report/training/{model}.png" for model in trained_models()],
