"""Loading a backbone: any Hugging Face masked-LM encoder by hub id or local path (docs/method.md §3).

BERT and ALBERT checkpoints load with their MLM heads. A checkpoint saved without one (a
plain encoder such as the packaged all-MiniLM-L6-v2, or an ELECTRA *discriminator*) gets a
new, randomly initialised MLM head and a warning: continued pre-training then starts by
learning that head. ELECTRA's MLM head lives in its *generator* checkpoint
(``google/electra-base-generator``), which loads as-is; training the discriminator with
replaced-token detection is not one of the objectives here.

Dropout is set to ``--dropout`` (docs/method.md §3: 0.1) on every dropout field of the config, since
ALBERT's released configs ship with 0.
"""

from __future__ import annotations

import logging
import warnings

from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

from pipeline.errors import InputError

log = logging.getLogger("pipeline.pretrain")

DROPOUT_FIELDS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout")


class NewHeadWarning(UserWarning):
    """The checkpoint had no MLM head; a new one was initialised at random."""


def load_tokenizer(name_or_path: str):
    """The backbone's fast tokenizer (offsets are needed to map spans onto sub-words)."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    except (OSError, ValueError) as exc:
        raise InputError(name_or_path, f"cannot load a tokenizer: {exc}") from exc
    if not tokenizer.is_fast:
        raise InputError(name_or_path, "the tokenizer is not a fast (Rust) tokenizer; offsets are needed")
    for role in ("cls_token_id", "sep_token_id", "mask_token_id", "pad_token_id"):
        if getattr(tokenizer, role) is None:
            raise InputError(name_or_path, f"the tokenizer has no {role.removesuffix('_id')}")
    return tokenizer


def load_masked_lm(name_or_path: str, dropout: float | None = 0.1):
    """``(model, new_head)``: the masked-LM model and whether its MLM head was newly initialised."""
    try:
        config = AutoConfig.from_pretrained(name_or_path)
    except (OSError, ValueError) as exc:
        raise InputError(name_or_path, f"cannot load a model config: {exc}") from exc
    if dropout is not None:
        for field in DROPOUT_FIELDS:
            if hasattr(config, field):
                setattr(config, field, dropout)
    try:
        model, info = AutoModelForMaskedLM.from_pretrained(name_or_path, config=config, output_loading_info=True)
    except ValueError as exc:
        raise InputError(name_or_path, f"no masked-LM architecture for this model type: {exc}") from exc
    prefix = model.base_model_prefix + "."
    head_missing = [key for key in info["missing_keys"] if not key.startswith(prefix)]
    if head_missing:
        message = (f"{name_or_path}: checkpoint has no MLM head ({len(head_missing)} tensors missing, e.g. "
                   f"{head_missing[0]}); a new head was initialised at random")
        warnings.warn(message, NewHeadWarning, stacklevel=2)
        log.warning(message)
    return model, bool(head_missing)
