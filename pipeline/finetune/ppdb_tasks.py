"""The two PPDB tasks of the twin structure (BURT twin §3.1, §3.2; Table 4's PI and PTC).

**Paraphrase identification (PI).** Every paraphrase pair ``(T, S0)`` is a positive; for each
target ``T``, ``k`` sequences ``S1..Sk`` drawn at random from the paraphrase sides of the data set
are negatives (negative sampling, Mikolov et al. 2013; the paper's k = 3, Table 4 varies it). A
negative is never ``T`` itself nor any sequence the data set pairs with ``T`` (in either
direction), so the pair's own paraphrase is never drawn. The positives are the pairs the PPDB
2.0 classifier calls Equivalence or Forward/ReverseEntailment: Independent, Exclusion (antonyms)
and OtherRelated pairs are not paraphrases.

**Pairwise text classification (PTC).** Three classes: Equivalence → equivalence,
Forward- and ReverseEntailment → entailment (the twin encoder is symmetric), Independent →
independent; Exclusion and OtherRelated pairs are dropped. The classes are balanced by equal
sampling: as many pairs of each class as the smallest class has, drawn without replacement
(the paper draws 354k of each).

Both are seeded: the same pairs and seed give the same examples.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from pipeline.errors import InputError
from pipeline.finetune.ppdb import PPDBPair

PTC_CLASSES = ("equivalence", "entailment", "independent")
PTC_MAPPING = {
    "Equivalence": "equivalence",
    "ForwardEntailment": "entailment",
    "ReverseEntailment": "entailment",
    "Independent": "independent",
}  # Exclusion and OtherRelated: dropped
PARAPHRASE_RELATIONS = ("Equivalence", "ForwardEntailment", "ReverseEntailment")
PI_LABELS = ("not_paraphrase", "paraphrase")


@dataclass
class PairExamples:
    """Sentence pairs with integer labels, the columns of a sentence-transformers data set."""

    first: list[str]
    second: list[str]
    labels: list[int]

    def __len__(self) -> int:
        return len(self.labels)

    def columns(self) -> dict[str, list]:
        return {"sentence1": self.first, "sentence2": self.second, "label": self.labels}


def paraphrase_identification(pairs: list[PPDBPair], k: int, seed: int, source="--ppdb") -> PairExamples:
    """Positives and ``k`` sampled negatives per positive (label 1 / 0)."""
    if k < 1:
        raise InputError("--negatives", f"k must be at least 1, got {k}")
    positives = [(p.phrase, p.paraphrase) for p in pairs if p.relation in PARAPHRASE_RELATIONS]
    if not positives:
        raise InputError(source, "no Equivalence / Forward- / ReverseEntailment pairs for paraphrase identification")
    known = defaultdict(set)  # every sequence the data set pairs with a target, either way
    for pair in pairs:
        known[pair.phrase].add(pair.paraphrase)
        known[pair.paraphrase].add(pair.phrase)
    pool = sorted({side for _, side in positives} | {target for target, _ in positives})
    pool_set = set(pool)
    rng = np.random.default_rng([seed, 7])
    first, second, labels = [], [], []
    for target, paraphrase in positives:
        excluded = known[target] | {target, paraphrase}
        if len(pool) - len(excluded & pool_set) < k:
            raise InputError(source, f"too few distinct phrases to draw {k} negatives for {target!r}")
        first.append(target)
        second.append(paraphrase)
        labels.append(1)
        drawn: list[str] = []
        while len(drawn) < k:  # rejection sampling: the excluded set is tiny next to the pool
            candidate = pool[int(rng.integers(len(pool)))]
            if candidate not in excluded and candidate not in drawn:
                drawn.append(candidate)
        for negative in drawn:
            first.append(target)
            second.append(negative)
            labels.append(0)
    return PairExamples(first, second, labels)


def pairwise_text_classification(pairs: list[PPDBPair], seed: int, source="--ppdb") -> PairExamples:
    """The balanced 3-way examples (equivalence 0, entailment 1, independent 2), shuffled."""
    by_class: dict[str, list[PPDBPair]] = {name: [] for name in PTC_CLASSES}
    for pair in pairs:
        if pair.relation in PTC_MAPPING:
            by_class[PTC_MAPPING[pair.relation]].append(pair)
    empty = [name for name, members in by_class.items() if not members]
    if empty:
        raise InputError(source, f"no PPDB pairs of class {', '.join(empty)} for pairwise text classification")
    size = min(len(members) for members in by_class.values())
    rng = np.random.default_rng([seed, 11])
    chosen = []
    for label, name in enumerate(PTC_CLASSES):
        members = by_class[name]
        chosen += [(members[i], label) for i in sorted(rng.choice(len(members), size=size, replace=False))]
    order = rng.permutation(len(chosen))
    return PairExamples(
        [chosen[i][0].phrase for i in order], [chosen[i][0].paraphrase for i in order], [chosen[i][1] for i in order]
    )
