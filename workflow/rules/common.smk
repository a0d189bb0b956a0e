# Paths and config look-ups shared by every rule file. Nothing here runs a job.
import os
import re

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


def checksum_flags(spec):
    flags = [f"--{algorithm} {spec[algorithm]}" for algorithm in ("sha256", "sha1", "md5") if algorithm in spec]
    if "checksums_url" in spec:
        flags.append(f"--checksums-url {spec['checksums_url']}")
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
