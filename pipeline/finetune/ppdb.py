"""PPDB 2.0 paraphrase pairs with their entailment relation (BURT twin §3.1; Pavlick et al., ACL 2015).

One rule per line, six fields separated by `` ||| ``::

    LHS ||| PHRASE ||| PARAPHRASE ||| FEATURE=VALUE ... ||| ALIGNMENT ||| ENTAILMENT

e.g. ``[NP] ||| the results of the work ||| the outcome of the work ||| PPDB2.0Score=3.48 ... ||| 0-0 1-1 2-2 3-3 4-4
||| ForwardEntailment``. ENTAILMENT is one of the six relations of PPDB 2.0 (Equivalence,
ForwardEntailment, ReverseEntailment, Independent, Exclusion, OtherRelated). The packs are
read as published (``ppdb-2.0-s-phrasal`` or its ``.gz``). A line with another number of
fields, an unknown relation or an empty side stops with an :class:`~pipeline.errors.InputError`
naming the file and line.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import InputError

FIELDS = ("lhs", "phrase", "paraphrase", "features", "alignment", "entailment")
RELATIONS = ("Equivalence", "ForwardEntailment", "ReverseEntailment", "Independent", "Exclusion", "OtherRelated")


@dataclass(frozen=True)
class PPDBPair:
    phrase: str
    paraphrase: str
    relation: str


def _open(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read(path) -> list[PPDBPair]:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "PPDB file not found")
    pairs = []
    try:
        with _open(path) as handle:
            for number, line in enumerate(handle, 1):
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
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise InputError(path, f"cannot read as (gzipped) UTF-8 text: {exc}") from exc
    if not pairs:
        raise InputError(path, "no PPDB pairs")
    return pairs
