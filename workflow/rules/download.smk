# Fetch the inputs that a config names by URL (the paper configs); demo and sample inputs
# are local files, which this rule never touches. Included last: each stage file registers its
# downloaded inputs (register_download) and its hub models (resolve_model) while it is read, and
# the two rules below take the complete registries as their wildcards.


include: "functions/download.smk"


# Compute nodes often have no internet: downloads run where snakemake runs.
localrules:
    download,
    download_model,


rule download:
    output:
        "{download}",
    log:
        f"{LOGS}/download/{{download}}.log",
    benchmark:
        f"{BENCHMARKS}/download/{{download}}.tsv"
    wildcard_constraints:
        download="|".join(re.escape(path) for path in DOWNLOADS) or "(?!)",
    retries: 2
    conda:
        "../../envs/corpus.yaml"
    resources:
        runtime=24 * 60,
    params:
        sources=lambda wc: source_flags(DOWNLOADS[wc.download]),
        checksums=lambda wc: checksum_flags(DOWNLOADS[wc.download]),
    shell:
        "python -m pipeline download {params.sources:q} --out {output:q} {params.checksums:q} > {log:q} 2>&1"


rule download_model:
    output:
        directory("{model}"),
    log:
        f"{LOGS}/download_model/{{model}}.log",
    benchmark:
        f"{BENCHMARKS}/download_model/{{model}}.tsv"
    wildcard_constraints:
        model=HUB_FOLDER if HUB_MODELS else "(?!)",
    retries: 2
    conda:
        "../../envs/models.yaml"
    resources:
        runtime=6 * 60,
    params:
        spec=lambda wc: HUB_MODELS[wc.model],
        # an unpinned model's commit: recorded in models.lock at the first download, read from it after
        lock=lambda wc: ["--lock", MODELS_LOCK] if hub_reference(HUB_MODELS[wc.model])[1] is None else [],
    shell:
        "python -m pipeline download-model --model {params.spec:q} --out {output:q} {params.lock:q} > {log:q} 2>&1"
