"""Masking strategies as Hugging Face-style data collators (docs/method.md §3).

``collator(examples) -> {"input_ids", "attention_mask", "labels", "idx"}`` like
``transformers.DataCollatorForLanguageModeling``: labels are the original ids where a token is
to be predicted and -100 elsewhere; special tokens (``tokenizer.all_special_ids``) and padding
are never masked. Each chosen unit (a token, word, n-gram or span: :mod:`span_sampling`) gets
one 80/10/10 draw: all its tokens become ``[MASK]``, or random non-special tokens, or stay.

Masking is dynamic and reproducible: the generator of an example is seeded by
``(seed, epoch, example index)``, so a new pattern is drawn each epoch (:meth:`set_epoch`),
the same sentence gets the same mask whatever the batch size, the number of processes or a
resume in the middle of an epoch, and no generator state needs saving. Examples without an
``idx`` (plain Hugging Face use) draw from one collator-level generator seeded per epoch.
The dataset rows are never modified. Every batch carries a :class:`MaskingStats` under
``masking_stats`` (mask rate, masked tokens by source, unit lengths: :mod:`masking_stats`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from pipeline.objective_registry import lookup
from pipeline.pretrain import span_sampling
from pipeline.pretrain.masking_stats import MaskingStats


@dataclass(frozen=True)
class Strategy:
    """One masking strategy: how it draws its units and what its statistics count them as, in one entry, so
    that a new strategy cannot leave its statistics out (every field but ``word_pool`` is required).

    - ``draw(collator, example, eligible, budget, rng, pool)``: the units to mask, ``(start, end)`` token
      ranges covering at most ``budget`` tokens (:mod:`span_sampling`);
    - ``source``: the ``masked_by_source`` key of every unit it masks (:mod:`masking_stats`), or None for an
      n-gram strategy, whose units are counted by where they come from in its pool (``pmi``, ``entity``, or
      ``token`` for a single token outside any kept span), with the pool's coverage;
    - ``spans``: the example's column of marked spans an n-gram strategy draws its pool from (None otherwise);
    - ``word_pool``: whether the lengths of the whole words it draws from are its pool's histogram."""

    name: str
    draw: Callable
    source: str | None
    spans: str | None
    word_pool: bool = False

    def __post_init__(self):
        if (self.source is None) == (self.spans is None):
            raise ValueError(f"masking strategy {self.name}: either a source for its units or a pool of spans")


def _tokens(collator, example, eligible, budget, rng, pool):
    return span_sampling.token_units(eligible, budget, rng)


def _whole_words(collator, example, eligible, budget, rng, pool):
    return span_sampling.whole_word_units(example, eligible, budget, rng)


def _spans(collator, example, eligible, budget, rng, pool):
    return span_sampling.span_units(example, eligible, budget, rng, max_words=collator.span_max_words)


def _ngrams(collator, example, eligible, budget, rng, pool):
    return span_sampling.ngram_units(collator.spans(example), eligible, budget, rng, collator.ngram_pool, pool)


# The strategies (docs/method.md §3), by the name an objective's registry entry gives as its ``masking``:
# BERT's tokens, whole words, BURT's PMI n-grams (BURT §3.2), named-entity spans by the same procedure, and
# SpanBERT's random spans.
STRATEGIES: dict[str, Strategy] = {
    entry.name: entry
    for entry in (
        Strategy("token", _tokens, source="token", spans=None),
        Strategy("whole-word", _whole_words, source="word", spans=None, word_pool=True),
        Strategy("ngram", _ngrams, source=None, spans="ngram_spans"),
        Strategy("entity", _ngrams, source=None, spans="entity_spans"),
        Strategy("span", _spans, source="span", spans=None),
    )
}


class MaskingCollator:
    """Pads a batch of token-dataset rows and masks it with one strategy (:data:`STRATEGIES`)."""

    def __init__(
        self,
        tokenizer,
        strategy: str = "token",
        mlm_probability: float = 0.15,
        mask_replace_prob: float = 0.8,
        random_replace_prob: float = 0.1,
        seed: int = 0,
        ngram_pool: str = span_sampling.POOLS[0],
        pad_to_multiple_of: int | None = None,
        span_max_words: int = 6,
    ):
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown masking strategy {strategy!r}; choose from {tuple(STRATEGIES)}")
        if ngram_pool not in span_sampling.POOLS:
            raise ValueError(f"unknown n-gram pool {ngram_pool!r}; choose from {span_sampling.POOLS}")
        self.tokenizer = tokenizer
        self.strategy = strategy
        self.entry = STRATEGIES[strategy]
        self.mlm_probability = mlm_probability
        self.mask_replace_prob = mask_replace_prob
        self.random_replace_prob = random_replace_prob
        self.seed = seed
        self.ngram_pool = ngram_pool
        self.pad_to_multiple_of = pad_to_multiple_of
        self.span_max_words = span_max_words  # SpanBERT's longest span, in words (span only)
        self.pad_id = tokenizer.pad_token_id
        self.mask_id = tokenizer.mask_token_id
        self.special_ids = np.array(sorted(set(tokenizer.all_special_ids)), dtype=np.int64)
        vocab = np.arange(len(tokenizer), dtype=np.int64)
        self.random_ids = vocab[~np.isin(vocab, self.special_ids)]
        self.set_epoch(0)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self._shared_rng = np.random.default_rng([self.seed, epoch, 2**32 - 1])

    def rng_for(self, example: dict) -> np.random.Generator:
        if "idx" in example:
            return np.random.default_rng([self.seed, self.epoch, int(example["idx"])])
        return self._shared_rng

    # -- the pieces -------------------------------------------------------------------------------
    def eligible(self, ids: np.ndarray) -> np.ndarray:
        return ~np.isin(ids, self.special_ids)

    def pool(self, example: dict, eligible: np.ndarray) -> tuple | None:
        """``(kept spans, uncovered tokens)`` for the n-gram strategies (None for the others)."""
        if self.entry.spans is None:
            return None
        return span_sampling.ngram_pool(self.spans(example), eligible)

    def units(
        self, example: dict, eligible: np.ndarray, rng: np.random.Generator, pool: tuple | None = None
    ) -> list[tuple[int, int]]:
        budget = span_sampling.budget_for(int(eligible.sum()), self.mlm_probability)
        return self.entry.draw(self, example, eligible, budget, rng, pool)

    def spans(self, example: dict) -> np.ndarray:
        """The marked spans an n-gram strategy samples from (k × 2)."""
        return np.asarray(example[self.entry.spans]).reshape(-1, 2)

    def record(self, stats: MaskingStats, example: dict, eligible: np.ndarray, units, pool=None) -> None:
        """Add one example's masking to ``stats``: sources, lengths in words, coverage of the kept n-grams."""
        word_ids = np.asarray(example["word_ids"]) if "word_ids" in example else None

        def words(start, end):
            if word_ids is None or end - start == 1:
                return end - start
            return 1 + int(np.count_nonzero(np.diff(word_ids[start:end])))  # a unit is contiguous

        c = stats.counts
        c["rows"] += 1
        c["eligible_tokens"] += int(eligible.sum())
        c["masked_tokens"] += sum(end - start for start, end in units)
        source = self.entry.source
        if source is None:  # n-gram strategies: the units of the pool
            kept, singles = pool if pool is not None else span_sampling.ngram_pool(self.spans(example), eligible)
            entities = {(int(s), int(e)) for s, e in np.asarray(example.get("entity_spans", [])).reshape(-1, 2)}
            kept_set = set(kept)
            c["covered_tokens"] += sum(end - start for start, end in kept)
            stats.pool_unit_words.update(words(s, e) for s, e in kept)
            stats.pool_unit_words[1] += len(singles)
            for start, end in units:
                if (start, end) in kept_set:
                    origin = "entity" if self.entry.spans == "entity_spans" or (start, end) in entities else "pmi"
                    c["masked_in_ngrams"] += end - start
                else:
                    origin = "token"
                stats.masked_by_source[origin] += end - start
        else:
            for start, end in units:
                stats.masked_by_source[source] += end - start
            if self.entry.word_pool:
                stats.pool_unit_words.update(words(s, e) for s, e in span_sampling.word_units(word_ids, eligible))
        stats.masked_unit_words.update(words(s, e) for s, e in units)

    def corrupt(self, ids: np.ndarray, labels: np.ndarray, units, rng: np.random.Generator) -> None:
        """One 80/10/10 draw per unit, applied to the whole unit (in place)."""
        draws = rng.random(len(units))
        for (start, end), draw in zip(units, draws):
            labels[start:end] = ids[start:end]
            if draw < self.mask_replace_prob:
                ids[start:end] = self.mask_id
            elif draw < self.mask_replace_prob + self.random_replace_prob:
                ids[start:end] = rng.choice(self.random_ids, size=end - start)

    def mask_example(
        self,
        example: dict,
        exclude: np.ndarray | None = None,
        stats: MaskingStats | None = None,
        rng: np.random.Generator | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(masked ids, labels)`` of one example; ``exclude`` marks positions never to mask;
        ``stats`` (if given) records what was masked; ``rng`` replaces the example's own stream."""
        ids = np.array(example["input_ids"], dtype=np.int64)
        labels = np.full(len(ids), -100, dtype=np.int64)
        eligible = self.eligible(ids)
        if exclude is not None:
            eligible &= ~exclude
        rng = self.rng_for(example) if rng is None else rng
        pool = self.pool(example, eligible)
        units = self.units(example, eligible, rng, pool)
        if stats is not None:
            self.record(stats, example, eligible, units, pool)
        self.corrupt(ids, labels, units, rng)
        return ids, labels

    def pad(self, rows: list[np.ndarray], value: int) -> torch.Tensor:
        return pad_rows(rows, value, self.pad_to_multiple_of)

    def __call__(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        stats = MaskingStats()
        masked = [self.mask_example(example, stats=stats) for example in examples]
        batch = {
            "input_ids": self.pad([ids for ids, _ in masked], self.pad_id),
            "labels": self.pad([labels for _, labels in masked], -100),
        }
        batch["attention_mask"] = self.pad([np.ones(len(ids), np.int64) for ids, _ in masked], 0)
        if all("idx" in example for example in examples):
            batch["idx"] = torch.tensor([int(example["idx"]) for example in examples])
        batch["masking_stats"] = stats
        return batch


def pad_rows(rows: list[np.ndarray], value: int, multiple: int | None = None) -> torch.Tensor:
    """Right-pad 1-d integer arrays into a ``(batch, longest)`` long tensor."""
    width = max((len(row) for row in rows), default=0)
    if multiple:
        width = -(-width // multiple) * multiple
    out = np.full((len(rows), width), value, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return torch.from_numpy(out)


def collator_for(objective: str, tokenizer, **options) -> MaskingCollator:
    """The masking collator of a pre-training objective: its registry entry's strategy (the MLM part of MiSAD /
    NSP / SOP is token MLM)."""
    return partial(MaskingCollator, tokenizer, lookup(objective).masking)(**options)
