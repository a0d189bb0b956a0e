"""SentEval's classifier protocols on frozen embeddings (paper 004 §3.2), with either of SentEval's two
logistic regressions.

``adam`` (the default; paper 004 §3.2: "The tool used Adam to train a logistic regression with batch
size 64"): SentEval's ``PyTorchClassifier`` with ``nhid=0``, as InferSent's and the paper's evaluation
configured it (``{'nhid': 0, 'optim': 'adam', 'batch_size': 64, 'tenacity': 5, 'epoch_size': 4}``):
one linear layer, cross-entropy summed over the batch, Adam at its default rate 1e-3 with weight
decay (the L2 penalty) chosen among 10^-5 … 10^-2; trained 4 epochs at a time, and stopped when the
accuracy on a validation set has not improved 5 times in a row (at most 200 epochs), keeping the
best model (:class:`.transfer_adam.AdamLogisticRegression`). The fits of one grid (every decay × fold of a
cross-validation, for every outer fold of :func:`nested_kfold`; the 4 decays of :func:`dev_then_test`; then
the refits) are trained in lockstep (:func:`.transfer_adam.train_lockstep`): each is thousands of Adam steps
on batches of 64, whose time alone is Python and dispatcher overhead, and stacked they pay it once a step.
Each model still sees its own seeded rows, batches and initial weights and takes its own Adam steps and early
stopping, so it ends as its fit alone would.

``sklearn``: SentEval with ``usepytorch=False``: scikit-learn's ``LogisticRegression(C)`` for C in
2^-2 … 2^3 (solver lbfgs with scikit-learn's defaults; SentEval's scikit-learn path, which predates
them, used liblinear). Much faster on a CPU; kept for quick runs.

The protocols choose the penalty on dev folds as SentEval does:

- :func:`nested_kfold` (MR, CR, SUBJ, MPQA): outer stratified k-fold; inside each outer training
  part, an inner stratified k-fold picks the penalty; dev = mean of the best inner accuracies, test =
  mean accuracy on the outer test folds (SentEval's ``InnerKFoldClassifier``);
- :func:`kfold_then_test` (TREC, MRPC): stratified k-fold on the training set picks the penalty,
  which is refit on the whole training set and scored on the test set (``KFoldClassifier``);
- :func:`dev_then_test` (SST-2, SICK-E): the penalty with the best dev accuracy, scored on test
  (``SplitClassifier``).

With ``adam``, a fit inside a cross-validation stops early on its own held-out fold, and a refit on a
whole training set on a seeded 5% of it, as SentEval's (``validation_data`` / ``validation_split=0.05``).
Folds, initial weights and batches are drawn from the seed, so the same seed gives the same results
(on the CPU). Accuracies ×100.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

from pipeline.tasks.transfer_adam import (
    AdamLogisticRegression,
    AdamSettings,  # noqa: F401 (the protocols' settings, read from here)
    Fit,
    held_out_fit,
    train_lockstep,
)

CLASSIFIERS = ("adam", "sklearn")
REGULARISATION = tuple(2.0**t for t in range(-2, 4))  # scikit-learn's C (SentEval: 2^-2 … 2^3)
WEIGHT_DECAY = tuple(10.0**t for t in range(-5, -1))  # Adam's L2 penalty (SentEval: 10^-5 … 10^-2)


@dataclass
class Result:
    devacc: float
    acc: float
    C: float | list[float]  # the chosen penalty: scikit-learn's C, or Adam's weight decay
    predictions: np.ndarray | None = None  # test predictions (kfold_then_test, dev_then_test)
    classifier: str = "sklearn"

    def as_dict(self) -> dict:
        return {"devacc": self.devacc, "acc": self.acc, ("C" if self.classifier == "sklearn" else "l2"): self.C}


def fit(x: np.ndarray, y: np.ndarray, C: float, seed: int) -> LogisticRegression:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LogisticRegression(C=C, random_state=seed).fit(x, y)


def accuracy(model, x: np.ndarray, y: np.ndarray) -> float:
    return 100.0 * float(np.mean(model.predict(x) == y)) if len(y) else 0.0


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


def choose_weight_decay(x: np.ndarray, y: np.ndarray, k: int, seed: int) -> tuple[AdamLogisticRegression, float, float]:
    """:func:`choose_c` for the Adam classifier over :data:`WEIGHT_DECAY`: each fold's fit stops early on
    its held-out fold (SentEval's ``validation_data``), the best penalty is refit on all of ``x``
    (stopping on a seeded 5% of it)."""
    return choose_weight_decays(x, y, [np.arange(len(y))], k, seed)[0]


def choose_weight_decays(
    x: np.ndarray, y: np.ndarray, parts: list[np.ndarray], k: int, seed: int
) -> list[tuple[AdamLogisticRegression, float, float]]:
    """:func:`choose_weight_decay` on ``x[rows], y[rows]`` for each ``rows`` of ``parts`` (nested_kfold's outer
    training parts): every (part, decay, fold) fit in one lockstep grid, then every part's refit in another.
    A fold's score is its kept model's accuracy on the held-out fold, as scored when it was kept."""
    grid = [
        Fit(rows[train], rows[held], decay, seed)
        for rows in parts
        for decay in WEIGHT_DECAY
        for train, held in folds(y[rows], k, seed)
    ]
    scores = np.array([trained.best for trained in train_lockstep(x, y, grid)]).reshape(
        len(parts), len(WEIGHT_DECAY), k
    )
    means = [[float(np.mean(found)) for found in part] for part in scores]
    best = [int(np.argmax(part)) for part in means]
    refits = [held_out_fit(rows, WEIGHT_DECAY[chosen], seed) for rows, chosen in zip(parts, best)]
    return [
        (AdamLogisticRegression(WEIGHT_DECAY[chosen], seed).adopt(trained), WEIGHT_DECAY[chosen], part[chosen])
        for trained, chosen, part in zip(train_lockstep(x, y, refits), best, means)
    ]


def _choose(classifier: str):
    if classifier not in CLASSIFIERS:
        raise ValueError(f"unknown transfer classifier {classifier!r} (known: {', '.join(CLASSIFIERS)})")
    return choose_weight_decay if classifier == "adam" else choose_c


def nested_kfold(x: np.ndarray, y: np.ndarray, k: int = 10, seed: int = 0, classifier: str = "adam") -> Result:
    choose = _choose(classifier)
    outer = folds(y, k, seed)
    if classifier == "adam":  # every outer fold's grid in one lockstep run (choose_weight_decays)
        chosen = choose_weight_decays(x, y, [train for train, _ in outer], k, seed)
    else:
        chosen = [choose(x[train], y[train], k, seed) for train, _ in outer]
    test = [accuracy(model, x[held], y[held]) for (model, _, _), (_, held) in zip(chosen, outer)]
    dev = [score for _, _, score in chosen]
    return Result(float(np.mean(dev)), float(np.mean(test)), [C for _, C, _ in chosen], classifier=classifier)


def kfold_then_test(
    x: np.ndarray,
    y: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    k: int = 10,
    seed: int = 0,
    classifier: str = "adam",
) -> Result:
    model, C, dev = _choose(classifier)(x, y, k, seed)
    return Result(dev, accuracy(model, x_test, y_test), C, model.predict(x_test), classifier)


def dev_then_test(
    x: np.ndarray,
    y: np.ndarray,
    x_dev: np.ndarray,
    y_dev: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    seed: int = 0,
    classifier: str = "adam",
) -> Result:
    _choose(classifier)
    if classifier == "adam":  # each fit stops early on dev; SentEval's refit of the best is the same seeded fit
        penalties = WEIGHT_DECAY
        shared_x = np.concatenate([np.asarray(x, dtype=np.float32), np.asarray(x_dev, dtype=np.float32)])
        train, dev = np.arange(len(y)), np.arange(len(y), len(y) + len(y_dev))
        grid = [Fit(train, dev, decay, seed) for decay in penalties]  # the 4 decays in lockstep
        trained = train_lockstep(shared_x, np.concatenate([y, y_dev]), grid)
        models = [AdamLogisticRegression(decay, seed).adopt(t) for decay, t in zip(penalties, trained)]
    else:
        penalties = REGULARISATION
        models = [fit(x, y, C, seed) for C in penalties]
    scores = [accuracy(model, x_dev, y_dev) for model in models]
    best = int(np.argmax(scores))
    return Result(
        scores[best], accuracy(models[best], x_test, y_test), penalties[best], models[best].predict(x_test), classifier
    )


def f1(y_true: np.ndarray, predicted: np.ndarray) -> float:
    """F1 ×100 of the positive class (MRPC's paraphrase label 1)."""
    return 100.0 * float(f1_score(y_true, predicted))
