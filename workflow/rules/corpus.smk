# Corpus stage (docs/method.md §1): dump part -> docs shards (extract) -> Simplified docs (convert,
# Chinese) -> clean sentences (clean). Contracts: pipeline/contracts.py.


rule extract:
    input:
        lambda wc: dump_path(wc.lang, wc.part),
    output:
        shards=expand(f"{RESULTS}/corpus/{{{{lang}}}}/docs/{{{{part}}}}/{{shard}}.parquet", shard=SHARDS),
        stats=f"{RESULTS}/corpus/{{lang}}/docs/{{part}}/extract-stats.json",
    params:
        shards=len(SHARDS),
        keep_lists=lambda wc: "--keep-lists" if lang_config(wc.lang)["keep_lists"] else "",
    log:
        f"{LOGS}/extract/{{lang}}/{{part}}.log",
    benchmark:
        f"{BENCHMARKS}/extract/{{lang}}/{{part}}.tsv"
    conda:
        "../../envs/corpus.yaml"
    resources:
        mem_mb=2000,
        runtime=12 * 60,
    shell:
        "python -m pipeline extract --dump {input:q} --lang {wildcards.lang} --shards {params.shards}"
        " --out $(dirname {output.stats:q}) --stats {output.stats:q} {params.keep_lists} > {log:q} 2>&1"


rule convert:
    input:
        f"{RESULTS}/corpus/{{lang}}/docs/{{part}}/{{shard}}.parquet",
    output:
        docs=f"{RESULTS}/corpus/{{lang}}/simplified/{{part}}/{{shard}}.parquet",
        stats=f"{RESULTS}/corpus/{{lang}}/simplified/{{part}}/{{shard}}.stats.json",
    params:
        opencc=lambda wc: lang_config(wc.lang)["opencc"],
        variants=lambda wc: ",".join(lang_config(wc.lang)["variants"]),
    log:
        f"{LOGS}/convert/{{lang}}/{{part}}/{{shard}}.log",
    benchmark:
        f"{BENCHMARKS}/convert/{{lang}}/{{part}}/{{shard}}.tsv"
    conda:
        "../../envs/corpus.yaml"
    resources:
        mem_mb=2000,
        runtime=4 * 60,
    shell:
        "python -m pipeline convert --input {input:q} --out $(dirname {output.docs:q})"
        " --opencc-config {params.opencc} --variants {params.variants} > {log:q} 2>&1"


rule clean:
    input:
        clean_input,
    output:
        sentences=f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet",
        stats=f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.stats.json",
    params:
        flags=clean_flags,
    log:
        f"{LOGS}/clean/{{lang}}/{{part}}/{{shard}}.log",
    benchmark:
        f"{BENCHMARKS}/clean/{{lang}}/{{part}}/{{shard}}.tsv"
    conda:
        "../../envs/corpus.yaml"
    resources:
        mem_mb=2000,
        runtime=4 * 60,
    shell:
        "python -m pipeline clean --input {input:q} --lang {wildcards.lang}"
        " --out $(dirname {output.sentences:q}) {params.flags} > {log:q} 2>&1"
