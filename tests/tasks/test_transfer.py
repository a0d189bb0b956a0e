"""Transfer tasks (paper 004 Table 3): SentEval's protocols, the readers on real rows, averages, caching."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from testdata import DEMO_DATA

from pipeline.errors import InputError
from pipeline.tasks import transfer, transfer_classifier, transfer_data, transfer_regression
from pipeline.tasks.data_root import DataRoot


def separable(n: int = 120, dim: int = 6, seed: int = 0, classes: int = 2):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    x = rng.normal(size=(n, dim))
    x[:, 0] += 6.0 * y  # the classes lie apart along the first axis
    return x, y


def test_cv_splits_are_deterministic_per_seed():
    _, y = separable(100)
    first, again, other = (transfer_classifier.folds(y, 10, seed) for seed in (7, 7, 8))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(first, again))
    assert any(not np.array_equal(a[1], b[1]) for a, b in zip(first, other))
    held = np.concatenate([test for _, test in first])
    assert sorted(held) == list(range(100))  # every item is held out exactly once
    assert all(np.bincount(y[test]).tolist() == [5, 5] for _, test in first)  # stratified


def test_classifier_protocols_on_a_separable_set():
    """scikit-learn's logistic regression; the Adam one (the default): tests/tasks/test_transfer_adam.py."""
    x, y = separable(120)
    nested = transfer_classifier.nested_kfold(x, y, k=5, seed=0, classifier="sklearn")
    assert nested.devacc == 100.0 and nested.acc == 100.0 and len(nested.C) == 5
    assert all(c in transfer_classifier.REGULARISATION for c in nested.C)
    x_test, y_test = separable(40, seed=1)
    kfold = transfer_classifier.kfold_then_test(x, y, x_test, y_test, k=5, seed=0, classifier="sklearn")
    assert (kfold.devacc, kfold.acc) == (100.0, 100.0) and np.array_equal(kfold.predictions, y_test)
    split = transfer_classifier.dev_then_test(
        x, y, *separable(30, seed=2), x_test, y_test, seed=0, classifier="sklearn"
    )
    assert (split.devacc, split.acc) == (100.0, 100.0)
    # labels carry no signal: accuracy near chance, not 100
    shuffled = np.random.default_rng(3).permutation(y)
    assert transfer_classifier.nested_kfold(x, shuffled, k=5, seed=0, classifier="sklearn").acc < 75


def test_score_distribution_is_tai_et_al():
    assert np.allclose(
        transfer_regression.score_distribution(np.array([1.0, 3.6, 5.0])),
        [[1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.4, 0.6, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0]],
    )


def test_relatedness_regression_learns_a_linear_score():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 4))
    y = np.clip(3 + x[:, 0] - 0.5 * x[:, 1], 1, 5)
    predicted, dev = transfer_regression.fit_predict(
        x[:200], y[:200], x[200:250], y[200:250], x[250:], seed=0, epochs_per_round=10
    )
    assert dev > 90 and transfer_regression.correlations(predicted, y[250:])["pearson"] > 90


def test_micro_and_macro_dev_averages():
    details = {"MR": {"devacc": 80.0, "ndev": 300}, "TREC": {"devacc": 90.0, "ndev": 100}, "SICK-R": {"pearson": 85.0}}
    assert transfer.averages(details) == {"micro": 82.5, "macro": 85.0}


class CountingEncoder:
    """Bag of character counts; records every text it is asked to encode."""

    kind = "fake"

    def __init__(self):
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen += list(texts)
        out = np.zeros((len(texts), 27), dtype=np.float32)
        for row, text in enumerate(texts):
            for char in text.lower():
                out[row, ord(char) - 97 if "a" <= char <= "z" else 26] += 1
        return out


def test_each_distinct_sentence_is_encoded_once_per_run():
    encoder = CountingEncoder()
    result = transfer.evaluate(encoder, transfer.load(DataRoot(DEMO_DATA)), tasks=("SICK-E", "MR"), kfold=3)
    assert len(encoder.seen) == len(set(encoder.seen)) == result["encoded"]["sentences"]
    sick = transfer_data.load_task(DataRoot(DEMO_DATA), "SICK-E")
    assert result["encoded"]["per_task"]["SICK-E"] == len({t for part in sick.values() for t in part.texts()})
    cache = transfer.SentenceCache(encoder)
    assert cache.add(["a b", "c", "a b"]) == 2 and cache.add(["c", "d"]) == 1  # a later task reuses "c"
    assert np.array_equal(cache(["c", "a b"]), encoder.encode(["c", "a b"]))


def test_the_cli_writes_the_contract(tmp_path, cli):
    """--model bilstm:DIR on the demo fixtures: per task its metric, micro and macro."""
    vectors = DEMO_DATA / "vectors" / "glove-demo-16d.vec"
    pairs = DEMO_DATA / "nli" / "snli_dev_test" / "s1.dev"
    model = tmp_path / "bilstm"
    assert (
        cli(
            "bilstm",
            "--train",
            pairs,
            "--vectors",
            vectors,
            "--pooling",
            "bf-combined",
            "--hidden",
            "4",
            "--epochs",
            "1",
            "--out",
            model,
            "--metrics",
            tmp_path / "snli.json",
        )
        == 0
    )
    out = tmp_path / "transfer.json"
    assert (
        cli(
            "evaluate",
            "transfer",
            "--model",
            f"bilstm:{model}",
            "--name",
            "bilstm",
            "--data",
            DEMO_DATA,
            "--kfold",
            "3",
            "--out",
            out,
        )
        == 0
    )
    result = json.loads(out.read_text())
    for task in transfer.TASKS:
        assert isinstance(result[task], float) and -100 <= result[task] <= 100, task
    for task in transfer.ACCURACY_TASKS:
        assert result[task] == result["tasks"][task]["acc"]
    for task in ("SICK-R", "STS-B", "STS14"):
        assert result[task] == result["tasks"][task]["pearson"] and "spearman" in result["tasks"][task]
    assert 0 <= result["micro"] <= 100 and 0 <= result["macro"] <= 100
    assert result["task"] == "transfer" and result["model"]["kind"] == "bilstm"
    assert result["provenance"]["params"]["kfold"] == 3
    assert result["classifier"] == "adam" and "l2" in result["tasks"]["MR"]  # paper 004 §3.2's, by default
    # both files feed paper 004's tables: one run row each, beside the published rows
    assert cli("tables", "--metrics", tmp_path / "snli.json", out, "--out", tmp_path / "tables") == 0
    snli_row = next(
        line
        for line in (tmp_path / "tables" / "bilstm_snli.md").read_text().splitlines()
        if line.startswith("| bilstm |")
    )
    snli = json.loads((tmp_path / "snli.json").read_text())
    assert snli_row.startswith(f"| bilstm | bf-combined | 8 | {snli['parameters'] / 1e6:.2f} |")
    rows = list(csv.reader((tmp_path / "tables" / "transfer.csv").open()))
    header, run = rows[0], next(row for row in rows if row[0] == "bilstm")
    assert run[header.index("MR")] == f"{result['MR']:.1f}"
    assert run[header.index("SICK-R")] == f"{result['SICK-R'] / 100:.3f}"
    assert run[header.index("STS14 Spearman")] == f"{result['tasks']['STS14']['spearman'] / 100:.2f}"
    assert any(row[0].startswith("published: BiLSTM-BF (BiLSTM-BF, Table 3)") for row in rows)


def test_bad_transfer_labels_name_the_file_and_line(tmp_path):
    trec = tmp_path / "senteval" / "TREC"
    trec.mkdir(parents=True)
    (trec / "train_5500.label").write_text("NUM:date When was it ?\nFOO:bar What is it ?\n")
    (trec / "TREC_10.label").write_text("NUM:date When ?\n")
    with pytest.raises(InputError) as error:
        transfer_data.load_task(DataRoot(tmp_path), "TREC")
    assert (error.value.path, error.value.where) == (str(trec / "train_5500.label"), "line 2")
    sst = tmp_path / "senteval" / "SST" / "binary"
    sst.mkdir(parents=True)
    for name in ("train", "dev", "test"):
        (sst / f"sentiment-{name}").write_text("good film \t1\nbad film \t2\n")
    with pytest.raises(InputError) as error:
        transfer_data.load_task(DataRoot(tmp_path), "SST2")
    assert error.value.where == "line 2" and "'2'" in error.value.message


def test_readers_on_real_rows(data_root):
    data = DataRoot(data_root)
    counts = {"MR": 10662, "CR": 3775, "SUBJ": 10000, "MPQA": 10606}  # SOURCES.md
    for task, n in counts.items():
        split = transfer_data.load_task(data, task)
        assert len(split) == n and split.right is None
    mr = transfer_data.load_task(data, "MR")
    assert mr.left[0].startswith("simplistic , silly and tedious") and mr.y[0] == 0  # rt-polarity.neg first
    sst = transfer_data.load_task(data, "SST2")
    assert [len(sst[s]) for s in ("train", "dev", "test")] == [67349, 872, 1821]
    assert (sst["dev"].left[0], sst["dev"].y[0]) == ("it 's a charming and often affecting journey .", 1)
    trec = transfer_data.load_task(data, "TREC")
    assert np.bincount(trec["train"].y).tolist() == [86, 1162, 1250, 1223, 835, 896] and len(trec["test"]) == 500
    mrpc = transfer_data.load_task(data, "MRPC")
    assert [len(mrpc["train"]), len(mrpc["test"])] == [4076, 1725] and mrpc["train"].y[0] == 1
    assert mrpc["train"].left[0].startswith("Amrozi accused his brother")
    sick_e, sick_r = (transfer_data.load_task(data, task) for task in ("SICK-E", "SICK-R"))
    assert [len(sick_e[s]) for s in ("train", "dev", "test")] == [4439, 495, 4906]
    assert (sick_e["train"].y[0], sick_r["train"].y[0]) == (1, 4.5)  # pair 1: NEUTRAL, 4.5
    stsb = transfer_data.load_task(data, "STS-B")
    assert [len(stsb[s]) for s in ("train", "dev", "test")] == [5749, 1500, 1379]
    assert sum(len(gold) for _, _, gold in transfer_data.load_task(data, "STS14").values()) == 3750
