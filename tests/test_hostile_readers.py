"""Hostile input to the line-oriented readers (NLI, PPDB, GLUE / CLUE, the evaluation sets): a line
too long to hold, a stray quote that joins rows, a lone surrogate, a field beyond csv's limit.
Each is one line naming the file and the line, exit 2, nothing written (docs/behaviour.md).

The long lines are never materialised in full: the 1 GB line lives in a 1 MB ``.gz`` (64 copies of
one compressed 16 MiB member), read in a subprocess under a 512 MiB address-space limit.
"""

from __future__ import annotations

import gzip
import json
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hostile import Good, assert_clean_failure
from testdata import DEMO_DATA, REPO

from pipeline.classify import tasks
from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import MAX_LINE_BYTES

NLI_TRAIN = DEMO_DATA / "nli" / "snli_1.0_demo_train.jsonl"
LONG = "x" * (MAX_LINE_BYTES + 10)  # just over the bound: a few MB in the test, never more
TOO_LONG = "longer than 1,048,576 bytes"
HEADER = "pairID,sentence1,sentence2,label"


def nli_rows(count: int = 12) -> list[str]:
    return [f"{i},A man number {i} rides a horse.,Someone rides.,entailment" for i in range(count)]


def gigabyte_line_gz(path: Path) -> Path:
    """A 1 MB gzip whose text is one PPDB rule 1 GiB long (gzip members concatenate)."""
    chunk = gzip.compress(b"x" * (1 << 24), compresslevel=9)
    head = gzip.compress(b"[NP] ||| the phrase ||| ", compresslevel=9)
    tail = gzip.compress(b" ||| F=1 ||| 0-0 ||| Equivalence\n", compresslevel=9)
    path.write_bytes(head + chunk * 64 + tail)
    assert path.stat().st_size < 1_200_000
    return path


def _address_space(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def test_ppdb_gz_holding_a_gigabyte_line_stops_at_the_bound_under_512_mib(tmp_path):
    pack = gigabyte_line_gz(tmp_path / "ppdb-2.0-s-phrasal.gz")
    out = tmp_path / "model"
    argv = ["finetune", "--model", "no-model-needed", "--recipe", "twin", "--nli", NLI_TRAIN, "--ppdb", pack]
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", *map(str, argv), "--max-steps", "2", "--out", str(out)],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        preexec_fn=_address_space(512 << 20),  # the whole line would need 2 GB
        timeout=300,
    )
    assert_clean_failure(result.returncode, result.stderr, pack, out, TOO_LONG)
    assert f"{pack} (line 1)" in result.stderr


# ------------------------------------------------------------------------------ NLI sources
def _jsonl(path: Path, premise: str) -> Path:
    rows = [
        {"sentence1": premise, "sentence2": "Someone rides.", "gold_label": "entailment"},
        {"sentence1": "A dog runs.", "sentence2": "An animal moves.", "gold_label": "entailment"},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _three_files(folder: Path, premise: str) -> str:
    folder.mkdir()
    (folder / "s1.dev").write_text(f"A dog runs.\n{premise}\n")
    (folder / "s2.dev").write_text("An animal moves.\nSomeone rides.\n")
    (folder / "labels.dev").write_text("entailment\nentailment\n")
    return f"{folder}:dev"


def _archive(path: Path, premise: str) -> str:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("snli_1.0/snli_1.0_train.jsonl", _jsonl(path.with_suffix(".jsonl"), premise).read_bytes())
    return f"{path}:train"


LONG_LINE_SOURCES = {  # kind -> (write the source with one overlong line, the name the error gives)
    "jsonl": (lambda d: str(_jsonl(d / "nli.jsonl", LONG)), lambda d: d / "nli.jsonl"),
    "csv": (
        lambda d: str(_write(d / "nli.csv", [HEADER, *nli_rows(2), f"9,{LONG},b,entailment"])),
        lambda d: d / "nli.csv",
    ),
    "release txt": (
        lambda d: str(_write(d / "snli_1.0_dev.txt", ["gold_label\tsentence1\tsentence2", f"neutral\t{LONG}\tb"])),
        lambda d: d / "snli_1.0_dev.txt",
    ),
    "3-file layout": (lambda d: _three_files(d / "snli", LONG), lambda d: d / "snli" / "s1.dev"),
    "zip member": (lambda d: _archive(d / "snli_1.0.zip", LONG), lambda d: f"{d / 'snli_1.0.zip'}:snli_1.0/"),
}


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _finetune(cli, source, out: Path) -> int:
    return cli(
        "finetune",
        "--model",
        "no-model-needed",
        "--recipe",
        "sbert-nli",
        "--nli",
        source,
        "--max-steps",
        1,
        "--out",
        out,
    )


@pytest.mark.parametrize("kind", LONG_LINE_SOURCES)
def test_nli_line_beyond_the_bound_is_one_line(cli, capsys, tmp_path, kind):
    write, named = LONG_LINE_SOURCES[kind]
    source = write(tmp_path)
    out = tmp_path / "model"
    status = _finetune(cli, source, out)
    assert_clean_failure(status, capsys.readouterr().err, named(tmp_path), out, TOO_LONG)


def test_stray_quote_closing_on_the_next_line_does_not_join_two_nli_rows(cli, capsys, tmp_path):
    rows = nli_rows()
    rows[3] = '3,"A stray quote opens here,Someone rides.,entailment'
    rows[4] = '4,and closes" here,Someone rides.,entailment'
    source = _write(tmp_path / "nli.csv", [HEADER, *rows])
    out = tmp_path / "model"
    status = _finetune(cli, source, out)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, source, out, "quoted field runs from line 5 to line 6")
    assert f"{source} (line 5)" in err


def test_lone_surrogate_in_nli_jsonl_for_finetune(cli, capsys, tmp_path):
    source = _jsonl(tmp_path / "nli.jsonl", "A man \ud800 rides.")  # json.dumps writes the escape \ud800
    assert "\\ud800" in source.read_text()
    out = tmp_path / "model"
    status = _finetune(cli, source, out)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, source, out, "lone surrogate")
    assert f"{source} (line 1)" in err


def test_lone_surrogate_in_nli_jsonl_for_word2vec(good: Good, cli, capsys, tmp_path):
    source = _jsonl(tmp_path / "nli.jsonl", "A man \udfff rides.")
    out = tmp_path / "w2v" / "vectors.bin"
    status = cli(
        *("word2vec", "--sentences", good.sentences, "--lang", "en", "--out", out),
        *("--dim", 8, "--min-count", 1, "--epochs", 1, "--nli", source),
    )
    assert_clean_failure(status, capsys.readouterr().err, source, out.parent, "lone surrogate")


@pytest.mark.parametrize("suffix", [".csv", ".txt"])
def test_megabyte_csv_field_is_one_line(cli, capsys, tmp_path, suffix):
    field = "y" * 1_000_000  # under the line bound, over csv's field limit (131,072)
    if suffix == ".csv":
        source = _write(tmp_path / "nli.csv", [HEADER, *nli_rows(2), f"2,{field},b,entailment"])
    else:
        source = _write(tmp_path / "nli.txt", ["gold_label\tsentence1\tsentence2", f"neutral\t{field}\tb"])
    out = tmp_path / "model"
    status = _finetune(cli, source, out)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, source, out, "csv's field limit")
    assert "(line 4)" in err if suffix == ".csv" else "(line 2)" in err


# ------------------------------------------------------------------------------ PPDB, evaluation sets
def test_ppdb_plain_pack_line_beyond_the_bound(cli, capsys, tmp_path):
    pack = _write(tmp_path / "ppdb-2.0-s-phrasal", [f"[NP] ||| {LONG} ||| b ||| F=1 ||| 0-0 ||| Equivalence"])
    out = tmp_path / "model"
    status = cli(
        *("finetune", "--model", "x", "--recipe", "twin", "--nli", NLI_TRAIN, "--ppdb", pack),
        *("--max-steps", 1, "--out", out),
    )
    assert_clean_failure(status, capsys.readouterr().err, pack, out, TOO_LONG)


EVALUATION_FILES = {  # task -> (a file it reads, a model, the overlong line)
    "analogy": ("ulr_analogy/semantic/word/male-female.txt", "word2vec", f"a\tb\tc\td\t{LONG}"),
    "sts": ("sick/SICK.txt", "word2vec", LONG),
    "wordsim": ("word_similarity/eval-word-vectors/EN-SIMLEX-999.txt", "word2vec", f"king queen {LONG}"),
    "geogranno": ("geogranno/dev_geo_granno.jsonl", "bm25", json.dumps({"nl": LONG, "can": "x"})),
    "faq": ("chinese/afqmc/dev.json", "bm25", json.dumps({"sentence1": LONG, "sentence2": "b", "label": "0"})),
}


@pytest.mark.parametrize("task", EVALUATION_FILES)
def test_evaluation_file_line_beyond_the_bound(good: Good, cli, capsys, tmp_path, task):
    import shutil

    relative, model, line = EVALUATION_FILES[task]
    data = tmp_path / "data"
    shutil.copytree(good.data, data)
    bad = data / relative
    bad.write_text(bad.read_text(encoding="utf-8").rstrip("\n") + "\n" + line + "\n", encoding="utf-8")
    out = tmp_path / "out" / "m.json"
    spec = f"word2vec:{good.vectors}" if model == "word2vec" else model
    status = cli("evaluate", task, "--model", spec, "--data", data, "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, bad, out.parent, TOO_LONG)


@pytest.mark.parametrize("task", ["geogranno", "faq"])
def test_evaluation_jsonl_with_a_lone_surrogate(good: Good, cli, capsys, tmp_path, task):
    import shutil

    relative, model, _ = EVALUATION_FILES[task]
    data = tmp_path / "data"
    shutil.copytree(good.data, data)
    bad = data / relative
    row = (
        {"nl": "what \ud800 city", "can": "x"}
        if task == "geogranno"
        else {"sentence1": "\ud800", "sentence2": "b", "label": "0"}
    )
    bad.write_text(json.dumps(row) + "\n" + bad.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "out" / "m.json"
    status = cli("evaluate", task, "--model", model, "--data", data, "--out", out)
    err = capsys.readouterr().err
    assert_clean_failure(status, err, bad, out.parent, "lone surrogate")
    assert f"{bad} (line 1)" in err


# ------------------------------------------------------------------------------ GLUE / CLUE readers
def _glue_read(tmp_path: Path, name: str, relative: str, text: str):
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    task = tasks.TASKS[name]
    with pytest.raises(InputError) as error:
        task.read(task.split_files(tmp_path, "dev"))
    assert error.value.path == str(path)
    return error.value


GLUE_CASES = {  # kind -> (task, file, text, message)
    "MNLI CSV with a stray quote": (
        "mnli",
        "nli/mnli_dev/multinli_1.0_dev_matched.csv",
        f'{HEADER}\n1,"A stray quote opens,b,neutral\n2,and closes" here,b,neutral\n',
        "does not close on its line",
    ),
    "MNLI CSV with a megabyte field": (
        "mnli",
        "nli/mnli_dev/multinli_1.0_dev_matched.csv",
        f"{HEADER}\n1,{'y' * 1_000_000},b,neutral\n",
        "field larger than field limit",
    ),
    "RTE TSV line beyond the bound": (
        "rte",
        "glue/RTE/dev.tsv",
        f"index\tsentence1\tsentence2\tlabel\n0\t{LONG}\tb\tentailment\n",
        TOO_LONG,
    ),
    "AFQMC jsonl line beyond the bound": (
        "afqmc",
        "chinese/afqmc/dev.json",
        json.dumps({"sentence1": LONG, "sentence2": "b", "label": "0"}) + "\n",
        TOO_LONG,
    ),
    "AFQMC jsonl with a lone surrogate": (
        "afqmc",
        "chinese/afqmc/dev.json",
        json.dumps({"sentence1": "\ud800", "sentence2": "b", "label": "0"}) + "\n",
        "lone surrogate",
    ),
}


@pytest.mark.parametrize("kind", GLUE_CASES)
def test_glue_clue_reader_refuses_in_one_line(tmp_path, kind):
    name, relative, text, message = GLUE_CASES[kind]
    error = _glue_read(tmp_path, name, relative, text)
    assert message in error.message and "\n" not in str(error)
    assert error.where and error.where.startswith("line ")


def test_clue_json_document_with_a_lone_surrogate(tmp_path):
    document = {
        "data": [
            {
                "paragraphs": [
                    {
                        "id": "p1",
                        "context": "\ud800 北京",
                        "qas": [{"id": "q1", "question": "哪里", "answers": [{"text": "北京", "answer_start": 2}]}],
                    }
                ]
            }
        ]
    }
    error = _glue_read(tmp_path, "cmrc2018", "chinese/cmrc2018/cmrc2018_dev.json", json.dumps(document))
    assert "lone surrogate" in error.message
