# Evaluation (docs/method.md §5): the word2vec baseline (word2vec), every model of the config on every
# task of its language (evaluate: one metrics JSON per model, task and pooling), and the
# analogy figures (figures). Model labels and specs: evaluated_models() in common.smk.


rule word2vec:
    input:
        lambda wc: per_shard(f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet", wc.lang),
    output:
        f"{RESULTS}/word2vec/{{lang}}/vectors.bin",
    log:
        f"{LOGS}/word2vec/{{lang}}.log",
    benchmark:
        f"{BENCHMARKS}/word2vec/{{lang}}.tsv"
    conda:
        "../../envs/models.yaml"
    threads: config["word2vec"]["workers"]
    resources:
        mem_mb=8000,
        runtime=12 * 60,
    params:
        w2v=config["word2vec"],
        lowercase=lambda wc: "--lowercase" if wc.lang == "en" else "--no-lowercase",
    shell:
        "python -m pipeline word2vec --sentences {input:q} --lang {wildcards.lang:q} --dim {params.w2v[dim]:q}"
        " --window {params.w2v[window]:q} --min-count {params.w2v[min_count]:q} --epochs {params.w2v[epochs]:q}"
        " --seed {params.w2v[seed]:q} --workers {threads} {params.lowercase:q} --out {output:q} > {log:q} 2>&1"


rule evaluate:
    input:
        model=lambda wc: EVAL_MODELS[wc.label]["inputs"],
        data=lambda wc: evaluation_data(wc.task),
    output:
        f"{RESULTS}/metrics/{{task}}/{{label}}.{{pooling}}.json",
    log:
        f"{LOGS}/evaluate/{{task}}/{{label}}.{{pooling}}.log",
    benchmark:
        f"{BENCHMARKS}/evaluate/{{task}}/{{label}}.{{pooling}}.tsv"
    wildcard_constraints:
        task="analogy|sts|wordsim|geogranno|faq|ppdb|semeval5a|scws",
        label=r"[A-Za-z0-9_.+-]+",
        pooling="mean|cls|max",
    conda:
        "../../envs/models.yaml"
    threads: EVALUATE_CPUS_PER_GPU
    resources:
        gpu=lambda wc: evaluation_gpus(wc.label),
        mem_mb=lambda wc: 8000 if EVAL_MODELS[wc.label]["kind"] != "lexical" else 4000,
        runtime=2 * 60,
    params:
        model=lambda wc: EVAL_MODELS[wc.label]["spec"],
        data=DATA_ROOT,
        batch_size=EVALUATE["batch_size"],
        max_length=EVALUATE["max_length"],
        seed=EVALUATE["seed"],
    shell:
        "python -m pipeline evaluate {wildcards.task:q} --model {params.model:q} --name {wildcards.label:q}"
        " --pooling {wildcards.pooling:q} --data {params.data:q} --batch-size {params.batch_size:q}"
        " --max-length {params.max_length:q} --seed {params.seed:q} --out {output:q} > {log:q} 2>&1"


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
        data=DATA_ROOT,
        pooling=EVALUATE["pooling"][0],
        seed=EVALUATE["seed"],
    shell:
        "python -m pipeline figures --model {params.model:q} --pooling {params.pooling:q} --data {params.data:q}"
        " --seed {params.seed:q} --out $(dirname {output.pca:q}) > {log:q} 2>&1"
