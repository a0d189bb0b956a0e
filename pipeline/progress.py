"""Periodic progress lines with rate and ETA, for logs that Snakemake writes to files.

A progress bar redraws in place and turns into noise in a log file, so long stages log one
line every ``interval`` seconds instead: items done, rate, percent of the input and ETA.
"""

from __future__ import annotations

import logging
import time


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


class Progress:
    """Log ``what`` done, its rate, and an ETA from the fraction of ``total`` work done.

    ``total`` and the ``position`` passed to :meth:`update` are in the same unit (bytes of
    input, usually), which need not be the unit of ``count`` (pages, sentences).
    """

    def __init__(self, logger: logging.Logger, what: str, total: float | None = None, interval: float = 10.0):
        self.logger = logger
        self.what = what
        self.total = total
        self.interval = interval
        self.start = self._last = time.monotonic()
        self.count = 0
        self.position = 0.0

    def update(self, count: int = 1, position: float | None = None) -> None:
        self.count += count
        if position is not None:
            self.position = position
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            self.logger.info(self.line(now))

    def line(self, now: float | None = None) -> str:
        elapsed = max((now or time.monotonic()) - self.start, 1e-9)
        text = f"{self.count:,} {self.what} in {_duration(elapsed)} ({self.count / elapsed:,.1f}/s)"
        if self.total:
            fraction = min(self.position / self.total, 1.0)
            text += f", {100 * fraction:.1f}%"
            if 0 < fraction < 1:
                text += f", ETA {_duration(elapsed * (1 - fraction) / fraction)}"
        return text

    def done(self) -> None:
        self.logger.info("done: " + self.line())
