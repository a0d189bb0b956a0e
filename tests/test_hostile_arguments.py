"""A value outside its flag's domain stops a stage before it reads anything: one line naming the
flag, exit 2 (docs/behaviour.md). The required arguments name files that do not exist, so a
stage that got past its arguments would fail on them instead, naming a file, not the flag."""

from __future__ import annotations

import pytest

# stage → its required arguments (files that do not exist)
REQUIRED = {
    "pretrain": ["--data", "x.parquet", "--model", "m", "--objective", "mlm", "--out", "o"],
    "finetune": ["--model", "m", "--recipe", "twin", "--out", "o", "--max-steps", "1"],
    "bilstm": ["--train", "t.jsonl", "--vectors", "v.bin", "--pooling", "max", "--out", "o"],
    "word2vec": ["--sentences", "s.parquet", "--lang", "en", "--out", "o/v.bin"],
    "extract": ["--dump", "d.xml", "--lang", "en", "--out", "o"],
    "clean": ["--input", "d.parquet", "--lang", "en", "--out", "o"],
    "ngrams": ["--sentences", "s.parquet", "--lang", "en", "--out", "o"],
    "sample": ["--marked", "m.parquet", "--size", "10", "--out", "o.parquet"],
    "classify": ["--model", "m", "--task", "sst2", "--data", "d", "--out", "o"],
    "figures": ["--model", "m", "--data", "d", "--out", "o"],
    "measure-tokens": ["--data", "d", "--out", "o"],
}
# (stage, flag, value): zero, negative, not finite, out of its interval
CASES = [
    ("pretrain", "--max-steps", "-1"),
    ("pretrain", "--mlm-probability", "1.5"),
    ("pretrain", "--mlm-probability", "0"),
    ("pretrain", "--lr", "nan"),
    ("pretrain", "--lr", "0"),
    ("pretrain", "--batch-size", "0"),
    ("pretrain", "--grad-accum", "0"),
    ("pretrain", "--warmup", "1"),
    ("pretrain", "--epochs", "inf"),
    ("pretrain", "--weight-decay", "-0.01"),
    ("pretrain", "--seed", "-1"),
    ("pretrain", "--save-every", "-2"),
    ("pretrain", "--num-workers", "-1"),
    ("finetune", "--max-steps", "0"),
    ("finetune", "--lr", "-1e-5"),
    ("finetune", "--batch-size", "0"),
    ("finetune", "--max-length", "0"),
    ("finetune", "--dropout", "1.0"),
    ("finetune", "--negatives", "0"),
    ("bilstm", "--lr", "nan"),
    ("bilstm", "--epochs", "0"),
    ("bilstm", "--dev-fraction", "1.0"),
    ("bilstm", "--decay", "0"),
    ("bilstm", "--hidden", "-300"),
    ("word2vec", "--dim", "0"),
    ("word2vec", "--epochs", "-5"),
    ("word2vec", "--min-count", "0"),
    ("extract", "--shards", "0"),
    ("extract", "--page-seconds", "-1"),
    ("clean", "--max-tokens", "-1"),
    ("ngrams", "--top-k", "0"),
    ("ngrams", "--max-n", "1"),
    ("ngrams", "--min-count", "0"),
    ("ngrams", "--threshold", "nan"),
    ("sample", "--size", "0"),
    ("classify", "--seeds", "0"),
    ("classify", "--lr", "nan"),
    ("classify", "--dropout", "1.0"),
    ("classify", "--dropout", "-0.1"),
    ("classify", "--max-length", "2"),
    ("classify", "--train-from-dev", "1.5"),
    ("figures", "--batch-size", "0"),
    ("measure-tokens", "--seeds", "0"),
    ("measure-tokens", "--seeds", "-1"),
    ("measure-tokens", "--batch-sizes", "0"),
    ("measure-tokens", "--lengths", "-128"),
]


@pytest.mark.parametrize("stage, flag, value", CASES, ids=[f"{s} {f} {v}" for s, f, v in CASES])
def test_a_value_outside_its_domain_is_one_line_naming_the_flag(tmp_path, monkeypatch, cli, capsys, stage, flag, value):
    monkeypatch.chdir(tmp_path)
    status = cli(stage, *REQUIRED[stage], f"{flag}={value}")
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert f"argument {flag}" in errors[0] and value in errors[0], errors[0]
    assert list(tmp_path.iterdir()) == []


def test_a_value_that_is_not_a_number_is_one_line(cli, capsys):
    assert cli("pretrain", *REQUIRED["pretrain"], "--lr", "fast") == 2
    assert capsys.readouterr().err.strip() == "error: python -m pipeline pretrain: argument --lr: not a number: 'fast'"


def test_help_still_exits_0(cli, capsys):
    assert cli("pretrain", "--help") == 0
    assert "--mlm-probability" in capsys.readouterr().out
