# GLUE / CLUE fine-tuning (docs/method.md §4): one classify job per model x task x batch size x seed
# (classify), then per model and benchmark the batch size with the best dev mean and its seed spread
# (classify_summary: metrics/{glue,clue}/<model>.json, read by the tables rule). Models are named as
# elsewhere: a backbone, a backbone+objective (pretrain output) or an evaluate.models entry.

CLASSIFY = config["classify"]
CLASSIFY_TASKS = {benchmark: CLASSIFY[benchmark]["tasks"] for benchmark in ("glue", "clue")}
CLASSIFY_BENCHMARK = {task: benchmark for benchmark, names in CLASSIFY_TASKS.items() for task in names}


def classify_model(label):
    """(what --model is given, the files the job needs) for a model label of the config."""
    if label in BACKBONES:
        return backbone_path(label), backbone_inputs(label)
    if label in EVALUATE["models"]:
        return EVALUATE["models"][label]["path"], []
    if "+" in label and label.split("+", 1)[0] in BACKBONES:
        return f"{RESULTS}/models/{label}", [f"{RESULTS}/models/{label}"]
    raise ValueError(f"config: classify names model {label!r}, which is not a backbone, a backbone+objective "
                     "or an evaluate.models entry")


for _benchmark in ("glue", "clue"):
    for _label in CLASSIFY[_benchmark]["models"]:
        classify_model(_label)


def classify_setting(key, task):
    """A per-task value of the classify section: the task's own entry, else its benchmark's."""
    values = CLASSIFY[key]
    return values.get(task, values[CLASSIFY_BENCHMARK[task]])


def classify_flags(wildcards):
    task = wildcards.task
    flags = [f"--max-steps {CLASSIFY['max_steps']}", f"--lr {classify_setting('lr', task)}",
             f"--epochs {classify_setting('epochs', task)}", f"--max-length {classify_setting('max_length', task)}",
             f"--eval-batch-size {CLASSIFY['eval_batch_size']}"]
    if task in CLASSIFY["train_from_dev"]:
        flags.append(f"--train-from-dev {CLASSIFY['train_from_dev'][task]}")
    if CLASSIFY["max_train_examples"]:
        flags.append(f"--max-train-examples {CLASSIFY['max_train_examples']}")
    if not CLASSIFY["test"]:
        flags.append("--no-test")
    if CLASSIFY["bf16"]:
        flags.append("--bf16")
    return " ".join(flags)


def classify_runs(label, benchmark):
    return [f"{RESULTS}/classify/{label}/{task}/batch{batch}/seed{seed}/metrics.json"
            for task in CLASSIFY_TASKS[benchmark]
            for batch in CLASSIFY["batch_sizes"][benchmark]
            for seed in range(CLASSIFY["seeds"])]


def classify_geogranno(label, benchmark):
    """ULR-BERT Table 8 puts GEOGRANNO beside the GLUE dev average: the model's evaluate metrics, if any."""
    if benchmark != "glue" or "geogranno" not in EVALUATE["tasks"].get("en", []) or label not in EVAL_MODELS:
        return []
    return [f"{RESULTS}/metrics/geogranno/{label}.{EVALUATE['pooling'][0]}.json"]


def classify_summaries():
    return [f"{RESULTS}/metrics/{benchmark}/{label}.json"
            for benchmark in ("glue", "clue") for label in CLASSIFY[benchmark]["models"]]


rule classify:
    input:
        model=lambda wc: classify_model(wc.label)[1],
    output:
        metrics=f"{RESULTS}/classify/{{label}}/{{task}}/batch{{batch}}/seed{{seed}}/metrics.json",
        dev=f"{RESULTS}/classify/{{label}}/{{task}}/batch{{batch}}/seed{{seed}}/dev_predictions.seed{{seed}}.tsv",
    wildcard_constraints:
        label=r"[A-Za-z0-9_.+-]+",
        task="|".join(CLASSIFY_BENCHMARK) or "(?!)",
        batch=r"\d+",
        seed=r"\d+",
    params:
        model=lambda wc: classify_model(wc.label)[0],
        data=DATA_ROOT,
        flags=classify_flags,
    log:
        f"{LOGS}/classify/{{label}}/{{task}}/batch{{batch}}/seed{{seed}}.log",
    benchmark:
        f"{BENCHMARKS}/classify/{{label}}/{{task}}/batch{{batch}}/seed{{seed}}.tsv"
    conda:
        "../../envs/models.yaml"
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=6 * 60,
    shell:
        "python -m pipeline classify --model {params.model:q} --task {wildcards.task} --data {params.data:q}"
        " --seeds 1 --first-seed {wildcards.seed} --batch-size {wildcards.batch} {params.flags}"
        " --name {wildcards.label:q} --out $(dirname {output.metrics:q}) > {log:q} 2>&1"


rule classify_summary:
    input:
        runs=lambda wc: classify_runs(wc.label, wc.benchmark),
        geogranno=lambda wc: classify_geogranno(wc.label, wc.benchmark),
    output:
        f"{RESULTS}/metrics/{{benchmark}}/{{label}}.json",
    wildcard_constraints:
        benchmark="glue|clue",
        label=r"[A-Za-z0-9_.+-]+",
    log:
        f"{LOGS}/classify_summary/{{benchmark}}/{{label}}.log",
    benchmark:
        f"{BENCHMARKS}/classify_summary/{{benchmark}}/{{label}}.tsv"
    conda:
        "../../envs/models.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m pipeline classify-summary --runs {input.runs:q} --benchmark {wildcards.benchmark}"
        " --name {wildcards.label:q} --geogranno {input.geogranno:q} --out {output:q} > {log:q} 2>&1"
