"""Token pooling: one sentence vector from a transformer's token states (docs/method.md §3 MiSAD, §5).

:data:`POOLINGS` names the poolings every stage offers (``--pooling``; ULR-BERT §4 and BURT twin
Table 4 list all three, mean is the default) and :func:`pool` computes them, as sentence-transformers'
``Pooling`` does: ``mean`` averages every position the attention mask covers ([CLS] and [SEP]
included), ``cls`` takes the first position, ``max`` the masked element-wise maximum. The same
function pools MiSAD's S, w and R while pre-training and the evaluated encoders' outputs.

:data:`POOLING_FLAGS` are the keys of a sentence-transformers ``1_Pooling/config.json``;
:func:`pooling_of` reads them back (``pooler`` for a MiSAD model trained with BERT's pooler,
:mod:`pipeline.pretrain.pooler`: ``[CLS]`` pooling followed by its dense + tanh module). The BiLSTM encoders' poolings (max, BF-*, inner attention) are
another set: :data:`pipeline.models.bilstm.encoder.BILSTM_POOLINGS`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where a tensor is pooled, not by the modules that only name poolings
    import torch

POOLINGS = ("mean", "cls", "max")
POOLING_FLAGS = {"mean": "pooling_mode_mean_tokens", "cls": "pooling_mode_cls_token", "max": "pooling_mode_max_tokens"}


def pool(hidden: torch.Tensor, mask: torch.Tensor, pooling: str = "mean") -> torch.Tensor:
    """Pool token states ``(batch, seq, dim)`` to ``(batch, dim)`` over the attention mask ``(batch, seq)``.

    ``max`` takes ``.max(dim).values`` (one position gets a tie's gradient, as MiSAD always trained);
    the values equal ``amax``. An empty mask gives zeros under ``mean``, as in sentence-transformers.
    """
    import torch

    if pooling == "cls":
        return hidden[:, 0]
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    if pooling == "mean":
        return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
    if pooling == "max":
        return hidden.masked_fill(weights == 0, torch.finfo(hidden.dtype).min).max(dim=1).values
    raise ValueError(f"unknown pooling {pooling!r} (expected one of {', '.join(POOLINGS)})")


def pooling_of(directory: Path) -> str:
    """The pooling a sentence-transformers folder was saved with (``mean`` where it records none)."""
    config = Path(directory) / "1_Pooling" / "config.json"
    if config.exists():
        flags = json.loads(config.read_text())
        if flags.get(POOLING_FLAGS["cls"]) and (Path(directory) / "2_Dense").is_dir():
            return "pooler"  # MiSAD's pooler (pipeline.pretrain.pooler): [CLS], then dense + tanh
        for pooling, flag in POOLING_FLAGS.items():
            if flags.get(flag):
                return pooling
    return "mean"
