"""N-gram presets: whether each vocabulary is made of meaningful units, and its lengths, on real text.

Not a speed benchmark. For every ``ngrams`` preset (pipeline/ngrams/presets.py), for reference mode
(the authors' released pmi.py) and for the other settings of the paper's knobs that were tried, on
the real samples made by the pipeline's own stages: English, the dump sample
``wiki/en/enwiki-latest-pages-articles1...-shortened.bz2`` through extract → clean (with
``--lowercase``, as the configs run it); Chinese, ``wiki/zh/zhwiki-test-pages.xml`` through extract →
convert → clean. It reports, from each run's ``stats.json`` ``meaningfulness`` (docs/method.md §2):

- the once-seen share: kept PMI n-grams that occur once in their document;
- the entity-cut share: marked PMI spans that start or end strictly inside a link's entity span;
- English: the share of each document's top 2000 that begins or ends with one of 20 function words;
- Chinese: the share of marked PMI spans with an end strictly inside a word of jieba's segmentation
  (jieba from PyPI, used only for this measure; computed here, not by the stage);
- the lengths beside the papers' figures. ULR-BERT §4: "more than 50% of the top 2000 n-grams contain
  2 ∼ 3 words, and only less than 3% n-grams are longer than 4"; BURT §5.1: "nearly 50% of the top
  2000 n-grams contain 3 ∼ 4 words (characters for Chinese), and only less than 0.5% n-grams are
  longer than 7 ... vocabularies of n-grams with average lengths of 4.6 and 4.5" (English, Chinese).
  The vocabulary's mean length counts each distinct kept n-gram once (the paper's vocabulary).

The bar (issue 31): in English each preset no worse than reference mode on the same text; in
Chinese, where the released code has no mode, ``burt`` no worse than ``ulr``.

Usage (repo root): ``python bench/ngram_presets.py --data DATA_ROOT [--write-md]``
(``--data`` defaults to ``$ULR_DATA_ROOT``; needs ``jieba`` for the Chinese word measure).
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

EN_SAMPLE = "wiki/en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
ZH_SAMPLE = "wiki/zh/zhwiki-test-pages.xml"
# every N-gram from 2 up to N a candidate, no threshold: the base the tried settings change
PLAIN = ["--preset", "burt_windows"]
# (label, options, languages): reference mode, the presets, then the other settings tried
SETTINGS = [
    ("reference mode (released pmi.py)", ["--mode", "reference"], ("en",)),
    ("ulr (preset; default)", ["--preset", "ulr"], ("en", "zh")),
    ("burt (preset)", ["--preset", "burt"], ("en", "zh")),
    ("burt_windows (ablation; the former burt)", ["--preset", "burt_windows"], ("en", "zh")),
    ("former ulr: N 6, min count 3", [*PLAIN, "--max-n", "6", "--min-count", "3"], ("en", "zh")),
    ("reference mode, score / n", ["--mode", "reference", "--normalise"], ("en",)),
    ("N 6, min count 2", [*PLAIN, "--max-n", "6", "--min-count", "2"], ("en", "zh")),
    ("N 5, min count 1, threshold 3", [*PLAIN, "--threshold", "3"], ("en", "zh")),
    ("N 6, min count 2, threshold 2", [*PLAIN, "--max-n", "6", "--min-count", "2", "--threshold", "2"], ("en", "zh")),
    ("N 6, min count 2, threshold 3", [*PLAIN, "--max-n", "6", "--min-count", "2", "--threshold", "3"], ("en", "zh")),
    ("N 6, min count 2, threshold 4", [*PLAIN, "--max-n", "6", "--min-count", "2", "--threshold", "4"], ("en", "zh")),
    ("N 6, min count 2, threshold 5", [*PLAIN, "--max-n", "6", "--min-count", "2", "--threshold", "5"], ("en", "zh")),
    ("N 7, min count 2, threshold 3", [*PLAIN, "--max-n", "7", "--min-count", "2", "--threshold", "3"], ("en", "zh")),
    ("N 7, min count 2, threshold 5", [*PLAIN, "--max-n", "7", "--min-count", "2", "--threshold", "5"], ("en", "zh")),
    ("N 6, min count 3, threshold 3", [*PLAIN, "--max-n", "6", "--min-count", "3", "--threshold", "3"], ("en", "zh")),
    ("N 6, min count 4, threshold 3", [*PLAIN, "--max-n", "6", "--min-count", "4", "--threshold", "3"], ("en",)),
    ("N 6, min count 5, threshold 2.5", [*PLAIN, "--max-n", "6", "--min-count", "5", "--threshold", "2.5"], ("en",)),
]


# The prose of the BENCHMARKS.md section (the tables follow it)
NOTES = """`bench/ngram_presets.py`: whether each n-gram vocabulary is made of meaningful units, then its \
lengths, for every `ngrams` preset, for reference mode (the authors' released `pmi.py`) and for the other \
settings of the paper's knobs that were tried (docs/method.md §2). Samples: the real English dump sample \
through extract → clean (`--lowercase`), and the real Chinese sample `wiki/zh/zhwiki-test-pages.xml` \
through extract → convert → clean. Columns: the once-seen share of the kept PMI n-grams; the share of \
marked PMI spans that start or end strictly inside a link's entity span; English, the share of each \
document's top 2000 that begins or ends with one of 20 function words (the, of, and, to, a, in, is, for, \
on, as, by, with, that, an, at, from, or, was, it, be); Chinese, the share of marked PMI spans with an end \
strictly inside a word of jieba 0.42.1's segmentation (measure only); the lengths beside ULR-BERT §4 \
("more than 50% of the top 2000 n-grams contain 2 ∼ 3 words, and only less than 3% n-grams are longer \
than 4") and BURT §5.1 ("nearly 50% of the top 2000 n-grams contain 3 ∼ 4 words (characters for \
Chinese), and only less than 0.5% n-grams are longer than 7 ... average lengths of 4.6 and 4.5"); the \
vocabulary's mean length counts each distinct kept PMI n-gram once. Every run here has the entity rule \
(no counted n-gram cuts an entity span, in every mode), so the entity-cut column is 0 throughout.

The bar: in English each preset no worse than reference mode on the same text; in Chinese, where the \
released code has no mode, `burt` no worse than `ulr`. Old (before the entity rule, `burt` = N 5 with \
every n-gram, `ulr` = N 6 with min count 3) against new, from the same samples:

| vocabulary | once-seen % (old → new) | entity-cut % of spans | function-word edge % (en) / inside a jieba word % (zh) | 3–4 % of top 2000 | mean length, vocabulary | kept per document |
|---|---:|---:|---:|---:|---:|---:|
| en reference mode | 95.7 → 95.7 | – → 0.0 | 19.7 → 21.2 | 34.3 → 34.5 | 2.93 → 2.94 | 2,556 → 2,531 |
| en `ulr` | 0.0 → 0.0 | 3.7 → 0.0 | 75.6 → 20.8 | 21.5 → 40.7 | 2.42 → 2.67 | 179 → 2 |
| en `burt` | 99.1 → 0.0 | 6.7 → 0.0 | 27.7 → 15.2 | 48.5 → 43.0 | 4.18 → 4.67 | 2,503 → 5 |
| zh `ulr` | 0.0 → 0.0 | 7.5 → 0.0 | 19.5 → 16.3 | 38.5 → 36.4 | 2.88 → 2.86 | 530 → 451 |
| zh `burt` | 97.3 → 0.0 | 17.5 → 0.0 | 64.9 → 14.0 | 44.8 → 49.2 | 4.32 → 4.26 | 2,812 → 467 |

The old reference-mode row has no entity spans to cut (the former code read none in reference mode). \
What the new presets cost: on Wikipedia-sized English documents, recurrence plus a threshold leaves \
about 5 (`burt`) and 2 (`ulr`) n-grams per document, against the released code's 2,531 nearly all \
once-seen; no setting tried meets the function-word bar with more (the threshold is what removes \
function-word n-grams, and the paper-mode score grows with n for once-seen strings). The released \
code's vocabulary is the alternative for ULR in English (docs/method.md §2, "What this costs")."""


def run_stage(*argv) -> None:
    if cli([str(a) for a in argv]) != 0:
        raise SystemExit(f"error: python -m pipeline {' '.join(map(str, argv))} failed")


def sentences(data_root: Path, work: Path, lang: str) -> Path:
    """The clean sentences of a real sample, made by the pipeline's own stages."""
    if lang == "en":
        run_stage("extract", "--dump", data_root / EN_SAMPLE, "--lang", "en", "--out", work / "docs")
        run_stage("clean", "--input", work / "docs" / "shard-000.parquet", "--lang", "en", "--out", work / "sentences")
    else:
        run_stage("extract", "--dump", data_root / ZH_SAMPLE, "--lang", "zh", "--out", work / "docs")
        run_stage("convert", "--input", work / "docs", "--out", work / "simplified")
        source = work / "simplified" / "shard-000.parquet"
        run_stage("clean", "--input", source, "--lang", "zh", "--out", work / "sentences")
    return work / "sentences" / "shard-000.parquet"


def jieba_inside_share(marked: pl.DataFrame) -> float | None:
    """Share of the marked PMI spans with an end strictly inside a word of jieba's segmentation."""
    import jieba

    jieba.setLogLevel(60)
    inside = total = 0
    for text, spans in zip(marked["text"].to_list(), marked["spans"].to_list()):
        pmi_spans = [s for s in spans if s["source"] != "entity"]
        if not pmi_spans:
            continue
        ends, position = {0}, 0
        for word in jieba.cut(text):
            position += len(word)
            ends.add(position)
        for span in pmi_spans:
            total += 1
            inside += span["start"] not in ends or span["end"] not in ends
    return inside / total if total else None


def measure(out: Path, lang: str) -> dict:
    """The figures of one ngrams output directory (see the module docstring)."""
    stats = json.loads((out / "stats.json").read_text())
    meaning = stats["meaningfulness"]
    kept = pl.read_parquet(out / "ngrams.parquet", columns=["ngram", "n", "source"]).filter(
        pl.col("source") != "entity"
    )
    return {
        **{key: meaning[key] for key in ("once_seen_share", "entity_cut_share", "function_word_edge_share")},
        **meaning["lengths"],
        "jieba_inside": jieba_inside_share(pl.read_parquet(out / "marked.parquet")) if lang == "zh" else None,
        "vocabulary_mean": float(kept.unique("ngram")["n"].cast(pl.Float64).mean()) if kept.height else None,
        "kept_per_document": kept.height / stats["documents"],
        "params": stats["provenance"]["params"],
    }


def run_settings(sentences_file: Path, lang: str, work: Path) -> dict[str, dict]:
    results = {}
    for i, (label, options, langs) in enumerate(SETTINGS):
        if lang not in langs:
            continue
        out = work / f"{lang}-{i}"
        lowercase = ["--lowercase"] if lang == "en" else []  # the configs fold case for uncased English models
        run_stage("ngrams", "--sentences", sentences_file, "--lang", lang, *lowercase, *options, "--out", out)
        results[label] = measure(out, lang)
        print(f"{lang} {label}: {json.dumps({k: v for k, v in results[label].items() if k != 'params'})}", flush=True)
    return results


def percent(value, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}"


def table(results: dict[str, dict], lang: str) -> str:
    target_mean = {"en": 4.6, "zh": 4.5}[lang]
    word = "function-word edge % of top 2000" if lang == "en" else "span ends inside a jieba word %"
    head = [
        "setting",
        "mode",
        "N",
        "min count",
        "threshold",
        "once-seen %",
        "entity-cut % of spans",
        word,
        "2–3 % of top 2000 (ULR: > 50)",
        "> 4 % (ULR: < 3)",
        "3–4 % (BURT: ~50)",
        "> 7 % (BURT: < 0.5)",
        f"mean length, vocabulary (BURT: {target_mean})",
        "mean marked span",
        "kept per document",
    ]
    rows = []
    for label, r in results.items():
        p = r["params"]
        rows.append(
            [
                label,
                p["mode"],
                str(p["max_n"]),
                str(p["min_count"]),
                "–" if p["threshold"] is None else f"{p['threshold']:g}",
                percent(r["once_seen_share"]),
                percent(r["entity_cut_share"]),
                percent(r["function_word_edge_share"] if lang == "en" else r["jieba_inside"]),
                percent(r["top2000_2_3"]),
                percent(r["top2000_over_4"]),
                percent(r["top2000_3_4"]),
                percent(r["top2000_over_7"], 2),
                "–" if r["vocabulary_mean"] is None else f"{r['vocabulary_mean']:.2f}",
                "–" if r["mean_marked_span"] is None else f"{r['mean_marked_span']:.2f}",
                f"{r['kept_per_document']:,.0f}",
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
        en = run_settings(sentences(data_root, work / "en", "en"), "en", work)
        zh = run_settings(sentences(data_root, work / "zh", "zh"), "zh", work)
    en_table, zh_table = table(en, "en"), table(zh, "zh")
    print(f"\nEnglish ({EN_SAMPLE}, --lowercase):\n{en_table}")
    print(f"\nChinese ({ZH_SAMPLE}, characters):\n{zh_table}")
    if args.write_md:
        section = "\n\n".join(
            [
                "## N-gram presets",
                NOTES,
                "English (words; 105 articles after extract → clean, `--lowercase`):",
                en_table,
                "Chinese (characters; 23 articles after extract → convert → clean):",
                zh_table,
                f"Machine: {machine(sys.executable)}; {time.monotonic() - started:.0f} s.",
            ]
        )
        write_section("N-gram presets", section + "\n")


if __name__ == "__main__":
    main()
