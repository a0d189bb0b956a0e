# The n-gram stage's helpers (its rules: workflow/rules/ngrams.smk, which includes this file first):
# the presets the run needs, the options of the ngrams and kenlm jobs and the run's n-gram outputs.
from pipeline.ngrams.presets import DEFAULT as DEFAULT_PRESET
from pipeline.ngrams.presets import NAMES as PRESET_NAMES


def objective_preset(objective):
    """The n-gram preset whose sample an objective reads (ngrams.presets; docs/method.md §2): BURT
    masking reads BURT's vocabulary and MiSAD ULR-BERT's. An objective not listed reads the default
    (ulr): those without n-gram spans (mlm, wwm, spanbert, entity, nsp, sop) all share one preset."""
    return config["ngrams"]["presets"].get(objective, DEFAULT_PRESET)


def ngram_presets():
    """The presets some configured objective reads (the default alone where none pre-trains)."""
    return sorted({objective_preset(run.objective) for run in PRETRAIN_RUNS.values()}) or [DEFAULT_PRESET]


NGRAM_PRESETS = ngram_presets()


def ngram_flags(preset, mode=None):
    """Options of `python -m pipeline ngrams`: the preset, and the config's ngrams knobs that are set
    (they override the preset's values, as an explicit option does)."""
    settings = config["ngrams"]
    flags = ["--preset", preset, "--mode", mode or settings["mode"], *options(settings, "batch_chars")]
    for key in ("max_n", "top_k", "min_count", "threshold"):  # null: the preset's value
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
        for preset in NGRAM_PRESETS:
            outputs += per_shard(f"{RESULTS}/sample/{preset}/{{lang}}/{{part}}/{{shard}}.parquet", lang)
        if config["ngrams"]["corpus_ablation"]:
            outputs += per_shard(f"{RESULTS}/ngrams-corpus/{{lang}}/{{part}}/{{shard}}/ngrams.parquet", lang)
    return outputs
