# The report stage's helpers (its rules: workflow/rules/report.smk, which includes this file first).


def corpus_stats_inputs():
    stats, ngrams = [], []
    for lang in LANGUAGES:
        stats += expand(f"{RESULTS}/corpus/{{lang}}/docs/{{part}}/extract-stats.json", lang=lang, part=dump_parts(lang))
        if lang_config(lang)["convert"]:
            stats += per_shard(f"{RESULTS}/corpus/{{lang}}/simplified/{{part}}/{{shard}}.stats.json", lang)
        stats += per_shard(f"{RESULTS}/corpus/{{lang}}/sentences/{{part}}/{{shard}}.stats.json", lang)
        for preset in NGRAM_PRESETS:  # the n-gram stage per preset (corpus-stats labels each)
            stats += per_shard(f"{RESULTS}/ngrams/{preset}/{{lang}}/{{part}}/{{shard}}/stats.json", lang)
            ngrams += per_shard(f"{RESULTS}/ngrams/{preset}/{{lang}}/{{part}}/{{shard}}/ngrams.parquet", lang)
        # every preset samples the same sentences: one preset's sample and tokens count them
        stats += per_shard(f"{RESULTS}/sample/{NGRAM_PRESETS[0]}/{{lang}}/{{part}}/{{shard}}.stats.json", lang)
    for name in dict.fromkeys(run.backbone for run in PRETRAIN_RUNS.values()):  # a token shard per sample shard
        stats += per_shard(
            f"{RESULTS}/tokens/{NGRAM_PRESETS[0]}/{name}/{{part}}/{{shard}}.stats.json", PRETRAIN["language"]
        )
    return {"stats": stats, "ngrams": ngrams}
