"""N-gram presets: the lengths of the ``ulr`` and ``burt`` vocabularies on real text, and the settings tried.

Not a speed benchmark: it measures whether each ``ngrams`` preset (pipeline/ngrams/presets.py)
gives the n-gram lengths its paper describes (docs/method.md §2), on the real English articles
of ``reference_pmi/sentences.parquet`` (with ``--lowercase``, as the configs run them) and the
real Chinese sample ``wiki/zh/zhwiki-test-pages.xml`` (extract → convert → clean, the pipeline's
own stages), for the two presets and every other setting of the paper's knobs that was tried:

- ULR-BERT §4: "more than 50% of the top 2000 n-grams contain 2 ∼ 3 words, and only less than
  3% n-grams are longer than 4";
- BURT §5.1: "nearly 50% of the top 2000 n-grams contain 3 ∼ 4 words (characters for Chinese),
  and only less than 0.5% n-grams are longer than 7 ... vocabularies of n-grams with average
  lengths of 4.6 and 4.5" (English, Chinese). The targets: 3–4 tokens 40–60% of the top 2000,
  at most 0.5% longer than 7, average 4.6 ± 0.5 (en) and 4.5 ± 0.5 (zh).

Measures (PMI n-grams only; entity spans are not part of the PMI vocabulary): the shares of
the top 2000 are pooled over every document's top 2000, as ``stats.json``'s
``length_distribution.top2000`` gives them; "docs in 40–60%" counts the documents whose own
top 2000 has 40–60% of 3–4 tokens. The average length of the vocabulary is the mean length of
the distinct kept n-grams (each n-gram string counted once over all documents: the
"vocabulary" of the paper); the per-document average counts every document's kept n-grams
(``length_distribution.kept``), so an n-gram kept in two documents counts twice.

Usage (repo root): ``python bench/ngram_presets.py --data DATA_ROOT [--write-md]``
(``--data`` defaults to ``$ULR_DATA_ROOT``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

from harness import add_data_root, machine, markdown_table, write_section

from pipeline.cli import main as cli

ZH_SAMPLE = "wiki/zh/zhwiki-test-pages.xml"
# (label, options): the two presets first, then the other settings tried for BURT's lengths
SETTINGS = [
    ("ulr (preset; default)", ["--preset", "ulr"]),
    ("burt (preset)", ["--preset", "burt"]),
    ("N 6, min count 2", ["--max-n", "6", "--min-count", "2"]),
    ("N 6, min count 1", ["--max-n", "6", "--min-count", "1"]),
    ("N 4, min count 1", ["--max-n", "4", "--min-count", "1"]),
    ("N 7, min count 1", ["--max-n", "7", "--min-count", "1"]),
    ("N 8, min count 1", ["--max-n", "8", "--min-count", "1"]),
    ("N 8, min count 2", ["--max-n", "8", "--min-count", "2"]),
    ("N 8, min count 3", ["--max-n", "8", "--min-count", "3"]),
    ("N 10, min count 2", ["--max-n", "10", "--min-count", "2"]),
    ("N 6, min count 1, threshold 5", ["--max-n", "6", "--min-count", "1", "--threshold", "5"]),
    ("N 5, min count 1, top 2000", ["--preset", "burt", "--top-k", "2000"]),
    ("N 5, min count 1, top 10000", ["--preset", "burt", "--top-k", "10000"]),
]


def run_stage(*argv) -> None:
    if cli([str(a) for a in argv]) != 0:
        raise SystemExit(f"error: python -m pipeline {' '.join(map(str, argv))} failed")


def chinese_sentences(data_root: Path, work: Path) -> Path:
    """The clean sentences of the real Chinese sample, made by the pipeline's own stages."""
    run_stage("extract", "--dump", data_root / ZH_SAMPLE, "--lang", "zh", "--out", work / "docs")
    run_stage("convert", "--input", work / "docs", "--out", work / "simplified")
    run_stage(
        "clean", "--input", work / "simplified" / "shard-000.parquet", "--lang", "zh", "--out", work / "sentences"
    )
    return work / "sentences" / "shard-000.parquet"


def share(distribution: dict, low: int, high: int) -> float:
    """Share of the n-grams of ``low`` to ``high`` tokens in a ``length_distribution`` entry."""
    return sum(value for n, value in distribution.items() if low <= int(n) <= high)


def measure(out: Path) -> dict:
    """The length figures of one ngrams output directory (see the module docstring)."""
    stats = json.loads((out / "stats.json").read_text())
    lengths = stats["length_distribution"]
    kept = pl.read_parquet(out / "ngrams.parquet", columns=["doc_id", "ngram", "n", "rank", "source"]).filter(
        pl.col("source") != "entity"
    )
    per_doc = (
        kept.filter(pl.col("rank") <= 2000).group_by("doc_id").agg(pl.col("n").is_between(3, 4).mean().alias("share"))
    )
    vocabulary = kept.unique("ngram")
    return {
        "top 2-3": share(lengths["top2000"], 2, 3),
        "top 3-4": share(lengths["top2000"], 3, 4),
        "top >7": share(lengths["top2000"], 8, 127),
        "docs 3-4 in 40-60": float(per_doc["share"].is_between(0.4, 0.6).mean()),
        "vocabulary mean": float(vocabulary["n"].cast(pl.Float64).mean()),
        "per-document mean": sum(int(n) * value for n, value in lengths["kept"].items()),
        "vocabulary": vocabulary.height,
        "kept": kept.height,
        "params": stats["provenance"]["params"],
    }


def run_settings(sentences: Path, lang: str, work: Path) -> dict[str, dict]:
    results = {}
    for i, (label, options) in enumerate(SETTINGS):
        out = work / f"{lang}-{i}"
        lowercase = ["--lowercase"] if lang == "en" else []  # the configs fold case for uncased English models
        run_stage("ngrams", "--sentences", sentences, "--lang", lang, *lowercase, *options, "--out", out)
        results[label] = measure(out)
        print(f"{lang} {label}: {json.dumps({k: v for k, v in results[label].items() if k != 'params'})}", flush=True)
    return results


def table(results: dict[str, dict], target_mean: float) -> str:
    head = [
        "setting",
        "N",
        "min count",
        "K",
        "2–3 % of top 2000 (ULR: > 50)",
        "3–4 % of top 2000 (BURT: 40–60)",
        "> 7 % of top 2000 (BURT: ≤ 0.5)",
        "docs with 3–4 in 40–60% %",
        f"mean length, vocabulary (BURT: {target_mean} ± 0.5)",
        "mean length, per document",
        "vocabulary (distinct)",
        "kept (per document)",
    ]
    rows = []
    for label, r in results.items():
        p = r["params"]
        rows.append(
            [
                label,
                str(p["max_n"]),
                str(p["min_count"]),
                str(p["top_k"]),
                f"{100 * r['top 2-3']:.1f}",
                f"{100 * r['top 3-4']:.1f}",
                f"{100 * r['top >7']:.2f}",
                f"{100 * r['docs 3-4 in 40-60']:.0f}",
                f"{r['vocabulary mean']:.2f}",
                f"{r['per-document mean']:.2f}",
                f"{r['vocabulary']:,}",
                f"{r['kept']:,}",
            ]
        )
    return markdown_table(head, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_root(parser)
    parser.add_argument("--write-md", action="store_true", help="replace the N-gram presets section of BENCHMARKS.md")
    args = parser.parse_args()
    data_root = args.data if args.data.is_absolute() else REPO / args.data
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-ngram-presets-") as tmp:
        work = Path(tmp)
        en = run_settings(data_root / "reference_pmi" / "sentences.parquet", "en", work)
        zh = run_settings(chinese_sentences(data_root, work / "zh"), "zh", work)
    en_table, zh_table = table(en, 4.6), table(zh, 4.5)
    print(f"\nEnglish (reference_pmi/sentences.parquet, --lowercase):\n{en_table}")
    print(f"\nChinese ({ZH_SAMPLE}, characters):\n{zh_table}")
    if args.write_md:
        section = "\n\n".join(
            [
                "## N-gram presets",
                (
                    "`bench/ngram_presets.py`: the n-gram lengths of the `ngrams` presets (docs/method.md §2) and of the "
                    "other settings tried for BURT's vocabulary, on the real English articles of "
                    "`reference_pmi/sentences.parquet` (105 articles, paper mode, `--lowercase`) and the real Chinese "
                    f"sample `{ZH_SAMPLE}` (23 articles after extract → convert → clean; characters). Targets: "
                    'ULR-BERT §4, "more than 50% of the top 2000 n-grams contain 2 ∼ 3 words, and only less than 3% '
                    'n-grams are longer than 4"; BURT §5.1, "nearly 50% of the top 2000 n-grams contain 3 ∼ 4 words '
                    "(characters for Chinese), and only less than 0.5% n-grams are longer than 7 ... vocabularies of "
                    'n-grams with average lengths of 4.6 and 4.5". Shares of the top 2000 are pooled over every '
                    "document's top 2000 (`stats.json`, `length_distribution.top2000`). The vocabulary's mean length "
                    "counts each distinct kept n-gram once (the paper's vocabulary); the per-document mean counts "
                    "every document's kept n-grams (`length_distribution.kept`). PMI n-grams only (no entity spans)."
                ),
                "English (words):",
                en_table,
                "Chinese (characters):",
                zh_table,
                f"Machine: {machine(sys.executable)}; {time.monotonic() - started:.0f} s.",
            ]
        )
        write_section("N-gram presets", section + "\n")


if __name__ == "__main__":
    main()
