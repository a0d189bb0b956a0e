"""After a SIGKILL of Snakemake its jobs stop too, and the rerun needs only ``--unlock`` (docs/running.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from testdata import REPO

SNAKEFILE = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
from pipeline.job_watchdog import SHELL_PREFIX
shell.prefix(SHELL_PREFIX)

rule long:
    output: "done"
    shell: "sleep 120 & echo $! > sleep.pid; wait; touch {{output}}"
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat")
    return not (state.exists() and state.read_text().split()[2] == "Z")


def test_jobs_stop_when_snakemake_is_killed(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    snakemake = str(Path(sys.executable).parent / "snakemake")
    run = subprocess.Popen(
        [snakemake, "--cores", "1", "-q"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    pid_file = tmp_path / "sleep.pid"
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert run.poll() is None and time.monotonic() < deadline, "the job never started"
        time.sleep(0.1)
    job = int(pid_file.read_text())
    try:
        run.send_signal(signal.SIGKILL)
        run.wait()
        deadline = time.monotonic() + 15
        while _alive(job) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(job), "the job outlived its Snakemake"
        time.sleep(0.5)
        assert not (tmp_path / "done").exists(), "the job shell ran on after its stage was stopped"
        # the killed run left its lock: a plain rerun refuses, --unlock clears it
        assert list((tmp_path / ".snakemake" / "locks").iterdir())
        unlocked = subprocess.run(
            [snakemake, "--cores", "1", "--unlock"], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert unlocked.returncode == 0, unlocked.stderr
        locks = tmp_path / ".snakemake" / "locks"
        assert not locks.exists() or not list(locks.iterdir())
    finally:
        if _alive(job):
            os.kill(job, signal.SIGKILL)
