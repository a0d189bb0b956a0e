# The corpus stage's helpers (its rules: workflow/rules/corpus.smk, which includes this file first):
# where each dump part lies and in how many slices it is extracted, the dumps to download, and the
# options and inputs of the jobs.


def dump_spec(lang, part):
    return lang_config(lang)["dumps"][part]


def dump_path(lang, part):
    return data_path(dump_spec(lang, part)["path"])


def index_path(lang, part):
    return data_path(dump_spec(lang, part)["index"]["path"])


def dump_slices(lang, part):
    """Extract jobs of a dump part: its `slices` (a multistream dump with its index), else 1."""
    spec = dump_spec(lang, part)
    slices = spec.get("slices", 1)
    if slices > 1 and "index" not in spec:
        raise ValueError(f"config: corpus.{lang}.dumps.{part} has slices: {slices} but no multistream index")
    return slices


# Dumps named by URL, and their multistream indexes, are fetched and checked by the download rule.
for _lang in LANGUAGES:
    for _part in dump_parts(_lang):
        _spec = dump_spec(_lang, _part)
        if "url" in _spec:
            register_download(dump_path(_lang, _part), _spec)
        if "url" in (_spec.get("index") or {}):
            register_download(index_path(_lang, _part), _spec["index"])


def parts_pattern(sliced):
    """Regex of the dump parts (of any language) that are extracted in slices, or in one job."""
    names = {part for lang in LANGUAGES for part in dump_parts(lang) if (dump_slices(lang, part) > 1) == sliced}
    return one_of(names)


def slice_dirs(wildcards):
    slices = dump_slices(wildcards.lang, wildcards.part)
    return [f"{RESULTS}/corpus/{wildcards.lang}/slices/{wildcards.part}/{k}" for k in range(slices)]


def keep_lists_flags(wildcards):
    return ["--keep-lists"] if lang_config(wildcards.lang)["keep_lists"] else []


def convert_flags(wildcards):
    settings = lang_config(wildcards.lang)
    return ["--opencc-config", settings["opencc"], "--variants", ",".join(settings["variants"])]


def clean_input(wildcards):
    stage = "simplified" if lang_config(wildcards.lang)["convert"] else "docs"
    return f"{RESULTS}/corpus/{wildcards.lang}/{stage}/{wildcards.part}/{wildcards.shard}.parquet"


def clean_flags(wildcards):
    settings = lang_config(wildcards.lang)["clean"]
    return options(settings, "max_tokens", *(key for key in ("rules", "min_tokens") if key in settings))


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
