# Corpus stage (docs/method.md §1): dump part -> docs shards (extract) -> Simplified docs (convert,
# Chinese) -> clean sentences (clean). Contracts: pipeline/contracts.py.


include: "functions/corpus.smk"


rule extract:
    input:
        lambda wc: dump_path(wc.lang, wc.part),
    output:
        shards=expand(f"{RESULTS}/corpus/{{{{lang}}}}/docs/{{{{part}}}}/{{shard}}.parquet", shard=SHARDS),
        stats=f"{RESULTS}/corpus/{{lang}}/docs/{{part}}/extract-stats.json",
    log:
        f"{LOGS}/extract/{{lang}}/{{part}}.log",
    benchmark:
        f"{BENCHMARKS}/extract/{{lang}}/{{part}}.tsv"
    wildcard_constraints:
        part=parts_pattern(sliced=False),
    conda:
        "../../envs/corpus.yaml"
    resources:
        mem_mb=2000,
        runtime=12 * 60,
    params:
        shards=len(SHARDS),
        flags=keep_lists_flags,
    shell:
        "python -m pipeline extract --dump {input:q} --lang {wildcards.lang:q} --shards {params.shards:q}"
        " --out $(dirname {output.stats:q}) --stats {output.stats:q} {params.flags:q} > {log:q} 2>&1"


# A multistream dump part with `slices: N`: N extract jobs, each over its own run of streams,
# then merge-slices writes the part's shards (byte for byte what one extract job writes).
rule extract_slice:
    input:
        dump=lambda wc: dump_path(wc.lang, wc.part),
        index=lambda wc: index_path(wc.lang, wc.part),
    output:
        shards=expand(
            f"{RESULTS}/corpus/{{{{lang}}}}/slices/{{{{part}}}}/{{{{slice}}}}/{{shard}}.parquet", shard=SHARDS
        ),
        stats=f"{RESULTS}/corpus/{{lang}}/slices/{{part}}/{{slice}}/extract-stats.json",
    log:
        f"{LOGS}/extract_slice/{{lang}}/{{part}}/{{slice}}.log",
    benchmark:
        f"{BENCHMARKS}/extract_slice/{{lang}}/{{part}}/{{slice}}.tsv"
    wildcard_constraints:
        part=parts_pattern(sliced=True),
        slice=r"\d+",
    conda:
        "../../envs/corpus.yaml"
    resources:
        mem_mb=2000,
        runtime=12 * 60,
    params:
        part=lambda wc: f"{wc.slice}/{dump_slices(wc.lang, wc.part)}",
        shards=len(SHARDS),
        flags=keep_lists_flags,
    shell:
        "python -m pipeline extract --dump {input.dump:q} --index {input.index:q} --slice {params.part:q}"
        " --lang {wildcards.lang:q} --shards {params.shards:q} --out $(dirname {output.stats:q})"
        " --stats {output.stats:q} {params.flags:q} > {log:q} 2>&1"


rule merge_slices:
    input:
        lambda wc: [f"{d}/extract-stats.json" for d in slice_dirs(wc)],
    output:
        f"{RESULTS}/corpus/{{lang}}/docs/{{part}}/{{shard}}.parquet",
    log:
        f"{LOGS}/merge_slices/{{lang}}/{{part}}/{{shard}}.log",
    benchmark:
        f"{BENCHMARKS}/merge_slices/{{lang}}/{{part}}/{{shard}}.tsv"
    wildcard_constraints:
        part=parts_pattern(sliced=True),
    conda:
        "../../envs/corpus.yaml"
    resources:
        mem_mb=2000,
        runtime=2 * 60,
    params:
        dirs=slice_dirs,
        shards=len(SHARDS),
        shard=lambda wc: int(wc.shard.removeprefix("shard-")),
    shell:
        "python -m pipeline merge-slices --slices {params.dirs:q} --shards {params.shards:q} --shard {params.shard:q}"
        " --out $(dirname {output:q}) > {log:q} 2>&1"


rule merge_slice_stats:
    input:
        lambda wc: [f"{d}/extract-stats.json" for d in slice_dirs(wc)],
    output:
        f"{RESULTS}/corpus/{{lang}}/docs/{{part}}/extract-stats.json",
    log:
        f"{LOGS}/merge_slice_stats/{{lang}}/{{part}}.log",
    benchmark:
        f"{BENCHMARKS}/merge_slice_stats/{{lang}}/{{part}}.tsv"
    wildcard_constraints:
        part=parts_pattern(sliced=True),
    conda:
        "../../envs/corpus.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        dirs=slice_dirs,
        shards=len(SHARDS),
    shell:
        "python -m pipeline merge-slices --slices {params.dirs:q} --shards {params.shards:q} --stats-only"
        " --out $(dirname {output:q}) --stats {output:q} > {log:q} 2>&1"


rule convert:
    input:
        f"{RESULTS}/corpus/{{lang}}/docs/{{part}}/{{shard}}.parquet",
    output:
        docs=f"{RESULTS}/corpus/{{lang}}/simplified/{{part}}/{{shard}}.parquet",
        stats=f"{RESULTS}/corpus/{{lang}}/simplified/{{part}}/{{shard}}.stats.json",
    log:
        f"{LOGS}/convert/{{lang}}/{{part}}/{{shard}}.log",
    benchmark:
        f"{BENCHMARKS}/convert/{{lang}}/{{part}}/{{shard}}.tsv"
    conda:
        "../../envs/corpus.yaml"
    resources:
        mem_mb=2000,
        runtime=4 * 60,
    params:
        flags=convert_flags,
    shell:
        "python -m pipeline convert --input {input:q} --out $(dirname {output.docs:q}) {params.flags:q} > {log:q} 2>&1"


rule clean:
    input:
        clean_input,
    output:
        sentences=f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet",
        stats=f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.stats.json",
    log:
        f"{LOGS}/clean/{{lang}}/{{part}}/{{shard}}.log",
    benchmark:
        f"{BENCHMARKS}/clean/{{lang}}/{{part}}/{{shard}}.tsv"
    conda:
        "../../envs/corpus.yaml"
    resources:
        mem_mb=2000,
        runtime=4 * 60,
    params:
        flags=clean_flags,
    shell:
        "python -m pipeline clean --input {input:q} --lang {wildcards.lang:q}"
        " --out $(dirname {output.sentences:q}) {params.flags:q} > {log:q} 2>&1"
