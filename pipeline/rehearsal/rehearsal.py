"""Stage ``rehearsal``: run a paper config in miniature on CPU before it runs on GPUs.

For each paper config (docs/stages/rehearsal.md):

1. a local mirror of every file its download rules fetch (pipeline/rehearsal/mirror.py: the real
   copies the data root holds, small stand-ins in the official formats for the rest), and a local
   Hugging Face hub holding tiny random models of each backbone at its pinned commit
   (pipeline/rehearsal/tiny_hub.py; an unpinned one at the commit its lock records, else at one the
   rehearsal's own download resolves and locks), both served on 127.0.0.1;
2. the miniature config (pipeline/rehearsal/miniature.py): sizes and sources changed, nothing else;
   a fresh data root holds links to the data root's files that are not downloads, so every
   download and ``download_model`` job runs for real against the local servers;
3. ``snakemake`` on it, through the same rules and flags as the paper run, with ``HF_ENDPOINT``
   pointing at the local hub;
4. the job kinds it executed against those the paper config schedules
   (pipeline/rehearsal/coverage.py), written with the wall time and job count to
   ``results/<paper run>-rehearsal/rehearsal.json``. A missing kind or a failed job fails the stage.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from pipeline import provenance
from pipeline.arguments import THREADS
from pipeline.atomic import json_text
from pipeline.errors import InputError
from pipeline.output_guard import refuse_inputs
from pipeline.progress import duration
from pipeline.rehearsal import coverage, work_folder

log = logging.getLogger("pipeline.rehearsal")
RUN_NAME_LIMIT = 64  # the config schema's maxLength of run
REPO = Path(__file__).resolve().parents[2]
EVALUATION_LINES = 200
STOP_GRACE_SECONDS = 60  # Snakemake's time to stop its jobs and release its lock before it is killed
PROGRESS_SECONDS = 30  # at most one progress line this often while Snakemake runs (a paper-en run: 30 min)
WATCH_SECONDS = 1.0  # how often a watched Snakemake's wait asks its watcher (which reads the log when due)


class Stopped(BaseException):
    """SIGTERM or SIGINT reached the rehearsal: everything it started is stopped as it unwinds."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--paper", type=Path, action="append", required=True, help="a paper config (repeatable)")
    parser.add_argument("--data", type=Path, required=True, help="the real data root (../shared/data)")
    parser.add_argument("--cores", type=THREADS, default=2, help="snakemake --cores (default 2)")
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "results",
        help="where each rehearsal's own files go, OUT/<paper run>-rehearsal (mirror, hub, data root, listings;"
        " default results/); the run's outputs are results/<paper run>-rehearsal, as any run's",
    )


def run(args: argparse.Namespace) -> None:
    _refuse_repeats(args.paper)
    failures = []
    with _stopped_by_signals():
        try:
            for paper in args.paper:
                record = rehearse(paper, args.data, args.cores, args.out)
                if record["snakemake_exit"] != 0 or not record["coverage"]["complete"]:
                    failures.append(paper.name)
        except Stopped as stop:  # the servers, Snakemake and its jobs are stopped by now
            log.error("rehearsal stopped by %s", stop)
            raise SystemExit(128 + stop.signum) from None
    if failures:
        raise InputError(", ".join(failures), "the rehearsal failed (see rehearsal.json and snakemake.log there)")


def _refuse_repeats(papers: list[Path]) -> None:
    """Each rehearsal has its own folder, OUT/<run>-rehearsal: a paper given twice (or two papers of one
    run name) would rehearse twice into one folder, the second deleting the first's record."""
    from pipeline.workflow_config import resolve_config

    seen: dict[str, Path] = {}
    for paper in papers:
        name = resolve_config(paper)["run"]
        if name in seen:
            same = paper.resolve() == seen[name].resolve()
            why = "is given twice" if same else f"has the run name {name!r} of {seen[name]}, and one folder"
            raise InputError(paper, f"--paper {why}: each paper config once")
        seen[name] = paper


@contextlib.contextmanager
def _stopped_by_signals():
    """SIGTERM and SIGINT raise :class:`Stopped` in the main thread, so that every ``with`` block (the
    servers) and :func:`_snakemake` (Snakemake and its jobs) unwinds; the handlers are restored after."""

    def stop(signum, frame):
        raise Stopped(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _snakemake(
    command: list[str],
    log_path: Path,
    env: dict | None = None,
    cwd: Path = REPO,
    watch: Callable[[], object] | None = None,
) -> int:
    """Run ``command`` (Snakemake) in its own process group, its output to ``log_path``; its exit status.

    ``watch`` (a :class:`RunProgress`'s ``check``) is called about every :data:`WATCH_SECONDS` while it runs.
    Interrupted (:class:`Stopped`, or any error here), the whole group is stopped: SIGTERM first, which
    Snakemake answers by stopping its jobs and releasing ``.snakemake/locks``, then SIGKILL after
    :data:`STOP_GRACE_SECONDS`, and ``snakemake --unlock`` where it had to be killed."""
    with open(log_path, "w", encoding="utf-8") as out:
        child = subprocess.Popen(
            command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        try:
            # the watcher runs here, in the main thread, between waits: no thread to stop, and a signal
            # that arrives while it reads the log unwinds through the same except clause as one in wait()
            while watch is not None:
                try:
                    return child.wait(timeout=WATCH_SECONDS)
                except subprocess.TimeoutExpired:
                    watch()
            return child.wait()
        except BaseException:
            _stop_group(child, command, cwd, env)
            raise


def _stop_group(child: subprocess.Popen, command: list[str], cwd: Path, env: dict | None) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGTERM)
    try:
        child.wait(timeout=STOP_GRACE_SECONDS)
        graceful = True
    except subprocess.TimeoutExpired:
        graceful = False
    with contextlib.suppress(ProcessLookupError):  # jobs that outlived Snakemake, in its group
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    if not graceful:
        unlock = [arg for arg in command if arg not in ("-n", "-p")] + ["--unlock"]
        subprocess.run(unlock, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def _sentences(data_root: Path, lang: str, limit: int = 3000) -> list[str]:
    """Real text for the tiny models' vocabularies: the released PMI sample (en), CLUE's TNEWS (zh)."""
    import polars as pl

    if lang == "en":
        path = data_root / "reference_pmi/sentences.parquet"
        if not path.is_file():
            raise InputError(path, "missing: the tiny English vocabularies are learnt from it")
        return pl.read_parquet(path, columns=["text"])["text"].head(limit).to_list()
    texts = []
    for path in sorted((data_root / "chinese").rglob("*.json"))[:8]:
        for line in path.read_text(encoding="utf-8").splitlines()[: limit // 8]:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict):
                texts += [v for v in row.values() if isinstance(v, str) and len(v) > 4]
    if not texts:
        raise InputError(
            data_root / "chinese", "no CLUE JSON lines: the tiny Chinese vocabularies are learnt from them"
        )
    return texts[:limit]


def _listing(
    configfile: Path,
    extra: list[str],
    log_path: Path,
    env: dict | None = None,
    dry: bool = True,
    watch: Callable[[], object] | None = None,
) -> int:
    """snakemake -p (dry or real) on a config, its listing written to ``log_path``; the exit status."""
    command = [sys.executable, "-m", "snakemake", "-p", "--configfile", str(configfile), *extra]
    if dry:
        command += ["-n", "--cores", "1"]
    return _snakemake(command, log_path, env, watch=watch)


class RunProgress:
    """Progress lines of a running rehearsal, read from Snakemake's log as it grows: jobs finished
    (:func:`coverage.finished_jobs`) of those its dry run planned, their rate and an ETA, e.g.
    ``paper-en-rehearsal: 212 of 528 jobs (40%), 0.25 jobs/s, ETA 21m12s``.

    :meth:`check` reads the log at most every ``interval`` seconds and logs a line only when the count
    changed since the last line; ``clock`` is :func:`time.monotonic` but in tests."""

    def __init__(
        self,
        name: str,
        log_path: Path,
        total: int,
        interval: float = PROGRESS_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.name = name
        self.log_path = log_path
        self.total = total
        self.interval = interval
        self.clock = clock
        self.start = self._read_at = clock()
        self.done = 0

    def check(self) -> str | None:
        """The progress line logged now, or None (not due yet, the log unreadable, or no job finished since)."""
        now = self.clock()
        if now - self._read_at < self.interval:
            return None
        self._read_at = now
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:  # not there yet: the progress lines are a courtesy, never a reason to stop the run
            return None
        done = len(coverage.finished_jobs(text))
        if done == self.done:
            return None
        self.done = done
        line = self.line(done, now - self.start)
        log.info(line)
        return line

    def line(self, done: int, elapsed: float) -> str:
        """``NAME: DONE of TOTAL jobs (P%), R jobs/s, ETA T``; no ETA before the first job or after the last."""
        rate = done / elapsed if elapsed > 0 else 0.0
        text = f"{self.name}: {done} of {self.total} jobs"
        if self.total:
            text += f" ({100 * done / self.total:.0f}%)"
        text += f", {rate:.2f} jobs/s"
        if rate > 0 and done < self.total:
            text += f", ETA {duration((self.total - done) / rate)}"
        return text


def _link_data(data_root: Path, target: Path, downloads: set[str]) -> int:
    """Links in ``target`` to every file of the real data root that no download job writes."""
    count = 0
    for path in sorted(data_root.rglob("*")):
        relative = path.relative_to(data_root).as_posix()
        if not path.is_file() or str(target / relative) in downloads:
            continue
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(path.resolve(), target / relative)
        count += 1
    return count


def rehearse(paper_path: Path, data_root: Path, cores: int, out: Path = REPO / "results") -> dict:
    from pipeline.workflow_config import resolve_config

    paper = resolve_config(paper_path)
    name = f"{paper['run']}-rehearsal"
    if len(f"dry-{name}") > RUN_NAME_LIMIT:  # the run names it uses: <run>-rehearsal, and dry-<run>-rehearsal
        raise InputError(
            paper_path,
            f"run {paper['run']!r} is {len(paper['run'])} characters: a rehearsal runs it as dry-{paper['run']}-rehearsal, "
            f"and a run name has at most {RUN_NAME_LIMIT} (so at most {RUN_NAME_LIMIT - len('dry--rehearsal')}); give the "
            "config a shorter run",
        )
    work = (Path(out) / name).resolve()
    # an earlier rehearsal's folder is emptied below: never one that is, holds or lies inside the data root
    # it reads, nor one that holds the paper config (the record proves the files, not that they are inputs)
    refuse_inputs(work, files=[paper_path, data_root])
    work.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(work.parent / f".{work.name}.lock", work):
        work_folder.REHEARSAL.claim(
            work
        )  # an earlier rehearsal's folder is deleted only where its record proves every file
        try:
            return _rehearse(paper_path, paper, name, work, data_root, cores)
        finally:
            work_folder.REHEARSAL.seal(work)  # however it ended: the next rehearsal may delete what this one wrote


@contextlib.contextmanager
def _exclusive(lock_path: Path, work: Path):
    """One rehearsal at a time per folder: a second one would delete the folder the first runs in."""
    with open(lock_path, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(work, "another rehearsal is running in this folder") from None
        yield


def _rehearse(paper_path: Path, paper: dict, name: str, work: Path, data_root: Path, cores: int) -> dict:
    from pipeline.rehearsal import file_server, hub_server, mirror
    from pipeline.rehearsal.miniature import miniature

    started = time.monotonic()
    log.info("%s: rehearsing %s in %s", name, paper_path, work)

    # what the paper config schedules (its own dry run, on an empty data root)
    paper_listing = work / "paper-dry-run.txt"
    paper_root = work / "paper-data"
    if _listing(paper_path, ["--config", f"data_root={paper_root}", f"run=dry-{name}"], paper_listing) != 0:
        raise InputError(paper_path, f"its dry run failed: {paper_listing}")

    with file_server.start(work / "mirror") as files, hub_server.start(work / "hub") as hub:
        # 10 pages per bz2 stream, so that the dumps have more streams than the miniature has slices
        # and small evaluation sets: 200 lines of each evaluation file (the analogy set alone has 41,950)
        built = mirror.build(
            paper, REPO, data_root, work / "mirror", files.url, pages_per_stream=10, evaluation_lines=EVALUATION_LINES
        )
        lang = paper["pretrain"]["language"]
        text = _sentences(data_root, lang)
        config = miniature(built.config, name, str(work / "data"))
        serve_hub_models(paper, config, work / "hub", text)
        config["sources"] = str(built.sources_dir)
        configfile = work / "rehearsal.yaml"
        configfile.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")

        planned = work / "rehearsal-dry-run.txt"
        if _listing(configfile, [], planned) != 0:
            raise InputError(configfile, f"its dry run failed: {planned}")
        planned_jobs = coverage.jobs(planned.read_text())
        downloads = {job.wildcards["download"] for job in planned_jobs if job.rule == "download"}
        linked = _link_data(data_root, work / "data", downloads)
        log.info("%s: %d downloads from the mirror, %d data files linked", name, len(downloads), linked)

        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(work / "hf-home")}
        # the rules call `python` / `torchrun`: this interpreter's, as `make` puts its venv first
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        for offline in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):  # either one keeps huggingface_hub offline
            env.pop(offline, None)
        snakemake_log = work / "snakemake.log"
        progress = RunProgress(name, snakemake_log, len(planned_jobs))
        run_started = time.monotonic()
        exit_status = _listing(
            configfile,
            # --keep-going: one fault does not hide the others; each failed job is listed in rehearsal.json
            # --max-threads 1: jobs are short and mostly start-up, so --cores jobs run side by side
            [
                "--workflow-profile",
                "workflow/profiles/default",
                "--cores",
                str(cores),
                "--keep-going",
                "--max-threads",
                "1",
            ],
            snakemake_log,
            env=env,
            dry=False,
            watch=progress.check,
        )
        run_seconds = time.monotonic() - run_started

    executed = snakemake_log.read_text(encoding="utf-8", errors="replace")
    paper_config = {**paper, "data_root": str(paper_root)}
    found = coverage.coverage(paper_listing.read_text(), paper_config, executed, config, executed=True)
    record = {
        "paper": provenance.portable_path(paper_path),
        "run": name,
        "snakemake_exit": exit_status,
        "jobs_executed": len(coverage.finished_jobs(executed)),
        "jobs_started": len(coverage.jobs(executed)),
        "jobs_planned": len(planned_jobs),
        "jobs_in_paper_run": len(coverage.jobs(paper_listing.read_text())),
        "snakemake_seconds": round(run_seconds, 1),
        "wall_seconds": round(time.monotonic() - started, 1),
        "coverage": {**found.summary(), "complete": found.complete},
        "mirror_files": len(built.files),
        "failed_jobs": failed_jobs(executed),
        "by_rule": rule_costs(REPO / "results" / name / "benchmarks"),
    }
    (work / "rehearsal.json").write_text(json_text(record), encoding="utf-8")
    log.info(
        "%s: snakemake exit %d, %d jobs in %.0f s; kinds %d of %d, features %d of %d",
        name,
        exit_status,
        record["jobs_executed"],
        run_seconds,
        record["coverage"]["kinds_executed"],
        record["coverage"]["kinds_scheduled"],
        record["coverage"]["features_executed"],
        record["coverage"]["features_scheduled"],
    )
    return record


def serve_hub_models(paper: dict, config: dict, hub_root: Path, text: list[str]) -> None:
    """A tiny stand-in of every hub backbone and ELECTRA generator of the paper config: a pinned one at its
    commit, an unpinned one (``hub:ORG/NAME``) at the commit the paper's lock records (that commit is
    seeded into the rehearsal's own lock, so its download reuses it) or, where none is recorded yet, at
    one the local hub resolves ``main`` to, which the rehearsal's download then resolves and locks."""
    from pipeline.models import hub_lock
    from pipeline.models.spec import hub_reference
    from pipeline.rehearsal import tiny_hub

    models = paper["models"]
    specs = {str(s) for s in [*models["backbones"].values(), *models.get("generators", {}).values()]}
    locked = hub_lock.read_lock(models.get("lock"))
    for spec in sorted(s for s in specs if s.startswith("hub:")):
        repo_id, revision = hub_reference(spec)
        tiny_hub.build_snapshot(spec, hub_root, text, commit=hub_lock.locked(locked, repo_id))
        if revision is None and repo_id in locked:
            hub_lock.record(config["models"]["lock"], repo_id, locked[repo_id])


def failed_jobs(log_text: str) -> list[dict]:
    """Each failed job of a Snakemake log: its rule, its log file and that log's last line."""
    failed = []
    for block in log_text.split("\nError in rule ")[1:]:
        rule = block.split(":", 1)[0].strip()
        lines = block.splitlines()
        log_file = next(
            (line.split("log:", 1)[1].split(" (check", 1)[0].strip() for line in lines if "log:" in line), ""
        )
        message = ""
        if "\nLogfile " in block:
            body = block.split("\nLogfile ", 1)[1].split("=" * 80)
            content = [line for line in (body[1] if len(body) > 1 else "").splitlines() if line.strip()]
            message = content[-1] if content else ""
        failed.append({"rule": rule, "log": log_file, "error": message[:500]})
    return failed


def rule_costs(benchmarks: Path) -> dict:
    """Per rule, from Snakemake's benchmark files: jobs, seconds in all, and the largest peak memory
    (max_rss, MB): where a paper run's time and memory will go, at miniature scale."""
    import csv

    costs: dict[str, dict] = {}
    for path in sorted(benchmarks.rglob("*.tsv")):
        rule = path.relative_to(benchmarks).parts[0]
        with open(path, encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
        entry = costs.setdefault(rule, {"jobs": 0, "seconds": 0.0, "max_rss_mb": 0.0})
        for row in rows:
            entry["jobs"] += 1
            entry["seconds"] = round(entry["seconds"] + float(row.get("s") or 0), 1)
            rss = row.get("max_rss")
            if rss not in (None, "", "NA", "-"):
                entry["max_rss_mb"] = max(entry["max_rss_mb"], round(float(rss), 1))
    return costs
