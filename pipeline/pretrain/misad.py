"""MiSAD: Minimizing Symbol-vector Algorithmic Difference (ULR-BERT §3.2–3.3, docs/method.md §3).

For each sentence S one marked n-gram w is chosen and R = S without w. S, w and R are encoded
separately (each ``[CLS] … [SEP]``, the tokenizer's own template), pooled (mean by default),
L2-normalised, and ``L_MiSAD = MSE(E_w + E_R, E_S)``; the total loss is ``L_MiSAD + L_MLM``.
S carries the MLM masking (token level, 15%), except that w is never masked in S; w and R are
not masked.

Choosing w (§3.3): ``mlm-score`` masks one candidate n-gram at a time and scores it by the
mean probability the MLM head gives its original tokens, ``(1/|w|) Σ P(x_k | S\\w)``; the
lowest score wins (the model in eval mode, no gradients). ``random`` picks a candidate
uniformly, as the authors' released code does. Candidates are the sentence's ``ngram_spans``
that leave R non-empty; a sentence without one falls back to a random whole word (n = 1),
and is counted (``misad_fallbacks`` in the batch's :class:`MaskingStats`), as is a sentence of
one word, which has no w at all (``misad_none``; its MiSAD term is left out).
``max_candidates`` (0: all) caps how many are scored, chosen at random.

Where w comes from (``w_source``; ULR-BERT §7.2, Table 7, "Effect of Sampling Strategies": "we
train the following two baseline models under the same model settings except for the sampling
strategy"): ``ngram`` (the PMI n-grams, objective ``misad``); ``span`` (objective
``misad-span``; "Random Spans: We replace our n-gram module with the masking strategy as proposed
by Joshi et al. (2020) ... p is set to 0.2 and maximum span length l_max = 6"): one span of whole
words drawn as SpanBERT masking draws them (:func:`~pipeline.pretrain.span_sampling.one_span`),
leaving R non-empty; ``entity`` (objective ``misad-entity``; "Named Entities: We only retain named
entities that are annotated in the Wikipedia Corpus"): the sentence's entity spans, kept as the
``entity`` masking keeps them (longest where they overlap), with the random-word fallback above.
The paper names no score for either variant (§3.3's score is part of the n-gram module it
replaces), so both draw w uniformly, as the authors' ``run_mse_span.py`` and
``run_mse_entity.py`` do: ``choice`` must be ``random`` (:func:`choice_for`). Every draw comes
from :meth:`MisadCollator.choice_rng`, a function of ``(seed, epoch, example)``.
"""

from __future__ import annotations

import numpy as np
import torch

from pipeline.objective_registry import SPAN_MAX_WORDS
from pipeline.pretrain.encoder_heads import encode, mlm_head
from pipeline.pretrain.masking import MaskingCollator, pad_rows
from pipeline.pretrain.masking_stats import MaskingStats
from pipeline.pretrain.span_sampling import longest_non_overlapping, one_span, word_units

CHOICES = ("mlm-score", "random")
W_SOURCES = ("ngram", "span", "entity")


def choice_for(w_source: str, choice: str) -> str:
    """The choice of w a run makes: ``choice`` for the PMI n-grams; uniform (``random``) for the §7.2
    variants, which the paper gives no score (module docstring)."""
    return choice if w_source == "ngram" else "random"


class MisadCollator:
    """Batches of S with their candidate n-grams; :meth:`build` makes the S / w / R inputs for a choice."""

    def __init__(
        self,
        tokenizer,
        choice: str = "mlm-score",
        seed: int = 0,
        mlm_probability: float = 0.15,
        max_candidates: int = 0,
        w_source: str = "ngram",
        span_max_words: int = SPAN_MAX_WORDS,
        mask_r: bool = False,
        **masking_options,
    ):
        if choice not in CHOICES:
            raise ValueError(f"unknown MiSAD choice {choice!r}; choose from {CHOICES}")
        if w_source not in W_SOURCES or choice_for(w_source, choice) != choice:
            raise ValueError(
                f"MiSAD w from {w_source!r} with choice {choice!r}: sources {W_SOURCES}, the last two random"
            )
        self.choice = choice
        self.w_source = w_source
        self.seed = seed
        self.max_candidates = max_candidates
        self.span_max_words = span_max_words
        self.mask_r = mask_r
        self.masking = MaskingCollator(tokenizer, "token", mlm_probability, seed=seed, **masking_options)
        self.pad_id = tokenizer.pad_token_id
        self.set_epoch(0)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self.masking.set_epoch(epoch)

    def choice_rng(self, example: dict) -> np.random.Generator:
        # a stream of its own, so that the choice never shifts the MLM masking of S
        return np.random.default_rng([self.seed, self.epoch, int(example.get("idx", 0)), 1])

    def r_rng(self, example: dict) -> np.random.Generator:
        # R's masking (the released loss): a stream of its own, so that S's masking and the choice stay as they are
        return np.random.default_rng([self.seed, self.epoch, int(example.get("idx", 0)), 3])

    def candidates(self, example: dict, stats: MaskingStats | None = None) -> np.ndarray:
        word_ids = np.asarray(example["word_ids"])
        content = np.flatnonzero(word_ids >= 0)
        first, last = int(content[0]), int(content[-1]) + 1
        rng = self.choice_rng(example)
        words = word_units(word_ids, word_ids >= 0)
        if self.w_source == "span":  # one random span, never the whole sentence (None: under two words)
            spans = {one_span(words, rng, max_words=self.span_max_words)} - {None}
        else:
            column = "entity_spans" if self.w_source == "entity" else "ngram_spans"
            marked = [
                (int(s), int(e))
                for s, e in np.asarray(example[column]).reshape(-1, 2)
                if first <= s < e <= last and (s, e) != (first, last)
            ]
            if self.w_source == "entity":  # the spans the entity masking keeps: the longest where they overlap
                marked = longest_non_overlapping(np.array(marked).reshape(-1, 2), word_ids >= 0)
            spans = set(marked)
        if not spans:  # no marked span: a single word, if it leaves anything for R (a span run has none then)
            spans = {words[int(rng.integers(len(words)))]} if len(words) > 1 else set()
            if stats is not None:
                stats.counts["misad_fallbacks" if spans else "misad_none"] += 1
        if stats is not None:
            stats.counts["misad_rows"] += 1
        ordered = np.array(sorted(spans), dtype=np.int64).reshape(-1, 2)
        if self.max_candidates and len(ordered) > self.max_candidates:
            ordered = ordered[np.sort(rng.choice(len(ordered), self.max_candidates, replace=False))]
        return ordered

    def __call__(self, examples: list[dict]) -> dict:
        stats = MaskingStats()
        candidates = [self.candidates(example, stats) for example in examples]
        if self.choice == "random":
            chosen = [
                c[int(self.choice_rng(e).integers(len(c)))] if len(c) else None for c, e in zip(candidates, examples)
            ]
            batch = self.build(examples, chosen)
            batch["masking_stats"].add(stats)
            return batch
        width = max((len(c) for c in candidates), default=0)
        table = np.full((len(examples), max(width, 1), 2), -1, dtype=np.int64)
        for i, c in enumerate(candidates):
            table[i, : len(c)] = c
        ids = [np.asarray(e["input_ids"], dtype=np.int64) for e in examples]
        return {
            "score_input_ids": pad_rows(ids, self.pad_id),
            "score_attention_mask": pad_rows([np.ones(len(i), np.int64) for i in ids], 0),
            "candidates": torch.from_numpy(table),
            "rows": examples,
            "masking_stats": stats,
        }

    def build(self, examples: list[dict], chosen: list) -> dict[str, torch.Tensor]:
        """S (masked outside w), w and R for each example; ``misad_valid`` is False where no w exists."""
        s_ids, s_labels, w_ids, r_ids, r_labels, valid = [], [], [], [], [], []
        stats = MaskingStats()
        for example, span in zip(examples, chosen):
            ids = np.asarray(example["input_ids"], dtype=np.int64)
            exclude = np.zeros(len(ids), dtype=bool)
            if span is not None:
                start, end = int(span[0]), int(span[1])
                exclude[start:end] = True
            masked, labels = self.masking.mask_example(example, exclude, stats)
            s_ids.append(masked)
            s_labels.append(labels)
            if span is None:
                w_ids.append(ids)
                r_ids.append(ids)
                r_labels.append(np.full(len(ids), -100, dtype=np.int64))
                valid.append(False)
                continue
            content = np.flatnonzero(np.asarray(example["word_ids"]) >= 0)
            prefix, suffix = ids[: content[0]], ids[content[-1] + 1 :]
            w_ids.append(np.concatenate([prefix, ids[start:end], suffix]))
            r = np.concatenate([ids[:start], ids[end:]])
            if self.mask_r:  # the released run_mse.py: R masked too, its MLM loss added (token level, 15%)
                r, labels = self.masking.mask_example({"input_ids": r}, rng=self.r_rng(example))
                r_labels.append(labels)
            r_ids.append(r)
            valid.append(True)
        ones = [np.ones(len(i), np.int64) for i in s_ids]
        return {
            "input_ids": pad_rows(s_ids, self.pad_id),
            "labels": pad_rows(s_labels, -100),
            "attention_mask": pad_rows(ones, 0),
            "w_input_ids": pad_rows(w_ids, self.pad_id),
            "w_attention_mask": pad_rows([np.ones(len(i), np.int64) for i in w_ids], 0),
            "r_input_ids": pad_rows(r_ids, self.pad_id),
            "r_attention_mask": pad_rows([np.ones(len(i), np.int64) for i in r_ids], 0),
            "misad_valid": torch.tensor(valid, dtype=torch.bool),
            "masking_stats": stats,
        } | ({"r_labels": pad_rows(r_labels, -100)} if self.mask_r else {})


@torch.no_grad()
def mlm_scores(
    model,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    candidates: torch.Tensor,
    mask_id: int,
    chunk_tokens: int = 8192,
) -> torch.Tensor:
    """``(batch, candidates)`` mean probability of each candidate's tokens with it masked (inf where padded).

    The masked variants run shortest first in chunks of at most ``chunk_tokens`` padded tokens,
    each cut to its longest row, so padding costs little."""
    batch, width, _ = candidates.shape
    rows, cols = torch.nonzero(candidates[:, :, 0] >= 0, as_tuple=True)
    lengths = attention_mask.sum(dim=1)
    order = torch.argsort(lengths[rows], stable=True)  # similar lengths together: less padding per chunk
    rows, cols = rows[order], cols[order]
    scores = torch.full((batch, width), float("inf"), device=input_ids.device)
    head = mlm_head(model)
    sorted_lengths = lengths[rows].tolist()
    lo = 0
    while lo < len(rows):
        hi = lo + 1
        while hi < len(rows) and (hi + 1 - lo) * sorted_lengths[hi] <= chunk_tokens:
            hi += 1
        r, c = rows[lo:hi], cols[lo:hi]
        lo = hi
        cut = int(sorted_lengths[hi - 1])
        positions = torch.arange(cut, device=input_ids.device)
        span = candidates[r, c]
        inside = (positions >= span[:, :1]) & (positions < span[:, 1:])
        masked = input_ids[r, :cut].masked_fill(inside, mask_id)
        hidden = encode(model, masked, attention_mask[r, :cut])
        log_probs = torch.log_softmax(head(hidden[inside]).float(), dim=-1)
        token_probs = log_probs.gather(1, input_ids[r, :cut][inside].unsqueeze(1)).squeeze(1).exp()
        variant = torch.arange(len(r), device=input_ids.device).unsqueeze(1).expand_as(inside)[inside]
        totals = torch.zeros(len(r), device=input_ids.device).index_add_(0, variant, token_probs)
        scores[r, c] = totals / inside.sum(dim=1)
    return scores


def choose_by_mlm_score(model, batch: dict, collator: MisadCollator, mask_id: int, device) -> dict:
    """Score the candidates with the current model (eval mode), pick the lowest, build S / w / R."""
    was_training = model.training
    model.eval()
    scores = mlm_scores(
        model,
        batch["score_input_ids"].to(device),
        batch["score_attention_mask"].to(device),
        batch["candidates"].to(device),
        mask_id,
    )
    model.train(was_training)
    best = scores.argmin(dim=1).cpu()
    candidates = batch["candidates"]
    chosen = [candidates[i, best[i]].tolist() if candidates[i, best[i], 0] >= 0 else None for i in range(len(best))]
    built = collator.build(batch["rows"], chosen)
    built["masking_stats"].add(batch.get("masking_stats"))
    return built
