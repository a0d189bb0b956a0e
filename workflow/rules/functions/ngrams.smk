# The n-gram stage's helpers (its rules: workflow/rules/ngrams.smk, which includes this file first):
# the presets the run needs, the options of the ngrams and kenlm jobs and the run's n-gram outputs.
from pipeline.experiments import DEFAULT_PRESET, PAIR_OBJECTIVES, ngram_preset
from pipeline.ngram_presets import NAMES as PRESET_NAMES


def objective_preset(objective):
    """The n-gram preset whose sample an objective reads (pipeline/experiments.py)."""
    return ngram_preset(config["ngrams"], objective)


# NSP / SOP read a sample made with --with-next (each sampled sentence with its next sentence, so they
# get as many examples as the other objectives: ULR-BERT §7.1), named <preset>-pairs.
PAIRS = "-pairs"


def objective_sample(objective):
    """The sample an objective reads: its preset's (objective_preset), <preset>-pairs for NSP / SOP."""
    return objective_preset(objective) + (PAIRS if objective in PAIR_OBJECTIVES else "")


def sample_preset(sample):
    """The n-gram preset of a sample name (ulr, ulr-pairs → ulr)."""
    return sample.removesuffix(PAIRS)


def sample_names():
    """The samples some configured objective reads (the default preset's alone where none pre-trains)."""
    return sorted({objective_sample(run.objective) for run in PRETRAIN_RUNS.values()}) or [DEFAULT_PRESET]


def sample_flags(sample):
    """Options of `python -m pipeline sample`: the config's size and seed, --with-next for a pair sample."""
    flags = ["--size", str(config["sample"]["size"]), "--seed", str(config["sample"]["seed"])]
    return flags + (["--with-next"] if sample.endswith(PAIRS) else [])


def ngram_presets():
    """The presets some configured objective reads (the default alone where none pre-trains)."""
    return sorted({objective_preset(run.objective) for run in PRETRAIN_RUNS.values()}) or [DEFAULT_PRESET]


NGRAM_PRESETS = ngram_presets()
# a sample's path component: a preset, or <preset>-pairs (the wildcard constraint of sample / tokenize)
SAMPLE_PATTERN = f"({'|'.join(PRESET_NAMES)})({PAIRS})?"


def ngram_flags(preset, mode=None):
    """Options of `python -m pipeline ngrams`: the preset, and the config's ngrams knobs that are set
    (they override the preset's values, as an explicit option does; a preset's mode is per language)."""
    settings = config["ngrams"]
    flags = ["--preset", preset, *options(settings, "batch_chars")]
    mode = mode or settings["mode"]
    if mode is not None:
        flags += ["--mode", mode]
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
        for sample in sample_names():
            outputs += per_shard(f"{RESULTS}/sample/{sample}/{{lang}}/{{part}}/{{shard}}.parquet", lang)
        if config["ngrams"]["corpus_ablation"]:
            outputs += per_shard(f"{RESULTS}/ngrams-corpus/{{lang}}/{{part}}/{{shard}}/ngrams.parquet", lang)
    return outputs
