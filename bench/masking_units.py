"""The mean masked unit of every objective, on the same real English sentences (issue 38 §3).

What one masking draw hides differs by objective: BURT a whole PMI n-gram or entity (BURT §3.2), Span
a SpanBERT span, the entity objective a whole entity, MiSAD the w it removes from S (ULR-BERT §3.2-3.3).
The papers compare these objectives, so the unit each masks is the substance behind the comparison:
ours draws Span units of 1-10 whole words (SpanBERT's unit; BURT's Span rows, ``span_max_words: 10``)
where the authors' ``run_span.py`` draws 1-10 WordPieces from any position. This bench measures the
mean unit, in words and in WordPieces, of every objective as the pipeline masks it, beside the released
code's rule replayed on the same token rows:

- ``run_span.py``: span lengths ~ Geometric(0.2) on 1..10 WordPieces at uniform positions of the row
  (special tokens included), rejected where they overlap or run past it, until 15% of the row;
- ``run_mse_span.py``'s w: 1..5 WordPieces ~ Geometric(0.2) from any non-pad position, cut at the end;
- ``run_mse.py``'s w: uniform among the sentence's marked n-grams and entity spans (``misad_choice:
  random``); the paper's rule (§3.3, ``mlm-score``) picks one of the same candidates by the MLM head,
  so their mean is given too.

The sample is ``bench/masking.py``'s: the pipeline's own stages on the English dump (extract → clean →
ngrams ``--lowercase`` → sample → tokenize for all-MiniLM-L6-v2 at length 128), once with the stage's
default vocabulary (``ulr``: MiSAD, entity, Span) and once with ``--preset burt`` (BURT's masking), the
same sentences.

Usage (repo root): ``python bench/masking_units.py --data DATA_ROOT [--rows 3000] [--epochs 2] [--write-md]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import re

from harness import BENCHMARKS_MD, add_data_root, machine, markdown_table
from masking import build_sample, testdata

from pipeline.models.loading import load_tokenizer
from pipeline.pretrain import span_sampling
from pipeline.pretrain.masking import MaskingCollator
from pipeline.pretrain.masking_stats import MaskingStats
from pipeline.pretrain.misad import MisadCollator
from pipeline.pretrain.token_dataset import TokenDataset, build_arrow_cache

MLM_PROBABILITY = 0.15
NOTE = (
    "A masked unit is what one draw hides, the single tokens a strategy falls back to included (BURT and "
    "entity fill the 15% budget with tokens where their spans run out: the entity objective's units are m"
    "ostly those). `run_span.py`'s rule is replayed on these sentence rows; on its 512-token blocks fewer"
    " long spans run past the end, and its law's mean is 3.78 WordPieces. Ours masks longer Span units th"
    "an the authors' code and than BURT's n-grams, the reverse of their setup; the plan lists `span_unit`"
    " with the released alternative."
)


class Units:
    """Masked units, each as (words, WordPieces)."""

    def __init__(self):
        self.words: list[int] = []
        self.pieces: list[int] = []

    def add(self, word_ids: np.ndarray, start: int, end: int) -> None:
        inside = word_ids[start:end]
        self.words.append(len(set(inside[inside >= 0].tolist())))
        self.pieces.append(end - start)

    def row(self, objective: str, rule: str) -> list[str]:
        words, pieces = np.asarray(self.words), np.asarray(self.pieces)
        return [
            objective,
            rule,
            f"{len(words):,}",
            f"{words.mean():.2f}",
            f"{pieces.mean():.2f}",
            f"{100 * (words <= 1).mean():.1f}",
            f"{100 * (words >= 4).mean():.1f}",
        ]


def from_stats(stats: MaskingStats) -> tuple[int, float, float, float, float]:
    """(units, mean words, mean WordPieces, share of one-word units, share of 4+ words) of a collator's masked
    units."""
    histogram = stats.masked_unit_words
    units = sum(histogram.values())
    words = sum(k * v for k, v in histogram.items()) / units
    pieces = stats.counts["masked_tokens"] / units
    return units, words, pieces, histogram.get(1, 0) / units, sum(v for k, v in histogram.items() if k >= 4) / units


def collator_row(objective: str, rule: str, tokenizer, dataset, strategy: str, epochs: int, **options) -> list[str]:
    collator = MaskingCollator(tokenizer, strategy, seed=0, **options)
    stats = MaskingStats()
    for epoch in range(epochs):
        collator.set_epoch(epoch)
        for i in range(len(dataset)):
            collator.mask_example(dataset[i], stats=stats)
    units, words, pieces, single, long = from_stats(stats)
    return [objective, rule, f"{units:,}", f"{words:.2f}", f"{pieces:.2f}", f"{100 * single:.1f}", f"{100 * long:.1f}"]


def misad_w(tokenizer, dataset, source: str, epochs: int, span_max_words: int = 6) -> tuple[Units, Units]:
    """MiSAD's w drawn uniformly among its candidates (the released rule), and every candidate (what the MLM
    score of §3.3 picks one of)."""
    collator = MisadCollator(tokenizer, "random", seed=0, w_source=source, span_max_words=span_max_words)
    drawn, candidates = Units(), Units()
    for epoch in range(epochs):
        collator.set_epoch(epoch)
        for i in range(len(dataset)):
            row = dataset[i]
            word_ids = np.asarray(row["word_ids"])
            spans = collator.candidates(row)
            if not len(spans):
                continue
            s, e = spans[int(collator.choice_rng(row).integers(len(spans)))]
            drawn.add(word_ids, int(s), int(e))
            for s, e in spans:
                candidates.add(word_ids, int(s), int(e))
    return drawn, candidates


def released_span(dataset, epochs: int, max_pieces: int, whole_row: bool) -> Units:
    """The authors' WordPiece spans replayed: ``whole_row`` as run_span.py (spans until 15% of the row, any
    position, rejected on overlap or overrun), else one span as run_mse_span.py's w (cut at the row's end)."""
    law = span_sampling.truncated_geometric(0.2, 1, max_pieces)
    units = Units()
    for epoch in range(epochs):
        rng = np.random.default_rng([0, epoch])
        for i in range(len(dataset)):
            word_ids = np.asarray(dataset[i]["word_ids"])
            length = len(word_ids)
            if not whole_row:
                start, size = int(rng.integers(length)), int(rng.choice(max_pieces, p=law)) + 1
                units.add(word_ids, start, min(start + size, length))
                continue
            taken, masked, tries = np.zeros(length, dtype=bool), 0, 0
            while masked < length * MLM_PROBABILITY and tries < 1000:
                tries += 1
                size, start = int(rng.choice(max_pieces, p=law)) + 1, int(rng.integers(length))
                if start + size > length or taken[start : start + size].any():
                    continue
                taken[start : start + size] = True
                masked += size
                units.add(word_ids, start, start + size)
    return units


def write_subsection(section: str) -> None:
    """Replace (or add at the end of) the masking section of BENCHMARKS.md this bench's ``###`` block."""
    text = BENCHMARKS_MD.read_text()
    heading = section.splitlines()[0]
    old = re.search(rf"^{re.escape(heading)}\n.*?(?=^##|\Z)", text, re.MULTILINE | re.DOTALL)
    if old:
        text = text[: old.start()] + section + "\n\n" + text[old.end() :]
    else:
        end = re.search(r"^## masking\n.*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL).end()
        text = text[:end].rstrip("\n") + "\n\n" + section + "\n\n" + text[end:]
    BENCHMARKS_MD.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_root(parser)
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--write-md", action="store_true", help="add the table to the masking section of BENCHMARKS.md")
    args = parser.parse_args()
    data_root = args.data if args.data.is_absolute() else REPO / args.data
    started = time.monotonic()
    model = testdata.minilm_path()
    tokenizer = load_tokenizer(str(model))
    with tempfile.TemporaryDirectory(prefix="bench-units-") as tmp:
        work = Path(tmp)
        tokens, _ = build_sample(data_root, work / "ulr", args.rows, model)
        burt_tokens, _ = build_sample(data_root, work / "burt", args.rows, model, "burt")
        ulr = TokenDataset(build_arrow_cache(tokens, work / "ulr.arrow"))
        burt = TokenDataset(build_arrow_cache(burt_tokens, work / "burt.arrow"))
        e = args.epochs
        rows = [
            collator_row("BURT", "ours: ngrams-first, burt vocabulary", tokenizer, burt, "ngram", e),
            collator_row(
                "BURT", "released run_ngram.py: n-grams only", tokenizer, burt, "ngram", e, ngram_pool="ngrams-only"
            ),
            collator_row("Span (BURT rows)", "ours: 1-10 whole words", tokenizer, ulr, "span", e, span_max_words=10),
            released_span(ulr, e, 10, whole_row=True).row("Span (BURT rows)", "released run_span.py: 1-10 WordPieces"),
            collator_row("Span (ULR §7.2 MLM)", "ours: 1-6 whole words", tokenizer, ulr, "span", e, span_max_words=6),
            collator_row("entity", "ours: whole entities", tokenizer, ulr, "entity", e),
        ]
        drawn, candidates = misad_w(tokenizer, ulr, "ngram", e)
        rows += [
            drawn.row("MiSAD w", "released run_mse.py: uniform (misad_choice random)"),
            candidates.row("MiSAD w", "every candidate (what mlm-score picks among)"),
        ]
        span_w, _ = misad_w(tokenizer, ulr, "span", e)
        entity_w, _ = misad_w(tokenizer, ulr, "entity", e)
        rows += [
            span_w.row("MiSAD w, random spans", "ours: 1-6 whole words"),
            released_span(ulr, e, 5, whole_row=False).row(
                "MiSAD w, random spans", "released run_mse_span.py: 1-5 WordPieces"
            ),
            entity_w.row("MiSAD w, entities", "ours: an entity span"),
        ]
        sentences = len(ulr)
    head = ["objective", "rule", "masked units", "mean words", "mean WordPieces", "1 word %", "≥ 4 words %"]
    section = "\n\n".join(
        [
            "### Mean masked unit per objective",
            (
                f"`bench/masking_units.py` (issue 38 §3): the unit one masking draw hides, on the same {sentences:,} "
                f"real English sentences ({args.epochs} draws each; all-MiniLM-L6-v2 WordPieces, length 128), BURT "
                "on the `burt` vocabulary and the others on the default (`ulr`), beside the authors' released rules "
                "replayed on the same token rows."
            ),
            markdown_table(head, rows),
            NOTE,
            f"Machine: {machine(sys.executable)}; {time.monotonic() - started:.0f} s.",
        ]
    )
    print(section)
    if args.write_md:
        write_subsection(section)


if __name__ == "__main__":
    main()
