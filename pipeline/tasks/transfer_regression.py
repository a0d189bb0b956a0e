"""SentEval's relatedness regression for SICK-R and STS-B (Tai et al. 2015, §4.2; paper 004 §3.3).

A score y in [1, K] becomes a distribution p over the integers 1…K (p[⌊y⌋] = ⌊y⌋ − y + 1,
p[⌊y⌋ + 1] = y − ⌊y⌋); a softmax layer on the pair features learns it with the summed squared
error and Adam (batch 64), 50 epochs at a time, stopping when the dev correlation has not
improved for 3 rounds and keeping the best (SentEval's ``RelatednessPytorch``). The prediction
is the expectation ``Σ k·p̂_k``; Pearson and Spearman ×100 against the gold scores of the test
set. STS-B's 0-5 scores are mapped linearly to 1-5 first (correlations do not change).
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr
from torch import nn

CLASSES = 5


def score_distribution(scores: np.ndarray, classes: int = CLASSES) -> np.ndarray:
    """(n, classes) target distributions of scores in [1, classes]."""
    scores = np.asarray(scores, dtype=np.float64)
    floor = np.floor(scores).astype(int)
    out = np.zeros((len(scores), classes), dtype=np.float32)
    rows = np.arange(len(scores))
    out[rows, floor - 1] = floor - scores + 1
    upper = floor < classes
    out[rows[upper], floor[upper]] = (scores - floor)[upper]
    return out


def _expected(model: nn.Module, x: torch.Tensor) -> np.ndarray:
    with torch.inference_mode():
        return (model(x) @ torch.arange(1, CLASSES + 1, dtype=torch.float32)).numpy()


def fit_predict(
    x: np.ndarray,
    y: np.ndarray,
    x_dev: np.ndarray,
    y_dev: np.ndarray,
    x_test: np.ndarray,
    seed: int = 0,
    batch_size: int = 64,
    epochs_per_round: int = 50,
    patience: int = 3,
    max_rounds: int = 20,
) -> tuple[np.ndarray, float]:
    """Test predictions, and the best dev Pearson (×100)."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    train_x, targets = torch.from_numpy(np.asarray(x, np.float32)), torch.from_numpy(score_distribution(y))
    dev_x, test_x = torch.from_numpy(np.asarray(x_dev, np.float32)), torch.from_numpy(np.asarray(x_test, np.float32))
    model = nn.Sequential(nn.Linear(train_x.shape[1], CLASSES), nn.Softmax(dim=-1))
    optimizer = torch.optim.Adam(model.parameters())
    loss_fn = nn.MSELoss(reduction="sum")
    best, best_model, waited = -2.0, copy.deepcopy(model), 0
    for _ in range(max_rounds):
        for _ in range(epochs_per_round):
            order = torch.randperm(len(train_x), generator=generator)
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                loss = loss_fn(model(train_x[rows]), targets[rows])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        score = float(pearsonr(_expected(model, dev_x), y_dev).statistic)
        score = -1.0 if np.isnan(score) else score
        if score > best:
            best, best_model, waited = score, copy.deepcopy(model), 0
        else:
            waited += 1
            if waited >= patience:
                break
    return _expected(best_model, test_x), 100.0 * best


def correlations(predicted: np.ndarray, gold) -> dict:
    return {
        "pearson": 100.0 * float(pearsonr(predicted, gold).statistic),
        "spearman": 100.0 * float(spearmanr(predicted, gold).statistic),
        "mse": float(np.mean((np.asarray(predicted) - np.asarray(gold)) ** 2)),
    }
