"""The hyper-parameter grid searched on dev: BURT Table V's CLUE grid, one job per setting (its seeds),
the best dev mean kept (pipeline/classify/hyperparameters.py, classify_summary.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from testdata import dry_run_jobs

from pipeline.classify.hyperparameters import grid, setting_label

REPO = Path(__file__).resolve().parents[2]


def test_grid_is_the_product_of_the_lists_in_their_order():
    points = grid(batch_size=[8, 16], lr=[1e-5, 2e-5, 3e-5], epochs=[2, 3, 5], max_length=[128, 256])
    assert len(points) == 2 * 3 * 3 * 2
    first = next(iter(points))
    assert first == "batch8-lr1e-05-epochs2-len128"
    assert points[first] == {"batch_size": 8, "lr": 1e-5, "epochs": 2, "max_length": 128}
    # a single value is one point; a repeated one counts once
    assert list(grid(batch_size=[16, 16], lr=3e-5, epochs=3.0, max_length=128)) == ["batch16-lr3e-05-epochs3-len128"]
    assert setting_label(16, 2e-5, 50.0, 256) == "batch16-lr2e-05-epochs50-len256"


def _run(path: Path, task: str, setting: dict, dev: dict[int, float]) -> Path:
    """A classify metrics.json of one setting, with the given dev accuracy per seed."""
    path.mkdir(parents=True)
    record = {
        "task": task,
        "metric": "acc",
        "model": {"path": "m"},
        "settings": {**setting, "warmup_ratio": 0.1},
        "per_seed": {str(seed): {"dev": {"acc": acc}} for seed, acc in dev.items()},
    }
    (path / "metrics.json").write_text(json.dumps(record))
    return path


def test_summary_keeps_the_setting_with_the_best_dev_mean(cli, tmp_path):
    """Settings differing only in lr or epochs are separate candidates; seeds of one setting pool."""
    base = {"batch_size": 16, "lr": 2e-5, "epochs": 3, "max_length": 128}
    runs = [
        _run(tmp_path / "a", "tnews", base, {0: 50.0, 1: 52.0}),
        _run(tmp_path / "b", "tnews", {**base, "lr": 3e-5}, {0: 55.0}),
        _run(tmp_path / "c", "tnews", {**base, "lr": 3e-5}, {1: 57.0}),  # the same setting, another seed
        _run(tmp_path / "d", "tnews", {**base, "epochs": 5}, {0: 58.0, 1: 40.0}),
    ]
    out = tmp_path / "clue.json"
    assert cli("classify-summary", "--runs", *runs, "--benchmark", "clue", "--name", "m", "--out", out) == 0
    chosen = json.loads(out.read_text())["tasks"]["tnews"]
    assert chosen["setting"] == {**base, "lr": 3e-5}
    assert chosen["seeds"] == [0, 1]
    assert chosen["dev"]["acc"]["mean"] == pytest.approx(56.0)
    assert chosen["search"] == {
        "batch16-lr2e-05-epochs3-len128": pytest.approx(51.0),
        "batch16-lr2e-05-epochs5-len128": pytest.approx(49.0),
        "batch16-lr3e-05-epochs3-len128": pytest.approx(56.0),
    }


def test_paper_zh_runs_burts_clue_grid(tmp_path):
    """paper-zh.yaml: 2 batch sizes x 3 lr x 3 epochs x 2 lengths on the classification tasks, 50 epochs
    on CLUEWSC, length 256 on the reading-comprehension tasks, 5 seeds each, per model; with
    classify.fuse_checkpoints one job per backbone and setting fine-tunes the 5 seeds of its 4 models (the
    backbone and its MLM, Span and BURT runs), one output folder each (classify --seed-dirs)."""
    result, _ = dry_run_jobs(REPO / "workflow/config/paper-zh.yaml", tmp_path / "data", print_commands=True)
    assert result.returncode == 0, result.stdout + result.stderr
    jobs = [
        dict(field.split("=", 1) for field in line.strip().removeprefix("wildcards: ").split(", "))
        for line in result.stdout.splitlines()
        if line.startswith("    wildcards: ") and "setting=" in line
    ]
    settings: dict[str, list] = {}
    for job in jobs:
        settings.setdefault(job["task"], []).append(job["setting"])
    commands = [line for line in result.stdout.splitlines() if "-m pipeline classify " in line]
    assert len(commands) == len(jobs) and all("--seeds 5 --seed-dirs " in line for line in commands)
    assert all(line.count("--model ") == 4 and line.count("--out ") == 4 for line in commands)
    for task, found in settings.items():  # each setting once per backbone: bert-base-chinese, chinese-bert-wwm-ext
        assert len(found) == 2 * len(set(found)), task
    assert len(set(settings["tnews"])) == 36, sorted(settings["tnews"])
    assert set(settings["tnews"]) == set(
        grid(batch_size=[8, 16], lr=[1e-5, 2e-5, 3e-5], epochs=[2, 3, 5], max_length=[128, 256])
    )
    assert set(settings["cluewsc"]) == set(
        grid(batch_size=[8, 16], lr=[1e-5, 2e-5, 3e-5], epochs=50, max_length=[128, 256])
    )
    assert set(settings["cmrc2018"]) == set(
        grid(batch_size=[8, 16], lr=[1e-5, 2e-5, 3e-5], epochs=[2, 3, 5], max_length=256)
    )


def test_sample_learning_overlay_trains_the_full_passes_at_the_papers_rate(data_root, tmp_path):
    """`make sample-learning`: sample.yaml + sample-learning.yaml runs SST-2 for one epoch and MRPC for
    three, at lr 3e-5 and batch 16, uncapped (the budget BENCHMARKS.md "Learning on real data" shows
    learning with), and nothing of the sample's other GLUE / CLUE runs."""
    import subprocess
    import sys

    target = f"results/dry-{tmp_path.name}/metrics/glue/minilm.json"
    command = [sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "1", "--configfile"]
    command += ["workflow/config/sample.yaml", "workflow/config/sample-learning.yaml"]
    command += ["--config", f"data_root={data_root}", f"run=dry-{tmp_path.name}", "--", target]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    jobs = [line for line in done.stdout.splitlines() if "-m pipeline classify " in line]
    assert len(jobs) == 2
    for task, epochs in (("sst2", "1"), ("mrpc", "3")):
        line = next(job for job in jobs if f"--task {task} " in job)
        assert f"--epochs {epochs} " in line and "--lr 3e-05 " in line and "--batch-size 16 " in line
        assert "--max-steps 0 " in line
