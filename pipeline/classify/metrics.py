"""The metrics the papers report, as percentages (x 100, as printed in ULR-BERT Table 3 / BURT Tables V-VI).

Matthews correlation (CoLA), F1 of the positive class and accuracy (MRPC, QQP), Pearson and
Spearman correlation (STS-B) come from scikit-learn and SciPy. CMRC 2018's exact match and F1
follow the official evaluation script (``cmrc2018_evaluate.py``): text is cut into single
CJK characters and runs of other characters, punctuation is removed, EM is an exact match of
the lower-cased text without punctuation and F1 the character-level F1 of the longest common substring, each the best over
the gold answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef


def classification(metric_names: Sequence[str], labels: Sequence, predictions: Sequence) -> dict[str, float]:
    functions = {
        "acc": lambda: accuracy_score(labels, predictions),
        "mcc": lambda: matthews_corrcoef(labels, predictions),
        "f1": lambda: f1_score(labels, predictions, pos_label=1, average="binary", zero_division=0.0),
    }
    return {name: 100.0 * float(functions[name]()) for name in metric_names}


def regression(labels: Sequence[float], predictions: Sequence[float]) -> dict[str, float]:
    labels, predictions = np.asarray(labels, float), np.asarray(predictions, float)
    if np.ptp(predictions) == 0 or np.ptp(labels) == 0:  # a constant has no correlation
        return {"pearson": 0.0, "spearman": 0.0}
    return {
        "pearson": 100.0 * float(pearsonr(labels, predictions)[0]),
        "spearman": 100.0 * float(spearmanr(labels, predictions)[0]),
    }


# The official script's ``sp_char`` list (not all of ASCII punctuation: "." and "," stay).
CMRC_PUNCTUATION = {
    "-",
    ":",
    "_",
    "*",
    "^",
    "/",
    "\\",
    "~",
    "`",
    "+",
    "=",
    "，",
    "。",
    "：",
    "？",
    "！",
    "“",
    "”",
    "；",
    "’",
    "《",
    "》",
    "……",
    "·",
    "、",
    "「",
    "」",
    "（",
    "）",
    "－",
    "～",
    "『",
    "』",
}
_CJK_OR_PUNCT = re.compile(r"[\u4e00-\u9fa5]")


def cmrc_segments(text: str) -> list[str]:
    """Mixed segmentation: every CJK character (or punctuation mark) alone, other runs as words."""
    segments, word = [], ""
    for char in text.lower().strip():
        if _CJK_OR_PUNCT.match(char) or char in CMRC_PUNCTUATION:
            if word:
                segments.extend(word.split())
                word = ""
            segments.append(char)
        else:
            word += char
    if word:
        segments.extend(word.split())
    return [s for s in segments if s not in CMRC_PUNCTUATION]


def _longest_common_substring(a: list[str], b: list[str]) -> int:
    best, previous = 0, [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def cmrc_f1(prediction: str, gold: str) -> float:
    p, g = cmrc_segments(prediction), cmrc_segments(gold)
    common = _longest_common_substring(p, g)
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def _without_punctuation(text: str) -> str:
    return "".join(char for char in text.lower().strip() if char not in CMRC_PUNCTUATION)


def cmrc_em(prediction: str, gold: str) -> float:
    return float(_without_punctuation(prediction) == _without_punctuation(gold))


def span_extraction(golds: Sequence[Sequence[str]], predictions: Sequence[str]) -> dict[str, float]:
    """EM and F1 (x 100) of predicted answer texts against each question's gold answers."""
    em = [max(cmrc_em(p, g) for g in gs) for p, gs in zip(predictions, golds)]
    f1 = [max(cmrc_f1(p, g) for g in gs) for p, gs in zip(predictions, golds)]
    return {"em": 100.0 * float(np.mean(em)), "f1": 100.0 * float(np.mean(f1))}


def spread(values: Sequence[float]) -> dict[str, float]:
    """ULR-BERT Table 6: standard deviation (sample, n - 1; 0 for one seed), mean and max over seeds."""
    values = np.asarray(values, float)
    return {
        "mean": float(values.mean()),
        "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
        "max": float(values.max()),
        "min": float(values.min()),
    }
