# The pre-training stage's helpers (its rules: workflow/rules/pretrain.smk, which includes this file
# first): the backbones and their checks, the ELECTRA generators, the launcher and the options.
BACKBONES = config["models"]["backbones"]
PRETRAIN = config["pretrain"]
# CPUs each GPU job gets per GPU: the rule's threads (workflow/profiles/slurm sets the same
# cpus_per_gpu; tests/test_slurm_profile.py keeps the two in step).
PRETRAIN_CPUS_PER_GPU = 8

for _name in PRETRAIN["backbones"]:
    if _name not in BACKBONES:
        raise ValueError(f"config: pretrain.backbones lists {_name!r}, which models.backbones does not define")
for _run in PRETRAIN_RUNS.values():
    if _run.backbone not in BACKBONES:
        raise ValueError(
            f"config: pretrain.experiments.{_run.experiment}.backbones lists {_run.backbone!r},"
            " which models.backbones does not define"
        )
if BACKBONES and PRETRAIN["language"] not in LANGUAGES:
    raise ValueError(f"config: pretrain.language {PRETRAIN['language']!r} is not in corpus.languages")
TINY = [name for name, spec in BACKBONES.items() if is_tiny(spec)]
# (--model value, input files) of every backbone and of every ELECTRA generator named in
# models.generators ("": none, or pretrain's registry of released pairs). Resolving them here
# registers their hub models for the download_model rule.
BACKBONE_MODELS = {name: resolve_model(spec, name, f"models.backbones.{name}") for name, spec in BACKBONES.items()}
GENERATORS = {
    name: resolve_model(spec, key=f"models.generators.{name}")
    for name, spec in config["models"].get("generators", {}).items()
}


def backbone_lang(name):
    """The language of a backbone: a tiny model's corpus language, pretrain.language otherwise."""
    spec = BACKBONES[name]
    return spec.split(":", 1)[1] if spec.startswith("tiny:") else PRETRAIN["language"]


def electra_generator(backbone):
    """(--generator value, input files) of an ELECTRA backbone: "" where models.generators names none."""
    return GENERATORS.get(backbone, ("", []))


def token_shards(wc):
    """Every token shard of a run's backbone, from the sample its objective reads (the n-gram preset's;
    the preset's pair sample for NSP / SOP): one per sample shard."""
    run = PRETRAIN_RUNS[wc.label]
    path = f"{RESULTS}/tokens/{objective_sample(run.objective)}/{run.backbone}/{{part}}/{{shard}}.parquet"
    return per_shard(path, PRETRAIN["language"])


def loader_workers(threads):
    """Data-loader processes per training process (pipeline/pretrain/loader.py): its share of the job's
    CPUs, less the one it trains on."""
    return max(threads // PRETRAIN["gpus"] - 1, 0)


def word2vec_nli(lang):
    """(--nli options, input files) of the word2vec job of ``lang``: word2vec.nli's NLI files, English
    only (the BiLSTM's training sentences, docs/stages/bilstm.md)."""
    specs = config["word2vec"]["nli"] if lang == "en" else []
    flags = [arg for spec in specs for arg in ("--nli", data_path(spec))]
    return flags, [path for spec in specs for path in nli_data_files(spec)]


def launcher(gpus):
    """One process, or one per GPU through torchrun (DDP; --batch-size is per process)."""
    return ["python"] if gpus == 1 else ["torchrun", "--standalone", "--nproc_per_node", str(gpus)]


# the objectives that train MiSAD, whose sentence vector pretrain.misad_pooling sets (--pooling) and whose
# loss misad_loss (--misad-loss); those that draw SpanBERT spans, bounded by span_max_words
from pipeline.objective_registry import MISAD_OBJECTIVES, SPAN_OBJECTIVES


def pretrain_flags(label):
    """A run's options: its experiment's settings, then the section's own."""
    run = PRETRAIN_RUNS[label]
    flags = options(run.settings, "max_steps", "epochs", "batch_size", "grad_accum", "lr", "warmup")
    if run.settings["input"] == "packed":  # sentences: the length is tokenize's (pretrain.max_length)
        flags += ["--input", "packed", *options(run.settings, "max_length")]
    flags += options(PRETRAIN, "seed", "misad_choice", "ngram_pool", "save_every") + ["--resume"]  # a rerun continues
    if PRETRAIN["heldout"]:  # sentences never trained on, scored every eval_every steps
        flags += options(PRETRAIN, "heldout", "eval_every")
    if run.objective in MISAD_OBJECTIVES:  # elsewhere --pooling is only the exported one: mean, as before
        flags += ["--pooling", PRETRAIN["misad_pooling"], *options(run.settings, "misad_loss")]
    if run.objective in SPAN_OBJECTIVES:
        flags += options(run.settings, "span_max_words")
    return flags


def trained_models():
    return list(PRETRAIN_RUNS)
