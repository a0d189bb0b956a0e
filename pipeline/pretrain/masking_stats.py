"""What the masking actually did: counts a collator adds to every batch, summed over a run.

A collator puts a :class:`MaskingStats` under ``batch["masking_stats"]`` (it survives data-loader
worker processes, being part of the batch); ``pretrain`` sums them, logs the step's figures and
writes the run's totals. :meth:`summary` gives the measures the masking is judged by
(docs/method.md §3):

- ``mask_rate``: masked / eligible tokens (target: the MLM probability, 15%);
- ``masked_share``: share of the masked tokens by the source of their unit: ``pmi`` (a kept
  n-gram), ``entity`` (a kept entity span), ``token`` (a single token outside any kept span),
  ``word`` (whole-word masking), ``span`` (SpanBERT random spans);
- ``coverage_ratio`` (n-gram strategies): the share of masked tokens that come from whole kept
  n-grams divided by the share of eligible tokens those n-grams cover; 1 means n-gram tokens
  are masked as often as any other token, above 1 they are favoured, below 1 starved;
- ``masked_unit_words`` / ``pool_unit_words``: length histograms, in words, of the masked units
  and of the units the strategy samples from (n-gram strategies: kept n-grams + uncovered
  tokens; whole-word: the words);
- ``misad_fallbacks``: MiSAD sentences without a marked n-gram (``misad-entity``: without an
  entity), whose w is a random word;
  ``misad_none``: sentences with no w at all (a single word, nothing left for R);
- ``nsp_relabelled``: NSP negatives not found in 10 draws, relabelled as the true next sentence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

COUNTS = (
    "rows",
    "eligible_tokens",
    "masked_tokens",
    "covered_tokens",
    "masked_in_ngrams",
    "misad_rows",
    "misad_fallbacks",
    "misad_none",
    "pairs",
    "nsp_relabelled",
)


@dataclass
class MaskingStats:
    counts: Counter = field(default_factory=Counter)
    masked_by_source: Counter = field(default_factory=Counter)
    masked_unit_words: Counter = field(default_factory=Counter)
    pool_unit_words: Counter = field(default_factory=Counter)

    def add(self, other: MaskingStats | None) -> MaskingStats:
        if other is not None:
            self.counts.update(other.counts)
            self.masked_by_source.update(other.masked_by_source)
            self.masked_unit_words.update(other.masked_unit_words)
            self.pool_unit_words.update(other.pool_unit_words)
        return self

    def as_dict(self) -> dict:
        """Raw counts (JSON-ready; :meth:`from_dict` reads them back, e.g. after an all-gather)."""
        return {
            "counts": {k: int(self.counts[k]) for k in COUNTS},
            "masked_by_source": dict(sorted(self.masked_by_source.items())),
            "masked_unit_words": {str(k): v for k, v in sorted(self.masked_unit_words.items())},
            "pool_unit_words": {str(k): v for k, v in sorted(self.pool_unit_words.items())},
        }

    @classmethod
    def from_dict(cls, raw: dict) -> MaskingStats:
        return cls(
            Counter(raw["counts"]),
            Counter(raw["masked_by_source"]),
            Counter({int(k): v for k, v in raw["masked_unit_words"].items()}),
            Counter({int(k): v for k, v in raw["pool_unit_words"].items()}),
        )

    def summary(self) -> dict:
        c = self.counts
        masked, eligible = c["masked_tokens"], c["eligible_tokens"]
        out = {
            **self.as_dict(),
            "mask_rate": masked / eligible if eligible else None,
            "masked_share": {k: v / masked for k, v in sorted(self.masked_by_source.items())} if masked else {},
            "masked_unit_share": shares(self.masked_unit_words),
            "pool_unit_share": shares(self.pool_unit_words),
            "coverage_ratio": None,
        }
        if masked and c["covered_tokens"]:
            out["coverage_ratio"] = (c["masked_in_ngrams"] / masked) / (c["covered_tokens"] / eligible)
        return out

    def line(self) -> str:
        """The run's masking in one log line."""
        s = self.summary()
        parts = [
            f"mask rate {100 * s['mask_rate']:.2f}%" if s["mask_rate"] is not None else "nothing masked",
            "masked by source " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in s["masked_share"].items()),
        ]
        if s["coverage_ratio"] is not None:
            parts.append(f"coverage ratio {s['coverage_ratio']:.3f}")
        parts.append(
            "masked unit words " + ", ".join(f"{k}: {100 * v:.1f}%" for k, v in s["masked_unit_share"].items())
        )
        c = s["counts"]
        if c["misad_rows"]:
            parts.append(f"MiSAD fallbacks {c['misad_fallbacks']:,} of {c['misad_rows']:,} (no w: {c['misad_none']:,})")
        if c["pairs"]:
            parts.append(f"NSP relabelled {c['nsp_relabelled']:,} of {c['pairs']:,}")
        return "; ".join(parts)


def shares(histogram: Counter) -> dict:
    total = sum(histogram.values())
    return {str(k): v / total for k, v in sorted(histogram.items())} if total else {}


def gather(stats: MaskingStats, world) -> MaskingStats:
    """The sum over every process of a run (an all-gather of the counts; a no-op for one process)."""
    if world.size == 1:
        return stats
    import torch.distributed as dist

    everyone = [None] * world.size
    dist.all_gather_object(everyone, stats.as_dict())
    total = MaskingStats()
    for raw in everyone:
        total.add(MaskingStats.from_dict(raw))
    return total
