"""Stage ``corpus-stats``: the stats JSONs of the corpus and n-gram stages → one report page and a figure.

What a researcher checks before trusting a run (docs/method.md §1–§2): per stage and language,
the summed counts of its stats JSONs (pages seen and kept, redirects skipped, pages that failed;
sentences kept and dropped; documents, tokens, kept n-grams and marked spans; the sample and
the token dataset), and the length distribution of the kept n-grams (read from the
``ngrams`` Parquet files: how many of each order n survived the top-K pruning).

Each stats JSON says which stage wrote it (``provenance.stage``); the language is the
``lang`` parameter where the stage records one, else the path component naming a language.
The ngrams outputs of each n-gram preset (``--preset``, recorded in their provenance) are
counted apart, as stage ``ngrams (burt)`` and lengths ``en burt pmi``: the presets count the
same documents, so their figures are never summed.
Writes ``corpus_stats.html`` (a self-contained page for ``snakemake --report``),
``corpus_stats.json`` (the same numbers) and ``ngram_lengths.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
import html
import json
import logging
from collections import defaultdict
from pathlib import Path

from pipeline.atomic import AtomicFiles, json_text
from pipeline.contracts import read_provenance
from pipeline.errors import InputError
from pipeline.languages import SUPPORTED
from pipeline.output_guard import refuse_read_files

log = logging.getLogger("pipeline.corpus_stats")
STAGE_ORDER = ("extract", "convert", "clean", "ngrams", "kenlm", "sample", "tokenize")
# The counts that answer "what survived each stage", shown first in the summary table.
HEADLINE = {
    "extract": ("pages_seen", "articles_kept", "redirects_skipped", "pages_failed"),
    "clean": ("docs", "sentences_kept", "sentences_too_short", "entities_kept"),
    "ngrams": ("documents", "sentences", "tokens", "kept_ngrams", "pmi_spans", "entity_spans"),
}
NOT_COUNTS = ("seconds", "words_per_second", "pages_per_second", "seed")
# Figures that every shard's stats repeat for the whole corpus (the sample's): taken once, not summed.
WHOLE_CORPUS = ("corpus_sentences", "sample_size")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stats", nargs="+", type=Path, required=True, help="stats JSONs of the corpus / n-gram stages"
    )
    parser.add_argument("--ngrams", nargs="*", type=Path, default=[], help="ngrams.parquet files (length histogram)")
    parser.add_argument("--out", type=Path, required=True, help="output directory")


def _language(path: Path, record: dict) -> str:
    lang = record.get("params", {}).get("lang")
    if lang:
        return lang
    return next((part for part in path.parts if part in SUPPORTED), "all")


def read_stats(paths: list[Path]) -> dict[str, dict[str, dict[str, float]]]:
    """stage → language → summed numeric counts (numbers only; timings left out)."""
    totals: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for path in paths:
        try:
            stats = json.loads(Path(path).read_text())
        except FileNotFoundError:
            raise InputError(path, "stats file not found") from None
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON ({exc.msg})", where=f"line {exc.lineno}") from None
        record = stats.get("provenance") if isinstance(stats, dict) else None
        if not isinstance(record, dict) or "stage" not in record:
            raise InputError(path, "no provenance.stage: not a stats file of this pipeline")
        preset = record.get("params", {}).get("preset")  # the ngrams stage's vocabulary
        stage = f"{record['stage']} ({preset})" if preset else record["stage"]
        counts = totals[stage][_language(Path(path), record)]
        for key, value in stats.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and key not in NOT_COUNTS:
                counts[key] = max(counts.get(key, 0), value) if key in WHOLE_CORPUS else counts.get(key, 0) + value
    return {stage: {lang: dict(counts) for lang, counts in langs.items()} for stage, langs in totals.items()}


def ngram_lengths(paths: list[Path]) -> dict[str, dict[int, int]]:
    """ "language source" (e.g. ``en pmi``, ``en entity``) → n → kept n-grams of that length."""
    import polars as pl

    lengths: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for path in paths:
        try:
            counts = pl.read_parquet(path, columns=["n", "source"]).group_by("source", "n").len()
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise InputError(path, f"not an ngrams Parquet file ({exc})") from None
        lang = next((part for part in Path(path).parts if part in SUPPORTED), "all")
        preset = read_provenance(path).get("params", {}).get("preset")
        for source, n, count in counts.iter_rows():
            lengths[f"{lang} {preset} {source}" if preset else f"{lang} {source}"][int(n)] += int(count)
    return {key: dict(sorted(by_n.items())) for key, by_n in sorted(lengths.items())}


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.3f}"


def _stage_table(stage: str, langs: dict[str, dict[str, float]]) -> str:
    languages = sorted(langs)
    keys = list(HEADLINE.get(stage.split(" ")[0], ()))  # "ngrams (burt)": the ngrams headline
    keys = [k for k in keys if any(k in langs[lang] for lang in languages)]
    keys += sorted({k for lang in languages for k in langs[lang]} - set(keys))
    head = "".join(f"<th>{html.escape(lang)}</th>" for lang in languages)
    body = "".join(
        f"<tr><td>{html.escape(key)}</td>"
        + "".join(f'<td class="n">{_number(langs[lang][key]) if key in langs[lang] else ""}</td>' for lang in languages)
        + "</tr>"
        for key in keys
    )
    return f"<h2>{html.escape(stage)}</h2>\n<table><tr><th>count</th>{head}</tr>{body}</table>"


def render_html(stats: dict, lengths: dict[str, dict[int, int]]) -> str:
    def place(stage: str) -> tuple[int, str]:
        base = stage.split(" ")[0]
        return (STAGE_ORDER.index(base) if base in STAGE_ORDER else len(STAGE_ORDER), stage)

    stages = sorted(stats, key=place)
    parts = [
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Corpus statistics</title>',
        (
            "<style>table{border-collapse:collapse;margin-bottom:1.5em}td,th{border:1px solid #ccc;"
            "padding:2px 8px}td.n{text-align:right}</style></head><body>"
        ),
        "<h1>Corpus statistics per stage</h1>",
        "<p>Counts summed over every dump part and shard of each language (docs/method.md §1–§2).</p>",
    ]
    parts += [_stage_table(stage, stats[stage]) for stage in stages]
    if lengths:
        orders = sorted({n for by_n in lengths.values() for n in by_n})
        head = "".join(f"<th>n = {n}</th>" for n in orders)  # rows: language and source (pmi / entity)
        body = "".join(
            f"<tr><td>{html.escape(lang)}</td>"
            + "".join(f'<td class="n">{by_n.get(n, 0):,}</td>' for n in orders)
            + "</tr>"
            for lang, by_n in lengths.items()
        )
        parts.append(f"<h2>Kept n-grams by length</h2>\n<table><tr><th>language, source</th>{head}</tr>{body}</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def plot_lengths(lengths: dict[str, dict[int, int]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = max(len(lengths), 1)
    columns = min(panels, 2)  # pmi and entity of one language side by side
    rows = -(-panels // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.2 * rows), squeeze=False)
    for axis in list(axes.flat)[len(lengths) :]:
        axis.axis("off")
    for axis, (lang, by_n) in zip(axes.flat, lengths.items()):
        axis.bar(list(by_n), list(by_n.values()), color="#4c72b0")
        axis.set_title(f"kept n-grams by length ({lang})", fontsize=10)
        axis.set_xlabel("n (tokens)")
        axis.set_ylabel("n-grams")
        axis.set_xticks(list(by_n))
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=100, metadata={"Software": None})
    plt.close(figure)


HTML_FILE, JSON_FILE, PLOT_FILE = "corpus_stats.html", "corpus_stats.json", "ngram_lengths.png"  # the files of --out


def run(args: argparse.Namespace) -> None:
    # --out may hold the inputs (other names), but none of its three files may be one of them
    refuse_read_files(
        [args.out / name for name in (HTML_FILE, JSON_FILE, PLOT_FILE)], [*args.stats, *args.ngrams], "corpus-stats"
    )
    stats = read_stats(args.stats)
    lengths = ngram_lengths(args.ngrams)
    with AtomicFiles() as files:
        files.temp(args.out / HTML_FILE).write_text(render_html(stats, lengths))
        files.temp(args.out / JSON_FILE).write_text(
            json_text(
                {
                    "stages": stats,
                    "ngram_lengths": {
                        key: [{"n": n, "count": c} for n, c in by_n.items()] for key, by_n in lengths.items()
                    },
                }
            )
        )
        plot_lengths(lengths, files.temp(args.out / PLOT_FILE))
    log.info("%s: %d stages, n-gram lengths of %d language(s)", args.out, len(stats), len(lengths))
