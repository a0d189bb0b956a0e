"""Stage ``convert`` (Chinese): Traditional → Simplified script with OpenCC (BURT §4.1).

Per document: MediaWiki variant blocks are rendered first (Simplified variant preferred, see
:mod:`pipeline.corpus.variants`), then OpenCC (config ``t2s`` by default) converts the text,
the title and the entity targets. The text is converted piecewise between entity
boundaries, so entity spans stay exact even where a conversion changes a length; variant
blocks without variants (``-{...}-``) are left unconverted, as MediaWiki does.
"""

from __future__ import annotations

import argparse
import itertools
import logging
from pathlib import Path

from pipeline import contracts
from pipeline.corpus import docs_input, variants
from pipeline.errors import InputError
from pipeline.output_guard import refuse_mapped_outputs
from pipeline.shards import input_files, map_files

log = logging.getLogger("pipeline.convert")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", required=True, nargs="+", type=Path, help="docs Parquet files or directories")
    parser.add_argument("--out", required=True, type=Path, help="output directory (same file names)")
    parser.add_argument("--opencc-config", default="t2s", help="OpenCC configuration (default t2s)")
    parser.add_argument(
        "--variants",
        default=",".join(variants.SIMPLIFIED_FIRST),
        help="variant preference for -{zh-xx:...}- blocks, comma-separated",
    )


def load_opencc(config: str):
    import opencc

    try:
        return opencc.OpenCC(config)
    except RuntimeError as exc:
        raise InputError("--opencc-config", f"OpenCC configuration {config!r} not found: {exc}") from exc


class Converter:
    def __init__(self, opencc_config: str = "t2s", preference: tuple[str, ...] = variants.SIMPLIFIED_FIRST):
        self.opencc = load_opencc(opencc_config)
        self.preference = preference

    def convert_doc(self, row: dict, counts) -> dict:
        edits, protected = variants.resolve(row["text"], self.preference)
        counts["variant_blocks"] += len(edits)
        text = edits.apply(row["text"])
        spans = []
        for entity in row["entities"]:
            start, end = edits.map_span(entity["start"], entity["end"])
            if start < end:
                spans.append((start, end, entity["target"]))
            else:
                counts["entities_dropped"] += 1
        converted, mapping = self._convert_pieces(text, spans, protected)
        entities = [{"start": mapping[s], "end": mapping[e], "target": self.opencc.convert(t)} for s, e, t in spans]
        counts["chars_changed"] += sum(a != b for a, b in zip(text, converted)) if len(text) == len(converted) else 0
        return {
            "doc_id": row["doc_id"],
            "title": self.opencc.convert(row["title"]),
            "text": converted,
            "entities": entities,
        }

    def _convert_pieces(self, text: str, spans, protected) -> tuple[str, dict[int, int]]:
        cuts = {0, len(text)}
        for start, end, _ in spans:
            cuts.update((start, end))
        for start, end in protected:
            cuts.update((start, end))
        ordered = sorted(cuts)
        pieces, mapping, position, p = [], {0: 0}, 0, 0
        for start, end in itertools.pairwise(ordered):
            while p < len(protected) and protected[p][1] <= start:
                p += 1
            inside = p < len(protected) and protected[p][0] <= start and end <= protected[p][1]
            piece = text[start:end] if inside else self.opencc.convert(text[start:end])
            pieces.append(piece)
            position += len(piece)
            mapping[end] = position
        return "".join(pieces), mapping


def run(args: argparse.Namespace) -> None:
    refuse_mapped_outputs(args.out, args.input, "convert")  # the same file names, written where they are read
    preference = tuple(code.strip() for code in args.variants.split(",") if code.strip())
    converter = Converter(args.opencc_config, preference)
    params = {"opencc_config": args.opencc_config, "variants": list(preference)}
    for path in input_files(args.input):  # whole entities inside their texts, before anything is written
        docs_input.check_docs(path, offsets=True)
    map_files(
        args.input,
        args.out,
        "convert",
        params,
        contracts.DOCS,
        contracts.DOCS,
        lambda rows, counts: [converter.convert_doc(row, counts) for row in rows],
        log,
    )
