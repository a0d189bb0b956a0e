"""Named settings of the ``ngrams`` stage: the n-gram vocabulary of each paper (docs/method.md §2).

Both papers build their vocabularies with the same per-document PMI formula (paper mode, with
1/|w|) and state only some of the knobs; the rest were chosen on the real English and Chinese
samples, first by whether the kept n-grams are meaningful units (stats.json ``meaningfulness``:
recurrence, entity cuts, English function-word edges, Chinese word boundaries), then by the
lengths the papers report (bench/ngram_presets.py, BENCHMARKS.md "N-gram presets"). A threshold
on the paper-mode score depends on the language (the score carries ``(1 - 1/|w|) log T``, T the
document's tokens: characters in Chinese), so a preset holds one setting per language.

* ``ulr`` (ULR-BERT §4, for MiSAD): "PMI scores of all n-grams with a maximum length of N = 6
  are calculated for each document ... we empirically retain the top 3000 n-grams": N = 6 and
  K = 3000 as stated. English: minimum count 5 and threshold 3 (ULR-BERT §3.1: "only n-grams with
  PMI scores higher than the chosen threshold are selected"), the loosest setting whose top n-grams
  begin or end with a function word no more often than the released code's (reference mode);
  Chinese: minimum count 3 and no threshold, which gives "more than 50% of the top 2000 n-grams
  contain 2 ∼ 3" characters.
* ``burt`` (BURT §5.1, for n-gram masking): K = 3000 as stated; minimum count 2 and a threshold
  ("to filter out meaningless n-grams", BURT §3.1): English N = 6, threshold 5; Chinese N = 7,
  threshold 3. These give BURT's "average lengths of 4.6 and 4.5" with no n-gram longer than 7.
* ``burt_windows`` (ablation): the former ``burt`` preset, every n-gram a candidate (minimum count
  1) and N = 5: it matches BURT §5.1's length figures, but by keeping once-seen 4- and 5-word
  windows (99% of its n-grams occur once in their document).

A preset fills only the options the command line leaves unset, so an explicit option still wins.
"""

from __future__ import annotations

import argparse

from pipeline.experiments import DEFAULT_PRESET

DEFAULT = DEFAULT_PRESET  # what every objective not named in ngrams.presets reads
# The knobs a preset sets, per language: the option's attribute name -> value (None: no threshold).
PRESETS: dict[str, dict[str, dict[str, object]]] = {
    "ulr": {
        "en": {"mode": "paper", "max_n": 6, "top_k": 3000, "min_count": 5, "threshold": 3.0},
        "zh": {"mode": "paper", "max_n": 6, "top_k": 3000, "min_count": 3, "threshold": None},
    },
    "burt": {
        "en": {"mode": "paper", "max_n": 6, "top_k": 3000, "min_count": 2, "threshold": 5.0},
        "zh": {"mode": "paper", "max_n": 7, "top_k": 3000, "min_count": 2, "threshold": 3.0},
    },
    "burt_windows": {
        lang: {"mode": "paper", "max_n": 5, "top_k": 3000, "min_count": 1, "threshold": None} for lang in ("en", "zh")
    },
}
NAMES = tuple(PRESETS)
KNOBS = ("mode", "max_n", "top_k", "min_count", "threshold")


def settings(preset: str, lang: str) -> dict[str, object]:
    """The knobs of ``preset`` for ``lang`` (en or zh)."""
    return PRESETS[preset][lang]


def resolve(args: argparse.Namespace) -> None:
    """Fill each knob the command line left unset (None) from ``args.preset`` for ``args.lang``, in place.

    The released code keeps every n-gram, so reference mode's minimum count stays 1 unless given.
    A preset's threshold is a paper-mode (document-level) score, so reference and corpus mode,
    whose scores have other scales, have none unless given.
    """
    preset = settings(args.preset, args.lang)
    explicit = {knob: getattr(args, knob) is not None for knob in KNOBS}
    for knob in KNOBS:
        if not explicit[knob]:
            setattr(args, knob, preset[knob])
    if args.mode == "reference" and not explicit["min_count"]:
        args.min_count = 1
    if args.mode != "paper" and not explicit["threshold"]:
        args.threshold = None
