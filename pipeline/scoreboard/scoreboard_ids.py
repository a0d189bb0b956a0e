"""The item ids beside the per-item outcomes (docs/stages/report.md "The scoreboard"): each outcome list an
evaluation writes comes with ``ids``, each item's position in its source test file (its 0-based line, counted
before any filtering; SNLI's ``test_ids`` beside ``test_correct``). A test over items counts every item
once, and pairs the two models' outcomes item by item, so the ids decide two things:

* **An item listed twice is an error.** Fifty copies of each of 47 pairs are not 2,350 independent pairs:
  the bootstrap would resample copies as if they were items and turn an inconclusive difference into a
  holding one (p 0.343 → 0.0005). A group whose ids repeat leaves the column untested, naming the file, the
  group and the id, as a seed listed twice counts once (:mod:`.scoreboard_stats`).
* **Both sides must be the same items in the same order.** Equal lengths (or equal gold scores) do not
  make two lists the same items; equal ids do. Different ids leave the column untested.

Ids are positions, never content hashes: real test sets hold duplicate pairs (the same two sentences
twice, with their own gold scores), and they are items in their own right.

A metrics file written before the ids has none. Its column is tested as before, on the order the file
gives, and the verdict row says that the items' identity was not checked: the files of earlier runs keep
their tests, and the reader is told what the test rests on. Ids that are present but malformed (not a list,
not whole numbers from 0, a length other than the outcomes') leave the column untested with one line.
"""

from __future__ import annotations

import numpy as np

LARGEST_ID = 1 << 62  # an int64 holds it: an id past it is not a line an evaluation read
UNCHECKED = "the items' identity was not checked (a metrics file without item ids, written before them)"

Ids = list[tuple[str, np.ndarray | None]]  # (group, its items' ids; None: an older file without them)


class ItemsError(ValueError):
    """Per-item outcomes whose ids make any test over them wrong; the message is one line naming the group."""


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def item_ids(node, length: int, group: str, key: str = "ids") -> np.ndarray | None:
    """The ids of ``group``'s ``length`` outcomes in ``node`` (its ``key``): an int64 array; None where the
    node has none (an older file); :class:`ItemsError` where they are malformed or an id repeats."""
    if not isinstance(node, dict) or key not in node:
        return None
    ids = node[key]
    if not isinstance(ids, list):
        raise ItemsError(f"the {key} of {group} are {type(ids).__name__}, not a list of positions")
    if len(ids) != length:
        raise ItemsError(f"{group} has {len(ids)} {key} for {length} items")
    for value in ids:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < LARGEST_ID:
            raise ItemsError(f"id {_shown(value)} of {group} is not an item's position (a whole number from 0)")
    array = np.asarray(ids, dtype=np.int64)
    values, counts = np.unique(array, return_counts=True)
    repeated = np.flatnonzero(counts > 1)
    if len(repeated):
        first = repeated[0]
        raise ItemsError(f"item {values[first]} of {group} appears {counts[first]} times; each item counts once")
    return array


def pairing(high: Ids, low: Ids, column: str) -> dict | None:
    """None where both sides give the same groups with the same ids in the same order; ``{"untested": why}``
    where they differ; ``{"note": UNCHECKED}`` where a side's file has no ids to compare."""
    if any(ids is None for _, ids in (*high, *low)):
        return {"note": UNCHECKED}
    if [name for name, _ in high] != [name for name, _ in low]:
        return {"untested": f"the two rows were not scored on the same items of {column} (different groups)"}
    for (name, h), (_, lo) in zip(high, low):
        if not np.array_equal(h, lo):
            return {"untested": f"the two rows were not scored on the same items of {column} ({name}: different ids)"}
    return None
