"""SentEval's Adam logistic regression (paper 004 §3.2: ``PyTorchClassifier`` with ``nhid=0``), many fits in
lockstep.

A protocol's grid (4 weight decays × k folds for :func:`.transfer_classifier.choose_weight_decay`, the 4 decays
of :func:`.transfer_classifier.dev_then_test`) is dozens of independent fits of thousands of Adam steps on
batches of 64; one step of one 2-class model is a few thousand multiply-adds, so fitted one after another their
time is almost all Python and dispatcher overhead per step. :func:`train_lockstep` trains G of them at once:
weights stacked ``[G, c, d + 1]`` (``nn.Linear``'s layout with the bias as the last column, the features
carrying a column of ones), each model gathering its own batch from one shared feature matrix per step, and
Adam written out per model.

Each model does what its solo fit (``nn.Linear(d, c)`` under ``torch.manual_seed(seed)``, ``torch.optim.Adam``
at lr 1e-3, betas (0.9, 0.999), eps 1e-8, coupled L2 ``grad += weight_decay * param``, cross-entropy summed)
would do: its own rows, drawn in the order of its own ``RandomState(seed)``; its own step count for the bias
corrections, since folds differ in size by a row and so in batches per epoch (a model with no batch left in an
epoch skips the step; a short last batch is padded with rows of weight 0); its own weight decay, validation
set, early stopping (every ``epoch_size`` epochs; stop after ``tenacity`` rounds without improvement, at most
``max_epoch``) and best state. A model that has stopped leaves the group. The single fit,
:class:`AdamLogisticRegression`, is the group of one, so there is one implementation.

On the development CPU's BLAS (torch 2.13) a model's products come out bit for bit the same whether it is
trained alone or in a group when the stacked weights have 4 or 8 rows, but not 2, 3 or 5 to 7 (the gradient's
``[c, 64] x [64, d + 1]`` product takes another kernel); so 2 to 4 classes are padded to 4 rows and 5 to 8 to
8 (weights 0, scores -inf: they never move), and a model stops at the same epoch with the same bits in any
group. tests/tasks/test_transfer_lockstep.py checks the equality to 1e-5, and the fit alone against the
previous ``torch.optim.Adam`` loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

BETAS = (0.9, 0.999)  # torch.optim.Adam's defaults, which SentEval leaves as they are
EPSILON = 1e-8
STEP_FLOATS = 2**22  # the most features gathered for one step of a group (16 MiB); larger grids train in turns


@dataclass(frozen=True)
class AdamSettings:
    """SentEval's ``classifier`` parameters of paper 004 §3.2 (InferSent's evaluation)."""

    batch_size: int = 64
    epoch_size: int = 4
    tenacity: int = 5
    max_epoch: int = 200
    lr: float = 1e-3  # torch.optim.Adam's default, which SentEval's "adam" leaves as it is
    validation_split: float = 0.05


@dataclass
class Fit:
    """One logistic regression to train: its training and validation rows of the shared matrix, its penalty
    and seed. ``rng`` orders its batches: ``RandomState(seed)``, or the one that drew its validation split
    (:func:`held_out_fit`), as SentEval's fit goes on with it. Training uses it up: a Fit is trained once."""

    train: np.ndarray
    validation: np.ndarray
    weight_decay: float
    seed: int
    rng: np.random.RandomState | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.rng is None:
            self.rng = np.random.RandomState(self.seed)


def held_out_fit(rows: np.ndarray, weight_decay: float, seed: int, settings: AdamSettings = AdamSettings()) -> Fit:
    """A fit on ``rows`` that stops early on a seeded share of them (SentEval's ``validation_split``)."""
    rng = np.random.RandomState(seed)
    order = rng.permutation(len(rows))
    held = int(settings.validation_split * len(rows))
    return Fit(rows[order[held:]], rows[order[:held]], weight_decay, seed, rng)


@dataclass
class Trained:
    params: torch.Tensor  # [width, d + 1]: the best state's weights, the bias as the last column
    classes: np.ndarray
    epochs: int  # epochs trained
    best: float  # the kept model's validation accuracy ×100


def augmented(x: np.ndarray) -> torch.Tensor:
    """``x`` as float32 with a column of ones, which the bias row of the stacked weights multiplies."""
    x = np.asarray(x, dtype=np.float32)
    out = np.ones((len(x), x.shape[1] + 1), dtype=np.float32)
    out[:, :-1] = x
    return torch.from_numpy(out)


def padded_width(classes: int) -> int:
    """Rows of the stacked weights: 4 for up to 4 classes, 8 for 5 to 8 (module docstring: the same bits in
    a group); SentEval's tasks have at most 6."""
    return 4 if classes <= 4 else max(8, classes)


def train_lockstep(x: np.ndarray, y: np.ndarray, fits: list[Fit], settings: AdamSettings = AdamSettings()):
    """Train every fit (its rows index ``x, y``) in lockstep; a :class:`Trained` for each, in order. Fits
    whose rows hold different classes (a fold missing one) train in separate groups, as their layers differ."""
    features, y = augmented(x), np.asarray(y)
    groups: dict[tuple, tuple[np.ndarray, list[int]]] = {}
    for i, fit in enumerate(fits):
        classes = np.unique(y[np.concatenate([fit.train, fit.validation])])
        groups.setdefault(tuple(classes.tolist()), (classes, []))[1].append(i)
    most = max(1, STEP_FLOATS // (settings.batch_size * features.shape[1]))
    trained: list[Trained] = [None] * len(fits)
    for classes, members in groups.values():
        labels = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)  # rows of other classes: unused here
        for start in range(0, len(members), most):
            chunk = members[start : start + most]
            group = Lockstep(features, labels, len(classes), [fits[i] for i in chunk], settings)
            group.train()
            for i, params, epochs, best in zip(chunk, group.best_params, group.epochs, group.best):
                trained[i] = Trained(params.clone(), classes, int(epochs), float(best))
    return trained


class Lockstep:
    """A group of fits over the same classes, trained together (module docstring)."""

    def __init__(self, features: torch.Tensor, labels: np.ndarray, classes: int, fits: list[Fit], settings):
        self.features, self.fits, self.settings, self.classes = features, fits, settings, classes
        width = padded_width(classes)
        self.targets = torch.nn.functional.one_hot(torch.from_numpy(labels), width).float()
        self.column_mask = None
        if width > classes:
            self.column_mask = torch.zeros(width)
            self.column_mask[classes:] = -torch.inf
        initial = {}
        for fit in fits:
            if fit.seed not in initial:
                initial[fit.seed] = initial_params(fit.seed, features.shape[1] - 1, classes, width)
        self.params = torch.stack([initial[fit.seed] for fit in fits])
        self.exp_avg, self.exp_avg_sq = torch.zeros_like(self.params), torch.zeros_like(self.params)
        self.decay = torch.tensor([fit.weight_decay for fit in fits], dtype=torch.float32).view(-1, 1, 1)
        self.steps = np.zeros(len(fits), dtype=np.int64)  # each model's Adam steps, for its bias corrections
        self.live = np.arange(len(fits))  # the models still training; the tensors above hold only theirs
        # validation: one product over the union of the validation rows, then each model's rows of it
        union = np.unique(np.concatenate([fit.validation for fit in fits]))
        everything = len(union) == len(features)  # a cross-validation's folds: no copy
        self.validation_features = features if everything else features.index_select(0, torch.from_numpy(union))
        longest = max(len(fit.validation) for fit in fits)
        self.validation_at = np.zeros((len(fits), longest), dtype=np.int64)
        self.validation_labels = np.full((len(fits), longest), -1)  # padding: never predicted
        for j, fit in enumerate(fits):
            self.validation_at[j, : len(fit.validation)] = np.searchsorted(union, fit.validation)
            self.validation_labels[j, : len(fit.validation)] = labels[fit.validation]
        self.validation_sizes = np.array([len(fit.validation) for fit in fits])
        self.best = np.full(len(fits), -1.0)
        self.best_params = self.params.clone()
        self.misses = np.zeros(len(fits), dtype=np.int64)
        self.epochs = np.zeros(len(fits), dtype=np.int64)

    @torch.no_grad()
    def train(self) -> None:
        """SentEval's loop for every model: ``epoch_size`` epochs, then the validation accuracy decides."""
        epochs = 0
        while epochs <= self.settings.max_epoch and len(self.live):
            for _ in range(self.settings.epoch_size):
                self.epoch()
            epochs += self.settings.epoch_size
            self.judge(epochs)
        self.epochs[self.live] = epochs

    def epoch(self) -> None:
        """One epoch of every live model: its rows in its own random order, batch after batch; a model whose
        batches are done skips the remaining steps."""
        size = self.settings.batch_size
        sizes = np.array([len(self.fits[m].train) for m in self.live])
        batches = -(-sizes // size)
        steps = int(batches.max())
        if steps == 0:
            return
        count = len(self.live)
        index = np.zeros((count, steps * size), dtype=np.int64)
        weight = np.zeros((count, steps * size), dtype=np.float32)  # 0: padding of a short or missing batch
        for j, m in enumerate(self.live):
            fit = self.fits[m]
            index[j, : sizes[j]] = fit.train[fit.rng.permutation(sizes[j])]
            weight[j, : sizes[j]] = 1.0
        index = torch.from_numpy(index.reshape(count, steps, size).transpose(1, 0, 2).copy())  # [step, model, row]
        weight = torch.from_numpy(weight.reshape(count, steps, size).transpose(1, 0, 2).copy()).unsqueeze(-1)
        targets = self.targets.index_select(0, index.view(-1)).view(steps, count, size, -1).mul_(weight)
        # each model's step count at each step, hence torch.optim.Adam's bias corrections, per model
        taken = self.steps[self.live] + np.minimum(np.arange(1, steps + 1)[:, None], batches[None, :])
        taken = np.maximum(taken, 1)  # a model without rows has taken none; its steps are skipped anyway
        beta1, beta2 = BETAS
        step_sizes = torch.from_numpy((self.settings.lr / (1 - beta1**taken)).astype(np.float32))
        corrections2 = torch.from_numpy(np.sqrt(1 - beta2**taken).astype(np.float32))
        for step in range(steps):
            x = self.features.index_select(0, index[step].view(-1)).view(count, size, -1)
            grad = self.gradient(x, targets[step], weight[step])
            active = batches > step
            skipping = None if active.all() else torch.from_numpy(active).view(-1, 1, 1)
            self.adam(grad, step_sizes[step].view(-1, 1, 1), corrections2[step].view(-1, 1, 1), skipping)
        self.steps[self.live] += batches

    def gradient(self, x: torch.Tensor, targets: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """The gradient of the summed cross-entropy (SentEval: ``size_average = False``): ``(softmax - y)^T x``."""
        scores = torch.bmm(x, self.params.transpose(1, 2))
        if self.column_mask is not None:
            scores.add_(self.column_mask)
        return torch.bmm(torch.softmax(scores, -1).mul_(weight).sub_(targets).transpose(1, 2), x)

    def adam(self, grad, step_size, correction2, active) -> None:
        """``torch.optim.Adam``'s update (its single-tensor arithmetic) per model; ``active`` [G, 1, 1], where
        given, keeps the models without a batch at this step as they were."""
        beta1, beta2 = BETAS
        if active is not None:
            before = (self.params.clone(), self.exp_avg.clone(), self.exp_avg_sq.clone())
        grad.addcmul_(self.params, self.decay)  # coupled L2: grad + weight_decay * param
        self.exp_avg.lerp_(grad, 1 - beta1)
        self.exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denominator = self.exp_avg_sq.sqrt().div_(correction2).add_(EPSILON)
        self.params.sub_(self.exp_avg.div(denominator).mul_(step_size))
        if active is not None:
            for now, then in zip((self.params, self.exp_avg, self.exp_avg_sq), before):
                now.copy_(torch.where(active, now, then))

    def accuracies(self) -> np.ndarray:
        """Each live model's accuracy ×100 on its validation rows (0 without any, as SentEval's)."""
        scores = torch.matmul(self.validation_features, self.params.transpose(1, 2).contiguous())[..., : self.classes]
        predicted = scores.argmax(-1).numpy()
        at, labels = self.validation_at[self.live], self.validation_labels[self.live]
        hits = (predicted[np.arange(len(self.live))[:, None], at] == labels).sum(axis=1)
        sizes = self.validation_sizes[self.live]
        return np.where(sizes > 0, 100.0 * (hits / np.maximum(sizes, 1)), 0.0)  # as 100 * np.mean(hits)

    def judge(self, epochs: int) -> None:
        """SentEval's early stopping per model: keep an improvement; stop after ``tenacity`` misses more."""
        scores = self.accuracies()
        improved = scores > self.best[self.live]
        if improved.any():
            where = np.flatnonzero(improved)
            self.best_params[torch.from_numpy(self.live[where])] = self.params[torch.from_numpy(where)]
            self.best[self.live[where]] = scores[where]
        spent = ~improved & (self.misses[self.live] >= self.settings.tenacity)
        self.misses[self.live[~improved & ~spent]] += 1
        if spent.any():
            self.epochs[self.live[spent]] = epochs
            keep = torch.from_numpy(np.flatnonzero(~spent))
            self.params, self.exp_avg, self.exp_avg_sq, self.decay = (
                tensor.index_select(0, keep) for tensor in (self.params, self.exp_avg, self.exp_avg_sq, self.decay)
            )
            self.live = self.live[~spent]


def initial_params(seed: int, d: int, classes: int, width: int) -> torch.Tensor:
    """``nn.Linear(d, classes)``'s initial weights under ``torch.manual_seed(seed)`` as one [width, d + 1]."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layer = torch.nn.Linear(d, classes)
    params = torch.zeros(width, d + 1)
    params[:classes, :d] = layer.weight.detach()
    params[:classes, d] = layer.bias.detach()
    return params


class AdamLogisticRegression:
    """SentEval's ``PyTorchClassifier`` with ``nhid=0``: a linear layer trained with Adam (module docstring);
    one fit, the group of one of :func:`train_lockstep`."""

    def __init__(self, weight_decay: float, seed: int, settings: AdamSettings = AdamSettings()):
        self.weight_decay, self.seed, self.settings = weight_decay, seed, settings
        self.params = None  # [width, d + 1], as trained (predict scores with these)
        self.model = None  # the same weights as torch's nn.Linear(d, classes), to inspect
        self.classes = np.zeros(0)
        self.epochs = 0  # epochs trained by the last fit
        self.best = -1.0  # the validation accuracy of the model kept

    def fit(self, x: np.ndarray, y: np.ndarray, validation: tuple[np.ndarray, np.ndarray] | None = None):
        """Train on ``x, y``, stopping early on ``validation`` (default: a seeded share of ``x``)."""
        x, y = np.asarray(x, dtype=np.float32), np.asarray(y)
        if validation is None:
            fit = held_out_fit(np.arange(len(x)), self.weight_decay, self.seed, self.settings)
        else:
            held = np.arange(len(x), len(x) + len(validation[1]))
            fit = Fit(np.arange(len(x)), held, self.weight_decay, self.seed)
            x = np.concatenate([x, np.asarray(validation[0], dtype=np.float32).reshape(-1, x.shape[1])])
            y = np.concatenate([y, np.asarray(validation[1])])
        (trained,) = train_lockstep(x, y, [fit], self.settings)
        return self.adopt(trained)

    def adopt(self, trained: Trained) -> AdamLogisticRegression:
        """Take a lockstep group's result as this model's."""
        self.params, self.classes, self.epochs, self.best = (
            trained.params,
            trained.classes,
            trained.epochs,
            trained.best,
        )
        d, count = trained.params.shape[1] - 1, len(trained.classes)
        self.model = torch.nn.utils.skip_init(torch.nn.Linear, d, count)  # no draw from torch's generator
        with torch.no_grad():
            self.model.weight.copy_(trained.params[:count, :d])
            self.model.bias.copy_(trained.params[:count, d])
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return self.classes[:0]
        with torch.inference_mode():
            scores = torch.matmul(augmented(x), self.params.T.contiguous()[None])[0, :, : len(self.classes)]
        return self.classes[scores.argmax(-1).numpy()]
