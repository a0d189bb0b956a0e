"""Stage ``tokenize``: marked sentences → the token dataset of one backbone's tokenizer.

docs/method.md §3: single-sentence inputs ``[CLS] sentence [SEP]`` (special tokens from the tokenizer),
cut at ``--max-length`` (128 for ULR, 512 for BURT; at least 3: ``[CLS]``, one token, ``[SEP]``; the
tokenizer is checked to load completely, :mod:`pipeline.models.tokenizer_check`). The marked n-gram and
entity spans (word offsets in English, character offsets in Chinese, docs/method.md §2) are mapped to sub-word token
positions through the fast tokenizer's offsets: unit → string offsets
(:func:`pipeline.words.char_spans`) → the tokens that cover them. A span whose edges
fall inside a sub-word token (possible in Chinese, where a Latin or digit run is one token but
several characters) is dropped, as is a span cut by truncation; both are counted in the stats.

Output (contract ``tokens``, see :data:`pipeline.contracts.TOKENS`): token offsets index
``input_ids`` *including* ``[CLS]``; ``word_ids`` maps each token to its word (English) or
character (Chinese) for whole-word and random-span masking. The tokenizer's name and the
SHA-256 of its vocabulary are in the provenance; ``pretrain`` refuses a dataset made with
another vocabulary. ``OUT.stats.json`` beside the output holds the counts.

A ``marked pairs`` sample (``sample --with-next``, the NSP / SOP sample of ULR-BERT §7.1) keeps its
``sampled`` column (contract ``tokens pairs``), so that the pairs take only sampled rows as first
sentences (:class:`pipeline.pretrain.sentence_pairs.SentencePairs`).
"""

from __future__ import annotations

import argparse
import logging
import time
from bisect import bisect_right
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import arguments, contracts, languages, provenance
from pipeline.atomic import AtomicFiles, check_file_target, json_text
from pipeline.errors import InputError
from pipeline.models.directory import vocab_sha256
from pipeline.models.loading import load_tokenizer
from pipeline.models.tokenizer_check import MIN_MAX_LENGTH
from pipeline.output_guard import refuse_inputs
from pipeline.progress import Progress
from pipeline.shards import input_files
from pipeline.words import char_spans

log = logging.getLogger("pipeline.tokenize")

NGRAM_SOURCES = ("pmi", "corpus", "entity")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--marked", required=True, nargs="+", type=Path, help="marked Parquet files or directories")
    parser.add_argument("--model", required=True, help="backbone (hub id or local path) whose tokenizer to use")
    parser.add_argument("--lang", required=True, help="language: " + ", ".join(languages.SUPPORTED))
    parser.add_argument(
        "--max-length",
        type=arguments.integer(MIN_MAX_LENGTH, arguments.MAX_LENGTH),
        default=128,
        help=f"tokens per input, special tokens included (at least {MIN_MAX_LENGTH}: [CLS], one token, [SEP])",
    )
    parser.add_argument(
        "--ngram-sources",
        default=",".join(NGRAM_SOURCES),
        help="span sources that count as n-grams (the papers use entities as n-grams too)",
    )
    parser.add_argument("--out", required=True, type=Path, help="output token dataset (.parquet)")


class SpanAligner:
    """Maps word / character spans of a sentence to token spans of its encoding."""

    def __init__(self, lang: str, ngram_sources: set[str], path=None):
        self.lang = lang
        self.path = path
        self.ngram_sources = ngram_sources

    def row(
        self, marked: dict, ids: list[int], offsets: list[tuple[int, int]], special: list[int], counts: Counter
    ) -> dict | None:
        text = marked["text"]
        units = char_spans(text, self.lang)
        starts = [start for start, _ in units]
        word_ids, first, last = [], {}, {}
        for t, ((a, b), is_special) in enumerate(zip(offsets, special)):
            if is_special or b <= a:
                word_ids.append(-1)
                continue
            while a < b and text[a].isspace():  # SentencePiece offsets may include the leading space
                a += 1
            unit = bisect_right(starts, a) - 1
            word_ids.append(unit)
            first.setdefault(unit, (t, a))
            last[unit] = (t, b)
        if not first:
            counts["sentences_empty"] += 1
            return None
        ngram, entity = [], []
        last_unit = max(first)
        for span in marked["spans"]:
            counts["spans_in"] += 1
            s, e = span["start"], span["end"]
            if not 0 <= s < e <= len(units):
                raise InputError(
                    self.path,
                    f"span [{s}, {e}) outside the sentence's {len(units)} tokens",
                    where=f"doc_id {marked['doc_id']}, sent_id {marked['sent_id']}",
                )
            if e - 1 > last_unit:
                counts["spans_truncated"] += 1
                continue
            if s not in first or (e - 1) not in last:
                counts["spans_misaligned"] += 1
                continue
            (t0, a), (t1, b) = first[s], last[e - 1]
            if a != units[s][0] or b != units[e - 1][1]:
                counts["spans_misaligned"] += 1
                continue
            target = {"start": t0, "end": t1 + 1}
            if span["source"] in self.ngram_sources:
                ngram.append(target)
            if span["source"] == "entity":
                entity.append(target)
            counts["spans_kept"] += 1
        counts["tokens"] += len(ids)
        out = {
            "doc_id": marked["doc_id"],
            "sent_id": marked["sent_id"],
            "input_ids": ids,
            "word_ids": word_ids,
            "ngram_spans": ngram,
            "entity_spans": entity,
        }
        if "sampled" in marked:  # a marked pairs sample: carried through for NSP / SOP
            out["sampled"] = marked["sampled"]
        return out


def tokenize_rows(rows: list[dict], tokenizer, aligner: SpanAligner, max_length: int, counts: Counter) -> list[dict]:
    encoded = tokenizer(
        [r["text"] for r in rows],
        truncation=True,
        max_length=max_length,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
    )
    out = []
    # ids no masking draws: [CLS], [SEP], [PAD] and [UNK] too (the collators and the pretrain stage's
    # check take the tokenizer's special ids); a sentence of nothing else has nothing to mask
    unmaskable = set(tokenizer.all_special_ids)
    for i, marked in enumerate(rows):
        ids = encoded["input_ids"][i]
        if len(ids) >= max_length:
            counts["sentences_truncated"] += 1
        if all(token in unmaskable for token in ids):
            counts["sentences_unknown_only"] += 1  # e.g. characters the vocabulary lacks, all [UNK]
            continue
        row = aligner.row(marked, ids, encoded["offset_mapping"][i], encoded["special_tokens_mask"][i], counts)
        if row is not None:
            out.append(row)
    return out


def run(args: argparse.Namespace) -> None:
    lang = languages.check(args.lang)
    if args.max_length < MIN_MAX_LENGTH:
        raise InputError(
            "--max-length", f"must be at least {MIN_MAX_LENGTH} ([CLS], one token, [SEP]), not {args.max_length}"
        )
    check_file_target(args.out)
    refuse_inputs(args.out, None, [args.model], args.marked)  # never the tokenizer's model, nor a marked file
    check_file_target(args.out.with_suffix(".stats.json"))
    sources = {s.strip() for s in args.ngram_sources.split(",") if s.strip()}
    if not sources <= set(NGRAM_SOURCES):
        raise InputError("--ngram-sources", f"unknown source(s) {sorted(sources - set(NGRAM_SOURCES))}")
    files = input_files(args.marked, unique_names=False)
    source = contracts.sampled_variant(files, contracts.MARKED, contracts.MARKED_PAIRS)
    target = contracts.TOKENS_PAIRS if source is contracts.MARKED_PAIRS else contracts.TOKENS
    tokenizer = load_tokenizer(args.model)
    params = {
        "model": args.model,
        "tokenizer_class": type(tokenizer).__name__,
        "vocab_sha256": vocab_sha256(tokenizer),
        "lang": lang,
        "max_length": args.max_length,
        "ngram_sources": sorted(sources),
        "pairs": target is contracts.TOKENS_PAIRS,
    }
    record = provenance.make("tokenize", params, inputs=[provenance.file_fingerprint(p) for p in files])
    aligner = SpanAligner(lang, sources)
    counts: Counter = Counter()
    started = time.monotonic()
    meter = Progress(log, "sentences", total=sum(pq.ParquetFile(p).metadata.num_rows for p in files))
    with AtomicFiles() as outputs:
        with contracts.open_writer(outputs.temp(args.out), target, record) as writer:
            for path in files:
                aligner.path = path
                for rows in contracts.iter_rows(path, source):
                    counts["sentences_in"] += len(rows)
                    produced = tokenize_rows(rows, tokenizer, aligner, args.max_length, counts)
                    counts["sentences_out"] += len(produced)
                    if produced:
                        writer.write_table(pa.Table.from_pylist(produced, schema=writer.schema))
                    meter.update(len(rows), position=counts["sentences_in"])
        stats = {**dict(sorted(counts.items())), "seconds": round(time.monotonic() - started, 3), "provenance": record}
        outputs.temp(args.out.with_suffix(".stats.json")).write_text(json_text(stats))
    meter.done()
    log.info("%s: %s", args.out, ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))
