"""NLI sentence pairs for training the BiLSTM encoders (paper 004 §2.2: SNLI, 3 labels).

Read with the fine-tuning stage's readers (:mod:`pipeline.tasks.nli`); here a path names
one file: a CSV export (``snli_1.0_dev.csv``, ``multinli_1.0_dev_matched.csv``), the TAB-separated
``.txt`` of the original releases, or the ``s1.<split>`` file of InferSent / SentEval's
three-file layout. Pairs without a gold label (``-``) are dropped and counted (``skipped``);
any other label outside entailment / neutral / contradiction stops with an
:class:`~pipeline.errors.InputError` naming the file and the line.

A CSV row is one line. RFC 4180 lets a quoted field span lines, but no SNLI / MultiNLI sentence
holds a line break (the official releases are JSON lines and TAB-separated text, one pair a
line; the CSV exports hold the same sentences), so a quoted field that runs onto the next line is
a stray quote joining two rows, and is refused naming the line where it opened; a quoted field
within one line (``"I like him, but ..."``) is read as CSV. The ``.txt`` releases are read
without quote processing (``csv.QUOTE_NONE``), as their own loaders read them.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pipeline.tasks.nli import LABELS, NLIPairs, read_source, read_three_files

log = logging.getLogger("pipeline.bilstm")

Pairs = NLIPairs
__all__ = ["LABELS", "Pairs", "read", "read_all"]


def read(path) -> NLIPairs:
    """Pairs of one file (CSV / release ``.txt``, or the ``s1.<split>`` of the three-file layout)."""
    path = Path(path)
    if path.name.startswith("s1.") and path.is_file():
        pairs = read_three_files(path.parent, path.name.removeprefix("s1."))
    else:
        pairs = read_source(str(path))
    log.info("%s: %d pairs (%d without a gold label dropped)", path, len(pairs), pairs.skipped)
    return pairs


def read_all(paths) -> NLIPairs:
    pairs = NLIPairs()
    for path in paths:
        pairs.extend(read(path))
    return pairs
