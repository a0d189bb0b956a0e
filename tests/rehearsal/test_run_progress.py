"""The rehearsal's progress lines while Snakemake runs (pipeline/rehearsal/rehearsal.py ``RunProgress``): jobs
finished in Snakemake's log as it grows, of those the dry run planned, with their rate and an ETA."""

from __future__ import annotations

import logging
import sys

from pipeline.rehearsal import rehearsal


def started(jobid: int | str, rule: str = "download") -> str:
    """A job's block as Snakemake logs it when the job starts."""
    return (
        f"\n[Sat Nov 28 04:54:48 2026]\nlocalrule {rule}:\n    output: out/{jobid}.txt\n    jobid: {jobid}\n"
        f"    wildcards: download=out/{jobid}.txt\n    resources: tmpdir=/tmp\n"
        f"Shell command: python -m pipeline {rule} --out out/{jobid}.txt\n"
    )


def finished(jobid: int, rule: str = "download", done: int = 1, total: int = 8) -> str:
    return f"[Sat Nov 28 04:54:49 2026]\nFinished jobid: {jobid} (Rule: {rule})\n{done} of {total} steps done\n"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_when_due_and_only_when_jobs_finished_since_the_last(tmp_path, caplog):
    log_path = tmp_path / "snakemake.log"
    clock = Clock()
    progress = rehearsal.RunProgress("paper-zh-rehearsal", log_path, total=8, clock=clock)
    caplog.set_level(logging.INFO, logger="pipeline.rehearsal")

    clock.now += 30
    assert progress.check() is None  # no log yet: no line, no error
    log_path.write_text("Building DAG of jobs...\n" + started(1) + started(2))
    clock.now += 30
    assert progress.check() is None  # two jobs started, none finished
    with open(log_path, "a") as log:
        log.write(finished(1, done=1) + finished(2, done=2) + started(3, "pretrain"))
    clock.now += 10
    assert progress.check() is None  # a job finished, but the last read was 10 s ago
    clock.now += 20
    # 2 jobs in 90 s: 0.022 jobs/s, 6 left: 270 s
    assert progress.check() == "paper-zh-rehearsal: 2 of 8 jobs (25%), 0.02 jobs/s, ETA 4m30s"
    clock.now += 30
    assert progress.check() is None  # nothing finished since
    with open(log_path, "a") as log:  # a failed job is not a finished one
        log.write("Error in rule pretrain:\n    jobid: 3\n" + started(4) + finished(4, done=3))
    clock.now += 30
    # 3 jobs in 150 s: 0.02 jobs/s, 5 left: 250 s
    assert progress.check() == "paper-zh-rehearsal: 3 of 8 jobs (38%), 0.02 jobs/s, ETA 4m10s"
    with open(log_path, "a") as log:
        log.write("".join(started(j) + finished(j, done=j - 1) for j in range(5, 10)))
    clock.now += 50
    # every planned job done: no ETA
    assert progress.check() == "paper-zh-rehearsal: 8 of 8 jobs (100%), 0.04 jobs/s"
    assert [r.getMessage() for r in caplog.records if r.name == "pipeline.rehearsal"] == [
        "paper-zh-rehearsal: 2 of 8 jobs (25%), 0.02 jobs/s, ETA 4m30s",
        "paper-zh-rehearsal: 3 of 8 jobs (38%), 0.02 jobs/s, ETA 4m10s",
        "paper-zh-rehearsal: 8 of 8 jobs (100%), 0.04 jobs/s",
    ]


def test_the_line_s_rate_and_eta():
    progress = rehearsal.RunProgress("paper-en-rehearsal", None, total=528, clock=lambda: 0.0)
    assert progress.line(212, 848.0) == "paper-en-rehearsal: 212 of 528 jobs (40%), 0.25 jobs/s, ETA 21m04s"
    assert progress.line(0, 0.0) == "paper-en-rehearsal: 0 of 528 jobs (0%), 0.00 jobs/s"
    assert progress.line(100, 1000.0).endswith("0.10 jobs/s, ETA 1h11m20s")  # 428 left at 0.1 jobs/s


FAKE_SNAKEMAKE = """
import sys, time
# a Snakemake log in the making: a job started, then finished, every 0.1 s
print("Building DAG of jobs...", flush=True)
for jobid in range(1, 6):
    print(sys.argv[1].format(jobid=jobid), flush=True)
    time.sleep(0.1)
    print(f"Finished jobid: {jobid} (Rule: download)", flush=True)
sys.exit(3)
"""


def test_snakemake_is_watched_while_it_runs_and_its_status_returned(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(rehearsal, "WATCH_SECONDS", 0.05)
    caplog.set_level(logging.INFO, logger="pipeline.rehearsal")
    log_path = tmp_path / "snakemake.log"
    progress = rehearsal.RunProgress("demo-rehearsal", log_path, total=5, interval=0.1)
    command = [sys.executable, "-c", FAKE_SNAKEMAKE, started("{jobid}")]
    assert rehearsal._snakemake(command, log_path, cwd=tmp_path, watch=progress.check) == 3
    lines = [r.getMessage() for r in caplog.records if r.name == "pipeline.rehearsal"]
    assert lines, "no progress line while the run went on"
    counts = [int(line.split(": ", 1)[1].split(" of ", 1)[0]) for line in lines]
    assert counts == sorted(set(counts)) and all(line.startswith("demo-rehearsal: ") for line in lines), lines
    assert all(0 < count <= 5 for count in counts), lines
