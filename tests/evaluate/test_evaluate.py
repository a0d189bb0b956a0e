"""The ``evaluate`` and ``figures`` stages end to end on the demo fixtures with a tiny random BERT."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline.evaluate.evaluate import TASKS

DEMO_DATA = Path(__file__).resolve().parents[2] / "workflow" / "demo" / "data"


@pytest.fixture(scope="module")
def results(tiny_model, tmp_path_factory):
    """Every task once on the tiny model (module scope: the model loads once per task)."""
    from pipeline.cli import main

    out = tmp_path_factory.mktemp("metrics")
    for task in TASKS:
        assert (
            main(
                [
                    "evaluate",
                    task,
                    "--model",
                    str(tiny_model),
                    "--data",
                    str(DEMO_DATA),
                    "--out",
                    str(out / f"{task}.json"),
                    "--name",
                    "tiny",
                ]
            )
            == 0
        )
    return out


def load(results, task):
    return json.loads((results / f"{task}.json").read_text())


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_writes_the_pinned_fields(results, task, tiny_model):
    metrics = load(results, task)
    assert metrics["task"] == task
    assert metrics["model"] == {"name": "tiny", "path": str(tiny_model), "kind": "transformer", "pooling": "mean"}
    record = metrics["provenance"]
    assert record["stage"] == "evaluate" and record["seed"] == 0 and record["code_version"]
    assert record["checkpoint"]["checkpoint"]["files"]["model.safetensors"]
    assert record["inputs"] and all(len(item["sha256"]) == 64 for item in record["inputs"])


def test_task_fields(results):
    analogy = load(results, "analogy")
    assert set(analogy["levels"]) == {"word", "phrase", "sentence"}
    assert {"sem", "syn", "avg"} <= set(analogy["levels"]["word"])
    assert {"accuracy", "n", "ties", "ppr", "pnr", "rank_histogram"} <= set(analogy["categories"]["word/male-female"])
    assert set(analogy["ppr"]) == {"phrase", "sentence"} and isinstance(analogy["ties"], int)
    sts = load(results, "sts")
    assert set(sts["scores"]) == {"STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R"}
    assert set(sts["subsets"]["STS12"]) == {"MSRvid", "surprise.OnWN"}
    assert sts["n"]["STS15"] == 7
    subsets = sts["subsets"]["STS12"]
    assert sts["scores"]["STS12"] == pytest.approx(sum(subsets.values()) / len(subsets))  # a year = mean of its sets
    assert sts["avg"] == pytest.approx(sum(sts["scores"].values()) / 7)
    wordsim = load(results, "wordsim")
    assert {"SimLex-999", "WS-353-ALL", "WS-353-SIM", "WS-353-REL", "MEN"} == set(wordsim["scores"])
    geo = load(results, "geogranno")
    assert set(geo["splits"]) == {"train", "dev", "all"}
    assert set(geo["by_query_length"]["dev"]) == {"1-6", "7-8", "9-15"}
    assert set(geo["by_length_difference"]["train"]) == {">=0", ">=2", ">=3"}
    faq = load(results, "faq")
    assert set(faq["datasets"]) == {"BQ", "AFQMC", "BUSTM"}
    examples = load(results, "analogy_examples")  # the printed questions: the package file is its input
    assert examples["n"] == 3 and len(examples["scores"]) == 6
    assert [item["path"] for item in examples["provenance"]["inputs"]] == ["pipeline/tasks/analogy_examples.yaml"]
    assert {"acc1", "mrr", "queries", "faq_size"} <= set(faq["datasets"]["BQ"])


def test_same_input_and_seed_give_identical_bytes(results, cli, tiny_model, demo_data, tmp_path):
    assert (
        cli(
            "evaluate",
            "analogy",
            "--model",
            tiny_model,
            "--data",
            demo_data,
            "--out",
            tmp_path / "a.json",
            "--name",
            "tiny",
        )
        == 0
    )
    assert (tmp_path / "a.json").read_bytes() == (results / "analogy.json").read_bytes()


def test_several_tasks_in_one_call_write_what_each_call_alone_writes(results, cli, tiny_model, demo_data, tmp_path):
    """One model load for several tasks (the workflow's evaluate_<lang> jobs): every JSON byte-identical to
    the task's own call, in whatever order the tasks come, and each lists only its own data files."""
    tasks = ["sts", "geogranno", "analogy", "wordsim"]
    outs = [tmp_path / task / "tiny.mean.json" for task in tasks]
    assert cli("evaluate", *tasks, "--model", tiny_model, "--data", demo_data, "--out", *outs, "--name", "tiny") == 0
    for task, out in zip(tasks, outs, strict=True):
        assert out.read_bytes() == (results / f"{task}.json").read_bytes(), task
    geogranno = json.loads(outs[1].read_text())["provenance"]["inputs"]
    assert geogranno and all("geogranno" in item["path"] for item in geogranno)


def test_a_task_that_fails_leaves_none_of_the_files(cli, tiny_model, demo_data, tmp_path, capsys):
    """The files are written once every task is scored: the analogy's is not left behind."""
    root = tmp_path / "root"
    shutil.copytree(demo_data, root)
    shutil.rmtree(root / "geogranno")
    outs = [tmp_path / "analogy.json", tmp_path / "geogranno.json"]
    assert cli("evaluate", "analogy", "geogranno", "--model", tiny_model, "--data", root, "--out", *outs) == 2
    assert "train_geo_granno.jsonl: missing GEOGRANNO train set" in capsys.readouterr().err
    assert not any(out.exists() for out in outs)


@pytest.mark.parametrize(
    "tasks, outs, fragment",
    [
        (["sts", "analogy"], ["a.json"], "--out: names 1 files for 2 tasks (sts analogy): one per task"),
        (["sts"], ["a.json", "b.json"], "--out: names 2 files for 1 tasks (sts): one per task"),
        (["sts", "sts"], ["a.json", "b.json"], "task: sts given twice"),
        (["sts", "analogy"], ["a.json", "a.json"], "a.json given twice"),
    ],
)
def test_tasks_and_outs_that_do_not_pair_are_one_line(
    cli, tiny_model, demo_data, tmp_path, capsys, tasks, outs, fragment
):
    paths = [tmp_path / out for out in outs]
    assert cli("evaluate", *tasks, "--model", tiny_model, "--data", demo_data, "--out", *paths) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err, err
    assert not any(path.exists() for path in paths)


@pytest.mark.parametrize("baseline", ["bm25", "tfidf"])
def test_lexical_baselines_on_retrieval(cli, baseline, demo_data, tmp_path):
    assert cli("evaluate", "faq", "--model", baseline, "--data", demo_data, "--out", tmp_path / "f.json") == 0
    metrics = json.loads((tmp_path / "f.json").read_text())
    assert metrics["model"]["kind"] == baseline and metrics["model"]["path"] is None
    assert metrics["datasets"]["AFQMC"]["faq_size"] == 3


def test_lexical_baseline_on_an_embedding_task_is_refused(cli, demo_data, tmp_path, capsys):
    assert cli("evaluate", "sts", "--model", "bm25", "--data", demo_data, "--out", tmp_path / "x.json") == 2
    assert "lexical retrieval baseline" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_bag_baselines(cli, tiny_model, demo_data, tmp_path):
    assert (
        cli(
            "evaluate",
            "wordsim",
            "--model",
            f"input-embeddings:{tiny_model}",
            "--data",
            demo_data,
            "--out",
            tmp_path / "w.json",
        )
        == 0
    )
    assert json.loads((tmp_path / "w.json").read_text())["model"]["kind"] == "input-embeddings"


def test_missing_data_names_the_path(cli, tiny_model, tmp_path, capsys):
    (tmp_path / "root").mkdir()
    assert (
        cli("evaluate", "geogranno", "--model", "tfidf", "--data", tmp_path / "root", "--out", tmp_path / "g.json") == 2
    )
    assert "train_geo_granno.jsonl: missing GEOGRANNO train set" in capsys.readouterr().err


def test_figures(cli, tiny_model, demo_data, tmp_path):
    assert cli("figures", "--model", tiny_model, "--data", demo_data, "--out", tmp_path / "fig") == 0
    for name in ("analogy_pca_male_female.png", "analogy_tsne_differences.png"):
        data = (tmp_path / "fig" / name).read_bytes()
        assert data.startswith(b"\x89PNG") and b"provenance" not in data[:8]
        assert b"code_version" in data  # provenance in the PNG metadata
