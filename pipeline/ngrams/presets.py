"""Named settings of the ``ngrams`` stage: the n-gram vocabulary of each paper (docs/method.md §2).

The two papers describe different vocabularies built with the same per-document PMI formula:

* ``ulr`` (ULR-BERT §4, for MiSAD): "PMI scores of all n-grams with a maximum length of N = 6
  are calculated for each document ... more than 50% of the top 2000 n-grams contain 2 ∼ 3
  words, and only less than 3% n-grams are longer than 4 ... we empirically retain the top
  3000 n-grams for each document". N = 6, K = 3000; the minimum count 3 is what gives those
  lengths on real text (docs/method.md §2, "Evidence").
* ``burt`` (BURT §5.1, for n-gram masking): "nearly 50% of the top 2000 n-grams contain 3 ∼ 4
  words (characters for Chinese), and only less than 0.5% n-grams are longer than 7 ... we
  empirically retain the top 3000 n-grams for each document, resulting in vocabularies of
  n-grams with average lengths of 4.6 and 4.5". Every n-gram is a candidate (minimum count 1)
  and N = 5, K = 3000: the setting of the paper's knobs closest to those lengths on real
  English and Chinese Wikipedia (bench/ngram_presets.py, BENCHMARKS.md "N-gram presets").

A preset fills only the options the command line leaves unset, so an explicit option still wins.
"""

from __future__ import annotations

import argparse

from pipeline.experiments import DEFAULT_PRESET

DEFAULT = DEFAULT_PRESET  # what every objective not named in ngrams.presets reads
# The knobs a preset sets: the option's attribute name -> value (None: no threshold).
PRESETS: dict[str, dict[str, object]] = {
    "ulr": {"mode": "paper", "max_n": 6, "top_k": 3000, "min_count": 3, "threshold": None},
    "burt": {"mode": "paper", "max_n": 5, "top_k": 3000, "min_count": 1, "threshold": None},
}
NAMES = tuple(PRESETS)
KNOBS = ("mode", "max_n", "top_k", "min_count", "threshold")


def resolve(args: argparse.Namespace) -> None:
    """Fill each knob the command line left unset (None) from ``args.preset``, in place.

    The released code keeps every n-gram, so reference mode's minimum count stays 1 unless given.
    """
    preset = PRESETS[args.preset]
    explicit_min_count = args.min_count is not None
    for knob in KNOBS:
        if getattr(args, knob) is None:
            setattr(args, knob, preset[knob])
    if args.mode == "reference" and not explicit_min_count:
        args.min_count = 1
