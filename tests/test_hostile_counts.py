"""Every count a user gives is bounded before it is used (docs/behaviour.md): an absurd count is one
line naming its flag, exit 2, before the stage reads or allocates anything; a count that does not
fit the data it meets (more seeds than 32-bit seeds remain, a --train-from-dev share that leaves
no training or no dev example) is one line naming the flag and the numbers."""

from __future__ import annotations

import argparse
import importlib
import shutil
import subprocess
import sys

import pytest
from hostile import assert_clean_failure
from testdata import DEMO_DATA, REPO

from pipeline.cli import STAGES, stage_module

HUGE = "1000000000000"  # 10**12: no stage has a use for this many of anything


# (stage, flag) of every count: a flag whose value says how many of something a stage makes,
# holds, runs or reads (steps, epochs, seeds, batch sizes, shards, workers, lengths, sizes, ...)
COUNT_FLAGS = [
    ("extract", "--shards"),
    ("extract", "--batch-docs"),
    ("extract", "--batch-chars"),
    ("merge-slices", "--shards"),
    ("merge-slices", "--shard"),
    ("merge-slices", "--batch-docs"),
    ("merge-slices", "--batch-chars"),
    ("clean", "--min-tokens"),
    ("clean", "--max-tokens"),
    ("ngrams", "--max-n"),
    ("ngrams", "--top-k"),
    ("ngrams", "--min-count"),
    ("ngrams", "--batch-chars"),
    ("sample", "--size"),
    ("word2vec", "--dim"),
    ("word2vec", "--window"),
    ("word2vec", "--min-count"),
    ("word2vec", "--epochs"),
    ("word2vec", "--workers"),
    ("evaluate", "--batch-size"),
    ("evaluate", "--max-length"),
    ("evaluate", "--kfold"),
    ("figures", "--batch-size"),
    ("figures", "--max-length"),
    ("tiny-model", "--vocab-size"),
    ("tiny-model", "--min-frequency"),
    ("tiny-model", "--hidden"),
    ("tiny-model", "--layers"),
    ("tiny-model", "--heads"),
    ("tiny-model", "--max-length"),
    ("tokenize", "--max-length"),
    ("pretrain", "--max-length"),
    ("pretrain", "--max-steps"),
    ("pretrain", "--epochs"),
    ("pretrain", "--batch-size"),
    ("pretrain", "--grad-accum"),
    ("pretrain", "--save-every"),
    ("pretrain", "--num-workers"),
    ("pretrain", "--heldout"),
    ("pretrain", "--eval-every"),
    ("finetune", "--max-steps"),
    ("finetune", "--epochs"),
    ("finetune", "--batch-size"),
    ("finetune", "--negatives"),
    ("finetune", "--max-length"),
    ("finetune", "--eval-steps"),
    ("finetune", "--save-every"),
    ("finetune", "--num-workers"),
    ("classify", "--seeds"),
    ("classify", "--max-steps"),
    ("classify", "--batch-size"),
    ("classify", "--epochs"),
    ("classify", "--max-length"),
    ("classify", "--eval-batch-size"),
    ("classify", "--max-train-examples"),
    ("bilstm", "--frequent-words"),
    ("bilstm", "--hidden"),
    ("bilstm", "--max-train-pairs"),
    ("bilstm", "--epochs"),
    ("bilstm", "--batch-size"),
    ("bilstm", "--classifier-hidden"),
]


def _parser(stage: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    importlib.import_module(stage_module(stage)).add_arguments(parser)
    return parser


@pytest.mark.parametrize("stage, flag", COUNT_FLAGS, ids=[f"{s} {f}" for s, f in COUNT_FLAGS])
def test_an_absurd_count_is_one_line_naming_the_flag(tmp_path, monkeypatch, cli, capsys, stage, flag):
    monkeypatch.chdir(tmp_path)
    status = cli(stage, f"{flag}={HUGE}")  # argparse checks each value as it reads it, before required ones
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert f"argument {flag}: must be" in errors[0] and HUGE in errors[0], errors[0]
    assert list(tmp_path.iterdir()) == []


def test_every_integer_option_of_every_stage_has_an_upper_bound():
    """The kind, not the instances: a count flag added later without a bound fails here."""
    unbounded = []
    for stage in STAGES:
        for action in _parser(stage)._actions:
            kind = getattr(action.type, "__name__", "")
            if action.choices or kind not in ("integer", "int", "_order", "_positive"):
                continue
            if (stage, action.option_strings[-1]) == ("extract", "--max-page-bytes"):
                continue  # a cap on one page of the input, not a count the stage allocates by
            try:
                action.type(HUGE)
            except argparse.ArgumentTypeError:
                continue
            unbounded.append(f"{stage} {action.option_strings[-1]}")
    assert unbounded == []


def test_seeds_one_billion_is_refused_before_a_list_of_them_exists(tmp_path):
    """The reported case, under a 1 GiB address-space limit: one line, no MemoryError, no OOM kill."""
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, resource.RLIM_INFINITY))\n"
        "from pipeline.cli import main\n"
        f"sys.exit(main(['classify', '--model', 'm', '--task', 'sst2', '--data', {str(DEMO_DATA)!r}, "
        "'--out', 'o', '--seeds', '1000000000', '--max-steps', '1']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert_clean_failure(result.returncode, result.stderr, "--seeds", tmp_path / "o", "must be an integer in [1, 100]")


def test_seeds_past_the_last_32_bit_seed_are_one_line(cli, capsys, tmp_path):
    out = tmp_path / "out"
    status = cli(
        "classify",
        *("--model", "m", "--task", "sst2", "--data", DEMO_DATA, "--out", out),
        *("--first-seed", "4294967295", "--seeds", "2"),
    )
    assert_clean_failure(status, capsys.readouterr().err, "--first-seed", out, "4294967295 .. 4294967296")


def test_the_last_32_bit_seed_itself_is_allowed(cli, capsys, tmp_path):
    """4294967295 with one seed is in numpy's range: it gets past the seed check (and fails on the model)."""
    status = cli(
        "classify",
        *("--model", str(tmp_path / "no-model"), "--task", "sst2", "--data", DEMO_DATA, "--out", tmp_path / "out"),
        *("--first-seed", "4294967295", "--seeds", "1"),
    )
    err = capsys.readouterr().err
    assert status == 2 and "no-model" in err and "--first-seed" not in err, err


@pytest.fixture
def dev_only_root(tmp_path):
    """A data root with SST-2's 16 dev rows and no train split."""
    root = tmp_path / "root"
    (root / "glue" / "SST-2").mkdir(parents=True)
    shutil.copy(DEMO_DATA / "glue" / "SST-2" / "dev.tsv", root / "glue" / "SST-2" / "dev.tsv")
    return root


@pytest.mark.parametrize(
    "share, counts", [("0.01", "leaves 0 to train on and 16 to score"), ("0.99", "16 to train on and 0")]
)
def test_a_train_from_dev_share_that_leaves_a_side_empty_is_one_line(
    cli, capsys, tmp_path, dev_only_root, share, counts
):
    out = tmp_path / "out"
    status = cli(
        "classify",
        *("--model", tmp_path / "no-model", "--task", "sst2", "--data", dev_only_root, "--out", out),
        *("--train-from-dev", share, "--seeds", "1"),
    )
    err = capsys.readouterr().err
    assert_clean_failure(status, err, "--train-from-dev", out, counts)
    assert "SST-2/dev.tsv" in err


def test_a_train_from_dev_share_with_both_sides_gets_past_the_split(cli, capsys, tmp_path, dev_only_root):
    status = cli(
        "classify",
        *("--model", tmp_path / "no-model", "--task", "sst2", "--data", dev_only_root, "--out", tmp_path / "out"),
        *("--train-from-dev", "0.1", "--seeds", "1"),
    )
    err = capsys.readouterr().err
    assert status == 2 and "no-model" in err and "--train-from-dev" not in err, err


def test_ngrams_max_n_127_is_refused_before_counting(cli, capsys, tmp_path):
    """N = 127 was allowed, and counting every n up to 127 of one 5 MB sentence ran out of memory; the
    papers' N is 5 or 6, and docs/method.md §2 compares N up to 10."""
    status = cli(
        "ngrams", "--sentences", tmp_path / "s.parquet", "--lang", "en", "--out", tmp_path / "o", "--max-n", "127"
    )
    err = capsys.readouterr().err
    assert_clean_failure(status, err, "--max-n", tmp_path / "o", "[2, 16]")


def test_ngrams_max_n_16_is_allowed(cli, capsys, tmp_path):
    status = cli(
        "ngrams", "--sentences", tmp_path / "s.parquet", "--lang", "en", "--out", tmp_path / "o", "--max-n", "16"
    )
    err = capsys.readouterr().err
    assert status == 2 and "s.parquet" in err and "--max-n" not in err, err


@pytest.mark.parametrize("mfu", ["0", "0.0"])
def test_plan_mfu_outside_0_1_is_one_line(cli, capsys, tmp_path, mfu):
    out = tmp_path / "plan.md"
    status = cli("plan", "--configfile", REPO / "workflow" / "config" / "demo.yaml", f"--mfu={mfu}", "--out", out)
    assert_clean_failure(status, capsys.readouterr().err, "--mfu", out)


def test_plan_mfu_1_is_allowed(cli, capsys, tmp_path):
    out = tmp_path / "plan.md"
    assert cli("plan", "--configfile", REPO / "workflow" / "config" / "demo.yaml", "--mfu", "1", "--out", out) == 0
    assert out.read_text()
