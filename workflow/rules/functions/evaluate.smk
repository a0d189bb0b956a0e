# The evaluation stage's helpers (its rules: workflow/rules/evaluate.smk, which includes this file
# first): the evaluation data and its downloads, every evaluated model (EVAL_MODELS), the metrics
# files of the run and the figures.
EVALUATE = config["evaluate"]
EVALUATE_CPUS_PER_GPU = 4  # the rules' threads per GPU (workflow/profiles/slurm: cpus_per_gpu)
RETRIEVAL = ("geogranno", "faq")

# The evaluation data by task (workflow/data/evaluation-sources.yaml: URL and SHA-256 per file).
# With evaluate.download on, they are inputs of the evaluate rule, fetched where missing.
with open(sources_file("evaluation-sources.yaml")) as _sources:
    EVAL_DATA = {
        task: {data_path(path): spec for path, spec in files.items()}
        for task, files in yaml.safe_load(_sources).items()
    }
if EVALUATE["download"]:
    for _files in EVAL_DATA.values():
        for _path, _spec in _files.items():
            register_download(_path, _spec)


def evaluation_data(task):
    return list(EVAL_DATA.get(task, {})) if EVALUATE["download"] else []


def evaluated_models():
    """Every model the evaluation rules evaluate: label -> spec, input files, language, kind."""
    models = {}
    for name, (path, inputs) in BACKBONE_MODELS.items():
        models[name] = {"spec": path, "inputs": list(inputs), "lang": backbone_lang(name), "kind": "transformer"}
        if "input-embeddings" in EVALUATE["baselines"]:
            models[f"{name}.input-embeddings"] = {
                "spec": f"input-embeddings:{path}",
                "inputs": list(inputs),
                "lang": backbone_lang(name),
                "kind": "bag",
            }
    for label in trained_models():
        path = f"{RESULTS}/models/{label}"
        models[label] = {"spec": path, "inputs": [path], "lang": PRETRAIN["language"], "kind": "transformer"}
    for label, run in FINETUNE_RUNS.items():  # evaluated with the pooling they were trained with
        path = f"{RESULTS}/finetune/{label}"
        poolings = EVALUATE["pooling"] if run["settings"]["pooling"] == "mean" else [run["settings"]["pooling"]]
        models[label] = {"spec": path, "inputs": [path], "lang": "en", "kind": "transformer", "poolings": poolings}
    for name, model in EVALUATE["models"].items():
        models[name] = {"spec": model["path"], "inputs": [], "lang": model["lang"], "kind": "transformer"}
    for lang in LANGUAGES if "word2vec" in EVALUATE["baselines"] else []:
        vectors = f"{RESULTS}/word2vec/{lang}/vectors.bin"
        models[f"word2vec-{lang}"] = {"spec": f"word2vec:{vectors}", "inputs": [vectors], "lang": lang, "kind": "bag"}
    for label, model in BILSTM_MODELS.items():
        models[label] = {"spec": f"bilstm:{model['dir']}", "inputs": [model["dir"]], "lang": "en", "kind": "bilstm"}
    for lexical in ("bm25", "tfidf"):
        if lexical in EVALUATE["baselines"]:
            models[lexical] = {"spec": lexical, "inputs": [], "lang": None, "kind": "lexical"}
    return models


EVAL_MODELS = evaluated_models()
# Tasks whose data cannot be downloaded and checked (SCWS is not redistributed, and no checksum is
# pinned for it in evaluation-sources.yaml). A config may list them; they are evaluated only where
# the file is under data_root, so their absence leaves table cells empty instead of breaking the DAG.
OPTIONAL_TASK_DATA = {"scws": "scws/ratings.txt"}
SKIPPED_TASKS = sorted(
    task
    for task, path in OPTIONAL_TASK_DATA.items()
    if any(task in tasks for tasks in EVALUATE["tasks"].values()) and not os.path.isfile(data_path(path))
)
if SKIPPED_TASKS:
    print(
        f"evaluate: skipping {', '.join(SKIPPED_TASKS)}: no "
        f"{', '.join(data_path(OPTIONAL_TASK_DATA[t]) for t in SKIPPED_TASKS)}",
        file=sys.stderr,
    )


def transfer_models():
    """Label -> pooling of every model the transfer rule evaluates (English models with embeddings)."""
    chosen = config["transfer"]["models"]
    models = {}
    for label, model in EVAL_MODELS.items():
        if model["lang"] != "en" or model["kind"] == "lexical" or (chosen != "all" and label not in chosen):
            continue
        models[label] = EVALUATE["pooling"][0] if model["kind"] == "transformer" else "mean"
    return models


def language_tasks(lang):
    """The config's tasks of a language, less those whose data is absent."""
    return [task for task in EVALUATE["tasks"].get(lang, []) if task not in SKIPPED_TASKS]


def evaluation_tasks(label):
    """The tasks a model is evaluated on: its language's (every language's for a lexical baseline, on
    the retrieval tasks only)."""
    model = EVAL_MODELS[label]
    return [
        task
        for lang in ([model["lang"]] if model["lang"] else LANGUAGES)
        for task in language_tasks(lang)
        if model["kind"] != "lexical" or task in RETRIEVAL
    ]


def evaluation_poolings(label):
    model = EVAL_MODELS[label]
    return model.get("poolings") or (EVALUATE["pooling"] if model["kind"] == "transformer" else ["mean"])


def embedding_models(lang):
    return [label for label, model in EVAL_MODELS.items() if model["lang"] == lang and model["kind"] != "lexical"]


# BURT twin §4.2 fine-tunes its encoder rows on SemEval-2013 5(a)'s training pairs and holds the fixed
# encoders' parameters: with evaluate.semeval5a.finetune, a transformer's semeval5a file comes from
# finetune_semeval, a bag's or a BiLSTM's from evaluate_frozen (the logistic regression on frozen features).
SEMEVAL = EVALUATE["semeval5a"]
FINETUNED_TASKS = ["semeval5a"] if SEMEVAL["finetune"] else []


def finetuned_task_models(tuned):
    """The models with a fine-tuned task: their transformers (tuned) or their fixed encoders (not)."""
    return [
        label
        for label, model in EVAL_MODELS.items()
        if any(task in FINETUNED_TASKS for task in evaluation_tasks(label))
        and (model["kind"] == "transformer") == tuned
    ]


# The labels evaluate_frozen scores SemEval-2013 5(a) for: every fixed encoder (a bag of vectors, a BiLSTM)
# with a fine-tuned task, the backbones' bags of input embeddings by their shape.
FIXED_ENCODER_LABEL = "|".join(
    [
        r"[A-Za-z0-9_.+-]+\.input-embeddings",
        *(re.escape(label) for label in finetuned_task_models(tuned=False) if not label.endswith(".input-embeddings")),
    ]
)


# The embedding models of each language, with that language's tasks: one evaluate_<lang> job per model
# and pooling scores every task, loading the model once (a lexical baseline is a job per task; a
# fine-tuned task, a job of its own).
EVALUATION_GROUPS = {
    lang: {"tasks": [t for t in language_tasks(lang) if t not in FINETUNED_TASKS], "labels": embedding_models(lang)}
    for lang in LANGUAGES
    if [t for t in language_tasks(lang) if t not in FINETUNED_TASKS] and embedding_models(lang)
}


def metrics_files():
    """Every metrics JSON of the evaluation rules, and paper 004's Table 2 (SNLI) per BiLSTM model."""
    files = [
        f"{RESULTS}/metrics/{task}/{label}.{pooling}.json"
        for label in EVAL_MODELS
        for task in evaluation_tasks(label)
        for pooling in evaluation_poolings(label)
    ]
    files += [f"{RESULTS}/metrics/snli/{label}.json" for label in BILSTM_MODELS]
    return files + [
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


def evaluation_gpus(label):
    """Transformers and BiLSTMs are encoded on a GPU; bags of vectors and lexical baselines need none."""
    return 1 if EVAL_MODELS[label]["kind"] in ("transformer", "bilstm") else 0
