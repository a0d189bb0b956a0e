"""Progress of long stages: periodic log lines with rate and ETA, and a bar on a terminal.

A progress bar redraws in place and turns into noise in a log file, so long stages log one
line every ``interval`` seconds instead: items done, rate, percent of the input and ETA, and
whatever the stage adds (the pretraining loss, for instance). Under Snakemake the stage's
output goes to the rule's log (``tail -f results/<run>/logs/<rule>/...`` follows it). Run by
hand in a terminal, a stage also draws a tqdm bar on stderr (where tqdm is installed).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time


def duration(seconds: float) -> str:
    """``seconds`` as ``1h02m03s``, or ``2m03s`` under an hour."""
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _terminal_bar(what: str, total: float | None):
    """A tqdm bar when stderr is a terminal, else None (a log file gets the periodic lines only)."""
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=what, dynamic_ncols=True, leave=False)


class Progress:
    """Log ``what`` done, its rate, and an ETA from the fraction of ``total`` work done.

    ``total`` and the ``position`` passed to :meth:`update` are in the same unit (bytes of
    input, usually), which need not be the unit of ``count`` (pages, sentences). ``info``
    (e.g. ``{"loss": 2.31}``) is appended to the line and shown on the bar.
    """

    def __init__(self, logger: logging.Logger, what: str, total: float | None = None, interval: float = 10.0):
        self.logger = logger
        self.what = what
        self.total = total
        self.interval = interval
        self.start = self._last = time.monotonic()
        self.count = 0
        self.position = 0.0
        self.info: dict = {}
        self.bar = _terminal_bar(what, total)

    def update(self, count: int = 1, position: float | None = None, info: dict | None = None) -> None:
        self.count += count
        if info is not None:
            self.info = info
        if position is not None:
            self.position = position
        if self.bar is not None:
            self.bar.n = self.position if self.total else self.count
            if info:
                self.bar.set_postfix(info, refresh=False)
            self.bar.refresh()
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            self.logger.info(self.line(now))

    def line(self, now: float | None = None) -> str:
        elapsed = max((now or time.monotonic()) - self.start, 1e-9)
        text = f"{self.count:,} {self.what} in {duration(elapsed)} ({self.count / elapsed:,.1f}/s)"
        if self.total:
            fraction = min(self.position / self.total, 1.0)
            text += f", {100 * fraction:.1f}%"
            if 0 < fraction < 1:
                text += f", ETA {duration(elapsed * (1 - fraction) / fraction)}"
        if self.info:
            text += ", " + ", ".join(
                f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}"
                for key, value in self.info.items()
            )
        return text

    def done(self) -> None:
        if self.bar is not None:
            with contextlib.suppress(Exception):
                self.bar.close()
            self.bar = None
        self.logger.info("done: " + self.line())
