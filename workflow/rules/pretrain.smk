# Pre-training (docs/method.md §3): a tiny random BERT where the config asks for one (tiny_model), the
# sample's marked sentences tokenized per backbone (tokenize), and one model per
# backbone x objective (pretrain). GPU rules declare gpu=1; the SLURM profile places them.


rule tiny_model:
    input:
        lambda wc: per_shard(f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet", PRETRAIN["language"]),
    output:
        directory(f"{RESULTS}/models/{{backbone}}"),
    wildcard_constraints:
        backbone="|".join(TINY) or "^$",
    params:
        lang=PRETRAIN["language"],
        tiny=config["models"]["tiny"],
    log:
        f"{LOGS}/tiny_model/{{backbone}}.log",
    benchmark:
        f"{BENCHMARKS}/tiny_model/{{backbone}}.tsv"
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    shell:
        "python -m pipeline tiny-model --sentences {input:q} --lang {params.lang} --out {output:q}"
        " --vocab-size {params.tiny[vocab_size]} --hidden {params.tiny[hidden]} --layers {params.tiny[layers]}"
        " --heads {params.tiny[heads]} --max-length {params.tiny[max_length]} --seed {params.tiny[seed]}"
        " > {log:q} 2>&1"


rule tokenize:
    input:
        sample=lambda wc: per_shard(f"{RESULTS}/sample/{{lang}}/{{part}}/{{shard}}.parquet", PRETRAIN["language"]),
        backbone=lambda wc: backbone_inputs(wc.backbone),
    output:
        tokens=f"{RESULTS}/tokens/{{backbone}}/tokens.parquet",
        stats=f"{RESULTS}/tokens/{{backbone}}/tokens.stats.json",
    params:
        model=lambda wc: backbone_path(wc.backbone),
        lang=PRETRAIN["language"],
        max_length=PRETRAIN["max_length"],
    log:
        f"{LOGS}/tokenize/{{backbone}}.log",
    benchmark:
        f"{BENCHMARKS}/tokenize/{{backbone}}.tsv"
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=4000,
        runtime=4 * 60,
    shell:
        "python -m pipeline tokenize --marked {input.sample:q} --model {params.model:q} --lang {params.lang}"
        " --max-length {params.max_length} --out {output.tokens:q} > {log:q} 2>&1"


rule pretrain:
    input:
        tokens=f"{RESULTS}/tokens/{{backbone}}/tokens.parquet",
        backbone=lambda wc: backbone_inputs(wc.backbone),
    output:
        directory(f"{RESULTS}/models/{{backbone}}+{{objective}}"),
    params:
        model=lambda wc: backbone_path(wc.backbone),
        flags=pretrain_flags(),
        launcher=pretrain_launcher(),
    log:
        f"{LOGS}/pretrain/{{backbone}}+{{objective}}.log",
    benchmark:
        f"{BENCHMARKS}/pretrain/{{backbone}}+{{objective}}.tsv"
    conda:
        "../../envs/models.yaml"
    resources:
        gpu=PRETRAIN["gpus"],
        mem_mb=16000,
        runtime=48 * 60,
    shell:
        "{params.launcher} -m pipeline pretrain --data {input.tokens:q} --model {params.model:q} --objective {wildcards.objective}"
        " {params.flags} --out {output:q} > {log:q} 2>&1"
