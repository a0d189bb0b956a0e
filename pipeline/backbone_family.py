"""A backbone's architecture family and size, from its name: the one classification of backbones.

Every module that asks "is this an ALBERT?" or "which family does this checkpoint belong to?" asks here:
the GPU memory model (ALBERT stores its one shared layer once: Lan et al. 2020, §3.1), the grouping of
fused runs and the plan through it, the rehearsal's tiny stand-ins of hub models and the job kinds its
coverage counts. The family is read from a name, a repository id or a model spec (lower-cased), by the
first of :data:`FAMILY_MARKS` whose mark it contains. A ground-floor module: it imports nothing of the
package.
"""

from __future__ import annotations

# The families by a mark in the name, first match wins: ALBERT and RoBERTa before BERT, whose mark their
# names contain; the released SBERT before BERT too.
FAMILY_MARKS = (
    ("albert", ("albert",)),
    ("electra", ("electra",)),
    ("roberta", ("roberta",)),
    ("xlnet", ("xlnet",)),
    ("sbert", ("nli-mean-tokens", "sentence-transformers/")),
    ("chinese", ("chinese", "tiny:zh")),
    ("bert", ("bert",)),
)


def family_kind(text: str) -> str | None:
    """The family a backbone's name, repository or spec names (:data:`FAMILY_MARKS`, lower-cased), None
    where none does."""
    text = text.lower()
    return next((kind for kind, marks in FAMILY_MARKS if any(mark in text for mark in marks)), None)


def size_of(text: str) -> str:
    """``xxlarge``, ``large`` or ``base``, from a backbone's name (lower-cased)."""
    text = text.lower()
    return "xxlarge" if "xxlarge" in text else "large" if "large" in text else "base"


def shares_layers(repo: str) -> bool:
    """Whether the backbone stores one Transformer layer shared by all its layers (ALBERT, Lan et al. 2020
    §3.1), so its weights, gradients and optimiser moments hold that layer once."""
    return family_kind(repo.rsplit("/", 1)[-1]) == "albert"
