"""Progress lines: count, rate, percent, ETA and the stage's own figures; a bar only on a terminal."""

from __future__ import annotations

import io
import logging

from pipeline import progress
from pipeline.progress import Progress


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_periodic_line_with_rate_eta_and_loss(monkeypatch, caplog):
    clock = Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    meter = Progress(logging.getLogger("test.progress"), "steps", total=100, interval=10)
    with caplog.at_level(logging.INFO, logger="test.progress"):
        clock.now += 5
        meter.update(10, position=10, info={"loss": 7.123456})
        assert caplog.messages == []  # not yet: one line every 10 s
        clock.now += 15
        meter.update(30, position=40, info={"loss": 6.5})
    assert caplog.messages == ["40 steps in 0m20s (2.0/s), 40.0%, ETA 0m30s, loss 6.5"]
    assert meter.bar is None  # pytest's stderr is not a terminal


def test_bar_on_a_terminal(monkeypatch, caplog):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(progress.sys, "stderr", screen)
    meter = Progress(logging.getLogger("test.progress"), "pages", total=None)
    assert meter.bar is not None
    meter.update(3, info={"loss": 1.5})
    with caplog.at_level(logging.INFO, logger="test.progress"):
        meter.done()
    assert "3pages" in screen.getvalue().replace(" ", "") and "loss=1.5" in screen.getvalue()
    assert caplog.messages[-1].startswith("done: 3 pages in")
