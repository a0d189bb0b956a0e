"""Stage ``classify``: every head on its task family with tiny models, seeds, submissions, bad input."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

from pipeline.classify import submission, tasks
from pipeline.classify.hyperparameters import setting_label
from pipeline.report.assemble import format_number

FAST = ("--max-steps", "4", "--batch-size", "8", "--eval-batch-size", "32")


def run(cli, model, task, root, out, seeds=1, extra=(), substitutes=True):
    """``classify``; the public data root has FewCLUE's splits where CLUE's releases are missing,
    which ``substitutes`` allows (tested apart: test_a_substitute_is_refused_unless_allowed...)."""
    allow = ("--allow-substitutes",) if substitutes else ()
    return cli(
        "classify",
        *("--model", model, "--task", task, "--data", root, "--seeds", seeds, *FAST, "--out", out, *allow, *extra),
    )


def metrics(out: Path) -> dict:
    return json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def predictions(out: Path, seed: int, split: str = "dev") -> list[list[str]]:
    return [line.split("\t") for line in (out / f"{split}_predictions.seed{seed}.tsv").read_text().splitlines()]


def test_single_sentence_and_pair_tasks_on_the_demo_fixtures(cli, tiny_en, demo_root, tmp_path):
    for task, labels in (("sst2", {"0", "1"}), ("rte", {"entailment", "not_entailment"})):
        out = tmp_path / task
        assert run(cli, tiny_en, task, demo_root, out, seeds=2) == 0
        result = metrics(out)
        assert result["seeds"] == [0, 1] and result["metric"] == "acc"
        assert set(result["dev"]["acc"]) == {"mean", "std", "max", "min"}
        for seed in (0, 1):
            rows = predictions(out, seed)
            assert rows[0] == ["index", "label", "prediction"] and len(rows) == 1 + 16
            assert {row[1] for row in rows[1:]} == labels and {row[2] for row in rows[1:]} <= labels
            correct = sum(row[1] == row[2] for row in rows[1:])
            assert result["per_seed"][str(seed)]["dev"]["acc"] == pytest.approx(100 * correct / 16)
        assert result["provenance"]["checkpoint"]["files"]["config.json"]


def test_same_seed_same_run_other_seed_other_run(cli, tiny_en, demo_root, tmp_path):
    assert run(cli, tiny_en, "rte", demo_root, tmp_path / "a", seeds=2) == 0
    assert run(cli, tiny_en, "rte", demo_root, tmp_path / "b", seeds=1, extra=("--first-seed", "1")) == 0
    a, b = metrics(tmp_path / "a"), metrics(tmp_path / "b")
    assert a["per_seed"]["1"]["train_loss"] == b["per_seed"]["1"]["train_loss"]
    assert (tmp_path / "a/dev_predictions.seed1.tsv").read_bytes() == (
        tmp_path / "b/dev_predictions.seed1.tsv"
    ).read_bytes()
    assert a["per_seed"]["0"]["train_loss"] != a["per_seed"]["1"]["train_loss"]
    first = (tmp_path / "a/metrics.json").read_bytes()  # no clock in it: the rerun writes the same bytes
    shutil.rmtree(tmp_path / "a")
    assert run(cli, tiny_en, "rte", demo_root, tmp_path / "a", seeds=2) == 0
    assert (tmp_path / "a/metrics.json").read_bytes() == first


def test_each_head_on_real_rows(cli, tiny_en_real, tiny_zh, real_root, tmp_path):
    """Single (CoLA, TNEWS), pair (MRPC, CSL), regression (STS-B), span (CMRC 2018), multiple choice (ChID,
    C3) and span-marked WSC, each on the first rows of the real files."""
    cases = {
        "cola": ("mcc", tiny_en_real),
        "mrpc": ("f1", tiny_en_real),
        "stsb": ("pearson", tiny_en_real),
        "tnews": ("acc", tiny_zh),
        "csl": ("acc", tiny_zh),
        "cluewsc": ("acc", tiny_zh),
        "cmrc2018": ("em", tiny_zh),
        "chid": ("acc", tiny_zh),
        "c3": ("acc", tiny_zh),
    }
    for task_name, (metric, model) in cases.items():
        out = tmp_path / task_name
        assert run(cli, model, task_name, real_root, out) == 0, task_name
        result = metrics(out)
        task = tasks.TASKS[task_name]
        assert result["metric"] == metric and set(result["dev"]) == set(task.metrics)
        assert 0 <= result["per_seed"]["0"]["dev"][metric] <= 100 or metric == "pearson"
        rows = predictions(out, 0)
        assert len(rows) - 1 == result["examples"]["dev"]
        if task.head == "span":  # every predicted answer is a span of its question's passage
            contexts = {e.id: e.context for e in task.read(task.split_files(real_root, "dev"))}
            assert all(row[2] in contexts[row[0]] for row in rows[1:])
        if task.head == "choice":
            assert {int(row[2]) for row in rows[1:]} <= set(range(7 if task_name == "chid" else 4))
        if task.head == "regression":  # scores, not class indices
            assert len({row[2] for row in rows[1:]}) > 2


def test_test_sets_submissions_and_public_test_labels(cli, tiny_en_real, tiny_zh, real_root, tmp_path):
    real_root = shutil.copytree(real_root, tmp_path / "root")  # a copy: CMRC 2018 gets a test split below
    for task_name, model in (("rte", tiny_en_real), ("stsb", tiny_en_real), ("tnews", tiny_zh), ("cmrc2018", tiny_zh)):
        task = tasks.TASKS[task_name]
        out = tmp_path / task_name
        if task_name == "cmrc2018":  # CMRC 2018's test answers are not public: its dev stands in as test
            shutil.copy(
                real_root / "chinese/cmrc2018/cmrc2018_dev.json", real_root / "chinese/cmrc2018/cmrc2018_test.json"
            )
        assert run(cli, model, task_name, real_root, out) == 0
        test = task.read(task.split_files(real_root, "test"))
        path = out / "submission" / "seed0" / task.submission
        assert submission.validate(task, path, [e.id for e in test]) == []
        labelled = test[0].label is not None
        assert (metrics(out)["test"] is not None) == labelled  # FewCLUE test_public, STS Benchmark: scored
    rte = tasks.TASKS["rte"]
    text = (tmp_path / "rte/submission/seed0/RTE.tsv").read_text()
    assert text.startswith("index\tprediction\n0\t")
    bad = tmp_path / "RTE.tsv"
    bad.write_text(text.replace("entailment", "yes", 1))
    ids = [e.id for e in rte.read(rte.split_files(real_root, "test"))]
    assert any("not one of" in p for p in submission.validate(rte, bad, ids))
    bad.write_text(text.replace("index\tprediction", "id\tlabel"))
    assert submission.validate(rte, bad, ids)
    tnews = (tmp_path / "tnews/submission/seed0/tnews11_predict.json").read_text().splitlines()
    assert set(json.loads(tnews[0])) == {"id", "label"} and json.loads(tnews[0])["label"] in tasks.TNEWS_LABELS


def test_missing_train_split_and_train_from_dev(cli, tiny_zh, real_root, tmp_path, capsys):
    assert run(cli, tiny_zh, "afqmc", real_root, tmp_path / "no") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "chinese/afqmc/train.json" in err and "--train-from-dev" in err
    assert not (tmp_path / "no").exists()
    assert run(cli, tiny_zh, "afqmc", real_root, tmp_path / "yes", extra=("--train-from-dev", "0.5")) == 0
    result = metrics(tmp_path / "yes")
    assert result["train_from_dev"] == 0.5 and result["examples"] == {"train": 12, "dev": 12}


@pytest.mark.parametrize(
    "dev, message",
    [
        ("index\tsentence1\tsentence2\tlabel\n0\tThe cat sat.\tA cat sat.\tcontradiction\n", "label 'contradiction'"),
        ("index\tsentence1\tlabel\n0\tThe cat sat.\tentailment\n", "no column 'sentence2'"),
        ("index\tsentence1\tsentence2\tlabel\n", "no examples"),
    ],
)
def test_bad_input_one_line_exit_2_no_output(cli, tiny_en, demo_root, tmp_path, capsys, dev, message):
    root = tmp_path / "root"
    shutil.copytree(demo_root / "glue", root / "glue")
    (root / "glue/RTE/dev.tsv").write_text(dev)
    out = tmp_path / "out"
    assert run(cli, tiny_en, "rte", root, out) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err and str(root / "glue/RTE/dev.tsv") in err
    assert not out.exists()


def test_summary_picks_the_batch_size_on_dev_and_feeds_the_tables(cli, tiny_en, demo_root, tmp_path):
    runs = []
    for task in ("sst2", "rte"):
        for batch in ("4", "8"):
            out = tmp_path / f"{task}-{batch}"
            assert (
                cli(
                    "classify",
                    "--model",
                    tiny_en,
                    "--task",
                    task,
                    "--data",
                    demo_root,
                    "--seeds",
                    "2",
                    "--max-steps",
                    "3",
                    "--batch-size",
                    batch,
                    "--out",
                    out,
                )
                == 0
            )
            runs.append(out)
    summary = tmp_path / "glue" / "tiny.json"
    assert cli("classify-summary", "--runs", *runs, "--benchmark", "glue", "--name", "tiny", "--out", summary) == 0
    data = json.loads(summary.read_text())
    for task in ("sst2", "rte"):
        chosen = data["tasks"][task]
        means = {label: mean for label, mean in chosen["search"].items()}
        assert list(means) == [setting_label(batch, 3e-5, 3, 128) for batch in (4, 8)]
        best = max(means, key=lambda label: (means[label], -list(means).index(label)))
        assert setting_label(**chosen["setting"]) == best
        assert chosen["batch_size"] == chosen["setting"]["batch_size"]
        assert chosen["seeds"] == [0, 1]
    assert data["avg"]["mean"] == pytest.approx(
        (data["tasks"]["sst2"]["dev"]["acc"]["mean"] + data["tasks"]["rte"]["dev"]["acc"]["mean"]) / 2
    )
    # the average seed by seed (ULR-BERT Table 3's Avg. for each seed), and its spread over the seeds
    per_seed = {
        seed: (data["tasks"]["sst2"]["per_seed"][seed]["dev"] + data["tasks"]["rte"]["per_seed"][seed]["dev"]) / 2
        for seed in ("0", "1")
    }
    assert data["avg"]["per_seed"] == pytest.approx(per_seed)
    assert data["avg"]["std"] == pytest.approx(statistics.stdev(per_seed.values()))
    assert data["avg"]["mean"] == pytest.approx(statistics.mean(per_seed.values()))
    assert cli("tables", "--metrics", summary, "--out", tmp_path / "tables") == 0
    row = next(line for line in (tmp_path / "tables/glue.md").read_text().splitlines() if line.startswith("| tiny |"))
    sst2 = data["tasks"]["sst2"]["dev"]["acc"]
    printed = f"{format_number(sst2['mean'], 1)} ± {format_number(sst2['std'], 1)}"
    assert printed in row and "| dev |" in row
    average = f"{format_number(data['avg']['mean'], 1)} ± {format_number(data['avg']['std'], 1)}"
    assert row.endswith(f"| {average} | – |"), row  # Avg. with its spread over seeds, then the Gain
    published = (tmp_path / "tables/glue.md").read_text()
    assert "| published: ULR-BERT_BASE (ULR-BERT, Table 3) | – | test | 56.5 | 94.3 |" in published
    assert (
        cli(
            "classify-summary",
            "--runs",
            runs[0],
            runs[0],
            "--benchmark",
            "glue",
            "--name",
            "x",
            "--out",
            tmp_path / "dup.json",
        )
        == 2
    )
    assert (
        cli(
            "classify-summary",
            "--runs",
            runs[0],
            "--benchmark",
            "clue",
            "--name",
            "x",
            "--out",
            tmp_path / "wrong.json",
        )
        == 2
    )


def _summary(path: Path, name: str, scores: dict[str, float]) -> Path:
    """A classify-summary file with the given dev means (std 1.0), as the stage writes it."""
    spread = {
        task: {
            "metric": "acc",
            "batch_size": 16,
            "seeds": [0, 1],
            "search": {"batch16-lr3e-05-epochs3-len128": mean},
            "dev": {"acc": {"mean": mean, "std": 1.0, "max": mean + 1, "min": mean - 1}},
        }
        for task, mean in scores.items()
    }
    record = {
        "task": "glue",
        "model": {"name": name, "path": f"models/{name}", "kind": "classifier", "pooling": None},
        "tasks": spread,
        "avg": {"mean": sum(scores.values()) / len(scores), "columns": list(scores)},
        "geogranno": None,
        "provenance": {"stage": "classify-summary"},
    }
    path.write_text(json.dumps(record))
    return path


def test_gain_over_the_starting_checkpoint_on_the_same_tasks_only(cli, tmp_path):
    base = _summary(tmp_path / "base.json", "minilm", {"sst2": 80.0, "rte": 60.0})
    same = _summary(tmp_path / "same.json", "minilm+burt", {"sst2": 82.0, "rte": 61.0})
    other = _summary(tmp_path / "other.json", "minilm+mlm", {"sst2": 90.0})
    assert cli("tables", "--metrics", base, same, other, "--out", tmp_path / "t") == 0
    rows = {
        line.split(" | ")[0][2:]: line
        for line in (tmp_path / "t/glue.md").read_text().splitlines()
        if line.startswith("| minilm")
    }
    assert rows["minilm+burt"].endswith("| 71.5 | 1.5 |")  # (82 + 61) / 2 - (80 + 60) / 2
    assert rows["minilm+mlm"].endswith("| 90.0 | – |") and rows["minilm"].endswith("| 70.0 | – |")


def test_mnli_writes_both_test_submissions(cli, tiny_en_real, real_root, tmp_path):
    """GLUE's server takes MNLI-m.tsv and MNLI-mm.tsv: the matched and the mismatched test sets, in
    GLUE's test layout (index, ids, genre, parses, sentence1, sentence2; no label), both predicted."""
    import csv

    root = shutil.copytree(real_root, tmp_path / "root")
    header = ["index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse"]
    header += ["sentence1_parse", "sentence2_parse", "sentence1", "sentence2"]
    for split, source in (("matched", "dev_matched"), ("mismatched", "dev_mismatched")):
        with open(root / f"nli/mnli_dev/multinli_1.0_{source}.csv", newline="", encoding="utf-8") as handle:
            pairs = [(row["sentence1"], row["sentence2"]) for row in csv.DictReader(handle)][:12]
        rows = ["\t".join(header)]
        rows += [f"{i}\t{i}\t{i}n\tfiction\t(a)\t(b)\t(ROOT a)\t(ROOT b)\t{a}\t{b}" for i, (a, b) in enumerate(pairs)]
        (root / "glue/MNLI").mkdir(parents=True, exist_ok=True)
        (root / f"glue/MNLI/test_{split}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "mnli"
    assert run(cli, tiny_en_real, "mnli", root, out, extra=("--train-from-dev", "0.5")) == 0
    mnli = tasks.TASKS["mnli"]
    for name, file in (("test", "MNLI-m.tsv"), ("test_mm", "MNLI-mm.tsv")):
        ids = [e.id for e in mnli.read(mnli.split_files(root, name))]
        assert len(ids) == 12
        assert submission.validate(mnli, out / "submission" / "seed0" / file, ids) == []
    assert (
        run(cli, tiny_en_real, "mnli", root, tmp_path / "no-test", extra=("--train-from-dev", "0.5", "--no-test")) == 0
    )
    assert not (tmp_path / "no-test" / "submission").exists()


def test_a_substitute_is_refused_unless_allowed_and_then_recorded_and_noted(cli, tiny_zh, real_root, tmp_path, capsys):
    """BURT Table V runs CLUE's TNEWS; the data root has only FewCLUE's: refused by default, naming the
    missing release and the substitute; allowed, recorded in the metrics and noted under the table."""
    assert run(cli, tiny_zh, "tnews", real_root, tmp_path / "no", substitutes=False) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "chinese/tnews/train.json" in err and "chinese/fewclue/tnews" in err, err
    assert "--allow-substitutes" in err and not (tmp_path / "no").exists()
    out = tmp_path / "tnews"
    assert run(cli, tiny_zh, "tnews", real_root, out) == 0
    used = metrics(out)["substitutes"]
    assert used["train"] == "chinese/fewclue/tnews/train_few_all.json" and set(used) >= {"train", "dev"}
    summary = tmp_path / "clue.json"
    assert cli("classify-summary", "--runs", out, "--benchmark", "clue", "--name", "tiny-zh", "--out", summary) == 0
    notes = json.loads(summary.read_text())["notes"]
    assert "TNEWS train from chinese/fewclue/tnews/train_few_all.json, a substitute" in " ".join(notes)
    assert cli("tables", "--metrics", summary, "--out", tmp_path / "tables") == 0
    clue_md = "".join(p.read_text() for p in (tmp_path / "tables").glob("*.md") if "TNEWS" in p.read_text())
    assert "- tiny-zh: TNEWS train from chinese/fewclue/tnews/train_few_all.json, a substitute" in clue_md


def test_the_release_is_no_substitute(cli, tiny_en, demo_root, tmp_path):
    out = tmp_path / "sst2"
    assert run(cli, tiny_en, "sst2", demo_root, out, substitutes=False) == 0
    assert metrics(out)["substitutes"] == {}


def test_seeds_of_one_job_write_what_one_seed_jobs_write(cli, tiny_en, demo_root, tmp_path):
    """--seed-dirs: the workflow runs a setting's seeds in one job (bench/classify_fixed_cost.py: the fixed
    cost per job is 6-22% of a sample job and most of a paper-setting GPU job) and keeps one output per
    seed, byte for byte what a one-seed job with --out OUT/seed<S> writes."""
    assert run(cli, tiny_en, "rte", demo_root, tmp_path / "together", seeds=2, extra=("--seed-dirs",)) == 0
    assert sorted(p.name for p in (tmp_path / "together").iterdir()) == ["seed0", "seed1"]
    for seed in (0, 1):
        alone = tmp_path / "alone" / f"seed{seed}"
        together = tmp_path / "together" / f"seed{seed}"
        # the same --out text as the job above gives its seed folder
        out = tmp_path / "together" / f"seed{seed}"
        moved = tmp_path / f"kept{seed}"
        together.rename(moved)
        assert run(cli, tiny_en, "rte", demo_root, out, seeds=1, extra=("--first-seed", str(seed))) == 0
        alone.parent.mkdir(exist_ok=True)
        out.rename(alone)
        assert sorted(p.name for p in moved.iterdir()) == sorted(p.name for p in alone.iterdir())
        for name in ("metrics.json", f"dev_predictions.seed{seed}.tsv"):
            assert (moved / name).read_bytes() == (alone / name).read_bytes()


def test_bf16_on_a_machine_without_a_gpu_trains_in_float32_and_says_so(cli, tiny_en, demo_root, tmp_path, caplog):
    """The paper configs set classify.bf16; the Trainer refuses bfloat16 on CPU. Found by the paper-zh
    rehearsal (docs/stages/rehearsal.md): every classify job stopped. On CPU the run trains in float32,
    as pretrain and finetune do, warns, and records bf16 false."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: --bf16 is honoured")
    with caplog.at_level("WARNING", logger="pipeline.classify"):
        assert run(cli, tiny_en, "rte", demo_root, tmp_path / "bf16", extra=("--bf16",)) == 0
    assert "needs a GPU" in caplog.text
    assert '"bf16": false' in (tmp_path / "bf16" / "metrics.json").read_text(encoding="utf-8")


def test_an_unlabelled_multiple_choice_test_set_is_collated(tiny_en):
    """CLUE's own ChID and C3 test sets have no answers; transformers' collator reads a label from every
    row (KeyError 'labels'), so predicting them stopped every ChID job of the paper-zh rehearsal."""
    from transformers import AutoTokenizer

    from pipeline.classify import encoding
    from pipeline.classify.examples import Example
    from pipeline.classify.training import collator

    tokenizer = AutoTokenizer.from_pretrained(tiny_en)
    task = tasks.TASKS["chid"]
    rows = [Example(id=str(i), text_a="", label=label, choices=["the city", "a river", "new york"])
            for i, label in enumerate([None, None])]  # fmt: skip
    batch = collator(task, tokenizer)(list(encoding.encode_choices(task, tokenizer, rows, 16)))
    assert batch["input_ids"].shape[:2] == (2, 3) and "labels" not in batch
    labelled = [Example(id="0", text_a="", label=1, choices=["the city", "a river", "new york"])]
    batch = collator(task, tokenizer)(list(encoding.encode_choices(task, tokenizer, labelled, 16)))
    assert batch["labels"].tolist() == [1]


def test_live_curves_of_each_seed_go_to_tensorboard(cli, tiny_en, demo_root, tmp_path, monkeypatch):
    """--tracking-dir: one TensorBoard folder per seed, the Trainer's records named as its own callback
    names them (the run's mean loss: train/train_loss; pipeline/tracking.py)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    monkeypatch.delenv("ULR_REPORT_TO", raising=False)
    board = tmp_path / "tb"
    assert run(cli, tiny_en, "sst2", demo_root, tmp_path / "sst2", extra=("--tracking-dir", board)) == 0
    events = EventAccumulator(str(board / "seed-0"))
    events.Reload()
    assert {"train/train_loss", "train/epoch"} <= set(events.Tags()["scalars"])
    assert events.Scalars("train/train_loss")[0].value > 0
