# BiLSTM sentence encoders of paper 004 (bilstm: one per pooling x size of the config's
# bilstm section, trained on NLI pairs) and the SentEval transfer tasks for every English
# model (evaluate_transfer). Labels and directories: BILSTM_MODELS in common.smk.
import shlex


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
    threads: BILSTM_CPUS_PER_GPU
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=24 * 60,
    params:
        pooling=lambda wc: BILSTM_MODELS[wc.label]["pooling"],
        hidden=lambda wc: BILSTM_MODELS[wc.label]["hidden"],
        dev=lambda wc, input: f"--dev {' '.join(shlex.quote(p) for p in input.dev)}" if input.dev else "",
        test=lambda wc, input: f"--test {' '.join(shlex.quote(p) for p in input.test)}" if input.test else "",
        settings=BILSTM,
    shell:
        "python -m pipeline bilstm --train {input.train:q} {params.dev} {params.test} --vectors {input.vectors:q}"
        " --max-vocab {params.settings[max_vocab]} --pooling {params.pooling} --hidden {params.hidden}"
        " --dev-fraction {params.settings[dev_fraction]} --max-train-pairs {params.settings[max_train_pairs]}"
        " --epochs {params.settings[epochs]} --batch-size {params.settings[batch_size]} --lr {params.settings[lr]}"
        " --seed {params.settings[seed]} --name {wildcards.label} --out {output.model:q}"
        " --metrics {output.metrics:q} > {log:q} 2>&1"


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
    threads: EVALUATE_CPUS_PER_GPU
    resources:
        gpu=lambda wc: evaluation_gpus(wc.label),
        mem_mb=8000,
        runtime=2 * 60,
    params:
        model=lambda wc: EVAL_MODELS[wc.label]["spec"],
        data=DATA_ROOT,
        tasks=",".join(config["transfer"]["tasks"]),
        kfold=config["transfer"]["kfold"],
        batch_size=EVALUATE["batch_size"],
        max_length=EVALUATE["max_length"],
        seed=EVALUATE["seed"],
    shell:
        "python -m pipeline evaluate transfer --model {params.model:q} --name {wildcards.label}"
        " --pooling {wildcards.pooling} --data {params.data:q} --transfer-tasks {params.tasks:q}"
        " --kfold {params.kfold} --batch-size {params.batch_size} --max-length {params.max_length}"
        " --seed {params.seed} --out {output:q} > {log:q} 2>&1"
