"""NSP and SOP: the sentence-pair baselines of ULR-BERT §7.1 (docs/method.md §3), each trained with MLM.

Pairs are consecutive sentences of a document (``doc_id``, ``sent_id`` and ``sent_id + 1`` in
the token dataset), one per first sentence that has a successor. On the NSP / SOP sample
(``sample --with-next``: the token dataset has a ``sampled`` column) the first sentences are the
sampled rows and the rows present only as next sentences are never firsts, so the pairs are as
many as the sampled sentences less those that are the last of their document (those have no
pair; ``without_next`` counts them), about the examples of the single-sentence objectives over
the same sample: ULR-BERT §7.1 compares the objectives "with the same additional updates". On a
plain sample (no ``sampled`` column) every row with its successor in the sample is a first:


- NSP (BERT): the next sentence half of the time (label 0), otherwise a random sentence of
  another document (label 1), drawn from the sampled rows. When 10 draws find no other document's sentence (a sample of
  one document or nearly), the pair is relabelled as the true next sentence (label 0) and
  counted (``nsp_relabelled`` in the batch's :class:`MaskingStats`).
- SOP (ALBERT): the two sentences in order (label 0) or swapped (label 1), half of the time each.

A pair is laid out with the tokenizer's own pair template (found by encoding a two-piece
example, so ``[CLS] A [SEP] B [SEP]`` and segment ids come from the tokenizer), cut longest
first to the dataset's maximum length, then masked at token level (15%). The draws are
seeded by ``(seed, epoch, pair index)`` like the masks.
"""

from __future__ import annotations

import logging

import numpy as np
import torch

from pipeline.pretrain.masking import MaskingCollator, pad_rows
from pipeline.pretrain.masking_stats import MaskingStats
from pipeline.pretrain.token_dataset import TokenDataset

log = logging.getLogger("pipeline.pretrain")

TASKS = ("nsp", "sop")


def successor_index(doc_ids: np.ndarray, sent_ids: np.ndarray) -> np.ndarray:
    """For each row, the row holding the next sentence of the same document, or -1."""
    order = np.lexsort((sent_ids, doc_ids))
    nxt = np.full(len(doc_ids), -1, dtype=np.int64)
    same_doc = doc_ids[order[1:]] == doc_ids[order[:-1]]
    consecutive = sent_ids[order[1:]] == sent_ids[order[:-1]] + 1
    follows = np.flatnonzero(same_doc & consecutive)
    nxt[order[follows]] = order[follows + 1]
    return nxt


class PairTemplate:
    """The tokenizer's pair layout: special ids and segment ids around the two pieces."""

    def __init__(self, tokenizer):
        probe = tokenizer("a", "b", return_special_tokens_mask=True, return_token_type_ids=True)
        self.pieces: list[tuple[int | str, int]] = []  # (special id or "A"/"B", segment)
        seen = 0
        for token, special, segment in zip(probe["input_ids"], probe["special_tokens_mask"], probe["token_type_ids"]):
            if special:
                self.pieces.append((token, segment))
            elif not self.pieces or self.pieces[-1][0] not in ("A", "B"):
                self.pieces.append(("AB"[seen], segment))
                seen += 1
        self.specials = sum(1 for piece, _ in self.pieces if piece not in ("A", "B"))

    def build(self, first: np.ndarray, second: np.ndarray, max_length: int) -> tuple[np.ndarray, np.ndarray]:
        first, second = list(first), list(second)
        while len(first) + len(second) + self.specials > max_length and (first or second):
            (first if len(first) >= len(second) else second).pop()
        ids, segments = [], []
        for piece, segment in self.pieces:
            content = first if piece == "A" else second if piece == "B" else [piece]
            ids += content
            segments += [segment] * len(content)
        return np.array(ids, dtype=np.int64), np.array(segments, dtype=np.int64)


def content(row: dict) -> np.ndarray:
    """The sentence's tokens without the special tokens its single-sentence encoding added."""
    return np.asarray(row["input_ids"])[np.asarray(row["word_ids"]) >= 0]


class SentencePairs:
    """Pair examples over a :class:`TokenDataset`: ``{"idx", "first", "second", "pair_label"}``."""

    def __init__(self, dataset: TokenDataset, task: str, seed: int = 0):
        if task not in TASKS:
            raise ValueError(f"unknown pair task {task!r}; choose from {TASKS}")
        self.dataset, self.task, self.seed = dataset, task, seed
        self.doc_ids = dataset.column("doc_id")
        self.next = successor_index(self.doc_ids, dataset.column("sent_id"))
        # the rows a pair may start from and the pool of NSP's negatives: the sampled ones
        sampled = dataset.column("sampled") if getattr(dataset, "has_sampled", False) else np.ones(len(dataset), bool)
        self.pool = np.flatnonzero(sampled)
        self.firsts = np.flatnonzero(sampled & (self.next >= 0))
        self.without_next = len(self.pool) - len(self.firsts)  # sampled, but the last of its document here
        self.set_epoch(0)
        log.info(
            "%s: %s pairs from %s sampled sentences (%s without a next sentence in the data)",
            task,
            len(self.firsts),
            len(self.pool),
            self.without_next,
        )

    def set_epoch(self, epoch: int) -> None:
        """Draw the epoch's pairs: each example's label and, for an NSP negative, its second sentence.

        One generator per (seed, epoch) draws them all at once, before any loader worker starts, so
        every worker count sees the same pairs, and length grouping can sort by the pairs' real
        lengths (:meth:`lengths`)."""
        self.epoch = epoch
        rng = np.random.default_rng([self.seed, epoch, 2])
        firsts = self.firsts
        labels = rng.random(len(firsts)) < 0.5
        seconds = self.next[firsts].copy()
        relabelled = np.zeros(len(firsts), bool)
        if self.task == "nsp":
            # another document's sampled sentence (BERT's negative): up to 10 draws, then the true next
            # sentence, relabelled as a positive (a sample of one document has no other)
            todo = np.flatnonzero(labels)
            for _ in range(10):
                if not len(todo):
                    break
                drawn = self.pool[rng.integers(len(self.pool), size=len(todo))]
                other = self.doc_ids[drawn] != self.doc_ids[firsts[todo]]
                seconds[todo[other]] = drawn[other]
                todo = todo[~other]
            labels[todo], relabelled[todo] = False, True
        self.labels, self.seconds, self.relabelled = labels, seconds, relabelled

    def lengths(self, row_lengths: np.ndarray) -> np.ndarray:
        """Tokens per pair this epoch (both sentences, from the rows' lengths): what grouping sorts by."""
        return row_lengths[self.firsts] + row_lengths[self.seconds]

    def __len__(self) -> int:
        return len(self.firsts)

    def __getitem__(self, idx: int) -> dict:
        a, b, label = int(self.firsts[idx]), int(self.seconds[idx]), int(self.labels[idx])
        first, second = content(self.dataset[a]), content(self.dataset[b])
        if self.task == "sop" and label:
            first, second = second, first
        return {"idx": idx, "first": first, "second": second, "pair_label": label, "relabelled": self.relabelled[idx]}


class PairCollator:
    """Pairs → ``input_ids``, ``token_type_ids``, ``attention_mask``, MLM ``labels``, ``pair_labels``."""

    def __init__(self, tokenizer, max_length: int, seed: int = 0, mlm_probability: float = 0.15, **masking_options):
        self.template = PairTemplate(tokenizer)
        self.max_length = max_length
        self.masking = MaskingCollator(tokenizer, "token", mlm_probability, seed=seed, **masking_options)
        self.pad_id = tokenizer.pad_token_id

    def set_epoch(self, epoch: int) -> None:
        self.masking.set_epoch(epoch)

    def __call__(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        ids, segments, labels = [], [], []
        stats = MaskingStats()
        for example in examples:
            pair, segment = self.template.build(example["first"], example["second"], self.max_length)
            masked, label = self.masking.mask_example({"input_ids": pair, "idx": example["idx"]}, stats=stats)
            stats.counts["pairs"] += 1
            stats.counts["nsp_relabelled"] += int(example.get("relabelled", False))
            ids.append(masked)
            segments.append(segment)
            labels.append(label)
        return {
            "input_ids": pad_rows(ids, self.pad_id),
            "token_type_ids": pad_rows(segments, 0),
            "attention_mask": pad_rows([np.ones(len(i), np.int64) for i in ids], 0),
            "labels": pad_rows(labels, -100),
            "pair_labels": torch.tensor([e["pair_label"] for e in examples], dtype=torch.long),
            "masking_stats": stats,
        }
