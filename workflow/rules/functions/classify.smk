# The GLUE / CLUE stage's helpers (its rules: workflow/rules/classify.smk, which includes this file
# first): the model labels and their check, per-task options, run paths and the release downloads.
CLASSIFY = config["classify"]
CLASSIFY_CPUS_PER_GPU = 4  # the rule's threads per GPU (workflow/profiles/slurm: cpus_per_gpu)
CLASSIFY_MAX_RUNTIME = 48 * 60  # minutes: the longest job of the SLURM profile's partitions (partitions.yaml)
CLASSIFY_TASKS = {benchmark: CLASSIFY[benchmark]["tasks"] for benchmark in ("glue", "clue")}
CLASSIFY_BENCHMARK = {task: benchmark for benchmark, names in CLASSIFY_TASKS.items() for task in names}


def classify_model(label):
    """(what --model is given, the files the job needs) for a model label of the config."""
    if label in BACKBONES:
        return BACKBONE_MODELS[label]
    if label in EVALUATE["models"]:
        return EVALUATE["models"][label]["path"], []
    if "+" in label and label.split("+", 1)[0] in BACKBONES:
        return f"{RESULTS}/models/{label}", [f"{RESULTS}/models/{label}"]
    raise ValueError(
        f"config: classify names model {label!r}, which is not a backbone, a backbone+objective "
        "or an evaluate.models entry"
    )


for _benchmark in ("glue", "clue"):
    for _label in CLASSIFY[_benchmark]["models"]:
        classify_model(_label)


def classify_setting(key, task):
    """A per-task value of the classify section: the task's own entry, else its benchmark's."""
    values = CLASSIFY[key]
    return values.get(task, values[CLASSIFY_BENCHMARK[task]])


def classify_grid(task):
    """Setting label -> {batch_size, lr, epochs, max_length}: the grid searched on dev for one task
    (pipeline/classify/hyperparameters.py), from the config's lists (a single value: no search)."""
    from pipeline.classify.hyperparameters import grid

    return grid(
        batch_size=CLASSIFY["batch_sizes"][CLASSIFY_BENCHMARK[task]],
        **{key: classify_setting(key, task) for key in ("lr", "epochs", "max_length")},
    )


# Every configured task's grid, built while the rules are read: a grid over its bound stops every run
# at once, whichever outputs exist already (input functions run only for the jobs a DAG needs).
CLASSIFY_GRIDS = {task: classify_grid(task) for task in CLASSIFY_BENCHMARK}


# Fused checkpoints (classify.fuse_checkpoints with fuse > 1; docs/stages/classify.md, "Fused seeds"): per
# benchmark, the configured models that start from one backbone fine-tune in one job per task and setting,
# a classify_fused_* rule each (classify.smk); the others run in the classify rule. Rule name -> (benchmark,
# backbone, its model labels).
CLASSIFY_FUSED = {}
if CLASSIFY["fuse_checkpoints"] and CLASSIFY["fuse"] > 1:
    from pipeline.fused_groups import checkpoint_groups

    for _benchmark in ("glue", "clue"):
        _groups = checkpoint_groups(CLASSIFY[_benchmark]["models"], BACKBONES, EVALUATE["models"])
        for _backbone, _labels in _groups.items():
            _rule = re.sub(r"\W", "_", f"classify_fused_{_benchmark}_{_backbone}")  # a rule's name is a word
            CLASSIFY_FUSED[_rule] = (_benchmark, _backbone, _labels)


def classify_fuse(backbone, task, setting):
    """A job's --fuse K: classify.fuse, capped by the runs of the backbone's architecture that fit one GPU at
    the setting's batch (a multiple-choice example: one sequence per candidate) and length (None: a model
    of its own, K as configured)."""
    from pipeline.fused_groups import fused_runs

    point = CLASSIFY_GRIDS[task][setting]
    spec = BACKBONES.get(backbone) if backbone else None
    return fused_runs(spec, CLASSIFY["fuse"], point["batch_size"], point["max_length"], task)


def classify_flags(backbone=None):
    """The options of a classify job (params): of the label's model, or of a fused job of `backbone`'s models."""
    from pipeline.fused_groups import backbone_of

    def job_flags(wildcards):
        task = wildcards.task
        setting = CLASSIFY_GRIDS[task][wildcards.setting]
        flags = options(setting, "batch_size", "lr", "epochs", "max_length")
        flags += options(CLASSIFY, "max_steps", "eval_batch_size", "dropout")
        if task in CLASSIFY["train_from_dev"]:
            flags += ["--train-from-dev", str(CLASSIFY["train_from_dev"][task])]
        if CLASSIFY["max_train_examples"]:
            flags += options(CLASSIFY, "max_train_examples")
        if CLASSIFY["allow_substitutes"]:
            flags.append("--allow-substitutes")
        if not CLASSIFY["test"]:
            flags.append("--no-test")
        if CLASSIFY["bf16"]:
            flags.append("--bf16")
        if CLASSIFY["group_by_length"]:
            flags.append("--group-by-length")
        if CLASSIFY["fuse"] > 1:
            found = backbone or backbone_of(wildcards.label, BACKBONES, EVALUATE["models"])
            fuse = classify_fuse(found, task, wildcards.setting)
            flags += ["--fuse", str(fuse)]
            if fuse > 1:  # one run per GPU fuses nothing, and classify refuses --resume-every without fusing
                flags += options(CLASSIFY, "resume_every")
        return flags

    return job_flags


def classify_seed_files(name, label="{label}"):
    """One file per seed of a classify job (a model x task x setting): seed<S>/NAME, where NAME may
    name the seed as {seed}; the label (a wildcard unless given) and the other wildcards stay for Snakemake."""
    folder = f"{RESULTS}/classify/{label}/{{task}}/{{setting}}"
    return [f"{folder}/seed{seed}/{name.format(seed=seed)}" for seed in range(CLASSIFY["seeds"])]


def classify_fused_files(labels, name):
    """classify_seed_files of every model of a fused job: its task and setting stay wildcards."""
    return [path for label in labels for path in classify_seed_files(name, label)]


def classify_fused_inputs(labels):
    """The files a fused job's models need (input): each model's checkpoint where a job makes it."""

    def inputs(wildcards):
        return [path for label in labels for path in classify_model(label)[1]]

    return inputs


def classify_fused_models(labels):
    """A fused job's --model, --name and --out for each of its models (params), in the config's order."""

    def runs(wildcards):
        return [
            arg
            for label in labels
            for arg in (
                "--model",
                classify_model(label)[0],
                "--name",
                label,
                "--out",
                f"{RESULTS}/classify/{label}/{wildcards.task}/{wildcards.setting}",
            )
        ]

    return runs


def classify_runs(label, benchmark):
    return [
        f"{RESULTS}/classify/{label}/{task}/{setting}/seed{seed}/metrics.json"
        for task in CLASSIFY_TASKS[benchmark]
        for setting in CLASSIFY_GRIDS[task]
        for seed in range(CLASSIFY["seeds"])
    ]


def classify_geogranno(label, benchmark):
    """ULR-BERT Table 8 puts GEOGRANNO beside the GLUE dev average: the model's evaluate metrics, if any."""
    if benchmark != "glue" or "geogranno" not in EVALUATE["tasks"].get("en", []) or label not in EVAL_MODELS:
        return []
    return [f"{RESULTS}/metrics/geogranno/{label}.{EVALUATE['pooling'][0]}.json"]


def classify_summaries():
    return [
        f"{RESULTS}/metrics/{benchmark}/{label}.json"
        for benchmark in ("glue", "clue")
        for label in CLASSIFY[benchmark]["models"]
    ]


# The GLUE / CLUE splits the public data root lacks (workflow/data/classification-sources.yaml): with
# classify.download on, archives are fetched by the download rule and unpacked by classify_unpack.
CLASSIFY_FOLDERS = {
    "mnli": "glue/MNLI/",
    "qnli": "glue/QNLI/",
    "qqp": "glue/QQP/",
    "stsb": "glue/STS-B/",
    "tnews": "chinese/tnews/",
    "iflytek": "chinese/iflytek/",
    "cluewsc": "chinese/cluewsc2020/",
    "afqmc": "chinese/afqmc/",
    "csl": "chinese/csl/",
    "chid": "chinese/chid/",
    "ocnli": "chinese/ocnli/",
    "cmrc2018": "chinese/cmrc2018/",
}
CLASSIFY_UNPACK = {}  # unpacked file -> (its archive, the member)
CLASSIFY_DATA = []  # the downloaded or unpacked files, by path under data_root
if CLASSIFY["download"]:
    with open(sources_file("classification-sources.yaml")) as _sources:
        _classify_sources = yaml.safe_load(_sources)
    # only the configured tasks' files, and the archives they come from
    _folders = tuple(
        CLASSIFY_FOLDERS[task]
        for benchmark, tasks in CLASSIFY_TASKS.items()
        if CLASSIFY[benchmark]["models"]
        for task in tasks
        if task in CLASSIFY_FOLDERS
    )
    _files = {path: spec for path, spec in _classify_sources["files"].items() if path.startswith(_folders)}
    _archives = {
        name: _classify_sources["archives"][name]
        for name in {spec["archive"] for spec in _files.values() if "archive" in spec}
    }
    _unpinned = [
        spec["url"]
        for spec in [*_archives.values(), *_files.values()]
        if "url" in spec and not any(spec.get(algorithm) for algorithm in ("sha256", "sha1", "md5"))
    ]
    if _unpinned:
        raise ValueError(
            "config: classify.download needs a checksum (sha256, sha1 or md5) of every source of the configured "
            f"tasks in workflow/data/classification-sources.yaml; missing for {', '.join(sorted(_unpinned))}"
        )
    for _name, _spec in _archives.items():
        register_download(data_path("downloads", _name), _spec)
    for _path, _spec in _files.items():
        if "url" in _spec:
            register_download(data_path(_path), _spec)
        else:
            CLASSIFY_UNPACK[data_path(_path)] = (
                data_path("downloads", _spec["archive"]),
                _spec["member"],
            )
        CLASSIFY_DATA.append(_path)


def classify_data(task):
    """The downloaded files a task reads: its benchmark's releases (with classify.download on) and the
    copies in workflow/data/evaluation-sources.yaml among its candidate files (with evaluate.download on)."""
    from pipeline.classify.tasks import TASKS

    folder = CLASSIFY_FOLDERS.get(task)
    files = [data_path(path) for path in CLASSIFY_DATA if folder and path.startswith(folder)]
    spec = TASKS[task]
    candidates = {
        data_path(name)
        for paths in (
            *spec.splits.values(),
            *spec.extra_dev.values(),
            *(files for files, _ in spec.extra_test.values()),
        )
        for group in paths
        for name in group.split("+")
    }
    listed = [path for group in EVAL_DATA for path in evaluation_data(group) if path in candidates]
    return list(dict.fromkeys(files + listed))
