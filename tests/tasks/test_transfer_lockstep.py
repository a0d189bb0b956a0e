"""The lockstep trainer of the transfer tasks' Adam logistic regression (pipeline/tasks/transfer_adam.py): every
model of a group ends as it would trained alone, and the fit alone is the previous ``torch.optim.Adam`` +
``nn.Linear`` loop's (paper 004 §3.2's protocol, SentEval's PyTorchClassifier with ``nhid=0``, unchanged)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
import torch

from pipeline.tasks import transfer_adam, transfer_classifier
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.transfer_adam import AdamLogisticRegression, AdamSettings, Fit, held_out_fit, train_lockstep
from pipeline.tasks.transfer_data import load_task

SHARED = Path("/work/shared/data")
needs_senteval = pytest.mark.skipif(
    not (SHARED / "senteval" / "CR").is_dir() or not (SHARED / "senteval" / "TREC").is_dir(),
    reason="real SentEval data (CR, TREC) not in /work/shared/data",
)


def reference_fit(x, y, validation, weight_decay: float, seed: int, settings: AdamSettings):
    """The previous implementation (a138d26's AdamLogisticRegression.fit), kept to pin the protocol:
    (weights [c, d], bias [c], epochs, best)."""
    from torch import nn

    rng = np.random.RandomState(seed)
    if validation is None:
        order = rng.permutation(len(x))
        held = int(settings.validation_split * len(x))
        validation = (x[order[:held]], y[order[:held]])
        x, y = x[order[held:]], y[order[held:]]
    classes = np.unique(np.concatenate([y, validation[1]]))
    features = torch.as_tensor(np.asarray(x, dtype=np.float32))
    labels = torch.as_tensor(np.searchsorted(classes, y), dtype=torch.long)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = nn.Linear(features.shape[1], len(classes))
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr, weight_decay=weight_decay)
    loss_fn = nn.CrossEntropyLoss(reduction="sum")

    def accuracy():
        with torch.inference_mode():
            found = model(torch.as_tensor(np.asarray(validation[0], dtype=np.float32))).argmax(-1).numpy()
        return 100.0 * float(np.mean(classes[found] == validation[1])) if len(validation[1]) else 0.0

    best, best_state, epochs, misses = -1.0, None, 0, 0
    while epochs <= settings.max_epoch:
        for _ in range(settings.epoch_size):
            order = torch.from_numpy(rng.permutation(len(features)))
            for start in range(0, len(order), settings.batch_size):
                rows = order[start : start + settings.batch_size]
                loss = loss_fn(model(features[rows]), labels[rows])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        epochs += settings.epoch_size
        score = accuracy()
        if score > best:
            best = score
            best_state = {name: tensor.clone() for name, tensor in model.state_dict().items()}
        else:
            if misses >= settings.tenacity:
                break
            misses += 1
    model.load_state_dict(best_state)
    return model.weight.detach().numpy(), model.bias.detach().numpy(), epochs, best


@functools.cache
def sentence_features(task: str, n: int, dim: int = 384, seed: int = 0):
    """``n`` seeded sentences of a real SentEval task (TREC: its training file) as fixed 384-dimensional
    features (TF-IDF reduced by SVD, unit length), with their labels."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    data = load_task(DataRoot(SHARED), task)
    data = data["train"] if task == "TREC" else data
    pick = np.random.default_rng(seed).permutation(len(data.y))[:n]
    tfidf = TfidfVectorizer().fit_transform([data.left[i] for i in pick])
    x = TruncatedSVD(min(dim, tfidf.shape[1] - 1), random_state=0).fit_transform(tfidf)
    return (x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-9)).astype(np.float32), np.asarray(data.y)[pick]


@needs_senteval
@pytest.mark.parametrize("task", ["CR", "TREC"])
def test_each_model_of_a_grid_ends_as_it_would_trained_alone(task):
    """choose_weight_decay's grid (4 decays × 5 folds) in one group against each fit alone. 641 rows in 5
    folds train on 512 or 513 rows: 8 or 9 batches an epoch, so the models' step counts part; CR's 2 classes
    take 4 padded rows of weights, TREC's 6 take 8."""
    x, y = sentence_features(task, 641)
    splits = transfer_classifier.folds(y, 5, seed=0)
    assert {len(train) for train, _ in splits} == {512, 513}
    grid = [Fit(train, held, decay, 0) for decay in transfer_classifier.WEIGHT_DECAY for train, held in splits]
    together = train_lockstep(x, y, grid)
    assert len({trained.epochs for trained in together}) > 1, "the models should stop at different epochs"
    for fit, trained in zip(grid, together):
        alone = AdamLogisticRegression(fit.weight_decay, 0).fit(
            x[fit.train], y[fit.train], (x[fit.validation], y[fit.validation])
        )
        assert (trained.epochs, trained.best) == (alone.epochs, alone.best)
        np.testing.assert_allclose(trained.params.numpy(), alone.params.numpy(), rtol=0, atol=1e-5)
        assert np.array_equal(trained.classes, alone.classes)
    again = train_lockstep(x, y, [Fit(f.train, f.validation, f.weight_decay, f.seed) for f in grid])
    assert all(torch.equal(a.params, b.params) for a, b in zip(together, again))  # the same seed, the same bits


@needs_senteval
@pytest.mark.parametrize(("task", "weight_decay", "held"), [("CR", 1e-5, True), ("TREC", 1e-2, False)])
def test_a_fit_alone_is_the_previous_adam_and_linear_loop(task, weight_decay, held):
    """Short fits (at most 12 epochs) against torch.optim.Adam on nn.Linear: the same batches, initial
    weights, steps and early stopping, to float32 rounding; with a validation set and with the seeded 5%."""
    x, y = sentence_features(task, 700)
    settings = AdamSettings(max_epoch=8)
    validation = (x[500:], y[500:]) if held else None
    x_train, y_train = (x[:500], y[:500]) if held else (x, y)
    weight, bias, epochs, best = reference_fit(x_train, y_train, validation, weight_decay, 3, settings)
    model = AdamLogisticRegression(weight_decay, 3, settings).fit(x_train, y_train, validation)
    assert (model.epochs, model.best) == (epochs, best)
    np.testing.assert_allclose(model.model.weight.detach().numpy(), weight, rtol=0, atol=1e-5)
    np.testing.assert_allclose(model.model.bias.detach().numpy(), bias, rtol=0, atol=1e-5)
    initial = transfer_adam.initial_params(3, x.shape[1], len(model.classes), 8)[: len(model.classes), :-1].numpy()
    assert np.abs(weight - initial).max() > 0.02  # trained: 96 steps of at most about lr = 1e-3 each


def test_a_model_that_stops_early_leaves_the_others_as_they_were():
    """Two fits on separable and on shuffled labels: the shuffled one stops within a few rounds, the other
    goes on; each ends with the weights of its fit alone, and a short training set (one batch of 40 rows
    beside 5 of 64) skips the steps it has no batch for."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(700, 16)).astype(np.float32)
    y = (x[:, 0] + 0.3 * rng.normal(size=700) > 0).astype(int)
    y[600:] = rng.permutation(y[600:])  # the second fit's rows carry no signal
    fits = lambda: [
        Fit(np.arange(300), np.arange(300, 500), 1e-5, 1),
        Fit(np.arange(500, 540), np.arange(540, 700), 1e-3, 2),
    ]
    together = train_lockstep(x, y, fits())
    alone = [train_lockstep(x, y, [fit])[0] for fit in fits()]
    assert together[1].epochs < together[0].epochs
    for a, b in zip(together, alone):
        assert (a.epochs, a.best) == (b.epochs, b.best) and torch.equal(a.params, b.params)


def test_fits_over_different_classes_train_in_their_own_groups():
    rng = np.random.default_rng(1)
    y = np.arange(300) % 3
    x = (np.eye(3)[y] * 3 + rng.normal(size=(300, 3))).astype(np.float32)
    two = np.flatnonzero(y < 2)  # a fold without class 2
    fits = [Fit(np.arange(200), np.arange(200, 300), 1e-4, 0), Fit(two[:150], two[150:], 1e-4, 0)]
    three, pair = train_lockstep(x, y, fits)
    assert three.classes.tolist() == [0, 1, 2] and pair.classes.tolist() == [0, 1]
    alone = AdamLogisticRegression(1e-4, 0).fit(x[two[:150]], y[two[:150]], (x[two[150:]], y[two[150:]]))
    assert torch.equal(pair.params, alone.params) and pair.best == alone.best > 60  # chance: 50


def test_the_seeded_hold_out_continues_the_same_random_state():
    """A refit's validation split and then its batches come from one RandomState(seed), as SentEval's."""
    fit = held_out_fit(np.arange(100, 200), 1e-3, seed=4)
    rng = np.random.RandomState(4)
    order = rng.permutation(100)
    assert np.array_equal(fit.validation, 100 + order[:5]) and np.array_equal(fit.train, 100 + order[5:])
    assert np.array_equal(fit.rng.permutation(95), rng.permutation(95))


def test_a_group_larger_than_the_step_budget_trains_in_turns(monkeypatch):
    """STEP_FLOATS bounds the features gathered a step: 5 fits of 9 columns at a budget of two fits' batches
    train 2 + 2 + 1, and each still ends as alone."""
    monkeypatch.setattr(transfer_adam, "STEP_FLOATS", 2 * 64 * 9)
    seen = []
    real = transfer_adam.Lockstep.__init__
    monkeypatch.setattr(transfer_adam.Lockstep, "__init__", lambda self, *a: seen.append(len(a[3])) or real(self, *a))
    rng = np.random.default_rng(2)
    x = rng.normal(size=(400, 8)).astype(np.float32)
    y = (x[:, 1] > 0).astype(int)
    fits = lambda: [
        Fit(np.arange(300), np.arange(300, 400), decay, seed)
        for seed, decay in enumerate([1e-5, 1e-4, 1e-3, 1e-2, 1e-3])
    ]
    together = train_lockstep(x, y, fits())
    assert seen == [2, 2, 1]
    for fit, trained in zip(fits(), together):
        assert torch.equal(trained.params, train_lockstep(x, y, [fit])[0].params)
