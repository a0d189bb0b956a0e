# Paths and config look-ups shared by every rule file. Nothing here runs a job.
import os
import re
import sys
import shlex

import yaml

RUN = config["run"]
RESULTS = f"results/{RUN}"
LOGS = f"{RESULTS}/logs"
BENCHMARKS = f"{RESULTS}/benchmarks"
DATA_ROOT = config["data_root"]
LANGUAGES = config["corpus"]["languages"]
SHARDS = [f"shard-{k:03d}" for k in range(config["corpus"]["shards"])]

for _lang in LANGUAGES:
    if _lang not in config["corpus"]:
        raise ValueError(f"config: corpus.languages lists {_lang!r} but there is no corpus.{_lang} section")

# Rules run `python -m pipeline ...` from the repository root; the package is importable
# from there in any environment (a venv, or a rule's conda env that holds the dependencies).
# Each job also gets a watchdog that stops it when Snakemake itself is killed (pipeline/job_watchdog.py).
from pipeline.job_watchdog import SHELL_PREFIX as JOB_WATCHDOG

shell.prefix(f"export PYTHONPATH={workflow.basedir}${{{{PYTHONPATH:+:$PYTHONPATH}}}}; {JOB_WATCHDOG}")


wildcard_constraints:
    lang="|".join(LANGUAGES),
    part=r"[A-Za-z0-9_.-]+",
    shard=r"shard-\d{3}",


def lang_config(lang):
    return config["corpus"][lang]


def dump_parts(lang):
    return list(lang_config(lang)["dumps"])


def dump_spec(lang, part):
    return lang_config(lang)["dumps"][part]


def dump_path(lang, part):
    return os.path.join(DATA_ROOT, dump_spec(lang, part)["path"])


def per_shard(pattern, lang):
    """Every (part, shard) file of a per-shard corpus stage, for one language."""
    return expand(pattern, lang=lang, part=dump_parts(lang), shard=SHARDS)


def corpus_outputs():
    outputs = []
    for lang in LANGUAGES:
        outputs += per_shard(f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.parquet", lang)
        # a part extracted in slices: its summed extract stats (one job, not on any path)
        outputs += [
            f"{RESULTS}/corpus/{lang}/docs/{part}/extract-stats.json"
            for part in dump_parts(lang)
            if dump_slices(lang, part) > 1
        ]
    return outputs


def ngram_flags(mode=None):
    """Options of `python -m pipeline ngrams` from the config's ngrams section: a list of
    arguments, each quoted by `{params.flags:q}`."""
    settings = config["ngrams"]
    flags = [
        "--mode",
        mode or settings["mode"],
        "--max-n",
        settings["max_n"],
        "--top-k",
        settings["top_k"],
        "--batch-chars",
        settings["batch_chars"],
    ]
    if settings["min_count"] is not None:  # null: the stage's default for the mode
        flags += ["--min-count", settings["min_count"]]
    if settings["threshold"] is not None:
        flags += ["--threshold", settings["threshold"]]
    if settings["lowercase"]:
        flags.append("--lowercase")
    if not settings["entities"]:
        flags.append("--no-entities")
    return [str(flag) for flag in flags]


def ngram_outputs():
    outputs = []
    for lang in LANGUAGES:
        outputs += per_shard(f"{RESULTS}/sample/{{lang}}/{{part}}/{{shard}}.parquet", lang)
        if config["ngrams"]["corpus_ablation"]:
            outputs += per_shard(f"{RESULTS}/ngrams-corpus/{{lang}}/{{part}}/{{shard}}/ngrams.parquet", lang)
    return outputs


# Inputs that a config names by URL, by local path (the download rule's outputs).
DOWNLOADS = {
    dump_path(lang, part): dump_spec(lang, part)
    for lang in LANGUAGES
    for part in dump_parts(lang)
    if "url" in dump_spec(lang, part)
}

# Multistream indexes are fetched and checked like their dumps.
for _lang in LANGUAGES:
    for _part in dump_parts(_lang):
        _index = dump_spec(_lang, _part).get("index")
        if _index and "url" in _index:
            DOWNLOADS[os.path.join(DATA_ROOT, _index["path"])] = _index


def dump_slices(lang, part):
    """Extract jobs of a dump part: its `slices` (a multistream dump with its index), else 1."""
    spec = dump_spec(lang, part)
    slices = spec.get("slices", 1)
    if slices > 1 and "index" not in spec:
        raise ValueError(f"config: corpus.{lang}.dumps.{part} has slices: {slices} but no multistream index")
    return slices


def index_path(lang, part):
    return os.path.join(DATA_ROOT, dump_spec(lang, part)["index"]["path"])


def parts_pattern(sliced):
    """Regex of the dump parts (of any language) that are extracted in slices, or in one job."""
    names = {part for lang in LANGUAGES for part in dump_parts(lang) if (dump_slices(lang, part) > 1) == sliced}
    return "|".join(re.escape(name) for name in sorted(names)) or "(?!)"


def slice_dirs(wildcards):
    slices = dump_slices(wildcards.lang, wildcards.part)
    return [f"{RESULTS}/corpus/{wildcards.lang}/slices/{wildcards.part}/{k}" for k in range(slices)]


# The evaluation data by task (workflow/data/evaluation-sources.yaml: URL and SHA-256 per file).
# With evaluate.download on, they are inputs of the evaluate rule, fetched where missing.
with open(os.path.join(workflow.basedir, "workflow", "data", "evaluation-sources.yaml")) as _sources:
    EVAL_DATA = {
        task: {os.path.join(DATA_ROOT, path): spec for path, spec in files.items()}
        for task, files in yaml.safe_load(_sources).items()
    }
if config["evaluate"]["download"]:
    for _files in EVAL_DATA.values():
        DOWNLOADS.update(_files)


def evaluation_data(task):
    return list(EVAL_DATA.get(task, {})) if config["evaluate"]["download"] else []


def source_flags(spec):
    """Where `python -m pipeline download` fetches a file: its URL, or the URLs of its parts and how
    they join (a list of arguments, quoted by `:q`)."""
    if "parts" in spec:
        return [arg for url in spec["parts"] for arg in ("--url", url)] + ["--join", spec["join"]]
    return ["--url", spec["url"]]


def checksum_flags(spec):
    """Checksum options of `python -m pipeline download`: a list of arguments (quoted by `:q`)."""
    flags = [
        arg
        for algorithm in ("sha256", "sha1", "md5")
        if spec.get(algorithm)
        for arg in (f"--{algorithm}", spec[algorithm])
    ]
    if "checksums_url" in spec:
        flags += ["--checksums-url", spec["checksums_url"]]
    if "member" in spec:  # a file inside a zip / wheel archive (docs/design.md "Downloads")
        flags += ["--member", spec["member"]]
    if "archive_sha256" in spec:
        flags += ["--archive-sha256", spec["archive_sha256"]]
    if spec.get("unverified") and not flags:  # the source publishes no checksum and the config gives none
        flags.append("--unverified")
    return flags


def clean_input(wildcards):
    stage = "simplified" if lang_config(wildcards.lang)["convert"] else "docs"
    return f"{RESULTS}/corpus/{wildcards.lang}/{stage}/{wildcards.part}/{wildcards.shard}.parquet"


def clean_flags(wildcards):
    settings = lang_config(wildcards.lang)["clean"]
    flags = ["--max-tokens", str(settings["max_tokens"])]
    if "rules" in settings:
        flags += ["--rules", settings["rules"]]
    if "min_tokens" in settings:
        flags += ["--min-tokens", str(settings["min_tokens"])]
    return flags  # a list of arguments, each quoted by {params.flags:q}


# ------------------------------------------------------------------ models and evaluation
BACKBONES = config["models"]["backbones"]
PRETRAIN = config["pretrain"]
EVALUATE = config["evaluate"]
for _name in PRETRAIN["backbones"]:
    if _name not in BACKBONES:
        raise ValueError(f"config: pretrain.backbones lists {_name!r}, which models.backbones does not define")
if BACKBONES and PRETRAIN["language"] not in LANGUAGES:
    raise ValueError(f"config: pretrain.language {PRETRAIN['language']!r} is not in corpus.languages")
# "tiny" is a tiny BERT trained on the corpus of pretrain.language; "tiny:LANG" on the corpus of LANG
TINY = [name for name, spec in BACKBONES.items() if spec == "tiny" or spec.startswith("tiny:")]


def backbone_lang(name):
    """The language of a backbone: a tiny model's corpus language, pretrain.language otherwise."""
    spec = BACKBONES[name]
    return spec.split(":", 1)[1] if spec.startswith("tiny:") else PRETRAIN["language"]


def package_checkpoint(package):
    """The checkpoint folder (config.json + tokenizer) shipped inside an installed package."""
    from pipeline.models import package_checkpoint as packaged

    try:
        return packaged.resolve(packaged.PREFIX + package)
    except packaged.InputError as exc:
        raise ValueError(f"config: models.backbones: {exc}") from None


# Hub models pinned to a commit ("hub:ORG/NAME@COMMIT"): the download_model rule fetches each into
# <data_root>/models/ORG/NAME@COMMIT (pipeline/download_model.py), and the jobs read that folder.
HUB_MODELS = {}


def hub_model(spec):
    """The local folder of a pinned hub model (registered for the download_model rule)."""
    from pipeline import download_model

    try:
        path = str(download_model.folder(DATA_ROOT, spec))
    except download_model.InputError as exc:
        raise ValueError(f"config: {exc}") from None
    HUB_MODELS[path] = spec
    return path


def backbone_path(name):
    """What `--model` is given for backbone `name`."""
    spec = BACKBONES[name]
    if name in TINY:
        return f"{RESULTS}/models/{name}"
    if spec.startswith("package:"):
        return package_checkpoint(spec.removeprefix("package:"))
    if spec.startswith("hub:"):
        return hub_model(spec)
    return spec


def backbone_inputs(name):
    if name in TINY:
        return [f"{RESULTS}/models/{name}"]
    return [hub_model(BACKBONES[name])] if BACKBONES[name].startswith("hub:") else []


for _spec in [*BACKBONES.values(), *config["models"].get("generators", {}).values()]:
    if _spec.startswith("hub:"):
        hub_model(_spec)  # registered before the rules are defined (download_model's wildcard)


# ------------------------------------------------------------------ fine-tuning (finetune.smk)
FINETUNE = config["finetune"]
FINETUNE_FLAG_KEYS = ("objectives", "concatenation", "pooling", "negatives")


def finetune_start(name):
    """(--model value, input files) of a starting model: a backbone or a pretrain output."""
    if name in BACKBONES:
        return backbone_path(name), backbone_inputs(name)
    backbone, _, objective = name.partition("+")
    if backbone in PRETRAIN["backbones"] and objective in PRETRAIN["objectives"]:
        return f"{RESULTS}/models/{name}", [f"{RESULTS}/models/{name}"]
    raise ValueError(
        f"config: finetune start {name!r} is neither in models.backbones nor a pretrain output"
        " (<backbone>+<objective> of pretrain.backbones x pretrain.objectives)"
    )


def finetune_runs():
    """label -> {start, recipe, settings, variant}: every start x recipe, then the Table 4 ablation variants
    (one setting changed from the defaults; the default twin run is the rows' shared reference)."""
    defaults = {key: FINETUNE[key] for key in FINETUNE_FLAG_KEYS}
    runs = {}
    for start in FINETUNE["start"]:
        finetune_start(start)
        for recipe in FINETUNE["recipes"]:
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
    if runs and not FINETUNE["nli"]:
        raise ValueError("config: finetune runs need NLI training data (finetune.nli)")
    if (
        any(run["recipe"] == "twin" and run["settings"]["objectives"] != "nli" for run in runs.values())
        and not FINETUNE["ppdb"]
    ):
        raise ValueError("config: the twin recipe's PI / PTC tasks need a PPDB 2.0 pack (finetune.ppdb)")
    return runs


FINETUNE_RUNS = finetune_runs()


def finetune_data_files(spec):
    """The files behind one --nli value (DIR:SPLIT -> its three files; ARCHIVE.zip:SPLIT -> the archive)."""
    path = os.path.join(DATA_ROOT, spec)
    if ":" in spec and not os.path.exists(path):
        head, split = path.rsplit(":", 1)
        if head.endswith(".zip"):
            return [head]
        return [os.path.join(head, f"{name}.{split}") for name in ("s1", "s2", "labels")]
    return [path]


def finetune_inputs(wildcards):
    run = FINETUNE_RUNS[wildcards.label]
    files = [f for spec in FINETUNE["nli"] for f in finetune_data_files(spec)]
    if run["recipe"] == "twin" and FINETUNE["ppdb"]:
        files.append(os.path.join(DATA_ROOT, FINETUNE["ppdb"]))
    if FINETUNE["eval_steps"]:  # the in-training evaluation reads STS-B dev, STS and analogy sets
        files += dict.fromkeys(
            path
            for task in FINETUNE["eval_tasks"]
            for path in evaluation_data("analogy" if task == "analogy" else "sts")
        )
    return {"start": finetune_start(run["start"])[1], "data": files}


def finetune_flags(wildcards):
    import shlex

    run, f = FINETUNE_RUNS[wildcards.label], FINETUNE
    settings = run["settings"]
    flags = [
        f"--recipe {run['recipe']}",
        *(f"--nli {shlex.quote(os.path.join(DATA_ROOT, s))}" for s in f["nli"]),
        f"--max-steps {f['max_steps']} --batch-size {f['batch_size']} --seed {f['seed']} --lr {f['lr']}",
        f"--warmup {f['warmup']} --max-length {f['max_length']} --save-every {f['save_every']} --resume",
        f"--objectives {settings['objectives']} --concatenation {settings['concatenation']}",
        f"--pooling {settings['pooling']} --negatives {settings['negatives']}",
    ]
    if run["recipe"] == "twin" and f["ppdb"]:
        flags.append(f"--ppdb {shlex.quote(os.path.join(DATA_ROOT, f['ppdb']))}")
    if f["eval_steps"]:
        flags.append(
            f"--eval-data {shlex.quote(DATA_ROOT)} --eval-steps {f['eval_steps']}"
            f" --eval-tasks {','.join(f['eval_tasks'])}"
        )
    return " ".join(flags)


# The NLI / PPDB releases (workflow/data/finetune-sources.yaml), fetched where missing with finetune.download on.
with open(os.path.join(workflow.basedir, "workflow", "data", "finetune-sources.yaml")) as _sources:
    FINETUNE_DATA = {}
    for _path, _spec in yaml.safe_load(_sources).items():
        _checksum = FINETUNE["download_checksums"].get(_path)
        FINETUNE_DATA[os.path.join(DATA_ROOT, _path)] = {**_spec, **({"sha256": _checksum} if _checksum else {})}
if FINETUNE["download"]:
    DOWNLOADS.update(
        {
            path: spec
            for path, spec in FINETUNE_DATA.items()
            if spec.get("unverified") or any(algorithm in spec for algorithm in ("sha256", "sha1", "md5"))
        }
    )


# BiLSTM encoders of paper 004 (workflow/rules/bilstm.smk): label -> pooling, size, directory.
BILSTM = config["bilstm"]
BILSTM_MODELS = {
    f"bilstm-{pooling}-{2 * size}": {
        "pooling": pooling,
        "hidden": size,
        "dir": f"{RESULTS}/bilstm/bilstm-{pooling}-{2 * size}",
    }
    for pooling in BILSTM["poolings"]
    for size in BILSTM["sizes"]
}
if BILSTM_MODELS and BILSTM["vectors"] != "word2vec" and "vectors_url" in BILSTM:
    DOWNLOADS[os.path.join(DATA_ROOT, BILSTM["vectors"])] = {
        "url": BILSTM["vectors_url"],
        **({"sha256": BILSTM["vectors_sha256"]} if "vectors_sha256" in BILSTM else {}),
    }
if BILSTM_MODELS:
    DOWNLOADS.update({os.path.join(DATA_ROOT, path): spec for path, spec in BILSTM["downloads"].items()})


def bilstm_vectors():
    """The word vectors file: the word2vec stage's English vectors, or a file under data_root."""
    if BILSTM["vectors"] == "word2vec":
        return expand(rules.word2vec.output[0], lang="en")[0]  # rules.word2vec: in evaluate.smk, read at call time
    return os.path.join(DATA_ROOT, BILSTM["vectors"])


def bilstm_files(key):
    return [os.path.join(DATA_ROOT, path) for path in BILSTM[key]]


def evaluated_models():
    """Every model the evaluation rules evaluate: label -> spec, input files, language, kind."""
    models = {}
    lang = PRETRAIN["language"]
    for name in BACKBONES:
        models[name] = {
            "spec": backbone_path(name),
            "inputs": backbone_inputs(name),
            "lang": backbone_lang(name),
            "kind": "transformer",
        }
        if "input-embeddings" in EVALUATE["baselines"]:
            models[f"{name}.input-embeddings"] = {
                "spec": f"input-embeddings:{backbone_path(name)}",
                "inputs": backbone_inputs(name),
                "lang": backbone_lang(name),
                "kind": "bag",
            }
    for name in PRETRAIN["backbones"]:
        for objective in PRETRAIN["objectives"]:
            path = f"{RESULTS}/models/{name}+{objective}"
            models[f"{name}+{objective}"] = {"spec": path, "inputs": [path], "lang": lang, "kind": "transformer"}
    for label, run in FINETUNE_RUNS.items():  # evaluated with the pooling they were trained with
        path = f"{RESULTS}/finetune/{label}"
        pooling = run["settings"]["pooling"]
        models[label] = {
            "spec": path,
            "inputs": [path],
            "lang": "en",
            "kind": "transformer",
            "poolings": EVALUATE["pooling"] if pooling == "mean" else [pooling],
        }
    for name, model in EVALUATE["models"].items():
        models[name] = {"spec": model["path"], "inputs": [], "lang": model["lang"], "kind": "transformer"}
    for corpus_lang in LANGUAGES:
        if "word2vec" in EVALUATE["baselines"]:
            vectors = f"{RESULTS}/word2vec/{corpus_lang}/vectors.bin"
            models[f"word2vec-{corpus_lang}"] = {
                "spec": f"word2vec:{vectors}",
                "inputs": [vectors],
                "lang": corpus_lang,
                "kind": "bag",
            }
    for label, model in BILSTM_MODELS.items():
        models[label] = {"spec": f"bilstm:{model['dir']}", "inputs": [model["dir"]], "lang": "en", "kind": "bilstm"}
    for lexical in ("bm25", "tfidf"):
        if lexical in EVALUATE["baselines"]:
            models[lexical] = {"spec": lexical, "inputs": [], "lang": None, "kind": "lexical"}
    return models


EVAL_MODELS = evaluated_models()
RETRIEVAL = ("geogranno", "faq")
# Tasks whose data cannot be downloaded and checked (SCWS is not redistributed, and no checksum is
# pinned for it in evaluation-sources.yaml). A config may list them; they are evaluated only where
# the file is under data_root, so their absence leaves table cells empty instead of breaking the DAG.
OPTIONAL_TASK_DATA = {"scws": "scws/ratings.txt"}
SKIPPED_TASKS = sorted(
    task
    for task, path in OPTIONAL_TASK_DATA.items()
    if any(task in tasks for tasks in EVALUATE["tasks"].values()) and not os.path.isfile(os.path.join(DATA_ROOT, path))
)
if SKIPPED_TASKS:
    print(
        f"evaluate: skipping {', '.join(SKIPPED_TASKS)}: no "
        f"{', '.join(os.path.join(DATA_ROOT, OPTIONAL_TASK_DATA[t]) for t in SKIPPED_TASKS)}",
        file=sys.stderr,
    )


def metrics_files():
    files = []
    for label, model in EVAL_MODELS.items():
        for lang in [model["lang"]] if model["lang"] else LANGUAGES:
            for task in EVALUATE["tasks"].get(lang, []):
                if (model["kind"] == "lexical" and task not in RETRIEVAL) or task in SKIPPED_TASKS:
                    continue
                poolings = model.get("poolings") or (
                    EVALUATE["pooling"] if model["kind"] == "transformer" else ["mean"]
                )
                files += [f"{RESULTS}/metrics/{task}/{label}.{pooling}.json" for pooling in poolings]
    return files + bilstm_metrics_files()


def transfer_models():
    """Label -> pooling of every model the transfer rule evaluates (English models with embeddings)."""
    chosen = config["transfer"]["models"]
    models = {}
    for label, model in EVAL_MODELS.items():
        if model["lang"] != "en" or model["kind"] == "lexical" or (chosen != "all" and label not in chosen):
            continue
        models[label] = EVALUATE["pooling"][0] if model["kind"] == "transformer" else "mean"
    return models


def bilstm_metrics_files():
    """Paper 004 Table 2 (SNLI) per BiLSTM model, Table 3 (transfer) per transfer model."""
    return [f"{RESULTS}/metrics/snli/{label}.json" for label in BILSTM_MODELS] + [
        f"{RESULTS}/metrics/transfer/{label}.{pooling}.json" for label, pooling in transfer_models().items()
    ]


def figure_dirs():
    if not EVALUATE["figures"] or "analogy" not in EVALUATE["tasks"].get("en", []):
        return []
    return [
        f"{RESULTS}/figures/{label}"
        for label, model in EVAL_MODELS.items()
        if model["kind"] == "transformer" and model["lang"] == "en"
    ]


def pretrain_launcher():
    """One process, or one per GPU through torchrun (DDP; --batch-size is per process)."""
    gpus = PRETRAIN["gpus"]
    return ["python"] if gpus == 1 else ["torchrun", "--standalone", "--nproc_per_node", str(gpus)]


def pretrain_flags():
    p = PRETRAIN
    return (
        f"--max-steps {p['max_steps']} --epochs {p['epochs']} --batch-size {p['batch_size']}"
        f" --grad-accum {p['grad_accum']} --lr {p['lr']} --warmup {p['warmup']} --seed {p['seed']}"
        f" --misad-choice {p['misad_choice']} --ngram-pool {p['ngram_pool']}"
        f" --save-every {p['save_every']} --resume"
    ).split()  # resume: a rerun continues


# ------------------------------------------------------------------ cluster resources
# CPUs each GPU job gets per GPU: the rules' threads (workflow/profiles/slurm sets the same
# cpus_per_gpu for them; tests/test_slurm_profile.py keeps the two in step).
PRETRAIN_CPUS_PER_GPU = 8
FINETUNE_CPUS_PER_GPU = 8
EVALUATE_CPUS_PER_GPU = 4  # also evaluate_transfer
CLASSIFY_CPUS_PER_GPU = 4
BILSTM_CPUS_PER_GPU = 4


def evaluation_gpus(label):
    """Transformers and BiLSTMs are encoded on a GPU; bags of vectors and lexical baselines need none."""
    return 1 if EVAL_MODELS[label]["kind"] in ("transformer", "bilstm") else 0


def kenlm_memory(mem_mb):
    """lmplz's sorting memory: kenlm.memory as a percent of the job's memory (mem_mb), so that a
    cluster job never reserves a share of the whole node; a size (4G, 800M) is passed as is."""
    memory = str(config["kenlm"]["memory"])
    if memory.endswith("%"):
        return f"{int(mem_mb * float(memory[:-1]) / 100)}M"
    return memory


# ------------------------------------------------------------------ GLUE / CLUE fine-tuning (classify.smk)
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


def classify_flags(wildcards):
    task = wildcards.task
    flags = [
        f"--max-steps {CLASSIFY['max_steps']}",
        f"--lr {classify_setting('lr', task)}",
        f"--epochs {classify_setting('epochs', task)}",
        f"--max-length {classify_setting('max_length', task)}",
        f"--eval-batch-size {CLASSIFY['eval_batch_size']}",
    ]
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
    return [
        f"{RESULTS}/classify/{label}/{task}/batch{batch}/seed{seed}/metrics.json"
        for task in CLASSIFY_TASKS[benchmark]
        for batch in CLASSIFY["batch_sizes"][benchmark]
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
    "ocnli": "chinese/ocnli/",
    "cmrc2018": "chinese/cmrc2018/",
}
CLASSIFY_UNPACK = {}
CLASSIFY_DATA = []
if CLASSIFY["download"]:
    with open(os.path.join(workflow.basedir, "workflow", "data", "classification-sources.yaml")) as _sources:
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
        DOWNLOADS[os.path.join(DATA_ROOT, "downloads", _name)] = _spec
    for _path, _spec in _files.items():
        if "url" in _spec:
            DOWNLOADS[os.path.join(DATA_ROOT, _path)] = _spec
        else:
            CLASSIFY_UNPACK[os.path.join(DATA_ROOT, _path)] = (
                os.path.join(DATA_ROOT, "downloads", _spec["archive"]),
                _spec["member"],
            )
        CLASSIFY_DATA.append(_path)


def classify_data(task):
    """The downloaded files a task reads: its benchmark's releases (with classify.download on) and the
    copies in workflow/data/evaluation-sources.yaml among its candidate files (with evaluate.download on)."""
    from pipeline.classify.tasks import TASKS

    folder = CLASSIFY_FOLDERS.get(task)
    files = [os.path.join(DATA_ROOT, path) for path in CLASSIFY_DATA if folder and path.startswith(folder)]
    spec = TASKS[task]
    candidates = {
        os.path.join(DATA_ROOT, name)
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


def electra_generator(wc):
    """The generator of an ELECTRA discriminator backbone named in models.generators ("": none, or
    pretrain's registry of released pairs)."""
    spec = config["models"].get("generators", {}).get(wc.backbone, "")
    if spec.startswith("hub:"):
        return hub_model(spec)
    return package_checkpoint(spec.removeprefix("package:")) if spec.startswith("package:") else spec


def token_shards(wc):
    """Every token shard of a backbone: one per sample shard."""
    return per_shard(f"{RESULTS}/tokens/{wc.backbone}/{{part}}/{{shard}}.parquet", PRETRAIN["language"])


# ------------------------------------------------------------------ report pages
def corpus_stats_inputs():
    stats, ngrams = [], []
    for lang in LANGUAGES:
        stats += expand(f"{RESULTS}/corpus/{{lang}}/docs/{{part}}/extract-stats.json", lang=lang, part=dump_parts(lang))
        if lang_config(lang)["convert"]:
            stats += per_shard(f"{RESULTS}/corpus/{{lang}}/simplified/{{part}}/{{shard}}.stats.json", lang)
        stats += per_shard(f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.stats.json", lang)
        stats += per_shard(f"{RESULTS}/ngrams/{{lang}}/{{part}}/{{shard}}/stats.json", lang)
        stats += per_shard(f"{RESULTS}/sample/{{lang}}/{{part}}/{{shard}}.stats.json", lang)
        ngrams += per_shard(f"{RESULTS}/ngrams/{{lang}}/{{part}}/{{shard}}/ngrams.parquet", lang)
    for name in PRETRAIN["backbones"] if PRETRAIN["objectives"] else []:  # one token shard per sample shard
        stats += per_shard(f"{RESULTS}/tokens/{name}/{{part}}/{{shard}}.stats.json", PRETRAIN["language"])
    return {"stats": stats, "ngrams": ngrams}


def trained_models():
    return [f"{name}+{objective}" for name in PRETRAIN["backbones"] for objective in PRETRAIN["objectives"]]
