# The papers' result tables (tables) from every metrics JSON of the run, shown with the
# figures by `snakemake --report report.html`, each with its caption (workflow/report/table_<name>.rst).
# The tables are those of the table registry, pipeline/report/table_specs.py, read here so that a new
# table is its registry entry. Inputs: metrics_files() and classify_summaries() (functions/evaluate.smk,
# functions/classify.smk). The stage writes the whole set into a hidden folder beside tables/ and swaps
# it in (pipeline.atomic.AtomicFolder): a killed job leaves the earlier set or none, never some of the
# files; nothing else may live in tables/.


import json
from pathlib import Path

from pipeline.report.table_specs import TABLE_NAMES
from pipeline.workflow_config import write_run_config


include: "functions/report.smk"


TABLES = list(TABLE_NAMES)


rule tables:
    input:
        metrics_files(),
        classify_summaries(),
    output:
        md=expand(f"{RESULTS}/tables/{{table}}.md", table=TABLES),
        csv=expand(f"{RESULTS}/tables/{{table}}.csv", table=TABLES),
        tex=expand(f"{RESULTS}/tables/{{table}}.tex", table=TABLES),
        html=[
            report(
                f"{RESULTS}/tables/{table}.html",
                caption=f"../report/table_{table}.rst",
                category="Tables",
                labels={"table": table},
            )
            for table in TABLES
        ],
        index=f"{RESULTS}/tables/tables.json",
    log:
        f"{LOGS}/tables/tables.log",
    benchmark:
        f"{BENCHMARKS}/tables/tables.tsv"
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m pipeline tables --metrics {input:q} --out $(dirname {output.index:q}) > {log:q} 2>&1"


# How far the run reproduced the papers (pipeline/scoreboard/scoreboard.py): the published numbers the
# plan maps to this config's runs, ours beside them, and every claim of pipeline/scoreboard/claims.yaml
# judged, across seeds where there are seeds. The report's first section. The plan is made from the
# config this run resolved, overrides included, which run_config writes as a JSON file: as one
# command-line argument it would stop the job from starting past Linux's 128 KiB per argument
# (MAX_ARG_STRLEN). run_config runs in Snakemake's own process (no command line at all), and its
# params make Snakemake rewrite the file, and rerun the scoreboard, whenever the config changes.


localrules:
    run_config,


rule run_config:
    output:
        f"{RESULTS}/config.json",
    log:
        f"{LOGS}/run_config/run_config.log",
    benchmark:
        f"{BENCHMARKS}/run_config/run_config.tsv"
    params:
        config=lambda wc: json.dumps(config, sort_keys=True),
    run:
        write_run_config(config, output[0], log[0])


rule scoreboard:
    input:
        tables=rules.tables.output.index,
        config=rules.run_config.output[0],
    output:
        html=report(
            f"{RESULTS}/scoreboard.html",
            caption="../report/scoreboard.rst",
            category="1. Reproduction scoreboard",
            labels={"page": "claims and published numbers"},
        ),
        md=f"{RESULTS}/scoreboard.md",
        json=f"{RESULTS}/scoreboard.json",
    log:
        f"{LOGS}/scoreboard/scoreboard.log",
    benchmark:
        f"{BENCHMARKS}/scoreboard/scoreboard.tsv"
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m pipeline scoreboard --tables {input.tables:q} --config {input.config:q}"
        " --out $(dirname {output.json:q}) > {log:q} 2>&1"


# Corpus statistics per stage (corpus_stats) and training curves per trained model
# (training_curves), shown in the report beside the tables and figures. The trained models:
# trained_models() in functions/pretrain.smk.


rule corpus_stats:
    input:
        unpack(lambda wc: corpus_stats_inputs()),
    output:
        html=report(
            f"{RESULTS}/report/corpus_stats.html",
            caption="../report/corpus_stats.rst",
            category="Corpus",
            labels={"page": "counts per stage"},
        ),
        png=report(
            f"{RESULTS}/report/ngram_lengths.png",
            caption="../report/ngram_lengths.rst",
            category="Corpus",
            labels={"page": "n-gram lengths"},
        ),
        json=f"{RESULTS}/report/corpus_stats.json",
    log:
        f"{LOGS}/corpus_stats/corpus_stats.log",
    benchmark:
        f"{BENCHMARKS}/corpus_stats/corpus_stats.tsv"
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    shell:
        "python -m pipeline corpus-stats --stats {input.stats:q} --ngrams {input.ngrams:q}"
        " --out $(dirname {output.json:q}) > {log:q} 2>&1"


rule training_curves:
    input:
        f"{RESULTS}/models/{{model}}",
    output:
        report(
            f"{RESULTS}/report/training/{{model}}.png",
            caption="../report/training_curves.rst",
            category="Training",
            labels={"model": "{model}", "figure": "training curves"},
        ),
    log:
        f"{LOGS}/training_curves/{{model}}.log",
    benchmark:
        f"{BENCHMARKS}/training_curves/{{model}}.tsv"
    wildcard_constraints:
        model=PRETRAINED_LABEL if PRETRAIN_RUNS else "(?!)",
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m pipeline training-curves --log {input:q}/train_log.jsonl --title {wildcards.model:q}"
        " --out {output:q} > {log:q} 2>&1"
