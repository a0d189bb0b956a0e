# Evaluation (docs/method.md §5): every model of the config on every task of its language, one
# metrics JSON per model, task and pooling: evaluate_<lang> scores a model on all of its language's
# tasks in one job (the model loads once), evaluate_lexical a lexical baseline on one retrieval task;
# SemEval-2013 5(a) as BURT twin §4.2: finetune_semeval fine-tunes a transformer on its training pairs,
# evaluate_frozen scores a fixed encoder (bag of vectors, BiLSTM) on frozen features.
# Also the SentEval transfer tasks for every English model (evaluate_transfer) and the analogy figures
# (figures). Model labels and specs: evaluated_models().


include: "functions/evaluate.smk"


for lang, group in EVALUATION_GROUPS.items():

    rule:
        name:
            f"evaluate_{lang}"
        input:
            model=lambda wc: EVAL_MODELS[wc.label]["inputs"],
            data=[path for task in group["tasks"] for path in evaluation_data(task)],
        output:
            [f"{RESULTS}/metrics/{task}/{{label}}.{{pooling}}.json" for task in group["tasks"]],
        log:
            f"{LOGS}/evaluate/{lang}/{{label}}.{{pooling}}.log",
        benchmark:
            f"{BENCHMARKS}/evaluate/{lang}/{{label}}.{{pooling}}.tsv"
        wildcard_constraints:
            # any label, not one_of(group["labels"]): an alternation of every model is copied into each
            # job's paths, which made the dry run quadratic in the number of models (BENCHMARKS.md
            # "Dry run at scale"). The languages' tasks are disjoint (the schema), so a label needs no
            # language; a lexical baseline's retrieval file goes to evaluate_lexical (ruleorder below).
            label=r"[A-Za-z0-9_.+-]+",
            pooling="mean|cls|max",
        conda:
            "../../envs/models.yaml"
        threads: gpu_job_threads(EVALUATE_CPUS_PER_GPU)
        resources:
            gpu=lambda wc: evaluation_gpus(wc.label),
            mem_mb=8000,
            runtime=60 + 30 * len(group["tasks"]),
        params:
            tasks=group["tasks"],
            model=lambda wc: EVAL_MODELS[wc.label]["spec"],
            flags=["--data", DATA_ROOT, *options(EVALUATE, "batch_size", "max_length", "seed")],
        shell:
            "python -m pipeline evaluate {params.tasks:q} --model {params.model:q} --name {wildcards.label:q}"
            " --pooling {wildcards.pooling:q} {params.flags:q} --out {output:q} > {log:q} 2>&1"


# A lexical baseline's file on a retrieval task matches evaluate_<lang>'s pattern too; it is this rule's
# (`ruleorder: evaluate_lexical > evaluate_<lang>` for the languages that have a group).
for lang in EVALUATION_GROUPS:
    workflow.ruleorder("evaluate_lexical", f"evaluate_{lang}")


rule evaluate_lexical:
    input:
        data=lambda wc: evaluation_data(wc.task),
    output:
        f"{RESULTS}/metrics/{{task}}/{{label}}.mean.json",
    log:
        f"{LOGS}/evaluate/{{task}}/{{label}}.mean.log",
    benchmark:
        f"{BENCHMARKS}/evaluate/{{task}}/{{label}}.mean.tsv"
    wildcard_constraints:
        task=one_of(RETRIEVAL),
        label=one_of(label for label, model in EVAL_MODELS.items() if model["kind"] == "lexical"),
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=4000,
        runtime=2 * 60,
    params:
        flags=["--data", DATA_ROOT, *options(EVALUATE, "batch_size", "max_length", "seed")],
    shell:
        "python -m pipeline evaluate {wildcards.task:q} --model {wildcards.label:q} --name {wildcards.label:q}"
        " --pooling mean {params.flags:q} --out {output:q} > {log:q} 2>&1"


rule finetune_semeval:
    input:
        model=lambda wc: EVAL_MODELS[wc.label]["inputs"],
        data=evaluation_data("semeval5a"),
    output:
        f"{RESULTS}/metrics/semeval5a/{{label}}.{{pooling}}.json",
    log:
        f"{LOGS}/finetune_semeval/{{label}}.{{pooling}}.log",
    benchmark:
        f"{BENCHMARKS}/finetune_semeval/{{label}}.{{pooling}}.tsv"
    wildcard_constraints:
        # any label, not one_of(every transformer): an alternation of every model made the dry run
        # quadratic in the number of models (BENCHMARKS.md "Dry run at scale"); a fixed encoder's file
        # is evaluate_frozen's (ruleorder below)
        label=r"[A-Za-z0-9_.+-]+",
        pooling="mean|cls|max",
    conda:
        "../../envs/models.yaml"
    threads: gpu_job_threads(EVALUATE_CPUS_PER_GPU)
    resources:
        gpu=lambda wc: evaluation_gpus(wc.label),
        mem_mb=8000,
        runtime=2 * 60,
    params:
        model=lambda wc: EVAL_MODELS[wc.label]["spec"],
        flags=[
            *("--data", DATA_ROOT),
            *options(SEMEVAL, "epochs", "max_steps", "batch_size", "lr"),
            *options(EVALUATE, "max_length", "seed"),
        ],
    shell:
        "python -m pipeline finetune-semeval --model {params.model:q} --name {wildcards.label:q}"
        " --pooling {wildcards.pooling:q} {params.flags:q} --out {output:q} > {log:q} 2>&1"


ruleorder: evaluate_frozen > finetune_semeval


rule evaluate_frozen:
    input:
        model=lambda wc: EVAL_MODELS[wc.label]["inputs"],
        data=lambda wc: evaluation_data(wc.task),
    output:
        f"{RESULTS}/metrics/{{task}}/{{label}}.mean.json",
    log:
        f"{LOGS}/evaluate/{{task}}/{{label}}.mean.log",
    benchmark:
        f"{BENCHMARKS}/evaluate/{{task}}/{{label}}.mean.tsv"
    wildcard_constraints:
        task=one_of(FINETUNED_TASKS),
        # a backbone's bag of input embeddings by its suffix (one per backbone: an alternation of them
        # grew with the config, BENCHMARKS.md "Dry run at scale"), the other fixed encoders by name
        label=FIXED_ENCODER_LABEL,
    conda:
        "../../envs/models.yaml"
    threads: gpu_job_threads(EVALUATE_CPUS_PER_GPU)
    resources:
        gpu=lambda wc: evaluation_gpus(wc.label),
        mem_mb=8000,
        runtime=60,
    params:
        model=lambda wc: EVAL_MODELS[wc.label]["spec"],
        flags=["--data", DATA_ROOT, *options(EVALUATE, "batch_size", "max_length", "seed")],
    shell:
        "python -m pipeline evaluate {wildcards.task:q} --model {params.model:q} --name {wildcards.label:q}"
        " --pooling mean {params.flags:q} --out {output:q} > {log:q} 2>&1"


rule figures:
    input:
        lambda wc: EVAL_MODELS[wc.label]["inputs"] + evaluation_data("analogy"),
    output:
        pca=report(
            f"{RESULTS}/figures/{{label}}/analogy_pca_male_female.png",
            caption="../report/figure_pca.rst",
            category="Figures",
            subcategory="{label}",
            labels={"model": "{label}", "figure": "PCA, male-female pairs"},
        ),
        tsne=report(
            f"{RESULTS}/figures/{{label}}/analogy_tsne_differences.png",
            caption="../report/figure_tsne.rst",
            category="Figures",
            subcategory="{label}",
            labels={"model": "{label}", "figure": "t-SNE of analogy differences"},
        ),
    log:
        f"{LOGS}/figures/{{label}}.log",
    benchmark:
        f"{BENCHMARKS}/figures/{{label}}.tsv"
    wildcard_constraints:
        label=r"[A-Za-z0-9_.+-]+",
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        model=lambda wc: EVAL_MODELS[wc.label]["spec"],
        flags=["--pooling", EVALUATE["pooling"][0], "--data", DATA_ROOT, *options(EVALUATE, "seed")],
    shell:
        "python -m pipeline figures --model {params.model:q} {params.flags:q} --out $(dirname {output.pca:q})"
        " > {log:q} 2>&1"


rule evaluate_transfer:
    input:
        model=lambda wc: EVAL_MODELS[wc.label]["inputs"],
        data=evaluation_data("transfer") + evaluation_data("sts"),  # STS14, STS-B and SICK are under sts
    output:
        f"{RESULTS}/metrics/transfer/{{label}}.{{pooling}}.json",
    log:
        f"{LOGS}/evaluate/transfer/{{label}}.{{pooling}}.log",
    benchmark:
        f"{BENCHMARKS}/evaluate/transfer/{{label}}.{{pooling}}.tsv"
    wildcard_constraints:
        label=r"[A-Za-z0-9_.+-]+",
        pooling="mean|cls|max",
    conda:
        "../../envs/models.yaml"
    threads: gpu_job_threads(EVALUATE_CPUS_PER_GPU)
    resources:
        gpu=lambda wc: evaluation_gpus(wc.label),
        mem_mb=8000,
        runtime=2 * 60,
    params:
        model=lambda wc: EVAL_MODELS[wc.label]["spec"],
        flags=[
            *("--data", DATA_ROOT, "--transfer-tasks", ",".join(config["transfer"]["tasks"])),
            *options(config["transfer"], "kfold"),
            *("--transfer-classifier", config["transfer"]["classifier"]),
            *options(EVALUATE, "batch_size", "max_length", "seed"),
        ],
    shell:
        "python -m pipeline evaluate transfer --model {params.model:q} --name {wildcards.label:q}"
        " --pooling {wildcards.pooling:q} {params.flags:q} --out {output:q} > {log:q} 2>&1"
