"""Atomic outputs: two writers of the same target (neither deletes the other's temporary), a target that
cannot be a file, a failed rename, and a full disk named by the path being written (docs/behaviour.md)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from testdata import REPO

from pipeline.atomic import AtomicFiles, storage_failure, temp_path, writing
from pipeline.errors import InputError

SECOND_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from pipeline.atomic import AtomicFiles
    target, ready, go = map(Path, sys.argv[1:])
    with AtomicFiles() as files:
        files.temp(target).write_text("from the other writer\\n")
        ready.write_text("")
        while not go.exists():
            time.sleep(0.02)
""")


def test_two_writers_of_one_target_both_finish(tmp_path):
    target, ready, go = tmp_path / "out.json", tmp_path / "ready", tmp_path / "go"
    other = subprocess.Popen(
        [sys.executable, "-c", SECOND_WRITER, str(target), str(ready), str(go)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert other.poll() is None and time.monotonic() < deadline, other.stderr.read() if other.stderr else ""
            time.sleep(0.02)
        (others_temp,) = [p for p in tmp_path.iterdir() if f"-{other.pid}-" in p.name]
        with AtomicFiles() as files:  # this writer starts while the other is mid-write
            files.temp(target).write_text("from this writer\n")
        assert others_temp.exists(), "the live writer's temporary was deleted"
        assert target.read_text() == "from this writer\n"
        go.write_text("")
        assert other.wait(timeout=60) == 0, other.stderr.read()
    finally:
        other.kill()
    assert target.read_text() == "from the other writer\n"  # the last rename wins, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["go", "out.json", "ready"]  # no temporaries left


def test_a_dead_writers_temporary_is_removed_a_live_ones_kept(tmp_path):
    target = tmp_path / "out.parquet"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    writer, token = _writer_and_token(temp_path(target))  # .NAME.tmp-pipeline-HOST-  PID-TOKEN
    stale = target.with_name(f"{writer}{dead.stdout.strip()}-{token}")
    stale_kept_version = target.with_name(f"{writer.replace('.tmp-', '.old-')}{dead.stdout.strip()}-{token}")
    live = target.with_name(f"{writer}{os.getppid()}-{token}")
    elsewhere = target.with_name(f".{target.name}.tmp-pipeline-otherhost-1-{token}")
    for path in (stale, stale_kept_version, live, elsewhere):
        path.write_text("partial")
    with AtomicFiles() as files:
        files.temp(target).write_text("done")
    assert not stale.exists() and not stale_kept_version.exists()
    assert live.exists() and elsewhere.exists()
    assert target.read_text() == "done"


def _writer_and_token(temp: Path) -> tuple[str, str]:
    """A temporary's name cut before its PID, and its token."""
    head, pid, token = temp.name.rsplit("-", 2)
    assert pid == str(os.getpid()) and len(token) == 12
    return f"{head}-", token


def test_an_error_that_names_a_temporary_names_the_output(tmp_path):
    """Issue 47 §6: a library's error text that names the temporary (Arrow's, with an errno the module
    has no words for) is told with the output's name."""
    target = tmp_path / "out.parquet"
    with pytest.raises(InputError) as caught, AtomicFiles() as files:
        temp = files.temp(target)
        raise OSError(f"Failed to open local file '{temp}'. Detail: [errno 5] Input/output error")
    assert str(target) in str(caught.value) and ".tmp-" not in str(caught.value), caught.value


def test_an_output_never_written_is_named_not_its_temporary(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(RuntimeError) as caught, AtomicFiles() as files:
        files.temp(target)
    assert str(target) in str(caught.value) and ".tmp-" not in str(caught.value), caught.value


def test_a_failure_inside_leaves_no_output_and_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    try:
        with AtomicFiles() as files:
            files.temp(target).write_text("half")
            raise RuntimeError("killed")
    except RuntimeError:
        pass
    assert list(Path(tmp_path).iterdir()) == []


# ------------------------------------------------------------------ targets that cannot be files, failures
def test_a_target_that_is_a_folder_is_refused_before_anything_is_written(tmp_path):
    target = tmp_path / "dir.json"
    target.mkdir()
    (target / "mine.txt").write_text("kept")
    with pytest.raises(InputError, match="is a folder"), AtomicFiles() as files:
        files.temp(target).write_text("{}")
    assert (target / "mine.txt").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.json"]  # no .dir.json.tmp-* left


@pytest.mark.parametrize("earlier", [True, False])
def test_a_rename_that_fails_leaves_no_temporary_and_the_set_as_it_was(tmp_path, earlier):
    """The set is all or nothing: the first target, renamed before the second failed, is put back (issue 39 §2)."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    if earlier:
        first.write_text("earlier")
    with pytest.raises(InputError, match="cannot write the output") as caught, AtomicFiles() as files:
        files.temp(first).write_text("a")
        files.temp(second).write_text("b")
        second.mkdir()  # appears between the write and the rename
        (second / "x").write_text("x")
    assert caught.value.path == str(second)
    assert sorted(p.name for p in tmp_path.iterdir()) == (["a.json", "b.json"] if earlier else ["b.json"])
    assert not earlier or first.read_text() == "earlier"


def test_a_full_disk_that_names_no_file_names_the_targets(tmp_path):
    target = tmp_path / "out" / "m.json"
    with pytest.raises(InputError) as caught, AtomicFiles() as files:
        files.temp(target).write_text("{")
        raise OSError(errno.ENOSPC, "No space left on device")  # what write() raises: no file name
    assert caught.value.path == str(target) and "no space left" in caught.value.message
    assert list((tmp_path / "out").iterdir()) == []


def test_storage_failures_are_recognised_in_a_library_s_message():
    assert storage_failure(OSError(errno.ENOSPC, "No space left on device")) == "no space left on the device"
    assert storage_failure(RuntimeError("I/O error: File too large (os error 27)")).startswith("file too large")
    assert storage_failure(Exception("Disk quota exceeded (os error 122)")) == "disk quota exceeded"
    assert "disk full" in storage_failure(RuntimeError("PytorchStreamWriter failed writing file data/0"))
    assert storage_failure(OSError(errno.ENOENT, "No such file or directory")) is None
    assert storage_failure(ValueError("bad value")) is None


def test_writing_names_the_path_being_written(tmp_path):
    work = tmp_path / ".m.work"
    with pytest.raises(InputError) as caught, writing(work):
        raise OSError(errno.ENOSPC, "No space left on device")
    assert caught.value.path == str(work) and "no space left" in caught.value.message
    with pytest.raises(KeyError), writing(work):  # anything else propagates unchanged
        raise KeyError("x")


def test_a_special_file_is_written_into_never_replaced(tmp_path):
    """``--out /dev/null`` (or a named pipe) must stay what it is: a rename would put a regular file in
    its place (as root, in /dev), so the temporary lives elsewhere and is copied into it."""
    import stat
    import threading

    from pipeline.atomic import write_json

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text()), daemon=True)
    reader.start()
    write_json(pipe, {"rows": 3})
    reader.join(timeout=10)
    assert received == ['{\n  "rows": 3\n}\n']
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)  # still the pipe
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # no temporary beside it
    assert not temp_path(pipe).exists() and temp_path(pipe).parent != tmp_path


# ------------------------------------------------------------------ symbolic links, folders of outputs
def test_a_link_s_file_is_replaced_beside_it_and_the_link_kept(tmp_path):
    from pipeline.atomic import resolve_target, write_json

    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "out.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(Path("real") / "out.json")
    outer = tmp_path / "outer.json"
    outer.symlink_to(link)
    assert resolve_target(outer) == real and resolve_target(real) == real
    assert temp_path(outer).parent == real.parent  # the rename stays within the file's own folder
    write_json(outer, {"a": 1})
    assert outer.is_symlink() and link.is_symlink() and json.loads(real.read_text()) == {"a": 1}


def test_a_link_into_proc_is_special_and_stays_as_it_is(tmp_path):
    from pipeline.atomic import is_special, resolve_target

    with open(tmp_path / "held", "w") as stream:
        link = tmp_path / "fd"
        link.symlink_to(f"/proc/self/fd/{stream.fileno()}")
        assert is_special(link) and resolve_target(link) == link
    assert not is_special(tmp_path / "held")


def test_a_loop_of_links_is_an_input_error(tmp_path):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(InputError, match="loop of symbolic links"), AtomicFiles() as files:
        files.temp(tmp_path / "a").write_text("x")
    assert (tmp_path / "a").is_symlink()


def test_a_folder_of_outputs_is_swapped_in_whole_and_a_failure_keeps_the_earlier_one(tmp_path):
    from pipeline.atomic import AtomicFolder, exchange

    first, second = tmp_path / "x", tmp_path / "y"
    first.mkdir()
    second.mkdir()
    (first / "f").write_text("1")
    if exchange(first, second):  # where the system can: both names swapped in one step
        assert (second / "f").read_text() == "1" and not (first / "f").exists()
    out = tmp_path / "tables"
    with AtomicFolder(out, ["a.md", "b.md"]) as folder:
        (folder / "a.md").write_text("a1")
        (folder / "b.md").write_text("b1")
    with pytest.raises(RuntimeError), AtomicFolder(out, ["a.md", "b.md"]) as folder:
        (folder / "a.md").write_text("a2")
        raise RuntimeError("killed")
    assert {p.name: p.read_text() for p in out.iterdir()} == {"a.md": "a1", "b.md": "b1"}
    with AtomicFolder(out, ["a.md", "b.md"]) as folder:
        (folder / "a.md").write_text("a3")
    assert {p.name: p.read_text() for p in out.iterdir()} == {"a.md": "a3"}  # the new set, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tables", "x", "y"]  # no temporaries
