"""Keeping character spans aligned while text is edited.

Variant resolution and cleaning rewrite text; the entity spans recorded at extraction must
follow. An :class:`Edits` list holds non-overlapping replacements ``(start, end, new)`` of
the source text; it applies them and maps source spans to the edited text. A span boundary
that falls inside an edit snaps outwards to the edge of the replacement, so a span that
covered a whole markup block covers its whole rendering.
"""

from __future__ import annotations

from bisect import bisect_right


class Edits:
    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._news: list[str] = []
        self._shift: list[int] = []  # total length change of edits before and including i

    def replace(self, start: int, end: int, new: str = "") -> None:
        """Add an edit; edits must come in source order and must not overlap."""
        if self._ends and start < self._ends[-1]:
            raise ValueError(f"edit [{start}, {end}) overlaps or precedes the previous edit")
        if start == end and not new:
            return
        previous = self._shift[-1] if self._shift else 0
        self._starts.append(start)
        self._ends.append(end)
        self._news.append(new)
        self._shift.append(previous + len(new) - (end - start))

    def __len__(self) -> int:
        return len(self._starts)

    def apply(self, text: str) -> str:
        pieces, last = [], 0
        for start, end, new in zip(self._starts, self._ends, self._news):
            pieces.append(text[last:start])
            pieces.append(new)
            last = end
        pieces.append(text[last:])
        return "".join(pieces)

    def _new_start(self, i: int) -> int:
        return self._starts[i] + (self._shift[i - 1] if i else 0)

    def map_start(self, position: int) -> int:
        i = bisect_right(self._starts, position) - 1
        if i < 0:
            return position
        if position < self._ends[i]:
            return self._new_start(i)
        return position + self._shift[i]

    def map_end(self, position: int) -> int:
        # the last edit starting strictly before the position can contain it from the right
        i = bisect_right(self._starts, position - 1) - 1
        if i < 0:
            return position
        if position <= self._ends[i]:
            return self._new_start(i) + len(self._news[i])
        return position + self._shift[i]

    def map_span(self, start: int, end: int) -> tuple[int, int]:
        return self.map_start(start), self.map_end(end)
