"""One labelled (or unlabelled) example of any task family, as the readers hand it to the heads.

Sequence tasks fill ``text_a`` (and ``text_b`` for pairs); multiple choice fills ``choices``
(one second segment per option, ``text_a`` the shared first one); span extraction fills
``text_a`` (the question), ``context`` and ``answers`` ([(text, start)] in code points).
A cloze (ChID) also fills ``cloze`` with the passage around its blank, (before, after): each
option is before + candidate + after, and the encoder cuts its window around the blank rather than
from the right (the CLUE ChID baseline's ``add_tokens_for_around``).
``label`` is the label string of a classification task, a float for regression, the index
of the right option for multiple choice, and None where the split is unlabelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Example:
    id: str
    text_a: str
    text_b: str | None = None
    label: str | float | int | None = None
    choices: list[str] = field(default_factory=list)
    context: str | None = None
    answers: list[tuple[str, int]] = field(default_factory=list)
    cloze: tuple[str, str] | None = None
