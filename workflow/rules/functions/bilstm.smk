# The BiLSTM stage's helpers (its rules: workflow/rules/bilstm.smk, which includes this file first):
# the models of the bilstm section (BILSTM_MODELS), their downloads, inputs and options.
BILSTM = config["bilstm"]
BILSTM_CPUS_PER_GPU = 4  # the rule's threads per GPU (workflow/profiles/slurm: cpus_per_gpu)
# label -> pooling, hidden size per direction, directory
BILSTM_MODELS = {
    f"bilstm-{pooling}-{2 * size}": {
        "pooling": pooling,
        "hidden": size,
        "dir": f"{RESULTS}/bilstm/bilstm-{pooling}-{2 * size}",
    }
    for pooling, size in [
        *((pooling, size) for pooling in BILSTM["poolings"] for size in BILSTM["sizes"]),
        *((model["pooling"], model["size"]) for model in BILSTM["extra"]),  # beside the grid
    ]
}
if BILSTM_MODELS and BILSTM["vectors"] != "word2vec" and "vectors_url" in BILSTM:
    register_download(
        data_path(BILSTM["vectors"]),
        {"url": BILSTM["vectors_url"], **({"sha256": BILSTM["vectors_sha256"]} if "vectors_sha256" in BILSTM else {})},
    )
if BILSTM_MODELS:
    for _path, _spec in BILSTM["downloads"].items():
        register_download(data_path(_path), _spec)


def bilstm_vectors():
    """The word vectors file: the word2vec stage's English vectors, or a file under data_root."""
    if BILSTM["vectors"] == "word2vec":
        return expand(rules.word2vec.output[0], lang="en")[0]  # rules.word2vec: pretrain.smk, included before
    return data_path(BILSTM["vectors"])


def bilstm_files(key):
    return [data_path(path) for path in BILSTM[key]]


def bilstm_splits(wildcards, input):
    """--dev / --test and their files, where the config gives them."""
    return [arg for split in ("dev", "test") if getattr(input, split) for arg in (f"--{split}", *getattr(input, split))]


def bilstm_flags(wildcards):
    model = BILSTM_MODELS[wildcards.label]
    flags = [*options(BILSTM, "frequent_words"), "--pooling", model["pooling"], "--hidden", str(model["hidden"])]
    return flags + options(BILSTM, "dev_fraction", "max_train_pairs", "epochs", "batch_size", "lr", "seed")
