"""How a fused job's runs split into stacked models (pipeline/fused_groups.py; issue 41 §2)."""

from __future__ import annotations

import pytest

from pipeline.fused_groups import stack_sizes


@pytest.mark.parametrize(
    ("members", "most", "sizes"),
    [
        (50, 16, [13, 13, 12, 12]),
        (5, 5, [5]),
        (5, 2, [2, 2, 1]),
        (30, 7, [6, 6, 6, 6, 6]),
        (3, 1, [1, 1, 1]),
        (0, 4, []),
    ],
)
def test_stacks_are_the_fewest_of_at_most_k_and_balanced(members, most, sizes):
    assert stack_sizes(members, most) == sizes
    assert sum(sizes) == members and all(size <= most for size in sizes)


def test_a_stack_of_no_run_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        stack_sizes(4, 0)
