# The n-gram stage's helpers (its rules: workflow/rules/ngrams.smk, which includes this file first):
# the options of the ngrams and kenlm jobs and the run's n-gram outputs.


def ngram_flags(mode=None):
    """Options of `python -m pipeline ngrams` from the config's ngrams section."""
    settings = config["ngrams"]
    flags = ["--mode", mode or settings["mode"], *options(settings, "max_n", "top_k", "batch_chars")]
    for key in ("min_count", "threshold"):  # null: the stage's default for the mode
        if settings[key] is not None:
            flags += options(settings, key)
    if settings["lowercase"]:
        flags.append("--lowercase")
    if not settings["entities"]:
        flags.append("--no-entities")
    return flags


def kenlm_flags(mem_mb):
    """Options of `python -m pipeline kenlm`. lmplz's sorting memory is kenlm.memory as a percent of the
    job's memory (mem_mb), so that a cluster job never reserves a share of the whole node; a size (4G,
    800M) is passed as is."""
    memory = str(config["kenlm"]["memory"])
    if memory.endswith("%"):
        memory = f"{int(mem_mb * float(memory[:-1]) / 100)}M"
    flags = [*options(config["kenlm"], "order"), "--memory", memory]
    return flags + (["--lowercase"] if config["ngrams"]["lowercase"] else [])


def ngram_outputs():
    outputs = []
    for lang in LANGUAGES:
        outputs += per_shard(f"{RESULTS}/sample/{{lang}}/{{part}}/{{shard}}.parquet", lang)
        if config["ngrams"]["corpus_ablation"]:
            outputs += per_shard(f"{RESULTS}/ngrams-corpus/{{lang}}/{{part}}/{{shard}}/ngrams.parquet", lang)
    return outputs
