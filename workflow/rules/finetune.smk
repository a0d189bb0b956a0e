# Fine-tuning (docs/method.md §4): one Siamese model per starting model x recipe and per Table 4
# ablation variant (FINETUNE_RUNS), from a backbone or a pretrain output, so that backbone ->
# backbone+objective -> backbone+objective+twin is one DAG path. Every fine-tuned model is evaluated
# on every task (evaluated_models() in functions/evaluate.smk). GPU rule: gpu=1, or finetune.gpus processes
# under torchrun.


include: "functions/finetune.smk"


rule finetune:
    input:
        unpack(finetune_inputs),
    output:
        directory(f"{RESULTS}/finetune/{{label}}"),
    log:
        f"{LOGS}/finetune/{{label}}.log",
    benchmark:
        f"{BENCHMARKS}/finetune/{{label}}.tsv"
    wildcard_constraints:
        label="|".join(re.escape(label) for label in FINETUNE_RUNS) or "(?!)",
    conda:
        "../../envs/models.yaml"
    threads: gpu_job_threads(FINETUNE_CPUS_PER_GPU, FINETUNE["gpus"])
    resources:
        gpu=FINETUNE["gpus"],
        mem_mb=16000,
        runtime=24 * 60,
    params:
        launcher=launcher(FINETUNE["gpus"]),
        model=lambda wc: finetune_start(FINETUNE_RUNS[wc.label]["start"])[0],
        flags=finetune_flags,
        tracking=tracking_flags("finetune"),
    shell:
        "{params.launcher:q} -m pipeline finetune --model {params.model:q} {params.flags:q} {params.tracking:q}"
        " --out {output:q}"
        " > {log:q} 2>&1"
