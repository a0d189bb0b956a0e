"""PPDB 2.0 paraphrase pairs with their entailment relation (BURT twin §3.1; Pavlick et al., ACL 2015).

One rule per line, six fields separated by `` ||| ``::

    LHS ||| PHRASE ||| PARAPHRASE ||| FEATURE=VALUE ... ||| ALIGNMENT ||| ENTAILMENT

e.g. ``[NP] ||| the results of the work ||| the outcome of the work ||| PPDB2.0Score=3.48 ... ||| 0-0 1-1 2-2 3-3 4-4
||| ForwardEntailment``. ENTAILMENT is one of the six relations of PPDB 2.0 (Equivalence,
ForwardEntailment, ReverseEntailment, Independent, Exclusion, OtherRelated). The packs are
read as published (``ppdb-2.0-s-phrasal`` or its ``.gz``). A line with another number of
fields, an unknown relation, an empty side, a byte that is not UTF-8 or more than 1 MiB (checked
as the line is read, before it is held: :mod:`pipeline.tasks.bounded_lines`) stops with an
:class:`~pipeline.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import text_lines

FIELDS = ("lhs", "phrase", "paraphrase", "features", "alignment", "entailment")
RELATIONS = ("Equivalence", "ForwardEntailment", "ReverseEntailment", "Independent", "Exclusion", "OtherRelated")


@dataclass(frozen=True)
class PPDBPair:
    phrase: str
    paraphrase: str
    relation: str


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read(path) -> list[PPDBPair]:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "PPDB file not found")
    pairs = []
    try:
        with _open(path) as handle:  # each line read with a bound: a small .gz can hold a 1 GB line
            for number, line in text_lines(handle, path):
                line = line.rstrip("\r\n")
                if not line.strip():
                    continue
                fields = [text.strip() for text in line.split("|||")]
                if len(fields) != len(FIELDS):
                    raise InputError(
                        path,
                        f"expected {len(FIELDS)} fields separated by '|||' ({', '.join(FIELDS)}), found {len(fields)}",
                        where=f"line {number}",
                    )
                phrase, paraphrase, relation = fields[1], fields[2], fields[5]
                if relation not in RELATIONS:
                    raise InputError(
                        path,
                        f"entailment relation {relation!r} is not one of {', '.join(RELATIONS)}",
                        where=f"line {number}",
                    )
                if not phrase or not paraphrase:
                    raise InputError(path, "empty phrase or paraphrase", where=f"line {number}")
                pairs.append(PPDBPair(phrase, paraphrase, relation))
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(path, f"cannot read as (gzipped) UTF-8 text: {exc}") from exc
    if not pairs:
        raise InputError(path, "no PPDB pairs")
    return pairs
