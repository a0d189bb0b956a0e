"""MiSAD's w and R in one encoder call: each example's two inputs packed into one row.

ULR-BERT §3.2 encodes S, w and R separately, each as its own ``[CLS] … [SEP]`` sequence. Encoded
as two padded batches, w and R carry a lot of padding: batches are grouped by the length of S
(:mod:`pipeline.pretrain.batching`), while w (a few tokens) and R (S without w) vary within a
batch independently of it; on the real English sample, 62% of w's positions and 14% of R's are
padding (``bench/loader.py``). Here row b holds w_b followed by R_b, with positions restarting at
R's ``[CLS]`` and a block-diagonal attention mask, so that no token attends across the two
segments: every token's state is the one a separate encoding gives (up to float rounding,
tested), the row is |S| + 2 tokens long, the batch carries about S's padding, and the encoder
runs once instead of twice. :func:`unpack` cuts the states back into a w batch and an R batch
for pooling (mean, max, CLS or MiSAD's pooler on each segment's own ``[CLS]``).

The attention mask is 4-D (batch, 1, query, key), which ``transformers`` passes to the attention
as it is: boolean (True: attend) for SDPA, additive (0 / the dtype's minimum) for the eager
implementation. A pad position attends to the row's first token, so that no query row is
empty (an all-masked row would make SDPA return NaN); its state is never read.
"""

from __future__ import annotations

import torch

PAD, W, R = 0, 1, 2  # what a packed position holds


def pack(w_ids: torch.Tensor, w_mask: torch.Tensor, r_ids: torch.Tensor, r_mask: torch.Tensor, pad_id: int) -> dict:
    """``{input_ids, position_ids, segments, w_lengths, r_lengths}`` of the packed rows, from right-padded
    w and R batches and their attention masks."""
    w_lengths, r_lengths = w_mask.sum(dim=1), r_mask.sum(dim=1)
    width = int((w_lengths + r_lengths).max())
    columns = torch.arange(width, device=w_ids.device).unsqueeze(0)
    in_w = columns < w_lengths.unsqueeze(1)
    r_columns = columns - w_lengths.unsqueeze(1)
    in_r = ~in_w & (r_columns < r_lengths.unsqueeze(1))
    from_w = w_ids.gather(1, columns.clamp(max=w_ids.shape[1] - 1).expand(len(w_ids), -1))
    from_r = r_ids.gather(1, r_columns.clamp(0, r_ids.shape[1] - 1))
    input_ids = torch.where(in_w, from_w, torch.where(in_r, from_r, torch.full_like(from_w, pad_id)))
    positions = torch.where(in_w, columns, torch.where(in_r, r_columns, torch.zeros_like(r_columns)))
    segments = in_w.long() * W + in_r.long() * R
    return {
        "input_ids": input_ids,
        "position_ids": positions,
        "segments": segments,
        "w_lengths": w_lengths,
        "r_lengths": r_lengths,
    }


def attention_mask(segments: torch.Tensor, implementation: str, dtype: torch.dtype) -> torch.Tensor:
    """The 4-D block-diagonal mask: a position attends to the positions of its own segment."""
    query, key = segments.unsqueeze(2), segments.unsqueeze(1)
    allowed = (query == key) & (key != PAD)
    allowed[:, :, 0] |= segments == PAD  # a pad position attends to the first token (never read)
    allowed = allowed.unsqueeze(1)
    if implementation == "eager":
        return torch.zeros(allowed.shape, dtype=dtype, device=segments.device).masked_fill(
            ~allowed, torch.finfo(dtype).min
        )
    return allowed


def unpack(hidden: torch.Tensor, packed: dict) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, ...]]:
    """``((w states, w mask), (R states, R mask))``: the packed rows' states cut back into two right-padded
    batches, each segment starting at its own ``[CLS]``."""
    w_lengths, r_lengths = packed["w_lengths"], packed["r_lengths"]
    last = hidden.shape[1] - 1

    def segment(starts: torch.Tensor, lengths: torch.Tensor):
        offsets = torch.arange(int(lengths.max()), device=hidden.device).unsqueeze(0)
        index = (starts.unsqueeze(1) + offsets).clamp(max=last)
        states = hidden.gather(1, index.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        return states, (offsets < lengths.unsqueeze(1)).long()

    return segment(torch.zeros_like(w_lengths), w_lengths), segment(w_lengths, r_lengths)


def padding_counts(w_mask: torch.Tensor, r_mask: torch.Tensor) -> tuple[int, int]:
    """``(pad positions, all positions)`` of the packed rows made from these w and R masks."""
    lengths = w_mask.sum(dim=1) + r_mask.sum(dim=1)
    total = len(lengths) * int(lengths.max()) if len(lengths) else 0
    return total - int(lengths.sum()), total
