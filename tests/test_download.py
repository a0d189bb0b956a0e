"""The download stage: a plain file, or one member of a zip / wheel archive, checked by checksum."""

from __future__ import annotations

import hashlib
import logging
import zipfile

import pytest
from testdata import DEMO_DATA

from pipeline.cli import main
from pipeline.download import download
from pipeline.errors import InputError

DUMP = DEMO_DATA / "wiki" / "en" / "enwiki-demo-pages-articles.xml"
MEMBER = "gensim/test/test_data/enwiki-demo-pages-articles.xml"


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def wheel(tmp_path):
    """A wheel-shaped archive holding the demo dump among other members, as gensim's wheel holds its test data."""
    path = tmp_path / "gensim-0.0.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("gensim/__init__.py", "")
        bundle.write(DUMP, MEMBER)
    return path


def test_plain_file_is_fetched_and_checked(tmp_path):
    out = tmp_path / "data" / "dump.xml"
    assert main(["download", "--url", DUMP.as_uri(), "--out", str(out), "--sha256", sha256(DUMP)]) == 0
    assert out.read_bytes() == DUMP.read_bytes()


def test_member_of_a_wheel_is_extracted(tmp_path, wheel):
    out = tmp_path / "data" / "wiki" / "en" / "dump.xml"
    code = main(
        [
            "download",
            "--url",
            wheel.as_uri(),
            "--member",
            MEMBER,
            "--out",
            str(out),
            "--sha256",
            sha256(DUMP),
            "--archive-sha256",
            sha256(wheel),
        ]
    )
    assert code == 0
    assert out.read_bytes() == DUMP.read_bytes()
    assert sorted(p.name for p in out.parent.iterdir()) == ["dump.xml"]  # the archive is gone


@pytest.mark.parametrize("change", ["member checksum", "archive checksum", "missing member", "not an archive"])
def test_bad_archive_leaves_nothing(tmp_path, wheel, capsys, change):
    out = tmp_path / "data" / "dump.xml"
    args = {"--url": wheel.as_uri(), "--member": MEMBER, "--sha256": sha256(DUMP), "--archive-sha256": sha256(wheel)}
    if change == "member checksum":
        args["--sha256"] = "0" * 64
    elif change == "archive checksum":
        args["--archive-sha256"] = "0" * 64
    elif change == "missing member":
        args["--member"] = "gensim/test/test_data/absent.xml"
    else:
        args["--url"], args["--archive-sha256"] = DUMP.as_uri(), sha256(DUMP)
    argv = ["download", "--out", str(out)] + [item for pair in args.items() for item in pair]
    assert main(argv) == 2
    message = capsys.readouterr().err
    assert message.startswith("error: ") and message.count("\n") == 1
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


def test_refuses_without_checksum(tmp_path, capsys):
    out = tmp_path / "dump.xml"
    assert main(["download", "--url", DUMP.as_uri(), "--out", str(out)]) == 2
    assert "refusing" in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "source.txt"
    path.write_text("the ppdb ||| line\n" * 100)
    return path


def test_no_checksum_is_refused_unless_unverified(source, tmp_path, caplog):
    with pytest.raises(InputError, match="refusing to download without a checksum"):
        download(source.as_uri(), tmp_path / "out.txt", {})
    assert not (tmp_path / "out.txt").exists()
    with caplog.at_level(logging.WARNING, logger="pipeline.download"):
        download(source.as_uri(), tmp_path / "out.txt", {}, unverified=True)
    assert (tmp_path / "out.txt").read_bytes() == source.read_bytes()
    assert hashlib.sha256(source.read_bytes()).hexdigest() in caplog.text


def _write(path, lines: list[bytes]):
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def test_rebuilt_glue_training_sets_come_out_byte_for_byte(tmp_path, data_root):
    """The sample's two rebuilt files, cut back into parts the way their snapshot holds them (CoLA:
    the first 7,250 lines and the rest; RTE: 363 rows moved to a headerless second part), join to the
    bytes and SHA-256 recorded in workflow/data/evaluation-sources.yaml."""
    import random

    import yaml
    from testdata import REPO

    sources = yaml.safe_load((REPO / "workflow" / "data" / "evaluation-sources.yaml").read_text())["glue"]
    cola = (data_root / "glue/CoLA/train.tsv").read_bytes().removesuffix(b"\n").split(b"\n")
    rte = (data_root / "glue/RTE/train.tsv").read_bytes().removesuffix(b"\n").split(b"\n")
    moved = set(random.Random(0).sample(range(1, len(rte)), 363))
    parts = {
        "glue/CoLA/train.tsv": [cola[:7250], cola[7250:]],
        "glue/RTE/train.tsv": [
            [line for number, line in enumerate(rte) if number not in moved],
            [rte[number] for number in sorted(moved, reverse=True)],  # in any order
        ],
    }
    for path, (first, second) in parts.items():
        spec = sources[path]
        urls = [_write(tmp_path / f"{n}.tsv", part).as_uri() for n, part in enumerate((first, second))]
        out = tmp_path / "data" / path
        argv = ["download", "--url", urls[0], "--url", urls[1], "--join", spec["join"], "--sha256", spec["sha256"]]
        assert main([*argv, "--out", str(out)]) == 0, path
        assert out.read_bytes() == (data_root / path).read_bytes()


@pytest.mark.parametrize("change", ["checksum", "duplicate index", "no index column", "no --join"])
def test_bad_parts_leave_nothing(tmp_path, capsys, change):
    first = _write(tmp_path / "a.tsv", [b"index\tsentence\tlabel", b"0\tA cat.\t1", b"2\tA dog.\t0"])
    second = _write(tmp_path / "b.tsv", [b"1\tA bird.\t1"])
    joined = b"index\tsentence\tlabel\n0\tA cat.\t1\n1\tA bird.\t1\n2\tA dog.\t0\n"
    digest = hashlib.sha256(joined).hexdigest()
    out = tmp_path / "data" / "train.tsv"
    argv = ["download", "--url", first.as_uri(), "--url", second.as_uri(), "--out", str(out), "--join", "sort-by-index"]
    assert main([*argv, "--sha256", digest]) == 0 and out.read_bytes() == joined
    out.unlink()
    if change == "checksum":
        argv += ["--sha256", "0" * 64]
    elif change == "duplicate index":
        _write(second, [b"2\tA bird.\t1"])
        argv += ["--sha256", digest]
    elif change == "no index column":
        _write(first, [b"id\tsentence\tlabel", b"0\tA cat.\t1"])
        argv += ["--sha256", digest]
    else:
        argv = [*argv[:-2], "--sha256", digest]
    assert main(argv) == 2
    message = capsys.readouterr().err
    assert message.startswith("error: ") and message.count("\n") == 1
    assert list(out.parent.iterdir()) == []
