"""Which examples form each batch of an epoch, and how much of a batch is padding (docs/stages/pretrain.md).

Two orders (``pretrain --batching``):

- ``random``: a seeded permutation cut into batches, as both papers' scripts (Hugging Face's
  ``RandomSampler``) batch them.
- ``length-grouped`` (the default for single-sentence input): Hugging Face's ``group_by_length``
  (``transformers``' ``LengthGroupedSampler``): the same seeded permutation, cut into
  mega-batches of 50 batches, each sorted by length (longest first) and cut into batches, whose
  order is then shuffled (seeded). A batch holds sentences of similar length, so it carries
  little padding, while which sentences meet in a batch, and the order of the batches, stay
  random. Sentences are padded to the longest of their batch (the collators), so with random
  batching a short sentence beside a long one is mostly padding.

Both are pure functions of ``(seed, epoch, lengths, world)``: a resumed run finds the same
batches of its epoch, and ``(epoch, batches done)`` is all the checkpoint needs to know about
the data (:mod:`pipeline.pretrain.checkpoint`). With several processes each step's global
batch (batch size × processes examples) is dealt round-robin, so that the processes of one step
get examples of similar length and wait little for each other.

Packed input (:mod:`pipeline.pretrain.packing`) needs no grouping: every block but the last is
full. :func:`padding_counts` measures the padding of a batch (pad tokens over all tokens of
each input: S, and MiSAD's w and R packed into one row); ``pretrain`` logs its share per step and for the run.
"""

from __future__ import annotations

import numpy as np

from pipeline.models import runtime
from pipeline.models.runtime import World
from pipeline.pretrain import segment_packing

BATCHINGS = ("random", "length-grouped")
MEGA_BATCHES = 50  # batches per mega-batch, as transformers' get_length_grouped_indices (mega_batch_mult)


def epoch_batches(
    size: int,
    epoch: int,
    seed: int,
    batch_size: int,
    world: World,
    lengths: np.ndarray | None = None,
) -> list[list[int]]:
    """This process's batches of an epoch: ``random`` without ``lengths``, ``length-grouped`` with them."""
    order = np.random.default_rng([seed, epoch, 3]).permutation(size)
    order = order[: size // world.size * world.size] if world.size > 1 else order
    step = batch_size * world.size  # one step's examples over all processes
    if lengths is None:
        steps = [order[i : i + step] for i in range(0, len(order), step)]
    else:
        steps = length_grouped(order, np.asarray(lengths), step, np.random.default_rng([seed, epoch, 5]))
    return [chunk[world.rank :: world.size].tolist() for chunk in steps]


def length_grouped(order: np.ndarray, lengths: np.ndarray, batch_size: int, rng: np.random.Generator):
    """``order`` cut into mega-batches of ``MEGA_BATCHES`` batches, each sorted longest first (ties in
    ``order``) and cut into batches; the batches come back in an order shuffled by ``rng``."""
    mega = MEGA_BATCHES * batch_size
    batches = []
    for start in range(0, len(order), mega):
        chunk = order[start : start + mega]
        chunk = chunk[np.argsort(-lengths[chunk], kind="stable")]
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[k] for k in rng.permutation(len(batches))]


def example_lengths(examples, dataset) -> np.ndarray:
    """Tokens per example in the current epoch, what length grouping sorts by: a row's length; for a
    sentence pair (NSP / SOP: :class:`~pipeline.pretrain.sentence_pairs.SentencePairs`) both sentences'
    of the epoch's pair (an NSP negative's second sentence is drawn per epoch, so ask after
    ``set_epoch``)."""
    lengths = np.asarray(dataset.lengths(), dtype=np.int64)
    if examples is dataset:
        return lengths
    if hasattr(examples, "firsts"):
        return examples.lengths(lengths)
    return np.asarray(examples.lengths(), dtype=np.int64)


def padding_counts(batch: dict) -> dict[str, tuple[int, int]]:
    """``{prefix: (pad tokens, all tokens)}`` of each input as the encoder gets it, from the attention
    masks: S (``""``), and MiSAD's w and R (``"wr_"``), which are encoded packed into one row per example
    (:mod:`pipeline.pretrain.segment_packing`)."""
    counts = {}
    if "attention_mask" in batch:
        mask = batch["attention_mask"]
        counts[""] = (mask.numel() - int(mask.sum()), mask.numel())
    if "w_attention_mask" in batch:
        counts["wr_"] = segment_packing.padding_counts(batch["w_attention_mask"], batch["r_attention_mask"])
    return counts


class PaddingMeter:
    """Pad and total tokens per input, summed over batches: :meth:`shares` gives ``{"padding_share",
    "wr_padding_share"}``; :meth:`as_dict` / :meth:`from_dict` carry the sums through a checkpoint."""

    def __init__(self, sums: dict | None = None):
        self.sums = {prefix: [int(pad), int(total)] for prefix, (pad, total) in (sums or {}).items()}

    def add(self, counts: dict[str, tuple[int, int]]) -> PaddingMeter:
        for prefix, (pad, total) in counts.items():
            kept = self.sums.setdefault(prefix, [0, 0])
            kept[0] += int(pad)
            kept[1] += int(total)
        return self

    def summed(self, world: World, device) -> PaddingMeter:
        """The sums over the processes (every process gets the totals)."""
        return PaddingMeter(
            {k: [int(runtime.all_sum(v, world, device)) for v in pair] for k, pair in self.sums.items()}
        )

    def shares(self) -> dict[str, float]:
        return {
            f"{prefix}padding_share": round(pad / total, 6) if total else 0.0
            for prefix, (pad, total) in sorted(self.sums.items())
        }

    def as_dict(self) -> dict:
        return {prefix: list(values) for prefix, values in self.sums.items()}

    @classmethod
    def from_dict(cls, sums: dict) -> PaddingMeter:
        return cls(sums)
