"""What every hostile-input test asserts, shared by ``tests/test_hostile_inputs.py`` and the
``test_hostile_*.py`` files beside the stages (docs/behaviour.md: one line, exit 2, nothing
partial, nothing lost, nothing executed).

Every test in a file named ``test_hostile*.py`` is one case of the hostile-input matrix;
``tests/conftest.py`` counts them by outcome at the end of the run.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
from dataclasses import dataclass
from pathlib import Path

from testdata import DEMO_DATA, dump_xml, page_xml

from pipeline.cli import main

MARKER_FILE = "payload-ran"


def assert_clean_failure(status: int, err: str, named: Path | str, out: Path, fragment: str = "") -> None:
    """Exit 2, no traceback, exactly one ``error:`` line naming ``named`` (and ``fragment``), nothing under ``out``."""
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2, err
    assert "Traceback" not in err, err
    assert len(errors) == 1, err
    assert str(named) in errors[0], errors[0]
    assert fragment.lower() in errors[0].lower(), errors[0]
    if out.exists():
        # pretrain keeps its resume state in a hidden .NAME.work folder beside the model (docs/stages/pretrain.md)
        left = (
            [p for p in out.rglob("*") if not any(part.endswith(".work") for part in p.parts)]
            if out.is_dir()
            else [out]
        )
        assert left == [], f"output left behind: {left}"


@contextlib.contextmanager
def file_size_limit(limit: int):
    """``ulimit -f``: writes past ``limit`` bytes fail with EFBIG (Python ignores SIGXFSZ), like a full disk."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def unwritable_folder(tmp_path: Path) -> Path:
    """A folder this process cannot write to (root ignores permissions, but not /sys)."""
    if os.geteuid() == 0:
        return Path("/sys/kernel")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    return folder


def hidden_leftovers(folder: Path) -> list[Path]:
    """Hidden temporaries (``.NAME.tmp-*``, ``.NAME.old-*``, ...) left in ``folder``; resume state excepted."""
    return sorted(p for p in Path(folder).iterdir() if p.name.startswith(".") and not p.name.endswith(".work"))


class Payload:
    """A pickle that, when loaded, creates ``path``: proof that a loader ran code it was handed."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


GOOD_PAGES = [
    page_xml(
        i,
        f"Page {i}",
        f"Text of page {i} is about [[Paris]] and the river [[Seine]]. "
        f"Page {i} has a second sentence with more words in it.",
    )
    for i in range(1, 40)
]


# ---------------------------------------------------------------------------- good inputs
@dataclass
class Good:
    """Valid inputs of every contract, made once by the stages themselves."""

    root: Path
    dump: Path
    docs: Path
    sentences: Path
    marked: Path
    tokens: Path
    model: Path
    vectors: Path
    data: Path
    metrics: Path


def _run(*args) -> None:
    status = main([str(a) for a in args])
    assert status == 0, args


def build_good(tmp_path_factory) -> Good:
    """Valid inputs of every contract, made by the stages themselves (the ``good`` fixture)."""
    root = tmp_path_factory.mktemp("good")
    dump = root / "dump.xml"
    dump.write_text(dump_xml(GOOD_PAGES))
    _run("extract", "--dump", dump, "--lang", "en", "--out", root / "docs")
    _run("clean", "--input", root / "docs" / "shard-000.parquet", "--lang", "en", "--out", root / "sentences")
    sentences = root / "sentences" / "shard-000.parquet"
    _run("ngrams", "--sentences", sentences, "--lang", "en", "--out", root / "ngrams")
    _run(
        "tiny-model",
        "--sentences",
        sentences,
        "--lang",
        "en",
        "--out",
        root / "tiny",
        "--vocab-size",
        200,
        "--hidden",
        16,
        "--layers",
        1,
        "--heads",
        2,
        "--max-length",
        32,
    )
    _run(
        "tokenize",
        "--marked",
        root / "ngrams" / "marked.parquet",
        "--model",
        root / "tiny",
        "--lang",
        "en",
        "--max-length",
        32,
        "--out",
        root / "tokens" / "tokens.parquet",
    )
    _run(
        "word2vec",
        "--sentences",
        sentences,
        "--lang",
        "en",
        "--out",
        root / "w2v" / "vectors.bin",
        "--dim",
        8,
        "--min-count",
        1,
        "--epochs",
        1,
    )
    data = root / "data"
    shutil.copytree(DEMO_DATA, data, ignore=shutil.ignore_patterns("wiki"))
    _run("evaluate", "faq", "--model", "bm25", "--data", data, "--out", root / "metrics" / "faq.json")
    return Good(
        root,
        dump,
        root / "docs" / "shard-000.parquet",
        sentences,
        root / "ngrams" / "marked.parquet",
        root / "tokens" / "tokens.parquet",
        root / "tiny",
        root / "w2v" / "vectors.bin",
        data,
        root / "metrics" / "faq.json",
    )
