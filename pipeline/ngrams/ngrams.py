"""Stage ``ngrams``: clean sentences → per-document PMI n-grams and marked sentences.

BURT §3.1 / ULR-BERT §3.1, pinned by docs/method.md §2: all n-grams of 1..N tokens (words in English,
characters in Chinese) are counted per document, never across a sentence; those of orders
2..N are scored by PMI, the top K of each document are kept, and every sentence is marked
greedily left to right, longest n-gram first. Modes:

  paper      (1/|w|)(log P(w) - sum_k log P(x_k)) with probabilities from the document's counts
  reference  the authors' released code exactly: log c(w) - sum_k log c(x_k), punctuation
             [().,?;'!:] stripped, case kept, n-grams with [ or ] skipped (--normalise: /n)
  corpus     the paper's formula with corpus-level probabilities from a KenLM model (--lm):
             the document- vs corpus-level ablation

--preset names the vocabulary of one paper (pipeline/ngram_presets.py): ``ulr`` (the default,
ULR-BERT §4) or ``burt`` (BURT §5.1), or an ablation; it sets N, K, the mode (reference in English,
paper in Chinese), the minimum count and the threshold (per language) wherever the command line
leaves them unset.

Entity spans (links) from extraction join the candidates with source "entity", in every mode
(ULR-BERT §4: "we identify all the entities and treat them as high-quality n-grams"; the released
pmi.py scores the PMI n-grams only). In every mode no counted n-gram cuts an entity span (starts or
ends strictly inside it), the project's form of the released code's bracket rule: reference mode
reproduces pmi.py exactly on text without links (pipeline/ngrams/released_rule.py measures the
difference on linked text). On short documents the presets scale K (--top-k-per-token) or the
threshold (--threshold-tokens) with the document's length (docs/method.md §2, "Short documents"). Outputs, in --out: ngrams.parquet and
marked.parquet (schemas in pipeline.contracts) and stats.json.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import contracts, languages, provenance
from pipeline import ngram_presets as presets
from pipeline.arguments import CHARACTERS, FREQUENCY, NGRAM_LENGTH, TOP_K, number
from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.ngrams import document_batches, entities, marking, meaningfulness, pmi, token_batch
from pipeline.output_guard import refuse_read_files
from pipeline.progress import Progress

log = logging.getLogger("pipeline.ngrams")

MODES = ("paper", "reference", "corpus")
# --top-k-per-token's bound: a document of T tokens has fewer than MAX_N x T candidate n-grams (one of each
# length 2..N from each token), so no larger cap keeps more; a larger one (1e308) overflowed K to 1.
MAX_PER_TOKEN = float(entities.MAX_N)
TOP_LENGTHS = 2000  # the length distribution in the stats is also given for each document's top 2000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sentences",
        required=True,
        nargs="+",
        type=Path,
        help="sentences Parquet files (columns doc_id, sent_id, text; entities if present)",
    )
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument("--lang", default="en", help="en (words) or zh (characters)")
    parser.add_argument(
        "--preset",
        choices=presets.NAMES,
        default=presets.DEFAULT,
        help="the n-gram vocabulary of one paper: ulr (ULR-BERT §4) or burt (BURT §5.1), or an ablation "
        "(ulr_recurring, burt_recurring, burt_windows); sets --mode, --max-n, --top-k, --min-count and --threshold, per "
        "language, where they are not given (pipeline/ngram_presets.py, docs/method.md §2)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="default: the preset's (reference for English ulr and burt, else paper)",
    )
    parser.add_argument("--max-n", type=NGRAM_LENGTH, default=None, help="longest n-gram (N; default: the preset's)")
    parser.add_argument(
        "--top-k", type=TOP_K, default=None, help="n-grams kept per document (K; default: the preset's, 3000)"
    )
    parser.add_argument(
        "--top-k-per-token",
        type=number(0.0, MAX_PER_TOKEN, low_open=True),
        default=None,
        help=f"keep at most this many n-grams per token of the document (0 < x <= {MAX_PER_TOKEN}), and at most "
        "--top-k (default: the preset's)",
    )
    parser.add_argument(
        "--top-k-ramp-tokens",
        type=number(1.0),
        default=None,
        help="with --top-k-per-token and --top-k-full-tokens: the document length in tokens from which K rises "
        "linearly from the per-token cap to --top-k (default: the preset's)",
    )
    parser.add_argument(
        "--top-k-full-tokens",
        type=number(1.0),
        default=None,
        help="with --top-k-per-token and --top-k-ramp-tokens: the document length in tokens from which K is "
        "--top-k (default: the preset's)",
    )
    parser.add_argument(
        "--threshold-tokens",
        type=number(2.0, low_open=True),
        default=None,
        help="on a document of T tokens, fewer than this, scale --threshold by log T / log this (default: the preset's)",
    )
    parser.add_argument("--normalise", action="store_true", help="reference mode: divide the score by n")
    parser.add_argument("--lowercase", action="store_true", help="fold case (for an uncased model's tokenizer)")
    parser.add_argument(
        "--min-count",
        type=FREQUENCY,
        default=None,
        help="keep n-grams seen at least this often in their document (default: the preset's, see "
        "docs/method.md §2; 1 in reference mode, as the released code; 1 = every n-gram)",
    )
    parser.add_argument(
        "--threshold",
        type=number(),
        help="keep n-grams scoring at least this (default: the preset's in paper mode, else none)",
    )
    parser.add_argument("--lm", type=Path, help="KenLM model for --mode corpus")
    parser.add_argument("--no-entities", action="store_true", help="leave the link spans out")
    parser.add_argument(
        "--batch-chars",
        type=CHARACTERS,
        default=2_000_000,
        help="characters of text per batch of documents (peak memory: about 400 MB at the default)",
    )


def check_arguments(args) -> None:
    languages.check(args.lang)
    presets.resolve(args)  # the preset's values where no option was given; provenance records both
    if not 2 <= args.max_n <= entities.MAX_N:
        raise InputError(args.out, f"--max-n must be between 2 and {entities.MAX_N}, got {args.max_n}")
    if args.top_k < 1:
        raise InputError(args.out, f"--top-k must be at least 1, got {args.top_k}")
    if args.mode == "corpus" and args.lm is None:
        raise InputError(args.out, "--mode corpus needs --lm (a KenLM model from the kenlm stage)")
    if args.mode == "reference" and args.lang != "en":
        raise InputError(args.out, "--mode reference reproduces the released English code; use --lang en")
    ramp = (args.top_k_ramp_tokens, args.top_k_full_tokens)
    if (ramp[0] is None) != (ramp[1] is None) or (ramp[0] is not None and args.top_k_per_token is None):
        raise InputError(args.out, "--top-k-ramp-tokens and --top-k-full-tokens go together, with --top-k-per-token")
    if ramp[0] is not None and not ramp[0] < ramp[1]:
        raise InputError(args.out, f"--top-k-ramp-tokens ({ramp[0]:g}) must be below --top-k-full-tokens ({ramp[1]:g})")
    if args.normalise and args.mode != "reference":
        raise InputError(args.out, "--normalise applies to --mode reference (the paper formula already has 1/|w|)")


class NgramScorer:
    """Everything the stage does to one batch of documents."""

    def __init__(self, args, lm=None):
        self.args = args
        self.lm = lm
        self.source = "corpus" if args.mode == "corpus" else "pmi"
        self.entities = not args.no_entities  # candidates in the outputs; no n-gram cuts one, in every mode

    def tokenize(self, docs: document_batches.DocumentBatch) -> token_batch.TokenBatch:
        a = self.args
        if a.lang == "zh":
            return token_batch.chinese(docs.texts, docs.sentence_doc, docs.n_docs, a.lowercase)
        return token_batch.english(docs.texts, docs.sentence_doc, docs.n_docs, a.mode == "reference", a.lowercase)

    def scores(self, orders, tokens) -> list[np.ndarray]:
        a = self.args
        if a.mode != "corpus":
            return pmi.scores(orders, tokens, a.mode, a.normalise)
        result = []
        for order in orders[1:]:
            score = np.full(len(order.count), -np.inf)
            asked = np.flatnonzero(order.count >= a.min_count)
            texts = tokens.ngram_text(order.first[asked], np.full(len(asked), order.n)).to_pylist()
            grams = [tuple(t) if a.lang == "zh" else tuple(t.split(" ")) for t in texts]
            score[asked] = self.lm.pmi_many(grams)
            result.append(score)
        return result

    def __call__(self, docs: document_batches.DocumentBatch, counts: Counter) -> tuple[pa.Table, pa.Table]:
        a = self.args
        tokens = self.tokenize(docs)
        found = None
        if self.entities and docs.entities is not None:
            found = entities.locate(docs, tokens, a.lang, reference=a.mode == "reference")
        orders = pmi.count(tokens, a.max_n)
        if found is not None:  # the released code's bracket rule (docs/method.md §2, "Entities")
            orders = pmi.without_cuts(orders, tokens.doc, pmi.cut_points(len(tokens), found.position, found.n))
        order_scores = self.scores(orders, tokens)
        k, threshold = self.document_knobs(tokens)
        selection = pmi.select(orders, order_scores, docs.n_docs, k, a.min_count, threshold)
        length, span_score = marking.longest_match(orders, selection, len(tokens))
        picked = marking.greedy(length)
        spans = {
            "sentence": tokens.sentence[picked],
            "start": tokens.offset[picked],
            "n": length[picked],
            "pmi": span_score[picked],
            "source": np.zeros(len(picked), dtype=np.int8),
        }
        spans["end"] = spans["start"] + spans["n"]  # PMI n-grams stay inside a run: no gaps
        rows = self._ngram_rows(docs, tokens, selection)
        self._count_meaningfulness(counts, tokens, selection, rows, spans, found)
        if self.entities and found is not None:
            entities.score(found, orders, order_scores)
            counts["entity_spans"] += len(found.start)
            counts["entity_spans_dropped"] += found.dropped
            for key, values in (
                ("sentence", found.sentence),
                ("start", found.start),
                ("end", found.end),
                ("n", found.n),
                ("pmi", found.pmi),
                ("source", np.ones(len(found.n), np.int8)),
            ):
                spans[key] = np.concatenate([spans[key], values])
            if len(found.n):  # a stable sort: each document's PMI rows, then its entity rows
                rows = pa.concat_tables([rows, self._entity_rows(found, tokens, docs)]).sort_by("doc_id")
        counts["documents"] += docs.n_docs
        counts["sentences"] += len(docs.texts)
        counts["tokens"] += len(tokens)
        for order in orders[1:]:
            counts[f"distinct_{order.n}grams"] += len(order.count)
        counts["kept_ngrams"] += len(selection.n)
        for n in range(2, a.max_n + 1):  # the length distribution (ULR-BERT §4 describes each document's top 2000)
            counts[f"kept_{n}grams"] += int((selection.n == n).sum())
            counts[f"top{TOP_LENGTHS}_{n}grams"] += int(((selection.n == n) & (selection.rank <= TOP_LENGTHS)).sum())
        counts["pmi_spans"] += len(picked)
        counts["tokens_in_pmi_spans"] += int(length[picked].sum())
        return rows, self._marked(docs, tokens, spans)

    def document_knobs(self, tokens: token_batch.TokenBatch) -> tuple[np.ndarray | int, np.ndarray | float | None]:
        """K and the threshold of each document of the batch (docs/method.md §2, "Short documents").

        ``--top-k-per-token`` caps K at that many kept n-grams per token of the document, so that a
        short document keeps the share of its candidates a long one does instead of all of them;
        ``--threshold-tokens`` T0 scales the threshold by ``log T / log T0`` on a document of T < T0
        tokens, the share of the highest score its size allows (a paper-mode score is at most
        ``(1 - 1/n) log T``)."""
        a = self.args
        size = np.bincount(tokens.doc, minlength=tokens.n_docs)
        k = a.top_k
        if a.top_k_per_token is not None:
            cap = a.top_k_per_token * size
            if a.top_k_full_tokens is not None:  # the ramp: from the cap at W0 tokens to K at W1
                w0, w1 = a.top_k_ramp_tokens, a.top_k_full_tokens
                start = a.top_k_per_token * w0
                ramp = start + (a.top_k - start) * (size - w0) / (w1 - w0)
                cap = np.where(size <= w0, cap, ramp)
            k = np.clip(np.ceil(cap).astype(np.int64), 1, a.top_k)
        threshold = a.threshold
        if threshold is not None and a.threshold_tokens is not None:
            threshold = threshold * np.minimum(1.0, np.log(np.maximum(size, 2)) / math.log(a.threshold_tokens))
        return k, threshold

    def _count_meaningfulness(self, counts, tokens, selection, rows, spans, found) -> None:
        """The counts behind ``stats.json``'s ``meaningfulness`` (pipeline/ngrams/meaningfulness.py)."""
        cuts = None
        if found is not None:
            scale = max(int(tokens.offset.max(initial=0)), int(found.end.max(initial=0))) + 2
            cuts = meaningfulness.cutting(
                spans["sentence"] * scale + spans["start"],
                spans["sentence"] * scale + spans["end"],
                found.sentence * scale + found.start,
                found.sentence * scale + found.end,
            )
        text = rows.column("ngram").combine_chunks() if self.args.lang == "en" else None
        meaningfulness.count_batch(counts, selection.n, selection.count, selection.rank, text, spans["n"], cuts)

    def _ngram_rows(self, docs, tokens, selection: pmi.Selection) -> pa.Table:
        return pa.table(
            {
                "doc_id": docs.doc_ids[selection.doc],
                "ngram": tokens.ngram_text(selection.first, selection.n),
                "n": selection.n.astype(np.int8),
                "count": selection.count.astype(np.int32),
                "pmi": selection.score,
                "rank": selection.rank.astype(np.int32),
                "source": pa.array([self.source] * len(selection.n), pa.string()),
            },
            schema=contracts.NGRAMS,
        )

    def _entity_rows(self, found, tokens, docs) -> pa.Table:
        frame = entities.ngram_rows(found, tokens, docs.doc_ids)
        return pa.table(
            {
                "doc_id": frame["doc_id"].to_arrow(),
                "ngram": frame["ngram"].to_arrow().cast(pa.string()),
                "n": frame["n"].to_numpy().astype(np.int8),
                "count": frame["count"].to_numpy().astype(np.int32),
                "pmi": frame["pmi"].to_arrow().cast(pa.float64()),
                "rank": frame["rank"].to_numpy().astype(np.int32),
                "source": pa.array(["entity"] * len(frame), pa.string()),
            },
            schema=contracts.NGRAMS,
        )

    def _marked(self, docs, tokens, spans: dict) -> pa.Table:
        order = np.lexsort((spans["source"], -spans["n"], spans["start"], spans["sentence"]))
        sentence = spans["sentence"][order]
        offsets = np.searchsorted(sentence, np.arange(len(docs.texts) + 1)).astype(np.int32)
        pmi_values = spans["pmi"][order]
        sources = np.array([self.source, "entity"])[spans["source"][order]]
        struct = pa.StructArray.from_arrays(
            [
                pa.array(spans["start"][order].astype(np.int32)),
                pa.array(spans["end"][order].astype(np.int32)),
                pa.array(spans["n"][order].astype(np.int8)),
                pa.array(pmi_values, mask=np.isnan(pmi_values)),
                pa.array(sources, pa.string()),
            ],
            fields=list(contracts.SPAN),
        )
        texts = docs.texts
        if self.args.mode == "reference":  # the text whose words the spans count
            words = pa.ListArray.from_arrays(
                pa.array(np.searchsorted(tokens.sentence, np.arange(len(docs.texts) + 1)).astype(np.int32)),
                tokens.words.cast(pa.string()),
            )
            texts = pc.binary_join(words, " ")
        return pa.table(
            {
                "doc_id": docs.doc_ids[docs.sentence_doc],
                "sent_id": docs.sent_ids,
                "text": texts,
                "spans": pa.ListArray.from_arrays(pa.array(offsets), struct),
            },
            schema=contracts.MARKED,
        )


NGRAMS_FILE, MARKED_FILE, STATS_FILE = "ngrams.parquet", "marked.parquet", "stats.json"  # the files of --out


def run(args: argparse.Namespace) -> None:
    check_arguments(args)
    # --out may hold the sentences (other names), but none of its three files may be an input
    inputs = [*args.sentences, *([args.lm] if args.lm else [])]
    refuse_read_files([args.out / name for name in (NGRAMS_FILE, MARKED_FILE, STATS_FILE)], inputs, "ngrams")
    lm = None
    if args.mode == "corpus":
        from pipeline.ngrams.kenlm import CorpusLM

        lm = CorpusLM(args.lm)
    scorer = NgramScorer(args, lm)
    params = {
        key: (provenance.portable_path(value) if isinstance(value, Path) else value)
        for key, value in sorted(vars(args).items())
        if key not in ("sentences", "out", "run", "verbose", "stage")
    }
    total_rows = sum(_rows(path) for path in args.sentences)  # checks every input before it is fingerprinted
    record = provenance.make("ngrams", params, inputs=[provenance.file_fingerprint(p) for p in args.sentences])
    started = time.monotonic()
    counts: Counter = Counter()
    meter = Progress(log, "sentences", total=total_rows)
    with AtomicFiles() as outputs:
        ngrams_writer = contracts.open_writer(outputs.temp(args.out / NGRAMS_FILE), contracts.NGRAMS, record)
        marked_writer = contracts.open_writer(outputs.temp(args.out / MARKED_FILE), contracts.MARKED, record)
        with ngrams_writer, marked_writer:
            for path in args.sentences:
                for docs in document_batches.read(path, args.batch_chars, want_entities=scorer.entities):
                    ngram_rows, marked_rows = scorer(docs, counts)
                    ngrams_writer.write_table(ngram_rows)
                    marked_writer.write_table(marked_rows)
                    meter.update(len(docs.texts), position=counts["sentences"])
        seconds = time.monotonic() - started
        stats = {
            **dict(sorted(counts.items())),
            "seconds": round(seconds, 3),
            "words_per_second": round(counts["tokens"] / seconds) if seconds else None,
            "length_distribution": length_distribution(counts, args.max_n),
            "meaningfulness": meaningfulness.summary(counts, args.max_n, args.lang),
            "provenance": record,
        }
        outputs.temp(args.out / STATS_FILE).write_text(json_text(stats))
    meter.done()
    log.info("%s: %s", args.out, ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))


def length_distribution(counts: Counter, max_n: int) -> dict:
    """Share of each n among the kept n-grams and among each document's top 2000 (ULR-BERT §4's measure)."""
    out = {}
    for name, prefix in (("kept", "kept"), (f"top{TOP_LENGTHS}", f"top{TOP_LENGTHS}")):
        total = sum(counts[f"{prefix}_{n}grams"] for n in range(2, max_n + 1))
        out[name] = {
            str(n): round(counts[f"{prefix}_{n}grams"] / total, 4) if total else 0.0 for n in range(2, max_n + 1)
        }
    return out


def _rows(path: Path) -> int:
    if not Path(path).exists():
        raise InputError(path, "input not found")
    if Path(path).is_dir():
        raise InputError(path, "is a directory, expected a sentences Parquet file")
    try:
        return pq.ParquetFile(path).metadata.num_rows
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(path, f"not a readable Parquet file: {exc}") from exc
