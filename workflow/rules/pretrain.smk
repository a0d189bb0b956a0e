# Pre-training (docs/method.md §3): a tiny random BERT where the config asks for one (tiny_model),
# each sample shard's marked sentences tokenized per sample and backbone (tokenize, one job per
# shard), and one model per backbone x objective (pretrain, reading every token shard of the sample
# the objective reads: objective_sample in functions/ngrams.smk, <preset>-pairs for NSP / SOP); and the word2vec
# baseline's vectors per corpus language (word2vec). GPU rules declare gpu=1; the SLURM profile
# places them. pretrain always passes --resume, so a killed job continues from its last checkpoint
# when rerun; if the job's settings changed meanwhile, it stops (exit 2) naming the differences
# instead of discarding the checkpoint: delete the `.<backbone>+<objective>.work` folder beside the
# model to start afresh (what --restart does).


include: "functions/pretrain.smk"


rule tiny_model:
    input:
        lambda wc: per_shard(
            f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet", backbone_lang(wc.backbone)
        ),
    output:
        directory(f"{RESULTS}/models/{{backbone}}"),
    log:
        f"{LOGS}/tiny_model/{{backbone}}.log",
    benchmark:
        f"{BENCHMARKS}/tiny_model/{{backbone}}.tsv"
    wildcard_constraints:
        backbone=BACKBONE_NAME if TINY else "(?!)",  # not a pre-trained label (PRETRAINED_LABEL)
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        lang=lambda wc: backbone_lang(wc.backbone),
        flags=options(config["models"]["tiny"], "vocab_size", "hidden", "layers", "heads", "max_length", "seed"),
    shell:
        "python -m pipeline tiny-model --sentences {input:q} --lang {params.lang:q} --out {output:q} {params.flags:q}"
        " > {log:q} 2>&1"


rule tokenize:
    input:
        sample=f"{RESULTS}/sample/{{sample}}/{PRETRAIN['language']}/{{part}}/{{shard}}.parquet",
        backbone=lambda wc: BACKBONE_MODELS[wc.backbone][1],
    output:
        tokens=f"{RESULTS}/tokens/{{sample}}/{{backbone}}/{{part}}/{{shard}}.parquet",
        stats=f"{RESULTS}/tokens/{{sample}}/{{backbone}}/{{part}}/{{shard}}.stats.json",
    log:
        f"{LOGS}/tokenize/{{sample}}/{{backbone}}/{{part}}/{{shard}}.log",
    benchmark:
        f"{BENCHMARKS}/tokenize/{{sample}}/{{backbone}}/{{part}}/{{shard}}.tsv"
    wildcard_constraints:
        backbone=r"[^/+]+",
        sample=SAMPLE_PATTERN,
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=4000,
        runtime=2 * 60,
    params:
        model=lambda wc: BACKBONE_MODELS[wc.backbone][0],
        flags=["--lang", PRETRAIN["language"], *options(PRETRAIN, "max_length")],
    shell:
        "python -m pipeline tokenize --marked {input.sample:q} --model {params.model:q} {params.flags:q}"
        " --out {output.tokens:q} > {log:q} 2>&1"


rule pretrain:
    input:
        tokens=token_shards,
        backbone=lambda wc: BACKBONE_MODELS[PRETRAIN_RUNS[wc.label].backbone][1],
        generator=lambda wc: electra_generator(PRETRAIN_RUNS[wc.label].backbone)[1],
    output:
        directory(f"{RESULTS}/models/{{label}}"),
    log:
        f"{LOGS}/pretrain/{{label}}.log",
    benchmark:
        f"{BENCHMARKS}/pretrain/{{label}}.tsv"
    wildcard_constraints:
        label=PRETRAINED_LABEL if PRETRAIN_RUNS else "(?!)",
    conda:
        "../../envs/models.yaml"
    threads: gpu_job_threads(PRETRAIN_CPUS_PER_GPU, PRETRAIN["gpus"])
    resources:
        gpu=PRETRAIN["gpus"],
        mem_mb=16000,
        runtime=48 * 60,
    params:
        launcher=launcher(PRETRAIN["gpus"]),
        model=lambda wc: BACKBONE_MODELS[PRETRAIN_RUNS[wc.label].backbone][0],
        generator=lambda wc: electra_generator(PRETRAIN_RUNS[wc.label].backbone)[0],
        objective=lambda wc: PRETRAIN_RUNS[wc.label].objective,
        flags=lambda wc: pretrain_flags(wc.label),
        workers=lambda wc, threads: loader_workers(threads),
        tracking=tracking_flags("pretrain"),
    shell:
        "{params.launcher:q} -m pipeline pretrain --data {input.tokens:q} --model {params.model:q}"
        " --objective {params.objective:q} --generator={params.generator:q} {params.flags:q}"
        " --num-workers {params.workers} {params.tracking:q} --out {output:q}"
        " > {log:q} 2>&1"


rule word2vec:
    input:
        sentences=lambda wc: per_shard(f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet", wc.lang),
        nli=lambda wc: word2vec_nli(wc.lang)[1],
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
        flags=options(config["word2vec"], "dim", "window", "min_count", "epochs", "seed"),
        lowercase=lambda wc: ["--lowercase" if wc.lang == "en" else "--no-lowercase"],
        nli=lambda wc: word2vec_nli(wc.lang)[0],
    shell:
        "python -m pipeline word2vec --sentences {input.sentences:q} --lang {wildcards.lang:q} {params.flags:q}"
        " --workers {threads} {params.lowercase:q} {params.nli:q} --out {output:q} > {log:q} 2>&1"
