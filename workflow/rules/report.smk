# The papers' result tables (tables) from every metrics JSON of the run, shown with the
# figures by `snakemake --report report.html`. Table names: pipeline/report/table_specs.py
# (tests/test_workflow.py keeps the list below in step with it).

TABLES = ["analogy", "analogy_ppr_pnr", "sts", "wordsim", "geogranno", "geogranno_baselines",
          "geogranno_by_length", "faq", "ablation", "sts_senteval",
          "glue", "glue_burt", "glue_seeds", "glue_sampling", "glue_backbones", "clue",
          "bilstm_snli", "transfer"]


rule tables:
    input:
        metrics_files(),
        classify_summaries(),
    output:
        md=expand(f"{RESULTS}/tables/{{table}}.md", table=TABLES),
        csv=expand(f"{RESULTS}/tables/{{table}}.csv", table=TABLES),
        tex=expand(f"{RESULTS}/tables/{{table}}.tex", table=TABLES),
        html=[report(f"{RESULTS}/tables/{table}.html", caption=f"../report/table_{table}.rst",
                     category="Tables", labels={"table": table}) for table in TABLES],
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
