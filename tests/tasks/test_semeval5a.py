"""SemEval-2013 Task 5(a): the reader on real rows, the pair features, the classifier protocol, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.errors import InputError
from pipeline.tasks import semeval5a
from pipeline.tasks.data_root import DataRoot


def test_real_rows(data_root):
    splits = semeval5a.load(DataRoot(data_root))
    bigrams, words, labels = splits["train"]
    assert len(labels) == 11175 and int(labels.sum()) == 5584
    test_bigrams, test_words, test_labels = splits["test"]
    assert len(test_labels) == 7490 and int(test_labels.sum()) == 3747
    # en.testSet starts "historical JJ / subsidy NN / aid / 1", then "light JJ / sleigh NN / gangway / 0"
    assert (test_bigrams[0], test_words[0], test_labels[0]) == ("historical subsidy", "aid", 1)
    assert (test_bigrams[1], test_words[1], test_labels[1]) == ("light sleigh", "gangway", 0)
    assert all(len(b.split()) == 2 for b in bigrams) and all(len(w.split()) == 1 for w in words)


def test_pair_features_by_hand():
    u, v = np.array([[1.0, -2.0]]), np.array([[3.0, 1.0]])
    assert semeval5a.pair_features(u, v).tolist() == [[1.0, -2.0, 3.0, 1.0, 2.0, 3.0, 3.0, -2.0]]


def test_protocol_on_a_separable_set():
    # label = whether v is u or -u: the u * v block sums to +|u|^2 or -|u|^2, a margin of 2 |u|^2 = 8
    rng = np.random.default_rng(0)
    u = rng.standard_normal((240, 4))
    u *= 2 / np.linalg.norm(u, axis=1, keepdims=True)
    sign = rng.integers(0, 2, 240)
    v = u * np.where(sign, 1.0, -1.0)[:, None] + 0.05 * rng.standard_normal((240, 4))
    x = semeval5a.pair_features(u, v)
    result = semeval5a.fit_and_score(x[:160], sign[:160], x[160:], sign[160:])
    assert result["accuracy"] == 100.0 and result["cv_accuracy"] == 100.0
    assert result["C"] in semeval5a.C_GRID
    # shuffled labels cannot be learnt: test accuracy near chance
    shuffled = rng.permutation(sign)
    assert semeval5a.fit_and_score(x[:160], shuffled[:160], x[160:], shuffled[160:])["accuracy"] < 75


def test_same_folds_same_result():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((60, 8)), rng.integers(0, 2, 60)
    assert semeval5a.fit_and_score(x[:40], y[:40], x[40:], y[40:]) == semeval5a.fit_and_score(
        x[:40], y[:40], x[40:], y[40:]
    )


def test_encoder_sees_bigrams_and_words(table_encoder):
    words = ["big city", "city", "big town", "river", "old king", "monarch", "new film", "island"]
    table = {w: [1.0, 0.0] if i % 4 < 2 else [0.0, 1.0] for i, w in enumerate(words)}
    splits = {
        "train": (["big city", "old king"] * 3, ["city", "monarch"] * 3, np.array([1, 0] * 3)),
        "test": (["big town", "new film"], ["river", "island"], np.array([1, 0])),
    }
    encoder = table_encoder(table)
    result = semeval5a.evaluate(encoder, splits)
    assert encoder.calls[0][:2] == ["big city", "old king"] and "river" in encoder.calls[0]
    assert result["n"] == {"train": 6, "test": 2} and result["positives"] == {"train": 3, "test": 1}


@pytest.mark.parametrize(
    "block, message, line",
    [
        (b"great\tJJ\nmadness\tNN\nmegalomania\n2\n", "label '2' is not 0 or 1", 4),
        (b"great\tJJ\tX\nmadness\tNN\nmegalomania\n0\n", "expected 'word TAB POS' (2 fields), found 3", 1),
        (b"great\tJJ\nmadness\tNN\nmegalo mania\n0\n", "expected a single word", 3),
        (b"great\tJJ\nmadn\xffess\tNN\nmegalomania\n0\n", "not UTF-8", 2),
    ],
)
def test_bad_input_names_file_and_line(cli, tiny_model, demo_data, tmp_path, capsys, block, message, line):
    root = tmp_path / "root"
    folder = root / semeval5a.FOLDER
    folder.mkdir(parents=True)
    train = (demo_data / semeval5a.SPLITS["train"]).read_bytes()
    (folder / "en.trainSet").write_bytes(train[: train.index(b"\n", train.index(b"\n1\n") + 1) + 1] + block + train)
    (folder / "en.testSet").write_bytes((demo_data / semeval5a.SPLITS["test"]).read_bytes())
    out = tmp_path / "m.json"
    assert cli("evaluate", "semeval5a", "--model", tiny_model, "--data", root, "--out", out) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "en.trainSet" in line]  # (model-loading bars aside)
    assert len(err) == 1 and f"en.trainSet (line {4 + line})" in err[0] and message in err[0]
    assert not out.exists()


def test_cut_short_file(tmp_path):
    path = tmp_path / "en.testSet"
    path.write_text("big\tJJ\ncity\tNN\nmetropolis\n1\nold\tJJ\nfilm\tNN\n")
    with pytest.raises(InputError, match=r"en.testSet \(line 5\): 6 lines do not make four-line instances"):
        semeval5a.read_instances(path)


def test_cli_on_the_demo(cli, tiny_model, demo_data, tmp_path):
    assert cli("evaluate", "semeval5a", "--model", tiny_model, "--data", demo_data, "--out", tmp_path / "s.json") == 0
    metrics = json.loads((tmp_path / "s.json").read_text())
    assert metrics["n"] == {"train": 16, "test": 6} and metrics["data"] == semeval5a.DATA
    assert 0 <= metrics["accuracy"] <= 100 and metrics["C"] in semeval5a.C_GRID


def test_the_warm_started_c_path_chooses_what_a_cold_grid_search_chooses(data_root):
    """Each fold fits the C path warm-started (the BiLSTMs' SemEval jobs spent minutes fitting the weakly
    regularised end from zero); every fit still runs to lbfgs's tolerance, so on real instances, embedded as
    bags of fixed random word vectors, the chosen C, its cross-validation accuracy and the test accuracy are
    those of scikit-learn's GridSearchCV over a scaler and a cold logistic regression (the protocol before)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    splits = semeval5a.load(DataRoot(data_root))
    rng = np.random.default_rng(0)
    vocabulary = {}

    def embed(texts):
        rows = []
        for text in texts:
            words = [vocabulary.setdefault(w, rng.standard_normal(24)) for w in text.split()]
            rows.append(np.mean(words, axis=0))
        return np.array(rows)

    (bigrams, words, y), (test_bigrams, test_words, test_y) = splits["train"], splits["test"]
    x = semeval5a.pair_features(embed(bigrams[:1500]), embed(words[:1500]))
    test_x = semeval5a.pair_features(embed(test_bigrams[:1000]), embed(test_words[:1000]))
    y, test_y = y[:1500], test_y[:1000]
    found = semeval5a.fit_and_score(x, y, test_x, test_y)
    folds = StratifiedKFold(n_splits=semeval5a.FOLDS, shuffle=True, random_state=semeval5a.FOLD_SEED)
    cold = GridSearchCV(
        make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        {"logisticregression__C": list(semeval5a.C_GRID)},
        cv=folds,
        scoring="accuracy",
    ).fit(x, y)
    assert found["C"] == cold.best_params_["logisticregression__C"]
    assert found["cv_accuracy"] == pytest.approx(100 * cold.best_score_, abs=0.1)
    assert found["accuracy"] == pytest.approx(100 * np.mean(cold.predict(test_x) == test_y), abs=0.1)
