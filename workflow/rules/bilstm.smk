# BiLSTM sentence encoders of paper 004 (bilstm: one per pooling x size of the config's bilstm
# section, trained on NLI pairs). They are evaluated on SNLI here and on the SentEval transfer tasks
# by evaluate_transfer (evaluate.smk).


include: "functions/bilstm.smk"


rule bilstm:
    input:
        vectors=bilstm_vectors(),
        train=bilstm_files("train"),
        dev=bilstm_files("dev"),
        test=bilstm_files("test"),
    output:
        model=directory(f"{RESULTS}/bilstm/{{label}}"),
        metrics=f"{RESULTS}/metrics/snli/{{label}}.json",
    log:
        f"{LOGS}/bilstm/{{label}}.log",
    benchmark:
        f"{BENCHMARKS}/bilstm/{{label}}.tsv"
    wildcard_constraints:
        label="bilstm-[a-z-]+-[0-9]+",
    conda:
        "../../envs/models.yaml"
    threads: gpu_job_threads(BILSTM_CPUS_PER_GPU)
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=24 * 60,
    params:
        splits=bilstm_splits,
        flags=bilstm_flags,
        tracking=tracking_flags("bilstm"),
    shell:
        "python -m pipeline bilstm --train {input.train:q} {params.splits:q} --vectors {input.vectors:q}"
        " {params.flags:q} {params.tracking:q} --name {wildcards.label:q} --out {output.model:q} --metrics {output.metrics:q}"
        " > {log:q} 2>&1"
