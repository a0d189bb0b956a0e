"""Hostile input for the ``ngrams`` and ``kenlm`` stages (docs/behaviour.md): sentence numbers that
repeat, are negative, null or out of range, and an lmplz that dies because ``--memory`` is too small,
each stop the stage with one line, exit 2, nothing written."""

from __future__ import annotations

import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import assert_clean_failure, hidden_leftovers

from pipeline.errors import InputError
from pipeline.ngrams import kenlm


def spoiled(good, tmp_path: Path, change) -> tuple[Path, int, int]:
    """A copy of the good sentences with ``change(doc_ids, sent_ids)`` applied to its sent_id column;
    returns the file and the document and sentence the error must name."""
    table = pq.read_table(good.sentences)
    doc_ids = table.column("doc_id").to_pylist()
    sent_ids = table.column("sent_id").to_pylist()
    doc, sent, column = change(doc_ids, sent_ids)
    table = table.set_column(table.schema.get_field_index("sent_id"), "sent_id", column)
    path = tmp_path / "shard-000.parquet"
    pq.write_table(table, path)
    return path, doc, sent


def duplicate(doc_ids, sent_ids):
    """The third sentence of the second document repeats its second one's number."""
    second = doc_ids[next(i for i, d in enumerate(doc_ids) if d != doc_ids[0])]
    rows = [i for i, d in enumerate(doc_ids) if d == second]
    sent_ids = list(sent_ids)
    sent_ids[rows[1]] = sent_ids[rows[0]]
    return second, sent_ids[rows[0]], pa.array(sent_ids, pa.int32())


def negative(doc_ids, sent_ids):
    sent_ids = list(sent_ids)
    sent_ids[-1] = -1
    return doc_ids[-1], -1, pa.array(sent_ids, pa.int32())


def ngrams_argv(sentences: Path, out: Path) -> list:
    return ["ngrams", "--sentences", sentences, "--lang", "en", "--out", out]


@pytest.mark.parametrize("change", [duplicate, negative], ids=["duplicate sent_id", "negative sent_id"])
def test_bad_sentence_numbers_are_one_line_naming_document_and_sentence(good, cli, capsys, tmp_path, change):
    sentences, doc, sent = spoiled(good, tmp_path, change)
    out = tmp_path / "ngrams"
    status = cli(*ngrams_argv(sentences, out))
    fragment = f"(document {doc}, sentence {sent})"
    assert_clean_failure(status, capsys.readouterr().err, sentences, out, fragment)
    assert hidden_leftovers(tmp_path) == []


def test_a_null_sent_id_is_one_line(good, cli, capsys, tmp_path):
    def null(doc_ids, sent_ids):
        return None, None, pa.array([None, *sent_ids[1:]], pa.int32())

    sentences, _, _ = spoiled(good, tmp_path, null)
    out = tmp_path / "ngrams"
    status = cli(*ngrams_argv(sentences, out))
    assert_clean_failure(status, capsys.readouterr().err, sentences, out, "null")


def test_a_sent_id_beyond_int32_is_one_line(good, cli, capsys, tmp_path):
    def huge(doc_ids, sent_ids):
        return None, None, pa.array([2**40, *sent_ids[1:]], pa.int64())

    sentences, _, _ = spoiled(good, tmp_path, huge)
    out = tmp_path / "ngrams"
    status = cli(*ngrams_argv(sentences, out))
    assert_clean_failure(status, capsys.readouterr().err, sentences, out, "'sent_id' holds a value out of range")


def test_the_same_sentence_numbers_in_two_documents_are_fine(good, cli, tmp_path):
    """Numbers repeat across documents (each counts from 0): only a repeat inside one is refused."""
    assert len(set(pq.read_table(good.sentences).column("doc_id").to_pylist())) > 1
    assert cli(*ngrams_argv(good.sentences, tmp_path / "ngrams")) == 0


# ---------------------------------------------------------------------------------------- kenlm
ABORT_TEXT = (
    "=== 1/5 Counting and sorting n-grams ===\n"
    "lm/builder/pipeline.cc:217 in CountText threw util::Exception because `config.TotalMemory() < vocab_usage'.\n"
    "Vocab hash size estimate 25165824 exceeds total memory 10485760\n"
)


def fake_kenlm(folder: Path, lmplz: str, build_binary: str = "exit 0") -> Path:
    """Stand-in lmplz / build_binary scripts (run everywhere, unlike the real binaries)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in (("lmplz", lmplz), ("build_binary", build_binary)):
        script = folder / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def kenlm_argv(good, out: Path, memory: str, *extra) -> list:
    return ["kenlm", "--sentences", good.sentences, "--lang", "en", "--order", 3, "--memory", memory, *extra]


def test_lmplz_aborting_for_too_little_memory_names_the_flag(good, cli, capsys, tmp_path):
    (tmp_path / "lmplz-said").write_text(ABORT_TEXT)
    fake = fake_kenlm(tmp_path / "bin", f"cat > /dev/null\ncat {tmp_path / 'lmplz-said'} >&2\nkill -ABRT $$")
    out = tmp_path / "lm" / "lm.binary"
    status = cli(*kenlm_argv(good, out, "10M", "--lmplz", fake / "lmplz", "--out", out))
    err = capsys.readouterr().err
    assert_clean_failure(status, err, tmp_path / "lm", out, "--memory 10M is too small")
    assert "SIGABRT" in err and "exceeds total memory" in err
    assert list((tmp_path / "lm").iterdir()) == []


def test_the_real_lmplz_with_10m_says_the_memory_is_too_small(good, cli, capsys, tmp_path):
    try:
        kenlm.find_binaries()
    except InputError as exc:
        pytest.skip(f"KenLM's binaries are not built ({exc}); run `make install`")
    out = tmp_path / "lm" / "lm.binary"
    status = cli(*kenlm_argv(good, out, "10M", "--out", out))
    assert_clean_failure(status, capsys.readouterr().err, tmp_path / "lm", out, "--memory 10M is too small")
    assert list((tmp_path / "lm").iterdir()) == []


@pytest.mark.parametrize("memory", ["-5", "12.5%", "1.5G", "lots", "4g"])
def test_a_memory_lmplz_cannot_parse_is_refused_before_it_runs(good, cli, capsys, tmp_path, memory):
    ran = tmp_path / "lmplz-ran"
    fake = fake_kenlm(tmp_path / "bin", f"touch {ran}\nexit 0")
    out = tmp_path / "lm" / "lm.binary"
    status = cli(*kenlm_argv(good, out, memory, "--lmplz", fake / "lmplz", "--out", out))
    assert_clean_failure(status, capsys.readouterr().err, out, out, f"--memory {memory}")
    assert not ran.exists()


def test_lmplz_killed_without_a_message_gives_a_hint(good, cli, capsys, tmp_path):
    fake = fake_kenlm(tmp_path / "bin", "cat > /dev/null\nkill -KILL $$")
    out = tmp_path / "lm" / "lm.binary"
    status = cli(*kenlm_argv(good, out, "90%", "--lmplz", fake / "lmplz", "--out", out))
    assert_clean_failure(status, capsys.readouterr().err, tmp_path / "lm", out, "killed by SIGKILL")


def test_a_failing_build_binary_is_one_line(good, cli, capsys, tmp_path):
    lmplz = 'cat > /dev/null\nfor a; do case "$prev" in --arpa) echo "\\\\data\\\\" > "$a";; esac; prev=$a; done'
    fake = fake_kenlm(tmp_path / "bin", lmplz, "echo 'util::ErrnoException: No space left on device' >&2\nexit 1")
    out = tmp_path / "lm" / "lm.binary"
    status = cli(*kenlm_argv(good, out, "100M", "--lmplz", fake / "lmplz", "--out", out))
    err = capsys.readouterr().err
    assert_clean_failure(status, err, out, out, "build_binary failed (exit status 1)")
    assert "No space left" in err
    assert list((tmp_path / "lm").iterdir()) == []


SHORT_DOCUMENT_CASES = [
    ("--top-k-per-token", "0"),
    ("--top-k-per-token", "nan"),
    ("--threshold-tokens", "2"),
    ("--top-k-ramp-tokens", "0.5"),
    ("--top-k-full-tokens", "inf"),
]


@pytest.mark.parametrize("flag, value", SHORT_DOCUMENT_CASES, ids=[f"{f} {v}" for f, v in SHORT_DOCUMENT_CASES])
def test_a_short_document_knob_outside_its_domain_is_one_line(tmp_path, monkeypatch, cli, capsys, flag, value):
    """K per token must be above 0, the length below which the threshold scales above 2 tokens
    (log 2 > 0), else the scale is undefined, and the ramp's lengths finite and at least one token
    (docs/method.md §2, "Short documents")."""
    monkeypatch.chdir(tmp_path)
    status = cli("ngrams", "--sentences", "s.parquet", "--lang", "en", "--out", "o", f"{flag}={value}")
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert f"argument {flag}" in errors[0] and value in errors[0], errors[0]
    assert list(tmp_path.iterdir()) == []


RAMP_CASES = [
    (["--top-k-ramp-tokens", "1200"], "go together"),
    (["--top-k-full-tokens", "3000"], "go together"),
    (["--mode", "reference", "--top-k-ramp-tokens", "1200", "--top-k-full-tokens", "3000"], "go together"),
    (["--top-k-per-token", "0.6", "--top-k-ramp-tokens", "3000", "--top-k-full-tokens", "3000"], "must be below"),
]


@pytest.mark.parametrize("options, fragment", RAMP_CASES, ids=["ramp alone", "full alone", "no cap", "empty ramp"])
def test_a_ramp_without_its_other_knobs_is_one_line(good, cli, capsys, tmp_path, options, fragment):
    """K rises from the per-token cap at --top-k-ramp-tokens to --top-k at --top-k-full-tokens: one
    without the others, or a ramp of no length, has no K to give (docs/method.md §2, "Short documents")."""
    out = tmp_path / "ngrams"
    status = cli(*ngrams_argv(good.sentences, out), *options)
    assert_clean_failure(status, capsys.readouterr().err, out, out, fragment)


@pytest.mark.parametrize("value", ["1e308", "128", "inf", "nan", "0", "-0.5"])
def test_top_k_per_token_is_a_bounded_positive_number(tmp_path, monkeypatch, cli, capsys, value):
    """--top-k-per-token 1e308 overflowed the cap to K = 1 per document (117 n-grams kept instead of 3,198):
    the flag is a number in (0, 127], 127 the longest n-gram (no cap above it keeps more)."""
    monkeypatch.chdir(tmp_path)
    status = cli(*ngrams_argv(Path("s.parquet"), Path("out")), f"--top-k-per-token={value}")
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert "argument --top-k-per-token" in errors[0] and value in errors[0], errors[0]
    assert list(tmp_path.iterdir()) == []
