"""The encoder and MLM head of a Hugging Face masked-LM model, used separately.

Running the encoder once and the MLM head only on the positions to predict (rather than
``model(**batch).logits`` over every position) saves the vocabulary projection on the ~85%
of positions that carry no label, gives the hidden states needed for pooling (MiSAD) and
keeps the ``(batch, length, vocab)`` logits tensor out of memory when MiSAD scores many
candidate n-grams at once.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def mlm_head(model):
    """A callable ``hidden (n, d) → logits (n, vocab)`` for the common masked-LM families."""
    if hasattr(model, "cls"):  # BERT
        return model.cls
    if hasattr(model, "predictions"):  # ALBERT
        return model.predictions
    if hasattr(model, "generator_predictions"):  # ELECTRA generator
        return lambda hidden: model.generator_lm_head(model.generator_predictions(hidden))
    if hasattr(model, "lm_head"):  # RoBERTa, XLM-R, DeBERTa
        return model.lm_head
    raise TypeError(
        f"{type(model).__name__}: no known masked-LM head (cls, predictions, generator_predictions, lm_head)"
    )


def encode(model, input_ids, attention_mask, token_type_ids=None, position_ids=None) -> torch.Tensor:
    """Last hidden states ``(batch, length, hidden)`` of the encoder under the MLM head."""
    extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
    if position_ids is not None:
        extra["position_ids"] = position_ids
    return model.base_model(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state


def mlm_loss(model, hidden: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the MLM head on the labelled positions only (labels -100 elsewhere)."""
    where = labels != -100
    if not where.any():
        return hidden.sum() * 0.0  # keeps the graph (and DDP's gradient hooks) connected
    logits = mlm_head(model)(hidden[where])
    return F.cross_entropy(logits.float(), labels[where])
