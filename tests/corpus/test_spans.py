"""Span bookkeeping under edits (used by variant resolution and cleaning)."""

import pytest

from pipeline.corpus.spans import Edits


def test_apply_and_map_outside_edits():
    text = "ab{{x}}cd efg"
    edits = Edits()
    edits.replace(2, 7, "")  # drop "{{x}}"
    edits.replace(9, 10, "  ")  # " " -> "  "
    assert edits.apply(text) == "abcd  efg"
    assert edits.map_span(0, 2) == (0, 2)  # "ab"
    assert edits.map_span(7, 9) == (2, 4)  # "cd"
    assert edits.map_span(10, 13) == (6, 9)  # "efg"


def test_boundaries_inside_an_edit_snap_to_the_replacement():
    text = "x -{zh-hans:计算机;zh-hant:電腦}- y"
    edits = Edits()
    edits.replace(2, len(text) - 2, "计算机")
    assert edits.apply(text) == "x 计算机 y"
    assert edits.map_span(2, len(text) - 2) == (2, 5)
    assert edits.map_span(5, 10) == (2, 5)  # a span inside the block covers its rendering


def test_overlapping_edits_are_rejected():
    edits = Edits()
    edits.replace(0, 5, "a")
    with pytest.raises(ValueError):
        edits.replace(3, 6, "b")
