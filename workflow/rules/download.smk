# Fetch the inputs that a config names by URL (the paper configs); demo and sample inputs
# are local files, which this rule never touches.


# Compute nodes often have no internet: downloads run where snakemake runs.
localrules:
    download,


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
