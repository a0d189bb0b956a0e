"""SentEval's classifier protocols on frozen embeddings, with scikit-learn logistic regression.

SentEval (Conneau & Kiela 2018, the tool paper 004 §3.2 uses) with ``usepytorch=False``:
``LogisticRegression(C)`` for C in 2^-2 … 2^3, the C chosen on dev folds:

- :func:`nested_kfold` (MR, CR, SUBJ, MPQA): outer stratified k-fold; inside each outer training
  part, an inner stratified k-fold picks C; dev = mean of the best inner accuracies, test = mean
  accuracy on the outer test folds (SentEval's ``InnerKFoldClassifier``);
- :func:`kfold_then_test` (TREC, MRPC): stratified k-fold on the training set picks C, which is
  refit on the whole training set and scored on the test set (``KFoldClassifier``);
- :func:`dev_then_test` (SST-2, SICK-E): C with the best dev accuracy, scored on test
  (``SplitClassifier``).

Folds are shuffled with a fixed seed, so the same seed gives the same splits and results.
Solver: lbfgs with scikit-learn's defaults (SentEval's scikit-learn path, which predates them,
used liblinear). Accuracies ×100.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

REGULARISATION = tuple(2.0**t for t in range(-2, 4))


@dataclass
class Result:
    devacc: float
    acc: float
    C: float | list[float]
    predictions: np.ndarray | None = None  # test predictions (kfold_then_test, dev_then_test)

    def as_dict(self) -> dict:
        return {"devacc": self.devacc, "acc": self.acc, "C": self.C}


def fit(x: np.ndarray, y: np.ndarray, C: float, seed: int) -> LogisticRegression:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LogisticRegression(C=C, random_state=seed).fit(x, y)


def accuracy(model: LogisticRegression, x: np.ndarray, y: np.ndarray) -> float:
    return 100.0 * float(np.mean(model.predict(x) == y))


def folds(y: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified, shuffled k-fold (train, test) index pairs; the same for the same seed."""
    return list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def choose_c(x: np.ndarray, y: np.ndarray, k: int, seed: int) -> tuple[LogisticRegression, float, float]:
    """(model refit on all of ``x`` with the best C, best C, its mean k-fold accuracy) over
    :data:`REGULARISATION`; scikit-learn's ``LogisticRegressionCV`` fits each fold's C path with
    warm starts, the same selection as one fit per (fold, C) at a fraction of the cost."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LogisticRegressionCV(
            Cs=list(REGULARISATION),
            cv=folds(y, k, seed),
            scoring="accuracy",
            l1_ratios=(0.0,),
            use_legacy_attributes=False,
            random_state=seed,
        ).fit(x, y)
    scores = model.scores_[:, 0, :].mean(axis=0)  # (folds, l1 ratios, Cs) → mean over folds
    best = int(np.argmax(scores))
    return model, REGULARISATION[best], 100.0 * float(scores[best])


def nested_kfold(x: np.ndarray, y: np.ndarray, k: int = 10, seed: int = 0) -> Result:
    dev, test, chosen = [], [], []
    for train, held in folds(y, k, seed):
        model, C, score = choose_c(x[train], y[train], k, seed)
        dev.append(score)
        chosen.append(C)
        test.append(accuracy(model, x[held], y[held]))
    return Result(float(np.mean(dev)), float(np.mean(test)), chosen)


def kfold_then_test(
    x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, k: int = 10, seed: int = 0
) -> Result:
    model, C, dev = choose_c(x, y, k, seed)
    return Result(dev, accuracy(model, x_test, y_test), C, model.predict(x_test))


def dev_then_test(
    x: np.ndarray,
    y: np.ndarray,
    x_dev: np.ndarray,
    y_dev: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    seed: int = 0,
) -> Result:
    models = [fit(x, y, C, seed) for C in REGULARISATION]
    scores = [accuracy(model, x_dev, y_dev) for model in models]
    best = int(np.argmax(scores))
    return Result(
        scores[best], accuracy(models[best], x_test, y_test), REGULARISATION[best], models[best].predict(x_test)
    )


def f1(y_true: np.ndarray, predicted: np.ndarray) -> float:
    """F1 ×100 of the positive class (MRPC's paraphrase label 1)."""
    return 100.0 * float(f1_score(y_true, predicted))
