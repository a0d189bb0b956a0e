"""SemEval-2013 5(a) on a frozen encoder (pipeline/tasks/semeval5a.py): the C path warm-started in each fold
against the cold grid search it replaces (scikit-learn's ``GridSearchCV`` over a scaler and a logistic
regression, every (fold, C) fitted from zero), on the real train and test sets encoded by ``--model``.

Prints each protocol's CPU seconds, the ratio, and whether they choose the same C and score the same test
accuracy. The sample run's BiLSTMs (2,400 pair features) were its slowest evaluations: 412 and 455 s a job.

Usage (repo root): ``python bench/semeval_frozen.py --model bilstm:results/sample/bilstm/bilstm-max-600
[--data ../shared/data] [--train-size 3000]`` (any encoder spec ``python -m pipeline evaluate`` takes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pipeline.models.spec import load_model
from pipeline.tasks import semeval5a
from pipeline.tasks.data_root import DataRoot


def cold_grid_search(train_x, train_y, test_x, test_y) -> dict:
    """The protocol before (semeval5a.py at 3fa9b82): every (fold, C) fitted from zero by GridSearchCV."""
    folds = StratifiedKFold(n_splits=semeval5a.FOLDS, shuffle=True, random_state=semeval5a.FOLD_SEED)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    search = GridSearchCV(model, {"logisticregression__C": list(semeval5a.C_GRID)}, cv=folds, scoring="accuracy")
    search.fit(train_x, train_y)
    return {
        "accuracy": 100.0 * float(np.mean(search.predict(test_x) == test_y)),
        "C": float(search.best_params_["logisticregression__C"]),
        "cv_accuracy": 100.0 * float(search.best_score_),
    }


def features(model: str, data: Path, pooling: str) -> tuple:
    splits = semeval5a.load(DataRoot(data))
    encoder = load_model(model, pooling, 64, 128)
    out = []
    for split in ("train", "test"):
        bigrams, words, labels = splits[split]
        out += [semeval5a.pair_features(encoder.encode(bigrams), encoder.encode(words)), labels]
    return tuple(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--pooling", default="mean")
    parser.add_argument(
        "--train-size",
        type=int,
        default=0,
        help="the first N training instances only (0: all 11,175; the cold "
        "grid search on all of them takes tens of CPU minutes)",
    )
    args = parser.parse_args()
    train_x, train_y, test_x, test_y = features(args.model, args.data, args.pooling)
    if args.train_size:
        train_x, train_y = train_x[: args.train_size], train_y[: args.train_size]
    rows = []
    for name, protocol in (
        ("cold grid search (before)", cold_grid_search),
        ("warm C path (now)", semeval5a.fit_and_score),
    ):
        started = time.process_time()
        result = protocol(train_x, train_y, test_x, test_y)
        rows.append((name, time.process_time() - started, result))
    print(f"{args.model}: {train_x.shape[0]:,} train x {train_x.shape[1]:,} features, {len(test_y):,} test")
    print("| protocol | CPU s | C | CV accuracy | test accuracy |")
    print("|---|---:|---:|---:|---:|")
    for name, seconds, result in rows:
        print(f"| {name} | {seconds:,.1f} | {result['C']:g} | {result['cv_accuracy']:.2f} | {result['accuracy']:.2f} |")
    (_, before, old), (_, after, new) = rows
    same = old["C"] == new["C"] and abs(old["accuracy"] - new["accuracy"]) < 0.05
    print(f"ratio before/after: {before / after:.1f}x; same C and test accuracy: {'yes' if same else 'no'}")


if __name__ == "__main__":
    main()
