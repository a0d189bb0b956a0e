"""The rehearsal and its local servers on hostile ground (docs/behaviour.md, docs/stages/rehearsal.md):
request paths that carry CR LF or a NUL byte, symlinks out of a snapshot, a port in use, a paper given
twice, a work folder the stage did not make, and a signal to the rehearsal while Snakemake runs."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from testdata import REPO

from pipeline.rehearsal import file_server, hub_server

COMMIT = "a" * 40
PAPER = REPO / "workflow" / "config" / "paper-zh.yaml"


@pytest.fixture
def hub(tmp_path):
    """A hub root with one snapshot (config.json, weights) and, beside it, a secret file."""
    root = tmp_path / "hub"
    snapshot = root / "org" / "model" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "bert"}')
    (snapshot / "model.safetensors").write_bytes(b"\0" * 64)
    (tmp_path / "secret.txt").write_text("the private key of someone else\n")
    with hub_server.start(root) as server:
        yield server, snapshot, tmp_path / "secret.txt"


def get(server, path: str, method: str = "GET") -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    connection.putrequest(method, path, skip_accept_encoding=True)  # the path as given, CR LF and all
    connection.endheaders()
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


@pytest.mark.parametrize(
    "path",
    [
        "/api/models/org/model/tree/x%0D%0ASet-Cookie:%20session=stolen",
        "/api/models/org/model/revision/x%0D%0ASet-Cookie:%20session=stolen",
        f"/api/models/org/model/tree/{COMMIT}/nowhere%0D%0ASet-Cookie:%20session=stolen",
    ],
    ids=["tree revision", "info revision", "tree path"],
)
def test_cr_lf_in_a_request_path_injects_no_header(hub, path):
    server, _, _ = hub
    response = get(server, path)
    assert response.status == 404
    assert response.getheader("Set-Cookie") is None
    message = response.getheader("X-Error-Message")
    assert "\r" not in message and "\n" not in message and "\\r\\nSet-Cookie" in message, message


def test_a_symlink_out_of_the_snapshot_is_neither_listed_nor_served(hub):
    server, snapshot, secret = hub
    (snapshot / "leak.txt").symlink_to(secret)
    (snapshot / "outside").symlink_to(secret.parent, target_is_directory=True)
    for recursive in ("false", "true"):
        response = get(server, f"/api/models/org/model/tree/{COMMIT}?recursive={recursive}")
        assert response.status == 200
    listed = server._server.hub.tree("org/model", COMMIT, recursive=True)
    assert sorted(entry["path"] for entry in listed) == ["config.json", "model.safetensors"]
    info = server._server.hub.info("org/model", COMMIT, blobs=True)
    assert sorted(s["rfilename"] for s in info["siblings"]) == ["config.json", "model.safetensors"]
    assert get(server, f"/org/model/resolve/{COMMIT}/leak.txt").status == 404


def test_a_repository_linked_in_from_outside_the_root_is_not_served(hub, tmp_path):
    server, snapshot, _ = hub
    elsewhere = tmp_path / "elsewhere" / "private"
    (elsewhere / COMMIT).mkdir(parents=True)
    (elsewhere / COMMIT / "config.json").write_text("{}")
    (snapshot.parents[1] / "private").symlink_to(elsewhere, target_is_directory=True)
    assert get(server, f"/api/models/org/private/tree/{COMMIT}").status == 404
    assert get(server, f"/org/private/resolve/{COMMIT}/config.json").status == 404


def test_a_nul_byte_in_a_path_is_a_404_without_a_traceback(tmp_path, capfd):
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "a.txt").write_text("a\n")
    with file_server.start(tmp_path / "mirror") as server:
        assert get(server, "/files/a.txt").status == 200
        assert get(server, "/files/a%00.txt").status == 404
        assert get(server, "/files/%00").status == 404
    assert "Traceback" not in capfd.readouterr().err


def test_a_port_in_use_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "pipeline.rehearsal.hub_server", str(tmp_path), "--port", str(port)],
            check=False,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip() == f"error: 127.0.0.1:{port}: cannot listen: Address already in use", result.stderr


def test_a_paper_given_twice_is_refused(tmp_path, cli, capsys):
    out = tmp_path / "out"
    status = cli("rehearsal", "--paper", PAPER, "--paper", PAPER, "--data", tmp_path / "data", "--out", out)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert str(PAPER) in errors[0] and "given twice" in errors[0], errors[0]
    assert not out.exists()


def test_a_work_folder_the_stage_did_not_make_is_kept(tmp_path, cli, capsys):
    work = tmp_path / "out" / "paper-zh-rehearsal"
    work.mkdir(parents=True)
    (work / "notes.txt").write_text("a week of notes\n")
    status = cli("rehearsal", "--paper", PAPER, "--data", tmp_path / "data", "--out", tmp_path / "out")
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert str(work) in errors[0] and "not a rehearsal's folder" in errors[0], errors[0]
    assert [p.name for p in work.iterdir()] == ["notes.txt"]
    assert (work / "notes.txt").read_text() == "a week of notes\n"


def _refused_untouched(cli, capsys, tmp_path, work: Path, fragment: str) -> None:
    before = {p.relative_to(work).as_posix(): p.read_bytes() for p in sorted(work.rglob("*")) if p.is_file()}
    status = cli("rehearsal", "--paper", PAPER, "--data", tmp_path / "data", "--out", work.parent)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert errors[0].startswith(f"error: {work}: ") and fragment in errors[0], errors[0]
    after = {p.relative_to(work).as_posix(): p.read_bytes() for p in sorted(work.rglob("*")) if p.is_file()}
    assert after == before


@pytest.mark.parametrize(
    "marker",
    ["", "made by python -m pipeline rehearsal; deleted by the next rehearsal\n", '{"files": {}}'],
    ids=["empty", "the text of an earlier version", "a record of no stage"],
)
def test_a_planted_marker_proves_nothing(tmp_path, cli, capsys, marker):
    """Issue 47 §1: an empty ``.rehearsal-work`` planted in a folder of user files made the rehearsal delete it."""
    work = tmp_path / "out" / "paper-zh-rehearsal"
    (work / "chapters").mkdir(parents=True)
    (work / "chapters" / "thesis.txt").write_text("a year of work\n")
    (work / ".rehearsal-work").write_text(marker)
    _refused_untouched(
        cli, capsys, tmp_path, work, "is not a rehearsal's folder (its .rehearsal-work records no files)"
    )


@pytest.mark.parametrize(
    "added, shown",
    [("notes.txt", "notes.txt"), ("data/mine/thesis.txt", "data/mine"), ("mirror/.notes", "mirror/.notes")],
)
def test_a_file_added_to_an_earlier_rehearsal_s_folder_is_kept(tmp_path, cli, capsys, added, shown):
    """Issue 47 §1: a user's file added to an earlier rehearsal's work folder was deleted by the next one."""
    from pipeline.rehearsal.work_folder import REHEARSAL

    work = tmp_path / "out" / "paper-zh-rehearsal"
    REHEARSAL.claim(work)
    (work / "mirror").mkdir()
    (work / "mirror" / "dump.xml.bz2").write_bytes(b"BZh9")
    (work / "data").mkdir()
    (work / "data" / "linked.txt").symlink_to(tmp_path)
    REHEARSAL.seal(work)
    (work / added).parent.mkdir(parents=True, exist_ok=True)
    (work / added).write_text("a year of work\n")
    _refused_untouched(cli, capsys, tmp_path, work, f"did not write ({shown})")


def test_a_file_of_an_earlier_rehearsal_changed_since_is_kept(tmp_path, cli, capsys):
    from pipeline.rehearsal.work_folder import REHEARSAL

    work = tmp_path / "out" / "paper-zh-rehearsal"
    REHEARSAL.claim(work)
    (work / "rehearsal.yaml").write_text("run: x\n")
    REHEARSAL.seal(work)
    (work / "rehearsal.yaml").write_text("run: x\n# my notes on this run\n")
    _refused_untouched(cli, capsys, tmp_path, work, "did not write (rehearsal.yaml), or not with these bytes")


def test_an_earlier_rehearsal_s_own_folder_is_emptied(tmp_path):
    from pipeline.rehearsal.work_folder import REHEARSAL

    work = tmp_path / "out" / "paper-zh-rehearsal"
    REHEARSAL.claim(work)
    (work / "data" / "empty").mkdir(parents=True)
    (work / "data" / "linked").symlink_to(tmp_path / "elsewhere")  # a link is proved by its target, not followed
    (work / "snakemake.log").write_text("done\n")
    REHEARSAL.seal(work)
    REHEARSAL.claim(work)
    assert [p.name for p in work.iterdir()] == [".rehearsal-work"]


def test_a_planted_mirror_marker_proves_nothing(tmp_path):
    """The mirror's own marker is a record too: a folder of user files with a planted one is refused."""
    from pipeline.errors import InputError
    from pipeline.rehearsal import mirror

    data_root = tmp_path / "data"
    data_root.mkdir()
    (data_root / "SOURCES.md").write_text("empty\n")
    folder = tmp_path / "mirror"
    folder.mkdir()
    (folder / ".rehearsal-mirror").write_text("built by pipeline.rehearsal.mirror; emptied by a rebuild\n")
    (folder / "thesis.txt").write_text("a year of work\n")
    config = {"run": "x", "pretrain": {"language": "zh"}}
    with pytest.raises(InputError, match="is not a mirror built here"):
        mirror.build(config, REPO, data_root, folder, "http://127.0.0.1:1/files")
    assert (folder / "thesis.txt").read_text() == "a year of work\n"


SNAKEFILE = """
rule all:
    input: "done.txt"

rule slow:
    output: "done.txt"
    shell: "echo $$ > job.pid; sleep 300; touch {output}"
"""

DRIVER = """
import sys
from pathlib import Path
from pipeline.rehearsal import rehearsal

work = Path(sys.argv[1])
command = [sys.executable, "-m", "snakemake", "-s", str(work / "Snakefile"), "--cores", "1", "-d", str(work)]
# watched, as the rehearsal's own run is: the signal may arrive while the watcher reads the log
progress = rehearsal.RunProgress("stopped", work / "snakemake.log", total=1, interval=0.2)
rehearsal.WATCH_SECONDS = 0.1
with rehearsal._stopped_by_signals():
    try:
        rehearsal._snakemake(command, work / "snakemake.log", cwd=work, watch=progress.check)
    except rehearsal.Stopped as stop:
        raise SystemExit(128 + stop.signum)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_snakemake_and_its_jobs_and_releases_the_lock(tmp_path, signum):
    (tmp_path / "Snakefile").write_text(textwrap.dedent(SNAKEFILE))
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(tmp_path)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    deadline = time.monotonic() + 120
    while not (tmp_path / "job.pid").is_file() or not (tmp_path / "job.pid").read_text().strip():
        assert time.monotonic() < deadline and driver.poll() is None, (tmp_path / "snakemake.log").read_text()
        time.sleep(0.2)
    job = int((tmp_path / "job.pid").read_text())
    assert list((tmp_path / ".snakemake" / "locks").iterdir())  # Snakemake holds its lock while it runs
    driver.send_signal(signum)
    assert driver.wait(timeout=90) == 128 + signum
    time.sleep(0.5)
    assert not alive(job), "the job runs on after the rehearsal stopped"
    locks = tmp_path / ".snakemake" / "locks"
    assert not locks.exists() or list(locks.iterdir()) == [], "the lock is left behind"
    assert not (tmp_path / "done.txt").exists()


def test_a_run_name_too_long_for_the_rehearsal_s_names_is_one_line(tmp_path, cli, capsys):
    """A paper run of 51-64 characters is a valid run, but dry-<run>-rehearsal is not: say so up front,
    not as a failed dry run."""
    config = tmp_path / "long.yaml"
    config.write_text(PAPER.read_text().replace("run: paper-zh", "run: " + "z" * 51, 1))
    assert ("run: " + "z" * 51) in config.read_text()
    out = tmp_path / "out"
    status = cli("rehearsal", "--paper", config, "--data", tmp_path / "data", "--out", out)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert str(config) in errors[0] and "at most 50" in errors[0], errors[0]
    assert not (out / ("z" * 51 + "-rehearsal")).exists()


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "200,000 nested brackets"])
def test_a_marker_that_is_no_small_file_is_one_line(tmp_path, cli, capsys, kind):
    """Issue 55 §3: a FIFO marker blocked the rehearsal, a link to /dev/zero ended in a traceback, and so did a
    record nested past the JSON parser's depth. Each is refused in one line, the folder untouched."""
    import os

    work = tmp_path / "out" / "paper-zh-rehearsal"
    work.mkdir(parents=True)
    (work / "thesis.txt").write_text("a year of work\n")
    marker = work / ".rehearsal-work"
    if kind == "fifo":
        os.mkfifo(marker)
    elif kind == "link to /dev/zero":
        marker.symlink_to("/dev/zero")
    else:
        marker.write_text("[" * 200_000 + "]" * 200_000)
    status = cli("rehearsal", "--paper", PAPER, "--data", tmp_path / "data", "--out", work.parent)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert errors[0].startswith((f"error: {work}: ", f"error: {marker}: ")), errors[0]
    assert sorted(p.name for p in work.iterdir()) == [".rehearsal-work", "thesis.txt"]
    assert (work / "thesis.txt").read_text() == "a year of work\n"
