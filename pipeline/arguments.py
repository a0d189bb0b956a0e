"""Argument types with their domains, for every stage's ``add_arguments``.

A value outside its domain (``--max-steps -1``, ``--lr nan``, ``--mlm-probability 1.5``,
``--batch-size 0``) stops the stage before it reads anything, with one line naming the flag
and exit status 2 (docs/behaviour.md); argparse reports it as ``argument --FLAG: ...``.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _number(text: str, kind: type) -> float | int:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {'an integer' if kind is int else 'a number'}: {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def integer(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An integer in ``[low, high]`` (either bound may be open-ended)."""

    def parse(text: str) -> int:
        value = _number(text, int)
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {_range(low, high)}, got {text}")
        return value

    parse.__name__ = "integer"
    return parse


def number(low: float | None = None, high: float | None = None, *, low_open=False, high_open=False):
    """A finite float in the interval from ``low`` to ``high``, each end closed unless ``*_open``."""

    def parse(text: str) -> float:
        value = _number(text, float)
        below = low is not None and (value <= low if low_open else value < low)
        above = high is not None and (value >= high if high_open else value > high)
        if below or above:
            raise argparse.ArgumentTypeError(f"must be a number {_range(low, high, low_open, high_open)}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def _range(low, high, low_open=False, high_open=False) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low}"
    return f"{'<' if high_open else '<='} {high}"


POSITIVE = integer(1)  # counts that must be at least one: batch sizes, steps of accumulation
COUNT = integer(0)  # counts where 0 means "none" or "off": --max-steps 0 runs --epochs, --save-every 0 never
SEED = integer(0, 2**32 - 1)  # numpy's seeds are 32-bit
PROBABILITY = number(0, 1, low_open=True)  # a masking rate: (0, 1]
FRACTION = number(0, 1, high_open=True)  # warm-up share, dropout: [0, 1)
RATE = number(0, low_open=True)  # a learning rate, a number of epochs, a gradient norm: > 0
NON_NEGATIVE = number(0)  # weight decay: >= 0
