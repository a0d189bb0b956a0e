"""NLI training of a BiLSTM encoder (paper 004 §3.1, following InferSent's schedule).

SGD at learning rate 0.1, multiplied by 0.99 after every epoch; whenever the dev accuracy
is not above the best so far, the rate is divided by 5, and training stops once it falls
below 1e-5 (or after ``max_epochs``). Batches of 64 pairs, cross-entropy over the three
labels; gradients are clipped to norm 5 as InferSent does. The encoder state of the best dev
epoch is kept and scored on the test pairs. Same pairs + seed → same model.

The rate 0.1 goes with SNLI's 550k training pairs: about 8,600 updates an epoch. On the 29.5k pairs
of the public SNLI + MultiNLI dev sets an epoch is 20 times fewer updates, and at 0.1 the model stays
near chance for the first two epochs (held-out dev 42% and 46%, with vectors that cover about 99% of
the tokens) and reaches 54.9% on SNLI test after six; ``--lr 1.0`` learns faster (62% after ten
epochs; bench/learning_bilstm.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from pipeline.bilstm.nli_data import Pairs
from pipeline.bilstm.nli_model import NLIClassifier
from pipeline.models.bilstm.encoder import BiLSTMEncoder
from pipeline.models.runtime import pick_device  # the project's one device helper
from pipeline.models.word_vectors import WordVectors
from pipeline.progress import Progress

log = logging.getLogger("pipeline.bilstm")


@dataclass(frozen=True)
class Schedule:
    """Paper 004 §3.1."""

    lr: float = 0.1
    decay: float = 0.99
    shrink: float = 5.0
    min_lr: float = 1e-5
    batch_size: int = 64
    max_epochs: int = 20
    max_norm: float = 5.0
    classifier_hidden: int = 512


@dataclass
class Encoded:
    """Word-id lists of a set of pairs."""

    premises: list[list[int]]
    hypotheses: list[list[int]]
    labels: torch.Tensor

    @classmethod
    def of(cls, pairs: Pairs, vectors: WordVectors) -> Encoded:
        return cls(
            [vectors.ids(text) for text in pairs.premises],
            [vectors.ids(text) for text in pairs.hypotheses],
            torch.tensor(pairs.labels, dtype=torch.long),
        )

    def __len__(self) -> int:
        return len(self.labels)

    def batch(self, rows) -> tuple[list[list[int]], list[list[int]], torch.Tensor]:
        rows = [int(i) for i in rows]
        return [self.premises[i] for i in rows], [self.hypotheses[i] for i in rows], self.labels[rows]


def accuracy(model: NLIClassifier, data: Encoded, batch_size: int = 256) -> float:
    """Accuracy ×100 of ``model`` on ``data``."""
    found = hits(model, data, batch_size)
    return 100.0 * float(found.sum()) / max(len(data), 1)


def hits(model: NLIClassifier, data: Encoded, batch_size: int = 256) -> np.ndarray:
    """Whether ``model`` labels each pair of ``data`` right, in order (the scoreboard's McNemar test)."""
    model.eval()
    found = []
    with torch.inference_mode():
        for start in range(0, len(data), batch_size):
            premises, hypotheses, labels = data.batch(range(start, min(start + batch_size, len(data))))
            found.append((model(premises, hypotheses).argmax(-1).cpu() == labels).numpy())
    model.train()
    return np.concatenate(found) if found else np.zeros(0, dtype=bool)


def train(
    train_pairs: Pairs,
    dev_pairs: Pairs,
    vectors: WordVectors,
    hidden: int,
    pooling: str,
    schedule: Schedule = Schedule(),
    seed: int = 0,
    on_epoch=None,
) -> tuple[NLIClassifier, list[dict]]:
    """Train an encoder + classifier; returns the model at its best dev epoch and the epoch log.
    ``on_epoch(line, epoch)`` sees each epoch's log line as it is made (the live curves)."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    train_data, dev_data = Encoded.of(train_pairs, vectors), Encoded.of(dev_pairs, vectors)
    device = pick_device()
    model = NLIClassifier(
        BiLSTMEncoder(torch.from_numpy(vectors.vectors), hidden, pooling), hidden=schedule.classifier_hidden
    ).to(device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trainable, lr=schedule.lr)
    loss_fn = nn.CrossEntropyLoss()
    lr, best, best_state, lines = schedule.lr, -1.0, None, []
    progress = Progress(log, "pairs", total=schedule.max_epochs * len(train_data))
    for epoch in range(1, schedule.max_epochs + 1):
        started = time.monotonic()
        if epoch > 1:
            lr *= schedule.decay
        for group in optimizer.param_groups:
            group["lr"] = lr
        order = torch.randperm(len(train_data), generator=generator)
        total_loss, correct = 0.0, 0
        for start in range(0, len(order), schedule.batch_size):
            premises, hypotheses, labels = train_data.batch(order[start : start + schedule.batch_size])
            labels = labels.to(device)
            logits = model(premises, hypotheses)
            loss = loss_fn(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(trainable, schedule.max_norm)
            optimizer.step()
            total_loss += loss.item() * len(labels)
            correct += int((logits.argmax(-1) == labels).sum())
            progress.update(len(labels), position=(epoch - 1) * len(train_data) + start + len(labels))
        dev = accuracy(model, dev_data)
        line = {
            "epoch": epoch,
            "lr": lr,
            "loss": total_loss / len(train_data),
            "train_accuracy": 100.0 * correct / len(train_data),
            "dev_accuracy": dev,
            "seconds": time.monotonic() - started,
        }
        lines.append(line)
        if on_epoch is not None:
            on_epoch({**line, "pairs_per_s": len(train_data) / max(line["seconds"], 1e-9)}, epoch)
        log.info(
            "epoch %d: loss %.4f, train %.2f, dev %.2f, lr %.2g", epoch, line["loss"], line["train_accuracy"], dev, lr
        )
        if dev > best:
            best = dev
            best_state = {name: tensor.clone() for name, tensor in model.state_dict().items()}
        else:
            lr /= schedule.shrink
            if lr < schedule.min_lr:
                log.info("learning rate %.2g under %.2g: stop", lr, schedule.min_lr)
                break
    model.load_state_dict(best_state)
    return model.cpu().eval(), lines
