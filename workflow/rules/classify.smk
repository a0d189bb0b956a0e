# GLUE / CLUE fine-tuning (docs/method.md §4): one classify job per model x task x setting, which
# fine-tunes every seed and keeps one output folder per seed (classify --seed-dirs: a job's fixed cost,
# start-up and data, is most of a small GLUE task's GPU time, bench/classify_fixed_cost.py; a setting is
# one point of the grid of batch size, lr, epochs and length searched on dev), then per model and benchmark the setting with the best dev mean and its seed spread
# (classify_summary: metrics/{glue,clue}/<model>.json, read by the tables rule). Models are named as
# elsewhere: a backbone, a backbone+objective (pretrain output) or an evaluate.models entry. With
# classify.fuse_checkpoints, the models that start from one backbone run in one classify_fused_* job per task
# and setting instead, each model's seed files in the same place (docs/stages/classify.md, "Fused seeds").


include: "functions/classify.smk"


rule classify:
    input:
        model=lambda wc: classify_model(wc.label)[1],
        data=lambda wc: classify_data(wc.task),
    output:
        metrics=classify_seed_files("metrics.json"),
        dev=classify_seed_files("dev_predictions.seed{seed}.tsv"),
    log:
        f"{LOGS}/classify/{{label}}/{{task}}/{{setting}}.log",
    benchmark:
        f"{BENCHMARKS}/classify/{{label}}/{{task}}/{{setting}}.tsv"
    wildcard_constraints:
        label=r"[A-Za-z0-9_.+-]+",
        task="|".join(CLASSIFY_BENCHMARK) or "(?!)",
        setting=r"batch\d+-lr[0-9.e+-]+-epochs[0-9.e+-]+-len\d+",
    conda:
        "../../envs/models.yaml"
    threads: gpu_job_threads(CLASSIFY_CPUS_PER_GPU)
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=6 * 60 * CLASSIFY["seeds"],
    params:
        model=lambda wc: classify_model(wc.label)[0],
        data=DATA_ROOT,
        flags=classify_flags(),
        seeds=CLASSIFY["seeds"],
        out=lambda wc: f"{RESULTS}/classify/{wc.label}/{wc.task}/{wc.setting}",
        tracking=tracking_flags("classify"),
    shell:
        "python -m pipeline classify --model {params.model:q} --task {wildcards.task:q} --data {params.data:q}"
        " --seeds {params.seeds} --seed-dirs {params.flags:q} {params.tracking:q}"
        " --name {wildcards.label:q} --out {params.out:q} > {log:q} 2>&1"


# One rule per group of models fused (CLASSIFY_FUSED): a rule's outputs cannot be computed from a wildcard,
# so each group has its own, with the task and setting as wildcards. It takes precedence over the classify
# rule for its models' files of its benchmark's tasks (the ruleorder the `ruleorder:` keyword declares,
# which takes no computed names); their other files stay the classify rule's.
for _rule, (_benchmark, _backbone, _labels) in CLASSIFY_FUSED.items():

    rule:
        name:
            _rule
        input:
            models=classify_fused_inputs(_labels),
            data=lambda wc: classify_data(wc.task),
        output:
            metrics=classify_fused_files(_labels, "metrics.json"),
            dev=classify_fused_files(_labels, "dev_predictions.seed{seed}.tsv"),
        log:
            f"{LOGS}/classify_fused/{_backbone}/{{task}}/{{setting}}.log",
        benchmark:
            f"{BENCHMARKS}/classify_fused/{_backbone}/{{task}}/{{setting}}.tsv"
        wildcard_constraints:
            task="|".join(CLASSIFY_TASKS[_benchmark]),
            setting=r"batch\d+-lr[0-9.e+-]+-epochs[0-9.e+-]+-len\d+",
        conda:
            "../../envs/models.yaml"
        threads: gpu_job_threads(CLASSIFY_CPUS_PER_GPU)
        resources:
            gpu=1,
            cpus_per_gpu=CLASSIFY_CPUS_PER_GPU,  # its name is the config's: no entry in the SLURM profile
            mem_mb=16000 + 2000 * len(_labels),  # each model's checkpoint is read on the host
            runtime=min(CLASSIFY_MAX_RUNTIME, 6 * 60 * CLASSIFY["seeds"] * len(_labels)),
        params:
            models=classify_fused_models(_labels),
            data=DATA_ROOT,
            flags=classify_flags(_backbone),
            seeds=CLASSIFY["seeds"],
            tracking=tracking_flags(f"classify_fused/{_backbone}"),
        shell:
            "python -m pipeline classify {params.models:q} --task {wildcards.task:q} --data {params.data:q}"
            " --seeds {params.seeds} --seed-dirs {params.flags:q} {params.tracking:q} > {log:q} 2>&1"

    workflow.ruleorder(_rule, "classify")


rule classify_summary:
    input:
        runs=lambda wc: classify_runs(wc.label, wc.benchmark),
        geogranno=lambda wc: classify_geogranno(wc.label, wc.benchmark),
    output:
        f"{RESULTS}/metrics/{{benchmark}}/{{label}}.json",
    log:
        f"{LOGS}/classify_summary/{{benchmark}}/{{label}}.log",
    benchmark:
        f"{BENCHMARKS}/classify_summary/{{benchmark}}/{{label}}.tsv"
    wildcard_constraints:
        benchmark="glue|clue",
        label=r"[A-Za-z0-9_.+-]+",
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m pipeline classify-summary --runs {input.runs:q} --benchmark {wildcards.benchmark:q}"
        " --name {wildcards.label:q} --geogranno {input.geogranno:q} --out {output:q} > {log:q} 2>&1"


rule classify_unpack:
    input:
        lambda wc: CLASSIFY_UNPACK[wc.path][0],
    output:
        "{path}",
    log:
        f"{LOGS}/classify_unpack/{{path}}.log",
    benchmark:
        f"{BENCHMARKS}/classify_unpack/{{path}}.tsv"
    wildcard_constraints:
        path="|".join(re.escape(path) for path in CLASSIFY_UNPACK) or "(?!)",
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        member=lambda wc: CLASSIFY_UNPACK[wc.path][1],
    shell:
        "python -m pipeline classify-unpack --archive {input:q} --member {params.member:q} --out {output:q}"
        " > {log:q} 2>&1"
