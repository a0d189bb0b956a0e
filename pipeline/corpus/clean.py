"""Stage ``clean``: docs → clean sentences with their entity spans.

Each document is split into sentences (:mod:`pipeline.corpus.sentences`), each sentence is
cleaned with the language's regex rule set (:mod:`pipeline.corpus.cleaning`), and sentences
shorter than ``--min-tokens`` (words in English, characters in Chinese) are dropped. Entity
spans are remapped into the cleaned sentence; a span that crosses a sentence boundary or that
cleaning erases is dropped, and both are counted in the stats. Case is kept: case folding
belongs to the tokenizer of the model (docs/method.md §2).
"""

from __future__ import annotations

import argparse
import logging
from bisect import bisect_right
from pathlib import Path

from pipeline import contracts, languages
from pipeline.arguments import MIN_TOKENS, SENTENCE_TOKENS
from pipeline.corpus import cleaning, docs_input, sentences
from pipeline.output_guard import refuse_mapped_outputs
from pipeline.shards import input_files, map_files

log = logging.getLogger("pipeline.clean")

DEFAULT_MIN_TOKENS = {"en": 3, "zh": 5}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", required=True, nargs="+", type=Path, help="docs Parquet files or directories")
    parser.add_argument("--lang", required=True, help="language: " + ", ".join(languages.SUPPORTED))
    parser.add_argument("--out", required=True, type=Path, help="output directory (same file names)")
    parser.add_argument("--rules", help="cleaning rule set name or YAML/JSON file (default: the language's)")
    parser.add_argument("--min-tokens", type=MIN_TOKENS, help="drop shorter sentences (default en 3 words, zh 5 chars)")
    parser.add_argument("--max-tokens", type=SENTENCE_TOKENS, default=0, help="drop longer sentences (0: no limit)")


def token_count(text: str, lang: str) -> int:
    return len(text.split()) if lang == "en" else len(text)


class SentenceCleaner:
    def __init__(self, lang: str, rules: list[tuple[str, str]], min_tokens: int, max_tokens: int = 0):
        self.lang = lang
        self.cleaner = cleaning.Cleaner(rules)
        self.min_tokens = min_tokens
        self.max_tokens = max_tokens

    def doc_sentences(self, doc: dict, counts) -> list[dict]:
        text = doc["text"]
        bounds = sentences.split(text, self.lang)
        starts = [start for start, _ in bounds]
        by_sentence: list[list[dict]] = [[] for _ in bounds]
        counts["docs"] += 1
        counts["entities_in"] += len(doc["entities"])
        for entity in doc["entities"]:
            i = bisect_right(starts, entity["start"]) - 1
            if i >= 0 and entity["end"] <= bounds[i][1]:
                by_sentence[i].append(entity)
            else:
                counts["entities_crossing_sentences"] += 1
        rows = []
        for (start, end), entities in zip(bounds, by_sentence):
            counts["sentences_split"] += 1
            spans = [(e["start"] - start, e["end"] - start) for e in entities]
            cleaned, mapped = self.cleaner.clean(text[start:end], spans)
            size = token_count(cleaned, self.lang)
            if size < self.min_tokens or (self.max_tokens and size > self.max_tokens):
                counts["sentences_too_short" if size < self.min_tokens else "sentences_too_long"] += 1
                counts["entities_in_dropped_sentences"] += len(entities)
                continue
            kept = []
            for entity, span in zip(entities, mapped):
                if span is None:
                    counts["entities_erased_by_cleaning"] += 1
                else:
                    kept.append({"start": span[0], "end": span[1], "target": entity["target"]})
            counts["entities_kept"] += len(kept)
            rows.append({"doc_id": doc["doc_id"], "sent_id": len(rows), "text": cleaned, "entities": kept})
        counts["sentences_kept"] += len(rows)
        return rows


def run(args: argparse.Namespace) -> None:
    refuse_mapped_outputs(args.out, args.input, "clean")  # the same file names, written where they are read
    lang = languages.check(args.lang)
    rules_name = args.rules or cleaning.DEFAULT_RULES[lang]
    rules = cleaning.load_rules(rules_name)
    min_tokens = DEFAULT_MIN_TOKENS[lang] if args.min_tokens is None else args.min_tokens
    worker = SentenceCleaner(lang, rules, min_tokens, args.max_tokens)
    params = {
        "lang": lang,
        "rules": rules_name,
        "rule_patterns": [list(r) for r in rules],
        "min_tokens": min_tokens,
        "max_tokens": args.max_tokens,
    }
    for path in input_files(args.input):  # whole entities, unique columns: before anything is written
        docs_input.check_docs(path)
    map_files(
        args.input,
        args.out,
        "clean",
        params,
        contracts.DOCS,
        contracts.SENTENCES,
        lambda docs, counts: [row for doc in docs for row in worker.doc_sentences(doc, counts)],
        log,
    )
