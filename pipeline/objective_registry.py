"""The pre-training objectives, one entry each (docs/method.md §3, docs/stages/pretrain.md).

Every place that needs to know an objective reads it here: ``pretrain --objective``'s choices and the
loss terms (:mod:`pipeline.pretrain.objectives`), the masking of the MLM input
(:mod:`pipeline.pretrain.masking`), which objectives packed input may fill
(:mod:`pipeline.pretrain.packing`, :mod:`pipeline.experiments`), which read sentence pairs, n-gram
spans or SpanBERT's span law (the workflow's samples and flags), and the model card's description
(:mod:`pipeline.models.card`), and the config schema's objective lists: both refer to one definition
whose names :func:`pipeline.workflow_config.load_schema` fills in from here. A new objective is its
module, one entry here and its test.

Fields of an :class:`Objective`:

- ``collator``: how a batch is made. ``masking`` (:class:`~pipeline.pretrain.masking.MaskingCollator`
  with ``masking``), ``misad`` (:class:`~pipeline.pretrain.misad.MisadCollator`, w from
  ``misad_source``) or ``pairs`` (:class:`~pipeline.pretrain.sentence_pairs.PairCollator`).
- ``masking``: the masking strategy of the MLM input (:data:`~pipeline.pretrain.masking.STRATEGIES`).
- ``loss``: the term beside the masked LM's: ``mlm`` (none), ``misad`` (ULR-BERT §3.2, in the variant
  ``pretrain --misad-loss`` names) or ``pair`` (NSP / SOP cross-entropy, ULR-BERT §7.1).
- ``packable``: whether packed input (BURT §5.2) may fill its inputs: only a plain token sequence can
  be packed; MiSAD encodes single sentences (ULR-BERT §4), NSP / SOP sentence pairs.
- ``data``: what its sample holds: ``sentences``, or ``pairs`` (each sampled sentence with its next).
- ``reads_ngrams``: whether it reads the sample's PMI n-gram spans (so its n-gram preset matters).
- ``draws_spans``: whether it draws SpanBERT spans, whose maximum length ``pretrain --span-max-words``
  sets.
- ``card``: the model card's one-line description; ``{span_max_words}`` is filled from the run.
"""

from __future__ import annotations

from dataclasses import dataclass

COLLATORS = ("masking", "misad", "pairs")
LOSSES = ("mlm", "misad", "pair")


@dataclass(frozen=True)
class Objective:
    name: str
    collator: str
    masking: str
    loss: str
    packable: bool
    card: str
    data: str = "sentences"
    misad_source: str | None = None  # MiSAD's w: ngram, span or entity (pipeline.pretrain.misad)
    reads_ngrams: bool = False
    draws_spans: bool = False

    def card_text(self, span_max_words: int | None = None, misad_loss: str | None = None) -> str:
        """The card's description, with the run's maximum span length where the objective draws spans and,
        for MiSAD, the variant of its loss (none in a run's settings: the equation, as before the choice)."""
        text = self.card.format(span_max_words=span_max_words or SPAN_MAX_WORDS)
        return text + (MISAD_LOSSES.get(misad_loss or "equation", "") if self.loss == "misad" else "")


# ULR-BERT §7.2 ("maximum span length l_max = 6"): the span law's default maximum, in words; BURT's Span
# rows use SpanBERT's 10, as the authors' run_span.py (pretrain.span_max_words, docs/method.md §3)
SPAN_MAX_WORDS = 6
MAX_SPAN_WORDS = 64  # the largest --span-max-words accepted: a bound against typos (SpanBERT's is 10)

_ENTRIES = (
    Objective("mlm", "masking", "token", "mlm", True, "token-level masked language modelling (BERT)"),
    Objective("wwm", "masking", "whole-word", "mlm", True, "whole-word masking"),
    Objective("burt", "masking", "ngram", "mlm", True, "PMI n-gram masking (BURT §3.2)", reads_ngrams=True),
    Objective(
        "spanbert",
        "masking",
        "span",
        "mlm",
        True,
        "random span masking (SpanBERT), span length ~ Geometric(0.2), 1..{span_max_words} words",
        draws_spans=True,
    ),
    Objective("entity", "masking", "entity", "mlm", True, "named-entity (Wikipedia link) masking"),
    Objective(
        "misad",
        "misad",
        "token",
        "misad",
        False,
        "MiSAD + MLM (ULR-BERT §3.2): MSE(E_w + E_R, E_S) on L2-normalised pooled embeddings",
        misad_source="ngram",
        reads_ngrams=True,
    ),
    Objective(
        "misad-span",
        "misad",
        "token",
        "misad",
        False,
        "MiSAD + MLM with w a random span, Geometric(0.2), 1..{span_max_words} words (ULR-BERT §7.2, Random Spans)",
        misad_source="span",
        draws_spans=True,
    ),
    Objective(
        "misad-entity",
        "misad",
        "token",
        "misad",
        False,
        "MiSAD + MLM with w a named entity (ULR-BERT §7.2, Named Entities)",
        misad_source="entity",
    ),
    Objective("nsp", "pairs", "token", "pair", False, "next-sentence prediction + MLM", data="pairs"),
    Objective("sop", "pairs", "token", "pair", False, "sentence-order prediction + MLM", data="pairs"),
)

# MiSAD's loss (pretrain --misad-loss, docs/method.md §3): the paper's equation or the authors' released
# run_mse.py, with what the card adds to a MiSAD objective's description for each
MISAD_LOSSES = {
    "equation": "",
    "released": (
        "; as the authors' run_mse.py: E_w + E_R re-normalised to unit length before the MSE, R masked with its "
        "MLM loss added, a freshly initialised BertPooler"
    ),
}

REGISTRY: dict[str, Objective] = {entry.name: entry for entry in _ENTRIES}
OBJECTIVES = tuple(REGISTRY)  # pretrain --objective's choices, in the order the docs list them


def lookup(name: str) -> Objective:
    """The entry of ``name``; ValueError naming the choices for an unknown one."""
    if name not in REGISTRY:
        raise ValueError(f"unknown objective {name!r}; choose from {OBJECTIVES}")
    return REGISTRY[name]


def names(**where) -> tuple[str, ...]:
    """The objectives whose fields equal ``where`` (``names(packable=True)``), in registry order."""
    return tuple(entry.name for entry in _ENTRIES if all(getattr(entry, k) == v for k, v in where.items()))


PACKABLE = names(packable=True)  # BURT §5.2's packed input: the plain masking objectives
MISAD_OBJECTIVES = names(loss="misad")  # MiSAD and its two Table 7 variants (ULR-BERT §3, §7.2)
MISAD_SOURCES = {entry.name: entry.misad_source for entry in _ENTRIES if entry.loss == "misad"}
PAIR_OBJECTIVES = names(loss="pair")  # the sentence-pair baselines (ULR-BERT §7.1)
NGRAM_OBJECTIVES = names(reads_ngrams=True)  # the objectives that read an n-gram vocabulary (docs/method.md §2)
SPAN_OBJECTIVES = names(draws_spans=True)  # the objectives whose span law pretrain --span-max-words bounds
