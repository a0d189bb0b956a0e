"""Sequence embeddings from a transformers checkpoint (docs/method.md §5, ULR §5.1: mean pooling unless stated).

A checkpoint is a local directory or a hub id (resolved from the local cache when offline).
Each unique string is tokenised and encoded once; strings are sorted by token length so a
batch pads to its own longest member, and run under ``torch.inference_mode``. The token states
are pooled by :func:`pipeline.models.pooling.pool` (as sentence-transformers pools them).

The tokenizer and weights are checked as they load (:mod:`.tokenizer_check`, :mod:`.weights`); a
``batch_size`` below 1 or a ``max_length`` below :data:`~.tokenizer_check.MIN_MAX_LENGTH` is refused.
"""

from __future__ import annotations

import logging
import sys

import numpy as np
import torch
from tqdm import tqdm
from transformers import AutoModel

from pipeline.errors import InputError
from pipeline.models.fingerprint import checkpoint_fingerprint
from pipeline.models.pooling import POOLINGS, pool
from pipeline.models.runtime import pick_device  # the project's one device helper
from pipeline.models.tokenizer_check import MIN_MAX_LENGTH, load_tokenizer
from pipeline.models.weights import load_pretrained
from pipeline.progress import Progress

log = logging.getLogger("pipeline.evaluate")
OFFSET_POSITIONS = ("roberta", "xlm-roberta", "camembert", "longformer")


def position_limit(config) -> int:
    """The longest input the model's position embeddings hold (RoBERTa-style models keep two of them
    for the padding offset). A longer input would index past them: it is cut here instead, which
    changes nothing for inputs that fit."""
    limit = getattr(config, "max_position_embeddings", None) or 10**9
    if getattr(config, "model_type", "") in OFFSET_POSITIONS:
        limit -= 2
    return max(limit, MIN_MAX_LENGTH)


def unique_in_order(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """Distinct strings (first-seen order) and, for each input, the index of its string."""
    index: dict[str, int] = {}
    positions = np.fromiter((index.setdefault(text, len(index)) for text in texts), dtype=np.int64, count=len(texts))
    return list(index), positions


class TransformerEncoder:
    """``encode(texts) -> float32 array (len(texts), hidden)`` for a transformers checkpoint."""

    kind = "transformer"

    def __init__(
        self,
        path_or_id: str,
        pooling: str = "mean",
        batch_size: int = 64,
        max_length: int = 128,
        device: torch.device | None = None,
    ):
        if pooling not in POOLINGS:
            raise InputError(path_or_id, f"unknown pooling {pooling!r}, expected one of {', '.join(POOLINGS)}")
        self.path = path_or_id
        self.pooling = pooling
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device or pick_device()
        if batch_size < 1:
            raise InputError("--batch-size", f"must be at least 1, not {batch_size}")
        if max_length < MIN_MAX_LENGTH:
            raise InputError(
                "--max-length", f"must be at least {MIN_MAX_LENGTH} ([CLS], a token, [SEP]), not {max_length}"
            )
        self.tokenizer = load_tokenizer(path_or_id)
        self.model = load_pretrained(AutoModel, path_or_id).to(self.device).eval()
        self.dim = self.model.config.hidden_size

    @property
    def cut(self) -> int:
        """Tokens per input: ``max_length``, or what the position embeddings hold where that is less
        (a longer input would index past them)."""
        return min(self.max_length, position_limit(self.model.config))

    def describe(self) -> dict:
        return {
            "kind": self.kind,
            "path": self.path,
            "pooling": self.pooling,
            "max_length": self.max_length,
            "checkpoint": checkpoint_fingerprint(self.path),
        }

    def batches(self, texts: list[str]):
        """Token id lists of ``texts``, grouped longest first into batches of ``batch_size``."""
        ids = self.tokenizer(texts, truncation=True, max_length=self.cut)["input_ids"]
        order = sorted(range(len(texts)), key=lambda i: (-len(ids[i]), i))
        for start in range(0, len(order), self.batch_size):
            chosen = order[start : start + self.batch_size]
            yield chosen, [ids[i] for i in chosen]

    def encode(self, texts: list[str]) -> np.ndarray:
        unique, positions = unique_in_order(list(texts))
        out = np.zeros((len(unique), self.dim), dtype=np.float32)
        if not unique:
            return out[positions]
        bar = tqdm(total=len(unique), desc="encode", unit="str", disable=not sys.stderr.isatty(), leave=False)
        progress = Progress(log, "strings encoded", total=len(unique))
        with torch.inference_mode():
            for chosen, ids in self.batches(unique):
                padded = self.tokenizer.pad({"input_ids": ids}, return_tensors="pt")
                padded = {key: value.to(self.device) for key, value in padded.items()}
                hidden = self.model(**padded).last_hidden_state
                out[chosen] = pool(hidden, padded["attention_mask"], self.pooling).float().cpu().numpy()
                bar.update(len(chosen))
                progress.update(len(chosen), position=progress.position + len(chosen))
        bar.close()
        return out[positions]
