"""SentEval's classifier protocols on frozen embeddings (paper 004 §3.2), with either of SentEval's two
logistic regressions.

``adam`` (the default; paper 004 §3.2: "The tool used Adam to train a logistic regression with batch
size 64"): SentEval's ``PyTorchClassifier`` with ``nhid=0``, as InferSent's and the paper's evaluation
configured it (``{'nhid': 0, 'optim': 'adam', 'batch_size': 64, 'tenacity': 5, 'epoch_size': 4}``):
one linear layer, cross-entropy summed over the batch, Adam at its default rate 1e-3 with weight
decay (the L2 penalty) chosen among 10^-5 … 10^-2; trained 4 epochs at a time, and stopped when the
accuracy on a validation set has not improved 5 times in a row (at most 200 epochs), keeping the
best model (:class:`AdamLogisticRegression`).

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


@dataclass(frozen=True)
class AdamSettings:
    """SentEval's ``classifier`` parameters of paper 004 §3.2 (InferSent's evaluation)."""

    batch_size: int = 64
    epoch_size: int = 4
    tenacity: int = 5
    max_epoch: int = 200
    lr: float = 1e-3  # torch.optim.Adam's default, which SentEval's "adam" leaves as it is
    validation_split: float = 0.05


class AdamLogisticRegression:
    """SentEval's ``PyTorchClassifier`` with ``nhid=0``: a linear layer trained with Adam (module docstring)."""

    def __init__(self, weight_decay: float, seed: int, settings: AdamSettings = AdamSettings()):
        self.weight_decay, self.seed, self.settings = weight_decay, seed, settings
        self.model = None
        self.classes = np.zeros(0)
        self.epochs = 0  # epochs trained by the last fit
        self.best = -1.0  # the validation accuracy of the model kept

    def fit(self, x: np.ndarray, y: np.ndarray, validation: tuple[np.ndarray, np.ndarray] | None = None):
        """Train on ``x, y``, stopping early on ``validation`` (default: a seeded share of ``x``)."""
        import torch
        from torch import nn

        rng = np.random.RandomState(self.seed)
        if validation is None:
            order = rng.permutation(len(x))
            held = int(self.settings.validation_split * len(x))
            validation = (x[order[:held]], y[order[:held]])
            x, y = x[order[held:]], y[order[held:]]
        self.classes = np.unique(np.concatenate([y, validation[1]]))
        features = torch.as_tensor(np.asarray(x, dtype=np.float32))
        labels = torch.as_tensor(np.searchsorted(self.classes, y), dtype=torch.long)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.model = nn.Linear(features.shape[1], len(self.classes))
        optimizer = torch.optim.Adam(self.model.parameters(), lr=self.settings.lr, weight_decay=self.weight_decay)
        loss_fn = nn.CrossEntropyLoss(reduction="sum")  # SentEval: size_average = False
        best, best_state, epochs, misses = -1.0, None, 0, 0
        while epochs <= self.settings.max_epoch:
            for _ in range(self.settings.epoch_size):
                order = torch.from_numpy(rng.permutation(len(features)))
                for start in range(0, len(order), self.settings.batch_size):
                    rows = order[start : start + self.settings.batch_size]
                    loss = loss_fn(self.model(features[rows]), labels[rows])
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            epochs += self.settings.epoch_size
            score = accuracy(self, *validation)
            if score > best:
                best = score
                best_state = {name: tensor.clone() for name, tensor in self.model.state_dict().items()}
            else:
                if misses >= self.settings.tenacity:
                    break
                misses += 1
        self.model.load_state_dict(best_state)
        self.epochs, self.best = epochs, best
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        import torch

        if len(x) == 0:
            return self.classes[:0]
        with torch.inference_mode():
            found = self.model(torch.as_tensor(np.asarray(x, dtype=np.float32))).argmax(-1).numpy()
        return self.classes[found]


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
    scores = []
    for decay in WEIGHT_DECAY:
        found = []
        for train, held in folds(y, k, seed):
            model = AdamLogisticRegression(decay, seed).fit(x[train], y[train], (x[held], y[held]))
            found.append(accuracy(model, x[held], y[held]))
        scores.append(float(np.mean(found)))
    best = int(np.argmax(scores))
    return AdamLogisticRegression(WEIGHT_DECAY[best], seed).fit(x, y), WEIGHT_DECAY[best], scores[best]


def _choose(classifier: str):
    if classifier not in CLASSIFIERS:
        raise ValueError(f"unknown transfer classifier {classifier!r} (known: {', '.join(CLASSIFIERS)})")
    return choose_weight_decay if classifier == "adam" else choose_c


def nested_kfold(x: np.ndarray, y: np.ndarray, k: int = 10, seed: int = 0, classifier: str = "adam") -> Result:
    choose = _choose(classifier)
    dev, test, chosen = [], [], []
    for train, held in folds(y, k, seed):
        model, C, score = choose(x[train], y[train], k, seed)
        dev.append(score)
        chosen.append(C)
        test.append(accuracy(model, x[held], y[held]))
    return Result(float(np.mean(dev)), float(np.mean(test)), chosen, classifier=classifier)


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
        models = [AdamLogisticRegression(decay, seed).fit(x, y, (x_dev, y_dev)) for decay in penalties]
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
