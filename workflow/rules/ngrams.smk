# N-gram stage (docs/method.md §2): clean sentences -> per-document PMI n-grams + marked sentences
# (ngrams), the corpus-level KenLM model (kenlm) and its PMI ablation (ngrams_corpus), and the
# pre-training sample of marked sentences (sample). Contracts: pipeline/contracts.py.
# ngrams and sample run once per n-gram preset ({preset}: ulr, ULR-BERT §4's vocabulary; burt,
# BURT §5.1's) that some pre-training objective reads (ngrams.presets; functions/ngrams.smk). The
# sample depends on the sentence ids and the seed only, so every preset samples the same sentences.
# NSP / SOP read the preset's pair sample ({sample} <preset>-pairs: sample --with-next, each sampled
# sentence with its next one, so they get as many pairs as the others get sentences, ULR-BERT §7.1);
# it is made only where a configured run's objective is nsp or sop.


include: "functions/ngrams.smk"


rule ngrams:
    input:
        f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet",
    output:
        ngrams=f"{RESULTS}/ngrams/{{preset}}/{{lang}}/{{part}}/{{shard}}/ngrams.parquet",
        marked=f"{RESULTS}/ngrams/{{preset}}/{{lang}}/{{part}}/{{shard}}/marked.parquet",
        stats=f"{RESULTS}/ngrams/{{preset}}/{{lang}}/{{part}}/{{shard}}/stats.json",
    log:
        f"{LOGS}/ngrams/{{preset}}/{{lang}}/{{part}}/{{shard}}.log",
    benchmark:
        f"{BENCHMARKS}/ngrams/{{preset}}/{{lang}}/{{part}}/{{shard}}.tsv"
    wildcard_constraints:
        preset="|".join(PRESET_NAMES),
    conda:
        "../../envs/ngrams.yaml"
    resources:
        mem_mb=3000,
        runtime=2 * 60,
    params:
        flags=lambda wc: ngram_flags(wc.preset),
    shell:
        "python -m pipeline ngrams --sentences {input:q} --lang {wildcards.lang:q} --out $(dirname {output.stats:q})"
        " {params.flags:q} > {log:q} 2>&1"


rule kenlm:
    input:
        lambda wc: per_shard(f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet", wc.lang),
    output:
        lm=f"{RESULTS}/kenlm/{{lang}}/lm.binary",
        stats=f"{RESULTS}/kenlm/{{lang}}/lm.binary.json",
    log:
        f"{LOGS}/kenlm/{{lang}}.log",
    benchmark:
        f"{BENCHMARKS}/kenlm/{{lang}}.tsv"
    conda:
        "../../envs/ngrams.yaml"
    resources:
        mem_mb=16000,
        runtime=12 * 60,
    params:
        flags=lambda wc, resources: kenlm_flags(resources.mem_mb),
    shell:
        "python -m pipeline kenlm --sentences {input:q} --lang {wildcards.lang:q} {params.flags:q}"
        " --out {output.lm:q} > {log:q} 2>&1"


rule ngrams_corpus:
    input:
        sentences=f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet",
        lm=f"{RESULTS}/kenlm/{{lang}}/lm.binary",
    output:
        ngrams=f"{RESULTS}/ngrams-corpus/{{lang}}/{{part}}/{{shard}}/ngrams.parquet",
        marked=f"{RESULTS}/ngrams-corpus/{{lang}}/{{part}}/{{shard}}/marked.parquet",
        stats=f"{RESULTS}/ngrams-corpus/{{lang}}/{{part}}/{{shard}}/stats.json",
    log:
        f"{LOGS}/ngrams_corpus/{{lang}}/{{part}}/{{shard}}.log",
    benchmark:
        f"{BENCHMARKS}/ngrams_corpus/{{lang}}/{{part}}/{{shard}}.tsv"
    conda:
        "../../envs/ngrams.yaml"
    resources:
        mem_mb=3000,
        runtime=4 * 60,
    params:
        flags=ngram_flags(DEFAULT_PRESET, mode="corpus"),  # the ablation of the default vocabulary
    shell:
        "python -m pipeline ngrams --sentences {input.sentences:q} --lang {wildcards.lang:q} --lm {input.lm:q}"
        " --out $(dirname {output.stats:q}) {params.flags:q} > {log:q} 2>&1"


rule sample:
    input:
        shard=lambda wc: f"{RESULTS}/ngrams/{sample_preset(wc.sample)}/{wc.lang}/{wc.part}/{wc.shard}/marked.parquet",
        every=lambda wc: per_shard(
            f"{RESULTS}/ngrams/{sample_preset(wc.sample)}/{{lang}}/{{part}}/{{shard}}/marked.parquet", wc.lang
        ),
    output:
        sample=f"{RESULTS}/sample/{{sample}}/{{lang}}/{{part}}/{{shard}}.parquet",
        stats=f"{RESULTS}/sample/{{sample}}/{{lang}}/{{part}}/{{shard}}.stats.json",
    log:
        f"{LOGS}/sample/{{sample}}/{{lang}}/{{part}}/{{shard}}.log",
    benchmark:
        f"{BENCHMARKS}/sample/{{sample}}/{{lang}}/{{part}}/{{shard}}.tsv"
    wildcard_constraints:
        sample=SAMPLE_PATTERN,
    conda:
        "../../envs/ngrams.yaml"
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        flags=lambda wc: sample_flags(wc.sample),
    shell:
        "python -m pipeline sample --marked {input.every:q} --only {input.shard:q} {params.flags:q}"
        " --out {output.sample:q} > {log:q} 2>&1"
