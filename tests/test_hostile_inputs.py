"""Every stage's CLI on every kind of bad input: exit 2, one line naming the path, no output.

The matrix is data-driven: :data:`PARQUET_STAGES` lists the stages that read a Parquet
contract (a new such stage joins every Parquet kind by adding one line), :data:`PARQUET_KINDS`
the ways a Parquet input can be bad, :data:`OUTPUT_KINDS` the ways an output location can be
bad, and the other tables the dump, evaluation-data and model kinds of their stages. Each
case runs ``python -m pipeline`` in-process (``pipeline.cli.main``) on tiny inputs built once
per session from the demo data, and asserts:

- exit status 2, and no Python traceback (an unexpected exception would fail the test);
- exactly one ``error:`` line on stderr, naming the bad path;
- nothing written where the outputs go (no file, no temporary).
"""

from __future__ import annotations

import bz2
import gzip
import os
import pickle
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import GOOD_PAGES, Good, assert_clean_failure, file_size_limit, unwritable_folder
from testdata import dump_xml

from pipeline.cli import main


# ---------------------------------------------------------------------------- the stages
@dataclass
class Stage:
    """How to call a stage on one input; ``out`` is where its outputs go (file or folder)."""

    name: str
    contract: str  # the Parquet contract it reads
    args: Callable[[Good, Path, Path], list]  # (good inputs, the input, out) -> CLI arguments

    def good_input(self, good: Good) -> Path:
        return getattr(good, self.contract)


PARQUET_STAGES = [
    Stage("convert", "docs", lambda g, x, out: ["convert", "--input", x, "--out", out]),
    Stage("clean", "docs", lambda g, x, out: ["clean", "--input", x, "--lang", "en", "--out", out]),
    Stage("ngrams", "sentences", lambda g, x, out: ["ngrams", "--sentences", x, "--lang", "en", "--out", out]),
    Stage(
        "kenlm",
        "sentences",
        lambda g, x, out: [
            "kenlm",
            "--sentences",
            x,
            "--lang",
            "en",
            "--order",
            3,
            "--memory",
            "10M",
            "--out",
            out / "lm.binary",
        ],
    ),
    Stage(
        "word2vec",
        "sentences",
        lambda g, x, out: [
            "word2vec",
            "--sentences",
            x,
            "--lang",
            "en",
            "--dim",
            4,
            "--min-count",
            1,
            "--epochs",
            1,
            "--out",
            out / "v.bin",
        ],
    ),
    Stage(
        "tiny-model",
        "sentences",
        lambda g, x, out: [
            "tiny-model",
            "--sentences",
            x,
            "--lang",
            "en",
            "--vocab-size",
            120,
            "--hidden",
            8,
            "--layers",
            1,
            "--heads",
            1,
            "--max-length",
            16,
            "--out",
            out / "m",
        ],
    ),
    Stage("sample", "marked", lambda g, x, out: ["sample", "--marked", x, "--size", 5, "--out", out / "s.parquet"]),
    Stage(
        "tokenize",
        "marked",
        lambda g, x, out: [
            "tokenize",
            "--marked",
            x,
            "--model",
            g.model,
            "--lang",
            "en",
            "--max-length",
            32,
            "--out",
            out / "t.parquet",
        ],
    ),
    Stage(
        "pretrain",
        "tokens",
        lambda g, x, out: [
            "pretrain",
            "--data",
            x,
            "--model",
            g.model,
            "--objective",
            "mlm",
            "--max-steps",
            1,
            "--batch-size",
            2,
            "--out",
            out / "m",
        ],
    ),
]


# ------------------------------------------------------------------ bad Parquet inputs
def _rewrite(good: Path, bad: Path, change: Callable[[pa.Table], pa.Table]) -> Path:
    table = change(pq.read_table(good))
    pq.write_table(table, bad)
    return bad


def _nullable(table: pa.Table) -> pa.Table:
    return table.cast(pa.schema([field.with_nullable(True) for field in table.schema]))


def _null_in(table: pa.Table, column: str) -> pa.Table:
    table = _nullable(table)
    values = table.column(column).to_pylist()
    values[len(values) // 2] = None
    index = table.schema.get_field_index(column)
    return table.set_column(index, table.schema.field(index), pa.array(values, table.schema.field(index).type))


def _corrupt_pages(good: Path, bad: Path) -> Path:
    """Data pages overwritten, footer intact: the schema reads, the rows do not."""
    data = bytearray(good.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    start, end = 4, len(data) - footer
    data[start + 8 : end - 8] = bytes((i * 97 + 13) % 256 for i in range(end - 16 - start))
    bad.write_bytes(bytes(data))
    return bad


MAIN_COLUMN = {"docs": "text", "sentences": "text", "marked": "text", "tokens": "input_ids"}

# kind -> (make the bad input from a good file and a target path, fragment of the expected message)
PARQUET_KINDS = {
    "missing file": (lambda good, bad, contract: bad, "not found"),
    "directory given": (lambda good, bad, contract: (bad.mkdir(), bad)[1], "director"),
    "empty file": (lambda good, bad, contract: (bad.write_bytes(b""), bad)[1], "Parquet"),
    "not Parquet": (lambda good, bad, contract: (bad.write_text("doc_id,text\n1,hello\n"), bad)[1], "Parquet"),
    "truncated Parquet": (
        lambda good, bad, contract: (bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2]), bad)[1],
        "Parquet",
    ),
    "corrupt data pages": (lambda good, bad, contract: _corrupt_pages(good, bad), "Parquet"),
    "nulls in a required column": (
        lambda good, bad, contract: _rewrite(good, bad, lambda t: _null_in(t, MAIN_COLUMN[contract])),
        "null",
    ),
    "wrong column type": (
        lambda good, bad, contract: _rewrite(
            good,
            bad,
            lambda t: t.set_column(
                t.schema.get_field_index(MAIN_COLUMN[contract]), MAIN_COLUMN[contract], pa.array(range(len(t)))
            ),
        ),
        "type",
    ),
    "a column name given twice": (
        lambda good, bad, contract: _rewrite(
            good, bad, lambda t: t.append_column(MAIN_COLUMN[contract], t.column(MAIN_COLUMN[contract]))
        ),
        "appears 2 times",
    ),
    "missing column": (
        lambda good, bad, contract: _rewrite(good, bad, lambda t: t.drop_columns([MAIN_COLUMN[contract]])),
        "column",
    ),
}


PARQUET_CASES = [(stage, kind) for stage in PARQUET_STAGES for kind in PARQUET_KINDS]


@pytest.mark.parametrize("stage, kind", PARQUET_CASES, ids=[f"{s.name}: {k}" for s, k in PARQUET_CASES])
def test_bad_parquet_input(good, tmp_path, capsys, stage, kind):
    make, fragment = PARQUET_KINDS[kind]
    (tmp_path / "input").mkdir()
    bad = make(stage.good_input(good), tmp_path / "input" / "shard-000.parquet", stage.contract)
    out = tmp_path / "out"
    status = main([str(a) for a in stage.args(good, bad, out)])
    assert_clean_failure(status, capsys.readouterr().err, bad, out, fragment)


# ------------------------------------------------------------------------- bad outputs


OUTPUT_KINDS = {
    "output path under a file": lambda tmp: ((tmp / "a-file").write_text("x"), tmp / "a-file" / "out")[1],
    "output folder not writable": unwritable_folder,
    "disk full (file size limit)": lambda tmp: tmp / "out",
}
OUTPUT_STAGES = PARQUET_STAGES + [  # and the stages that read no Parquet
    Stage("extract", "dump", lambda g, x, out: ["extract", "--dump", x, "--lang", "en", "--shards", 2, "--out", out]),
    Stage(
        "evaluate",
        "data",
        lambda g, x, out: ["evaluate", "faq", "--model", "bm25", "--data", x, "--out", out / "m.json"],
    ),
    Stage("tables", "metrics", lambda g, x, out: ["tables", "--metrics", x, "--out", out]),
]
OUTPUT_CASES = [(stage, kind) for stage in OUTPUT_STAGES for kind in OUTPUT_KINDS]


@pytest.mark.parametrize("stage, kind", OUTPUT_CASES, ids=[f"{s.name}: {k}" for s, k in OUTPUT_CASES])
def test_bad_output_location(good, tmp_path, capsys, stage, kind):
    out = OUTPUT_KINDS[kind](tmp_path)
    args = [str(a) for a in stage.args(good, stage.good_input(good), out)]
    before = set(out.rglob("*")) if out.is_dir() else set()
    if kind.startswith("disk full"):
        with file_size_limit(300):
            status = main(args)
    else:
        status = main(args)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert str(out) in errors[0] or str(out.parent) in errors[0], errors[0]
    expected = {
        "output path under a file": "not a directory",
        "output folder not writable": "not writable",
        "disk full (file size limit)": "file too large" if stage.name != "kenlm" else "file size limit",
    }[kind]
    if stage.name == "tables" and kind == "output folder not writable" and os.geteuid() == 0:
        # as root the unwritable folder is /sys/kernel, which holds files: tables refuses any folder with
        # files it does not write (its set is swapped in whole) before it tries to write
        expected = "holds files this stage does not write"
    assert expected in errors[0].lower(), errors[0]
    if out.is_dir():
        left = {p for p in set(out.rglob("*")) - before if not any(part.endswith(".work") for part in p.parts)}
        assert left == set(), "output left behind"


# ------------------------------------------------------------------------------ extract
def _bz2_truncated(path: Path) -> None:
    data = bz2.compress(dump_xml(GOOD_PAGES).encode())
    path.write_bytes(data[: len(data) // 2])


def _bz2_corrupt(path: Path) -> None:
    data = bytearray(bz2.compress(dump_xml(GOOD_PAGES).encode()))
    data[200:260] = b"\0" * 60
    path.write_bytes(bytes(data))


EXTRACT_KINDS = {  # name -> (file name, writer, message fragment)
    "truncated bz2": ("d.xml.bz2", _bz2_truncated, "compressed stream"),
    "corrupt bz2": ("d.xml.bz2", _bz2_corrupt, "compressed stream"),
    "malformed XML": (
        "d.xml",
        lambda p: p.write_text(dump_xml(GOOD_PAGES).replace("</title>", "</titel>", 1)),
        "malformed XML",
    ),
    "truncated XML": ("d.xml", lambda p: p.write_bytes(dump_xml(GOOD_PAGES).encode()[:-500]), "malformed XML"),
    "invalid UTF-8": (
        "d.xml",
        lambda p: p.write_bytes(dump_xml(GOOD_PAGES).encode().replace(b"page 7", b"p\xffge")),
        "UTF-8",
    ),
    "empty dump": ("d.xml", lambda p: p.write_bytes(b""), "empty dump"),
    "no pages": ("d.xml", lambda p: p.write_text(dump_xml([])), "no <page> elements"),
    "not a dump": ("d.xml", lambda p: p.write_text("<html><body>no</body></html>"), "expected <mediawiki>"),
    "missing dump": ("d.xml", lambda p: None, "not found"),
    "truncated gzip": (
        "d.xml.gz",
        lambda p: p.write_bytes(gzip.compress(dump_xml(GOOD_PAGES).encode())[:300]),
        "compressed stream",
    ),
    "corrupt gzip": (
        "d.xml.gz",
        lambda p: p.write_bytes(gzip.compress(dump_xml(GOOD_PAGES).encode())[:20] + b"\xff" * 400),
        "compressed stream",
    ),
    "directory given": ("d.xml", lambda p: p.mkdir(), "director"),
}


@pytest.mark.parametrize("kind", list(EXTRACT_KINDS))
def test_bad_dump(tmp_path, capsys, kind):
    name, write, fragment = EXTRACT_KINDS[kind]
    dump = tmp_path / name
    write(dump)
    out = tmp_path / "out"
    status = main(["extract", "--dump", str(dump), "--lang", "en", "--shards", "2", "--out", str(out)])
    assert_clean_failure(status, capsys.readouterr().err, dump, out, fragment)


def test_extract_zero_shards(tmp_path, capsys):
    dump = tmp_path / "d.xml"
    dump.write_text(dump_xml(GOOD_PAGES))
    out = tmp_path / "out"
    status = main(["extract", "--dump", str(dump), "--lang", "en", "--shards", "0", "--out", str(out)])
    assert_clean_failure(status, capsys.readouterr().err, "argument --shards", out, "must be an integer in [1, ")


def test_unknown_language(tmp_path, capsys):
    dump = tmp_path / "d.xml"
    dump.write_text(dump_xml(GOOD_PAGES))
    status = main(["extract", "--dump", str(dump), "--lang", "xx", "--out", str(tmp_path / "out")])
    assert_clean_failure(status, capsys.readouterr().err, "--lang", tmp_path / "out", "unknown language")


# -------------------------------------------------------------------- evaluation data
TASK_FILES = {  # task -> (a data file it reads, relative to the data root; a model it can run)
    "analogy": ("ulr_analogy/semantic/word/male-female.txt", "word2vec"),
    "sts": ("sick/SICK.txt", "word2vec"),
    "wordsim": ("word_similarity/eval-word-vectors/EN-SIMLEX-999.txt", "word2vec"),
    "geogranno": ("geogranno/dev_geo_granno.jsonl", "bm25"),
    "faq": ("chinese/afqmc/dev.json", "bm25"),
}


def _evaluate(good: Good, task: str, data: Path, out: Path, model: str | None = None) -> int:
    model = model or TASK_FILES[task][1]
    spec = f"word2vec:{good.vectors}" if model == "word2vec" else model
    return main(["evaluate", task, "--model", spec, "--data", str(data), "--out", str(out)])


def _data_copy(good: Good, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(good.data, data)
    return data


@pytest.mark.parametrize("task", list(TASK_FILES))
def test_evaluation_file_not_utf8(good, tmp_path, capsys, task):
    data = _data_copy(good, tmp_path)
    bad = data / TASK_FILES[task][0]
    bad.write_bytes(bad.read_bytes().replace(b"\n", b"\n\xff\xfe latin-1 \xe9\n", 1))
    out = tmp_path / "out" / "m.json"
    status = _evaluate(good, task, data, out)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, bad, out.parent, "UTF-8")
    assert f"{bad} (line 2)" in err


@pytest.mark.parametrize("task", list(TASK_FILES))
def test_evaluation_file_missing(good, tmp_path, capsys, task):
    data = _data_copy(good, tmp_path)
    bad = data / TASK_FILES[task][0]
    bad.unlink()
    for sibling in bad.parent.glob(f"*{bad.suffix}"):
        sibling.unlink()  # tasks that read every file of a folder: none left
    out = tmp_path / "out" / "m.json"
    status = _evaluate(good, task, data, out)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, bad.parent, out.parent, "missing")


def _sick_bad_score(text: str) -> str:
    lines = text.splitlines()
    header, row = lines[0].split("\t"), lines[1].split("\t")
    row[header.index("relatedness_score")], row[header.index("SemEval_set")] = "high", "TEST"
    return text.rstrip("\n") + "\n" + "\t".join(row) + "\n"


MALFORMED = {  # task -> how to add a malformed line to its file
    "analogy": lambda text: text.rstrip("\n") + "\nking\tqueen\n",
    "sts": _sick_bad_score,
    "wordsim": lambda text: text.rstrip("\n") + "\nking queen 3.0 extra\n",
    "geogranno": lambda text: text.rstrip("\n") + "\n{not json\n",
    "faq": lambda text: text.rstrip("\n") + "\n{not json\n",
}


@pytest.mark.parametrize("task", list(TASK_FILES))
def test_evaluation_file_with_a_malformed_line(good, tmp_path, capsys, task):
    data = _data_copy(good, tmp_path)
    bad = data / TASK_FILES[task][0]
    bad.write_text(MALFORMED[task](bad.read_text(encoding="utf-8")), encoding="utf-8")
    out = tmp_path / "out" / "m.json"
    status = _evaluate(good, task, data, out)
    assert_clean_failure(status, capsys.readouterr().err, bad, out.parent, "(line ")


def test_analogy_without_its_syntactic_half(good, tmp_path, capsys):
    data = _data_copy(good, tmp_path)
    shutil.rmtree(data / "ulr_analogy" / "syntactic")
    out = tmp_path / "out" / "m.json"
    status = _evaluate(good, "analogy", data, out)
    assert_clean_failure(
        status,
        capsys.readouterr().err,
        data / "ulr_analogy" / "syntactic",
        out.parent,
        "missing part of the analogy set",
    )


def test_data_root_missing(good, tmp_path, capsys):
    out = tmp_path / "out" / "m.json"
    status = _evaluate(good, "faq", tmp_path / "nowhere", out)
    assert_clean_failure(status, capsys.readouterr().err, tmp_path / "nowhere", out.parent, "not a directory")


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_word2vec_model_that_is_a_pickle(good, tmp_path, capsys):
    crafted = tmp_path / "vectors.kv"
    crafted.write_bytes(pickle.dumps(_Payload(tmp_path / "pwned")))
    out = tmp_path / "out" / "m.json"
    status = main(
        ["evaluate", "wordsim", "--model", f"word2vec:{crafted}", "--data", str(good.data), "--out", str(out)]
    )
    assert_clean_failure(status, capsys.readouterr().err, crafted, out.parent, "pickle")
    assert not (tmp_path / "pwned").exists()


def test_word2vec_model_that_is_garbage(good, tmp_path, capsys):
    garbage = tmp_path / "vectors.bin"
    garbage.write_bytes(b"3 4\n" + b"\x00" * 7)
    out = tmp_path / "out" / "m.json"
    status = main(
        ["evaluate", "wordsim", "--model", f"word2vec:{garbage}", "--data", str(good.data), "--out", str(out)]
    )
    assert_clean_failure(status, capsys.readouterr().err, garbage, out.parent, "word2vec")


def test_evaluate_output_under_a_file(good, tmp_path, capsys):
    (tmp_path / "a-file").write_text("x")
    out = tmp_path / "a-file" / "m.json"
    status = _evaluate(good, "faq", good.data, out)
    assert_clean_failure(status, capsys.readouterr().err, out.parent, tmp_path / "none", "not a directory")


def test_figures_on_analogy_data_not_utf8(good, tmp_path, capsys):
    data = _data_copy(good, tmp_path)
    bad = data / TASK_FILES["analogy"][0]
    bad.write_bytes(b"\xff" + bad.read_bytes())
    out = tmp_path / "figures"
    status = main(["figures", "--model", f"word2vec:{good.vectors}", "--data", str(data), "--out", str(out)])
    assert_clean_failure(status, capsys.readouterr().err, bad, out, "UTF-8")


# ------------------------------------------------------------------------------- tables
TABLES_KINDS = {
    "metrics not JSON": (lambda p: p.write_text("{not json"), ""),
    "metrics missing": (lambda p: None, "not found"),
    "metrics not UTF-8": (lambda p: p.write_bytes(b'{"task": "\xff"}'), ""),
    "metrics a directory": (lambda p: p.mkdir(), "director"),
}


@pytest.mark.parametrize("kind", list(TABLES_KINDS))
def test_bad_metrics_for_tables(good, tmp_path, capsys, kind):
    write, fragment = TABLES_KINDS[kind]
    bad = tmp_path / "bad.json"
    write(bad)
    out = tmp_path / "tables"
    status = main(["tables", "--metrics", str(good.metrics), str(bad), "--out", str(out)])
    assert_clean_failure(status, capsys.readouterr().err, bad, out, fragment)


def test_ngrams_on_a_document_split_across_the_file(good, tmp_path, capsys):
    table = pq.read_table(good.sentences)
    split = pa.concat_tables([table, table.slice(0, 1)])  # the first document's sentences again at the end
    bad = tmp_path / "split.parquet"
    pq.write_table(split.cast(table.schema), bad)
    out = tmp_path / "out"
    status = main(["ngrams", "--sentences", str(bad), "--lang", "en", "--out", str(out)])
    assert_clean_failure(status, capsys.readouterr().err, bad, out, "not contiguous")


def test_sample_only_not_among_the_inputs(good, tmp_path, capsys):
    stray = tmp_path / "stray.parquet"
    out = tmp_path / "out"
    status = main(
        ["sample", "--marked", str(good.marked), "--only", str(stray), "--size", "3", "--out", str(out / "s.parquet")]
    )
    assert_clean_failure(status, capsys.readouterr().err, stray, out, "--only")


def test_tokenize_with_a_missing_model(good, tmp_path, capsys):
    out = tmp_path / "out"
    status = main(
        [
            "tokenize",
            "--marked",
            str(good.marked),
            "--model",
            str(tmp_path / "no-model"),
            "--lang",
            "en",
            "--out",
            str(out / "t.parquet"),
        ]
    )
    assert_clean_failure(status, capsys.readouterr().err, tmp_path / "no-model", out)


# kinds that are single tests above: zero shards, unknown language, evaluation data not UTF-8 / missing /
# with a malformed line, analogy without syntactic/, no data root, a pickled or a garbage word2vec model,
# evaluate output under a file, figures on non-UTF-8 data, a split document, a stray --only, a missing model
SINGLE_KINDS = 14


def test_the_matrix_covers_at_least_forty_kinds():
    kinds = len(PARQUET_KINDS) + len(OUTPUT_KINDS) + len(EXTRACT_KINDS) + len(TABLES_KINDS) + SINGLE_KINDS
    assert kinds >= 40, kinds
