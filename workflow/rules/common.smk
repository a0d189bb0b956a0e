# Paths and config look-ups shared by every rule file. Nothing here runs a job.
import os
import re
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
shell.prefix(f"export PYTHONPATH={workflow.basedir}${{{{PYTHONPATH:+:$PYTHONPATH}}}}; ")


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
    return outputs


def ngram_flags(mode=None):
    """Options of `python -m pipeline ngrams` from the config's ngrams section."""
    settings = config["ngrams"]
    flags = [f"--mode {mode or settings['mode']}", f"--max-n {settings['max_n']}", f"--top-k {settings['top_k']}",
             f"--min-count {settings['min_count']}", f"--batch-chars {settings['batch_chars']}"]
    if settings["threshold"] is not None:
        flags.append(f"--threshold {settings['threshold']}")
    if settings["lowercase"]:
        flags.append("--lowercase")
    if not settings["entities"]:
        flags.append("--no-entities")
    return " ".join(flags)


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

# The evaluation data by task (workflow/data/evaluation-sources.yaml: URL and SHA-256 per file).
# With evaluate.download on, they are inputs of the evaluate rule, fetched where missing.
with open(os.path.join(workflow.basedir, "workflow", "data", "evaluation-sources.yaml")) as _sources:
    EVAL_DATA = {task: {os.path.join(DATA_ROOT, path): spec for path, spec in files.items()}
                 for task, files in yaml.safe_load(_sources).items()}
if config["evaluate"]["download"]:
    for _files in EVAL_DATA.values():
        DOWNLOADS.update(_files)


def evaluation_data(task):
    return list(EVAL_DATA.get(task, {})) if config["evaluate"]["download"] else []


def checksum_flags(spec):
    flags = [f"--{algorithm} {spec[algorithm]}" for algorithm in ("sha256", "sha1", "md5") if algorithm in spec]
    if "checksums_url" in spec:
        flags.append(f"--checksums-url {spec['checksums_url']}")
    if "member" in spec:  # a file inside a zip / wheel archive (docs/design.md "Downloads")
        flags.append(f"--member {shlex.quote(spec['member'])}")
    if "archive_sha256" in spec:
        flags.append(f"--archive-sha256 {spec['archive_sha256']}")
    return " ".join(flags)


def clean_input(wildcards):
    stage = "simplified" if lang_config(wildcards.lang)["convert"] else "docs"
    return f"{RESULTS}/corpus/{wildcards.lang}/{stage}/{wildcards.part}/{wildcards.shard}.parquet"


def clean_flags(wildcards):
    settings = lang_config(wildcards.lang)["clean"]
    flags = [f"--max-tokens {settings['max_tokens']}"]
    if "rules" in settings:
        flags.append(f"--rules {settings['rules']}")
    if "min_tokens" in settings:
        flags.append(f"--min-tokens {settings['min_tokens']}")
    return " ".join(flags)


# ------------------------------------------------------------------ models and evaluation
BACKBONES = config["models"]["backbones"]
PRETRAIN = config["pretrain"]
EVALUATE = config["evaluate"]
for _name in PRETRAIN["backbones"]:
    if _name not in BACKBONES:
        raise ValueError(f"config: pretrain.backbones lists {_name!r}, which models.backbones does not define")
if BACKBONES and PRETRAIN["language"] not in LANGUAGES:
    raise ValueError(f"config: pretrain.language {PRETRAIN['language']!r} is not in corpus.languages")
TINY = [name for name, spec in BACKBONES.items() if spec == "tiny"]


def package_checkpoint(package):
    """The checkpoint folder (config.json + tokenizer) shipped inside an installed package."""
    import importlib.util
    from pathlib import Path

    found = importlib.util.find_spec(package)
    if found is None or found.origin is None:
        raise ValueError(f"config: models.backbones names package:{package}, which is not installed")
    configs = sorted(Path(found.origin).parent.rglob("config.json"))
    folders = [c.parent for c in configs if (c.parent / "tokenizer_config.json").exists()]
    if not folders:
        raise ValueError(f"config: package {package} holds no checkpoint (config.json + tokenizer_config.json)")
    return str(folders[0])


def backbone_path(name):
    """What `--model` is given for backbone `name`."""
    spec = BACKBONES[name]
    if spec == "tiny":
        return f"{RESULTS}/models/{name}"
    if spec.startswith("package:"):
        return package_checkpoint(spec.removeprefix("package:"))
    return spec


def backbone_inputs(name):
    return [f"{RESULTS}/models/{name}"] if BACKBONES[name] == "tiny" else []


def evaluated_models():
    """Every model the evaluation rules evaluate: label -> spec, input files, language, kind."""
    models = {}
    lang = PRETRAIN["language"]
    for name in BACKBONES:
        models[name] = {"spec": backbone_path(name), "inputs": backbone_inputs(name), "lang": lang, "kind": "transformer"}
        if "input-embeddings" in EVALUATE["baselines"]:
            models[f"{name}.input-embeddings"] = {"spec": f"input-embeddings:{backbone_path(name)}",
                                                  "inputs": backbone_inputs(name), "lang": lang, "kind": "bag"}
    for name in PRETRAIN["backbones"]:
        for objective in PRETRAIN["objectives"]:
            path = f"{RESULTS}/models/{name}+{objective}"
            models[f"{name}+{objective}"] = {"spec": path, "inputs": [path], "lang": lang, "kind": "transformer"}
    for name, model in EVALUATE["models"].items():
        models[name] = {"spec": model["path"], "inputs": [], "lang": model["lang"], "kind": "transformer"}
    for corpus_lang in LANGUAGES:
        if "word2vec" in EVALUATE["baselines"]:
            vectors = f"{RESULTS}/word2vec/{corpus_lang}/vectors.kv"
            models[f"word2vec-{corpus_lang}"] = {"spec": f"word2vec:{vectors}", "inputs": [vectors],
                                                 "lang": corpus_lang, "kind": "bag"}
    for lexical in ("bm25", "tfidf"):
        if lexical in EVALUATE["baselines"]:
            models[lexical] = {"spec": lexical, "inputs": [], "lang": None, "kind": "lexical"}
    return models


EVAL_MODELS = evaluated_models()
RETRIEVAL = ("geogranno", "faq")


def metrics_files():
    files = []
    for label, model in EVAL_MODELS.items():
        for lang in [model["lang"]] if model["lang"] else LANGUAGES:
            for task in EVALUATE["tasks"].get(lang, []):
                if model["kind"] == "lexical" and task not in RETRIEVAL:
                    continue
                poolings = EVALUATE["pooling"] if model["kind"] == "transformer" else ["mean"]
                files += [f"{RESULTS}/metrics/{task}/{label}.{pooling}.json" for pooling in poolings]
    return files


def figure_dirs():
    if not EVALUATE["figures"] or "analogy" not in EVALUATE["tasks"].get("en", []):
        return []
    return [f"{RESULTS}/figures/{label}" for label, model in EVAL_MODELS.items()
            if model["kind"] == "transformer" and model["lang"] == "en"]


def pretrain_launcher():
    """One process, or one per GPU through torchrun (DDP; --batch-size is per process)."""
    gpus = PRETRAIN["gpus"]
    return "python" if gpus == 1 else f"torchrun --standalone --nproc_per_node {gpus}"


def pretrain_flags():
    p = PRETRAIN
    return (f"--max-steps {p['max_steps']} --epochs {p['epochs']} --batch-size {p['batch_size']}"
            f" --grad-accum {p['grad_accum']} --lr {p['lr']} --warmup {p['warmup']} --seed {p['seed']}"
            f" --misad-choice {p['misad_choice']} --save-every {p['save_every']} --resume")  # resume: a rerun continues


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
    stats += [f"{RESULTS}/tokens/{name}/tokens.stats.json" for name in PRETRAIN["backbones"] if PRETRAIN["objectives"]]
    return {"stats": stats, "ngrams": ngrams}


def trained_models():
    return [f"{name}+{objective}" for name in PRETRAIN["backbones"] for objective in PRETRAIN["objectives"]]
