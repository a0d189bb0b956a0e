"""Held-out evaluation while pre-training: what the masked LM learns, on sentences it never trains on.

``pretrain --heldout N`` sets N sentences of the token data aside (a seeded draw: the same sentences
for every objective trained on the same data) and trains on the others; before the first step (a
``train_log.jsonl`` line of its own, step 0), every ``--eval-every K`` steps and after the last, the
MLM head predicts the masked tokens of those sentences under two
fixed maskings, the same for every objective so that runs compare:

- BERT's token masking (15%): ``heldout_token_acc`` (share of masked tokens predicted right) and
  ``heldout_token_loss`` (their cross-entropy);
- BURT's n-gram masking (BURT §3.2, docs/method.md §3), on the sentences' marked n-grams:
  ``heldout_ngram_acc``, the share of masked n-grams whose every token is predicted right (whole
  n-grams: the unit BURT masks), and ``heldout_ngram_token_acc`` over their tokens.

Where the held-out sentences have no masked token (or no masked n-gram), the scores are logged as
``null``, not as a loss of 0 and an accuracy of 0 (``heldout_ngrams`` counts the n-grams scored). The masks are drawn once, from ``(seed, epoch 0, sentence)``, so a change between two evaluations is
the model's. Each evaluation goes into that step's line of ``train_log.jsonl``. With ELECTRA the
masked LM is the generator.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from pipeline.errors import InputError
from pipeline.pretrain.encoder_heads import encode, mlm_head
from pipeline.pretrain.masking import collator_for

EVAL_BATCH = 64


class RowView:
    """Some rows of a token dataset, as a token dataset (what the collators, packing and pairs read)."""

    def __init__(self, dataset, rows: np.ndarray):
        self.dataset, self.rows = dataset, np.asarray(rows, dtype=np.int64)
        self.path = dataset.path
        self.has_sampled = getattr(dataset, "has_sampled", False)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, idx: int) -> dict:
        if not 0 <= idx < len(self.rows):
            raise IndexError(idx)
        item = self.dataset[int(self.rows[idx])]
        item["idx"] = idx  # the example's index here: its masks are drawn from it
        return item

    def column(self, name: str) -> np.ndarray:
        return self.dataset.column(name)[self.rows]

    def lengths(self) -> np.ndarray:
        return np.asarray(self.dataset.lengths())[self.rows]


def split(dataset, count: int, seed: int) -> tuple[RowView, RowView]:
    """(training rows, ``count`` held-out rows): a seeded draw over the dataset's rows."""
    if not 0 < count < len(dataset):
        raise ValueError(f"--heldout {count}: the data has {len(dataset)} sentences; hold out fewer")
    held = np.sort(np.random.default_rng([seed, 17]).choice(len(dataset), count, replace=False))
    kept = np.setdiff1d(np.arange(len(dataset)), held, assume_unique=True)
    return RowView(dataset, kept), RowView(dataset, held)


def set_aside(args, dataset, tokenizer):
    """(the rows to train on, :class:`HeldOut` or None): ``--heldout`` sentences set aside, if any."""
    if not args.heldout:
        return dataset, None
    try:
        train, held = split(dataset, args.heldout, args.seed)
    except ValueError as exc:
        raise InputError(dataset.path, str(exc)) from None
    return train, HeldOut(held, tokenizer, args.seed, args.eval_every, args.ngram_pool)


def _share(part: float, whole: float) -> float | None:
    """``part / whole`` rounded for the log; None (JSON null) where there is nothing to score."""
    return round(part / whole, 5) if whole else None


class HeldOut:
    """The held-out sentences masked once both ways; :meth:`evaluate` scores a masked LM on them."""

    def __init__(self, rows: RowView, tokenizer, seed: int, every: int, ngram_pool: str):
        self.every = every
        chunks = [range(i, min(i + EVAL_BATCH, len(rows))) for i in range(0, len(rows), EVAL_BATCH)]
        self.batches = {}
        for name, objective in (("token", "mlm"), ("ngram", "burt")):
            collator = collator_for(objective, tokenizer, seed=seed, ngram_pool=ngram_pool)
            collator.set_epoch(0)
            self.batches[name] = []
            for chunk in chunks:
                examples = [rows[i] for i in chunk]
                batch = collator(examples)
                batch.pop("masking_stats", None)
                spans = [np.asarray(e["ngram_spans"]).reshape(-1, 2) for e in examples]
                self.batches[name].append((batch, spans))

    def due(self, step: int, total_steps: int) -> bool:
        return step % self.every == 0 or step == total_steps

    @torch.no_grad()
    def evaluate(self, mlm_model, device) -> dict[str, float | None]:
        was_training = mlm_model.training
        mlm_model.eval()
        head = mlm_head(mlm_model)
        found = {}
        for name, batches in self.batches.items():
            right = total = loss = 0.0
            units_right = units = 0
            for batch, spans in batches:
                labels = batch["labels"].to(device)
                hidden = encode(mlm_model, batch["input_ids"].to(device), batch["attention_mask"].to(device))
                where = labels != -100
                logits = head(hidden[where]).float()
                loss += float(F.cross_entropy(logits, labels[where], reduction="sum"))
                correct = torch.zeros_like(labels, dtype=torch.bool)
                correct[where] = logits.argmax(-1) == labels[where]
                right += float(correct.sum())
                total += float(where.sum())
                for row, row_spans in enumerate(spans):  # whole n-grams: every token of a masked n-gram right
                    for start, end in row_spans:
                        if where[row, start:end].all():
                            units += 1
                            units_right += int(correct[row, start:end].all())
            # no masked token (or n-gram): no score, logged as null, not as a perfect loss and a zero accuracy
            found[f"heldout_{name}_acc" if name == "token" else "heldout_ngram_token_acc"] = _share(right, total)
            if name == "token":
                found["heldout_token_loss"] = _share(loss, total)
            else:
                found["heldout_ngram_acc"] = _share(units_right, units)
                found["heldout_ngrams"] = units
        mlm_model.train(was_training)
        return found
