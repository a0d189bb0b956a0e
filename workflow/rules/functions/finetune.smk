# The fine-tuning stage's helpers (its rules: workflow/rules/finetune.smk, which includes this file
# first): the run list (FINETUNE_RUNS) and its checks, the NLI / PPDB downloads, inputs and options.
FINETUNE = config["finetune"]
FINETUNE_FLAG_KEYS = ("objectives", "concatenation", "pooling", "negatives")
FINETUNE_CPUS_PER_GPU = 8  # the rule's threads per GPU (workflow/profiles/slurm: cpus_per_gpu)


def finetune_start(name):
    """(--model value, input files) of a starting model: a backbone or a pretrain output."""
    if name in BACKBONES:
        return BACKBONE_MODELS[name]
    if name in PRETRAIN_RUNS:
        return f"{RESULTS}/models/{name}", [f"{RESULTS}/models/{name}"]
    raise ValueError(
        f"config: finetune start {name!r} is neither in models.backbones nor a pretrain output"
        " (<backbone>+<objective><suffix> of each experiment's backbones x objectives)"
    )


def finetune_runs():
    """label -> {start, recipe, settings, variant}: every start x its recipes, then the Table 4 ablation variants
    (one setting changed from the defaults; the default twin run is the rows' shared reference)."""
    defaults = {key: FINETUNE[key] for key in FINETUNE_FLAG_KEYS}
    runs = {}
    unknown = sorted(set(FINETUNE["start_recipes"]) - set(FINETUNE["start"]))
    if unknown:
        raise ValueError(f"config: finetune.start_recipes names {', '.join(unknown)}, not in finetune.start")
    for start in FINETUNE["start"]:
        finetune_start(start)
        for recipe in finetune_recipes(FINETUNE, start):
            runs[f"{start}+{recipe}"] = {"start": start, "recipe": recipe, "settings": defaults, "variant": None}
    ablation = FINETUNE["ablation"]
    for start in ablation["start"]:
        finetune_start(start)
        runs.setdefault(f"{start}+twin", {"start": start, "recipe": "twin", "settings": defaults, "variant": None})
        for key in FINETUNE_FLAG_KEYS:
            for value in ablation[key]:
                if value != defaults[key]:
                    label = f"{start}+twin." + (f"k{value}" if key == "negatives" else str(value))
                    runs[label] = {
                        "start": start,
                        "recipe": "twin",
                        "settings": {**defaults, key: value},
                        "variant": (key, value),
                    }
    if FINETUNE["select_best"] and not FINETUNE["eval_steps"]:
        raise ValueError("config: finetune.select_best needs finetune.eval_steps (the STS-B dev evaluations)")
    if runs and not FINETUNE["nli"]:
        raise ValueError("config: finetune runs need NLI training data (finetune.nli)")
    if (
        any(run["recipe"] == "twin" and run["settings"]["objectives"] != "nli" for run in runs.values())
        and not FINETUNE["ppdb"]
    ):
        raise ValueError("config: the twin recipe's PI / PTC tasks need a PPDB 2.0 pack (finetune.ppdb)")
    return runs


FINETUNE_RUNS = finetune_runs()

# The NLI / PPDB releases (workflow/data/finetune-sources.yaml), fetched where missing with finetune.download on.
if FINETUNE["download"]:
    with open(sources_file("finetune-sources.yaml")) as _sources:
        for _path, _spec in yaml.safe_load(_sources).items():
            _checksum = FINETUNE["download_checksums"].get(_path)
            _spec = {**_spec, **({"sha256": _checksum} if _checksum else {})}
            if _spec.get("unverified") or any(algorithm in _spec for algorithm in ("sha256", "sha1", "md5")):
                register_download(data_path(_path), _spec)


def finetune_inputs(wildcards):
    run = FINETUNE_RUNS[wildcards.label]
    files = [f for spec in FINETUNE["nli"] for f in nli_data_files(spec)]
    if run["recipe"] == "twin" and FINETUNE["ppdb"]:
        files.append(data_path(FINETUNE["ppdb"]))
    if FINETUNE["eval_steps"]:  # the in-training evaluation reads STS-B dev, STS and analogy sets
        files += dict.fromkeys(
            path
            for task in FINETUNE["eval_tasks"]
            for path in evaluation_data("analogy" if task == "analogy" else "sts")  # evaluate.smk
        )
    return {"start": finetune_start(run["start"])[1], "data": files}


def finetune_flags(wildcards):
    run = FINETUNE_RUNS[wildcards.label]
    flags = ["--recipe", run["recipe"]]
    flags += [arg for spec in FINETUNE["nli"] for arg in ("--nli", data_path(spec))]
    if FINETUNE["max_steps"] is None:  # the papers' budget: passes over the NLI data, per recipe
        flags += ["--epochs", str(FINETUNE["epochs"][run["recipe"]])]
    else:
        flags += options(FINETUNE, "max_steps")
    flags += options(FINETUNE, "batch_size", "seed", "lr", "warmup", "max_length", "save_every")
    flags += ["--resume", *options(run["settings"], *FINETUNE_FLAG_KEYS)]  # resume: a rerun continues
    if run["recipe"] == "twin" and FINETUNE["ppdb"]:
        flags += ["--ppdb", data_path(FINETUNE["ppdb"])]
    if FINETUNE["eval_steps"]:
        tasks = ",".join(FINETUNE["eval_tasks"])
        flags += ["--eval-data", DATA_ROOT, *options(FINETUNE, "eval_steps"), "--eval-tasks", tasks]
    if FINETUNE["select_best"]:
        flags.append("--select-best")
    return flags
