"""Named settings of the ``ngrams`` stage: the n-gram vocabulary of each paper (docs/method.md §2).

Both papers state the PMI statistic, N and K but not the counts and thresholds behind their
vocabularies. The presets were chosen on the real English and Chinese samples, first by whether the
kept n-grams are meaningful units (stats.json ``meaningfulness``: recurrence, entity cuts, English
function-word edges, Chinese word boundaries) and by what n-gram masking can draw from
(``pmi_token_coverage``), then by the lengths the papers report (bench/ngram_presets.py,
BENCHMARKS.md "N-gram presets"). A threshold on the paper-mode score depends on the language (the
score carries ``(1 - 1/|w|) log T``, T the document's tokens: characters in Chinese), so a preset
holds one setting per language.

* English, ``ulr`` and ``burt``: the authors' released pmi.py (reference mode, N = 6, K = 3000, every
  n-gram a candidate, no threshold), with the entity spans as candidates beside it, and K at most 0.6
  per word of the document, this project's rule (neither paper nor pmi.py ties K to length: the plan
  lists it as a deviation): without it a document under about 600 words keeps every n-gram and is
  tiled with 6-word windows (docs/method.md §2, "Short documents"). K reaches 3000 at 5,000 words,
  and over 3,334 words the top 2000 is the released code's; a K rising back to 3000 sooner (the
  ``top_k_ramp_tokens`` / ``top_k_full_tokens`` knobs, tried) covers over 60% of the words of
  2,400-word articles, or gains under half a point of the whole articles' function-word edges, which
  stay 12 points under the released code's: its figure counts the short articles' windows. Where
  the text is silent the code decides: it is the one setting tried that is as meaningful as the released code
  (by definition) and leaves n-gram masking its mechanism (about half the words lie in a marked PMI
  span). Paper-mode settings that meet the same bar keep only n-grams recurring in their document,
  about 2 to 5 per Wikipedia article, which covers under 1% of the words (the ``*_recurring``
  ablations). What it gives up: BURT §5.1's stated "average lengths of 4.6" (2.55 on the sample, 2.94
  without the cap), and ULR-BERT §4's "less than 3% n-grams are longer than 4" (3.7%, 9.1% without
  the cap); the plan shows both.
* Chinese, ``ulr`` (ULR-BERT §4): paper mode, N = 6, K = 3000 as stated, minimum count 3 and no
  threshold, which gives "more than 50% of the top 2000 n-grams contain 2 ∼ 3" characters (the
  released code has no Chinese mode).
* Chinese, ``burt`` (BURT §5.1): paper mode, N = 7, K = 3000, minimum count 2 and threshold 3 ("to
  filter out meaningless n-grams", BURT §3.1), which gives BURT's "average lengths of ... 4.5" with no
  n-gram longer than 7, and spans that respect word boundaries at least as often as ``ulr``. The
  threshold scales by log T / log 3000 on a document of T < 3000 characters, this project's rule (a
  deviation in the plan): a paper-mode score is at most (1 - 1/n) log T, so threshold 3 is out of
  reach on short documents.
* ``ulr_recurring`` and ``burt_recurring`` (ablations): the paper formula, with a minimum count and a
  threshold (English ULR N 6, count 5, threshold 3; BURT N 6, count 2, threshold 5; Chinese as the
  presets above): meaningful by every measure and near BURT's English lengths (mean 4.67), but small.
* ``burt_windows`` (ablation): every n-gram a candidate (minimum count 1) and N = 5: it matches BURT
  §5.1's length figures, but by keeping once-seen 4- and 5-word windows (99% of its n-grams occur once
  in their document, 29% edged by a function word).

A preset fills only the options the command line leaves unset, so an explicit option still wins.
"""

from __future__ import annotations

import argparse

from pipeline.experiments import DEFAULT_PRESET

DEFAULT = DEFAULT_PRESET  # what every objective not named in ngrams.presets reads
# The knobs a preset sets, per language: the option's attribute name -> value (None: no threshold).
# Reference mode ranks every once-seen n-gram of once-seen words first (score 0), so a document with fewer
# candidates than K keeps all and greedy marking tiles it with 6-word windows; the English presets keep at
# most 0.6 n-grams per word of the document (docs/method.md §2, "Short documents"). top_k_ramp_tokens W0
# and top_k_full_tokens W1 (no preset sets them) make K rise linearly from the cap at W0 tokens to K at W1.
RELEASED_EN = {"mode": "reference", "max_n": 6, "top_k": 3000, "min_count": 1, "threshold": None}
PRESETS: dict[str, dict[str, dict[str, object]]] = {
    "ulr": {
        "en": {**RELEASED_EN, "top_k_per_token": 0.6},
        "zh": {"mode": "paper", "max_n": 6, "top_k": 3000, "min_count": 3, "threshold": None},
    },
    "burt": {
        "en": {**RELEASED_EN, "top_k_per_token": 0.6},
        # the threshold scales by log T / log 3000 on a document of T < 3000 characters
        "zh": {"mode": "paper", "max_n": 7, "top_k": 3000, "min_count": 2, "threshold": 3.0, "threshold_tokens": 3000},
    },
    "ulr_recurring": {
        "en": {"mode": "paper", "max_n": 6, "top_k": 3000, "min_count": 5, "threshold": 3.0},
        "zh": {"mode": "paper", "max_n": 6, "top_k": 3000, "min_count": 3, "threshold": None},
    },
    "burt_recurring": {
        "en": {"mode": "paper", "max_n": 6, "top_k": 3000, "min_count": 2, "threshold": 5.0},
        "zh": {"mode": "paper", "max_n": 7, "top_k": 3000, "min_count": 2, "threshold": 3.0},
    },
    "burt_windows": {
        lang: {"mode": "paper", "max_n": 5, "top_k": 3000, "min_count": 1, "threshold": None} for lang in ("en", "zh")
    },
}
NAMES = tuple(PRESETS)
SHORT_DOCUMENT_KNOBS = ("top_k_per_token", "top_k_ramp_tokens", "top_k_full_tokens", "threshold_tokens")
KNOBS = ("mode", "max_n", "top_k", "min_count", "threshold", *SHORT_DOCUMENT_KNOBS)


def settings(preset: str, lang: str) -> dict[str, object]:
    """The knobs of ``preset`` for ``lang`` (en or zh)."""
    return PRESETS[preset][lang]


def knobs(preset: str, lang: str, given: dict[str, object]) -> dict[str, object]:
    """Every knob a run of ``preset`` in ``lang`` uses: ``given`` (an option or config key; None where
    unset) where set, else the preset's.

    The released code keeps every n-gram, so reference mode's minimum count stays 1 unless given.
    A preset's threshold is a paper-mode (document-level) score, so reference and corpus mode,
    whose scores have other scales, have none unless given. A mode that is given (``--mode``,
    ``ngrams.mode``) runs without the preset's short-document knobs unless they are given too:
    ``--mode reference`` is the released pmi.py exactly (K for every document).
    """
    explicit = {knob: given.get(knob) is not None for knob in KNOBS}
    preset_values = {**dict.fromkeys(SHORT_DOCUMENT_KNOBS), **settings(preset, lang)}
    chosen = {knob: given[knob] if explicit[knob] else value for knob, value in preset_values.items()}
    if chosen["mode"] == "reference" and not explicit["min_count"]:
        chosen["min_count"] = 1
    if chosen["mode"] != "paper" and not explicit["threshold"]:
        chosen["threshold"] = None
    if explicit["mode"]:
        for knob in SHORT_DOCUMENT_KNOBS:
            chosen[knob] = given[knob] if explicit[knob] else None
    if chosen["threshold"] is None:
        chosen["threshold_tokens"] = None  # it scales the threshold
    return chosen


# The project's entity rule against the released one on the English sample with its links (BENCHMARKS
# "N-gram presets", "The released rule on links"; tests/ngrams/test_short_documents.py re-measures it):
# the share of the kept n-grams not in pmi.py's sets, and of the marked lines that differ.
RELEASED_RULE_DEPARTURE = {"kept": 0.132, "lines": 0.697}


def short_document_text(chosen: dict[str, object], lang: str) -> str | None:
    """The short-document rule of a run's knobs, in words (None: K and the threshold as on long documents)."""
    unit = "word" if lang == "en" else "character"
    parts = []
    if chosen.get("top_k_per_token") is not None:
        cap = f"K at most {chosen['top_k_per_token']:g} per {unit} of the document"
        if chosen.get("top_k_full_tokens") is not None:
            cap += (
                f" up to {chosen['top_k_ramp_tokens']:,g} {unit}s, then rising linearly to {chosen['top_k']} at "
                f"{chosen['top_k_full_tokens']:,g}"
            )
        parts.append(cap)
    if chosen.get("threshold_tokens") is not None and chosen.get("threshold") is not None:
        t0 = chosen["threshold_tokens"]
        parts.append(f"threshold × log T / log {t0:g} on a document of T < {t0:g} {unit}s")
    return ", ".join(parts) or None


def describe(preset: str, lang: str, chosen: dict[str, object], lowercase: bool, entities: bool = True) -> str:
    """What a run of ``preset`` reads, for the plan: its knobs, its short-document rule, and in reference
    mode where it departs from the released pmi.py (docs/method.md §2)."""
    mode = "reference mode, the released pmi.py" if chosen["mode"] == "reference" else f"{chosen['mode']} mode"
    threshold = "none" if chosen["threshold"] is None else f"{chosen['threshold']:g}"
    text = (
        f"{preset} ({mode}; N {chosen['max_n']}, K {chosen['top_k']}, min count {chosen['min_count']}, "
        f"threshold {threshold})"
    )
    short = short_document_text(chosen, lang)
    if short:
        text += f'; short documents: {short} (docs/method.md §2, "Short documents")'
    if chosen["mode"] == "reference":
        if lowercase:
            text += "; lower-cased before reference mode (ngrams.lowercase), where pmi.py is case-sensitive"
        if entities:
            text += (
                "; links: only n-grams that cut an entity are skipped, where pmi.py skips every n-gram holding a "
                f"bracketed token ({100 * RELEASED_RULE_DEPARTURE['kept']:.1f}% of the kept n-grams and "
                f"{100 * RELEASED_RULE_DEPARTURE['lines']:.1f}% of the marked lines differ on the English sample)"
            )
    return text


def resolve(args: argparse.Namespace) -> None:
    """Fill each knob the command line left unset (None) from ``args.preset`` for ``args.lang``, in place."""
    for knob, value in knobs(args.preset, args.lang, {knob: getattr(args, knob) for knob in KNOBS}).items():
        setattr(args, knob, value)
