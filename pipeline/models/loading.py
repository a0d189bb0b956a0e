"""Loading a backbone: any Hugging Face masked-LM encoder by hub id or local path (docs/method.md §3).

BERT and ALBERT checkpoints load with their MLM heads. A checkpoint saved without one (a
plain encoder such as the packaged all-MiniLM-L6-v2, or an ELECTRA *discriminator*) gets a
new, randomly initialised MLM head and a warning: continued pre-training then starts by
learning that head. ELECTRA's MLM head lives in its *generator* checkpoint
(``google/electra-base-generator``), which loads as-is as a masked-LM backbone.

An ELECTRA *discriminator* checkpoint (``ElectraForPreTraining``) is trained as ELECTRA trains
it, with its generator (:mod:`pipeline.pretrain.electra`): the pair is named by
:data:`ELECTRA_GENERATORS` (the released pairs), by ``--generator``, or by a ``generator/``
folder inside the checkpoint (what ``pretrain`` writes, so a trained pair can be continued).

Dropout is set to ``--dropout`` (docs/method.md §3: 0.1) on every dropout field of the config, since
ALBERT's released configs ship with 0.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

from transformers import AutoConfig, AutoModelForMaskedLM

from pipeline.errors import InputError
from pipeline.models.tokenizer_check import load_tokenizer as load_checked_tokenizer
from pipeline.models.weights import load_pretrained

log = logging.getLogger("pipeline.pretrain")

DROPOUT_FIELDS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout")
# a fine-tuning head's own dropout (BERT / ELECTRA classifier_dropout, ALBERT classifier_dropout_prob, ELECTRA's
# multiple-choice summary): None or absent in most configs, where the head falls back to the hidden dropout
HEAD_DROPOUT_FIELDS = ("classifier_dropout", "classifier_dropout_prob", "summary_first_dropout", "summary_last_dropout")

# the backbone registry of generator / discriminator pairs: each released discriminator and its generator
ELECTRA_GENERATORS = {
    **{
        f"google/electra-{size}-discriminator": f"google/electra-{size}-generator"
        for size in ("small", "base", "large")
    },
    **{
        f"hfl/chinese-electra-180g-{size}-discriminator": f"hfl/chinese-electra-180g-{size}-generator"
        for size in ("small", "base", "large")
    },
}


class NewHeadWarning(UserWarning):
    """The checkpoint had no MLM head; a new one was initialised at random."""


def load_tokenizer(name_or_path: str):
    """The backbone's fast tokenizer (offsets are needed to map spans onto sub-words), loaded completely
    (:func:`pipeline.models.tokenizer_check.load_tokenizer`: a vocabulary that round-trips)."""
    tokenizer = load_checked_tokenizer(name_or_path)
    if not tokenizer.is_fast:
        raise InputError(name_or_path, "the tokenizer is not a fast (Rust) tokenizer; offsets are needed")
    for role in ("cls_token_id", "sep_token_id", "mask_token_id", "pad_token_id"):
        if getattr(tokenizer, role) is None:
            raise InputError(name_or_path, f"the tokenizer has no {role.removesuffix('_id')}")
    return tokenizer


def _config(name_or_path: str, dropout: float | None):
    try:
        config = AutoConfig.from_pretrained(name_or_path)
    except (OSError, ValueError) as exc:
        raise InputError(name_or_path, f"cannot load a model config: {exc}") from exc
    return set_dropout(config, dropout)


def set_dropout(config, dropout: float | None, fields: tuple[str, ...] = DROPOUT_FIELDS):
    """``config`` with every one of ``fields`` it has set to ``dropout`` (None: left as the checkpoint has it)."""
    if dropout is not None:
        for field in fields:
            if hasattr(config, field):
                setattr(config, field, dropout)
    return config


def is_electra_discriminator(name_or_path: str) -> bool:
    config = _config(name_or_path, None)
    return config.model_type == "electra" and "ElectraForPreTraining" in (config.architectures or [])


def generator_for(discriminator: str, generator: str | None = None) -> str:
    """The generator paired with an ELECTRA discriminator: ``generator`` if given, else the
    registry's, else a ``generator/`` folder inside the discriminator's checkpoint."""
    if generator:
        return generator
    if discriminator in ELECTRA_GENERATORS:
        return ELECTRA_GENERATORS[discriminator]
    inside = Path(discriminator) / "generator"
    if (inside / "config.json").exists():
        return str(inside)
    raise InputError(
        discriminator,
        "an ELECTRA discriminator is trained with its generator: pass --generator "
        "(known pairs: " + ", ".join(sorted(ELECTRA_GENERATORS)) + ")",
    )


def load_discriminator(name_or_path: str, dropout: float | None = 0.1):
    """An ``ElectraForPreTraining`` model (the discriminator, with its replaced-token head)."""
    from transformers import ElectraForPreTraining

    return load_pretrained(ElectraForPreTraining, name_or_path, config=_config(name_or_path, dropout))


def load_masked_lm(name_or_path: str, dropout: float | None = 0.1):
    """``(model, new_head)``: the masked-LM model and whether its MLM head was newly initialised."""
    config = _config(name_or_path, dropout)
    try:
        model, info = load_pretrained(AutoModelForMaskedLM, name_or_path, config=config, output_loading_info=True)
    except InputError as exc:
        if isinstance(exc.__cause__, ValueError) and "Unrecognized configuration class" in str(exc.__cause__):
            raise InputError(name_or_path, f"no masked-LM architecture for this model type: {exc.message}") from exc
        raise
    prefix = model.base_model_prefix + "."
    head_missing = [key for key in info["missing_keys"] if not key.startswith(prefix)]
    if head_missing:
        message = (
            f"{name_or_path}: checkpoint has no MLM head ({len(head_missing)} tensors missing, e.g. "
            f"{head_missing[0]}); a new head was initialised at random"
        )
        warnings.warn(message, NewHeadWarning, stacklevel=2)
        log.warning(message)
    return model, bool(head_missing)
