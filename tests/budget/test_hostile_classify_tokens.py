"""A measured-tokens file the plan must not take on trust (issue 48 §2, issue 55 §2; pipeline/budget/classify_tokens.py):
``python -m pipeline measure-tokens --write`` writes pipeline/budget/classify_tokens.yaml, and the plan's
fine-tuning FLOPs scale with every figure in it. A figure that is no finite positive number or lies outside its
range (1e308 sequences, 1e-300 tokens), a padded figure below the real tokens it pads or above its sequences at
full length, or a file name that would render as Markdown is one line naming the file and the place in it, exit
2, nothing written; so is a folder at its name (a FIFO and a link to /dev/zero: tests/test_hostile_small_files.py).
Only an absent file measures nothing."""

from __future__ import annotations

import pytest
from hostile import assert_clean_failure
from testdata import REPO

from pipeline.budget import classify_tokens
from pipeline.errors import InputError
from pipeline.plan import plan

PAPER_EN = REPO / "workflow" / "config" / "paper-en.yaml"
RTE = "      file: glue/RTE/train.tsv\n"


@pytest.fixture
def tokens(tmp_path, monkeypatch):
    """Point the plan at a copy of classify_tokens.yaml, with ``edit(text)`` applied."""
    path = tmp_path / "classify_tokens.yaml"

    def write(edit):
        path.write_text(edit(classify_tokens.TOKENS.read_text(encoding="utf-8")), encoding="utf-8")
        monkeypatch.setitem(plan.FILES, "classify_tokens.yaml", path)
        plan._yaml.cache_clear()
        return path

    yield write
    plan._yaml.cache_clear()


def rte_field(key: str, value: str):
    """RTE's first ``key`` (length 128: ``sequences``, ``real``) replaced by ``value``."""

    def edit(text: str) -> str:
        start = text.index(RTE)
        head, tail = text[:start], text[start:]
        at = tail.index(f"{key}: ") + len(f"{key}: ")
        return head + tail[:at] + value + tail[tail.index("\n", at) :]

    return edit


def rte_padded(value: str, kind: str = "padded"):
    """RTE's first ``kind`` figure (length 128, batch 8, one order; random order or grouped by length) replaced
    by ``value``."""

    def edit(text: str) -> str:
        start = text.index(RTE)
        head, tail = text[:start], text[start:]
        at = tail.index("8: [", tail.index(f"{kind}:")) + len("8: [")
        end = tail.index(",", at)
        return head + tail[:at] + value + tail[end:]

    return edit


@pytest.mark.parametrize(
    "edit, place, fragment",
    [
        (rte_padded(".nan"), "measured.glue.rte.lengths.128.padded.8", "not a positive number of tokens"),
        (rte_padded("-.inf"), "measured.glue.rte.lengths.128.padded.8", "not a positive number of tokens"),
        (rte_padded("true"), "measured.glue.rte.lengths.128.padded.8", "not a positive number of tokens"),
        (rte_padded("1.0"), "measured.glue.rte.lengths.128.padded.8", "is not between the real tokens"),
        (rte_padded("1.0e+9"), "measured.glue.rte.lengths.128.padded.8", "is not between the real tokens"),
        (rte_padded(".nan", "grouped"), "measured.glue.rte.lengths.128.grouped.8", "not a positive number of tokens"),
        (rte_padded("1.0", "grouped"), "measured.glue.rte.lengths.128.grouped.8", "is not between the real tokens"),
        (
            lambda text: text.replace(RTE, "      file: '[RTE](https://example.org)'\n"),
            "measured.glue.rte.file",
            "not a plain path",
        ),
        (lambda text: text.replace("seeds: 5", "seeds: 0"), "seeds", "not a whole number"),
        (rte_field("sequences", "1.0e+308"), "measured.glue.rte.lengths.128.sequences", "not a number of sequences"),
        (rte_field("real", "1.0e-300"), "measured.glue.rte.lengths.128.real", "not a number of tokens per example"),
        (
            lambda text: text.replace("batch_sizes: [8, 16, 32, 64]", "batch_sizes: [0]"),
            "batch_sizes",
            "not a list of whole numbers",
        ),
    ],
    ids=[
        "nan",
        "-inf",
        "true",
        "below-real",
        "above-length",
        "grouped-nan",
        "grouped-below-real",
        "markdown-file",
        "no-seeds",
        "sequences-1e308",
        "real-1e-300",
        "batch-sizes-0",
    ],
)
def test_a_bad_measurement_is_one_line(tokens, cli, capsys, tmp_path, edit, place, fragment):
    path = tokens(edit)
    out = tmp_path / "plan.md"
    status = cli("plan", "--configfile", PAPER_EN, "--out", out)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, path, out, fragment)
    assert place in err and "rerun python -m pipeline measure-tokens --write" in err


def test_no_file_measures_nothing(tmp_path):
    assert classify_tokens.read_tokens(tmp_path / "absent.yaml") == {"seeds": 1, "measured": {}, "missing": {}}


def test_a_folder_at_its_name_is_one_line_not_an_absent_file(tokens, cli, capsys, tmp_path):
    """A folder was taken for no file: every task at its upper bound, exit 0 (issue 55 §2)."""
    path = tokens(lambda text: text)
    path.unlink()
    path.mkdir()
    out = tmp_path / "plan.md"
    status = cli("plan", "--configfile", PAPER_EN, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, path, out, "is a directory, not a regular file")


def test_a_dangling_link_at_its_name_is_one_line_not_an_absent_file(tmp_path):
    path = tmp_path / "classify_tokens.yaml"
    path.symlink_to(tmp_path / "gone.yaml")
    with pytest.raises(InputError, match="not found"):
        classify_tokens.read_tokens(path)
