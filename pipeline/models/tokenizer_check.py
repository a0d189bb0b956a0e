"""A tokenizer that loaded completely, or one line saying why not (docs/behaviour.md, "Bad input").

``AutoTokenizer`` builds a tokenizer from whatever files a folder holds: a model folder without
``tokenizer.json`` (nor ``vocab.txt``) gives a tokenizer that knows only its special tokens and
turns every word into ``[UNK]``, silently. :func:`load_tokenizer` is the one way the stages load a
tokenizer (``tokenize``, ``pretrain``, ``evaluate``'s transformer and input-embedding models);
:func:`check_tokenizer` refuses one that

- fails to load at all (a missing, truncated or corrupt file),
- has no vocabulary beyond its special tokens, or
- does not round-trip its own vocabulary: words of the vocabulary (decoded back to text, spread
  over the whole vocabulary) are encoded again, and more than half of them come back unknown, or
- maps a token to an id the model has no embedding for (an id at or beyond ``vocab_size`` of the
  folder's ``config.json``), which would pass every other check and then fail with an ``IndexError``
  in the embedding lookup of the first batch that holds the token (:func:`check_ids_fit_model`).

The probe is built from the tokenizer's own vocabulary, so it holds for every language and every
tokenizer family (WordPiece, SentencePiece, byte-level BPE).
"""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.errors import InputError

# The shortest --max-length that holds an input: [CLS], one token and [SEP] (tokenize, evaluate).
MIN_MAX_LENGTH = 3
PROBE_WORDS = 48  # words of the vocabulary in the round-trip probe
PROBE_SPREAD = 400  # at most this many vocabulary entries looked at, spread over the vocabulary
MAX_UNKNOWN_SHARE = 0.5


def load_tokenizer(name_or_path: str):
    """``AutoTokenizer.from_pretrained`` of ``name_or_path``, checked by :func:`check_tokenizer`."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    except InputError:
        raise
    except Exception as exc:  # whatever the tokenizer files hold, it is a bad input
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, KeyError):  # a field the tokenizer files lack
            first = f"no {exc.args[0]!r} in its files"
        raise InputError(name_or_path, f"cannot load a tokenizer: {first}") from exc
    check_tokenizer(tokenizer, name_or_path)
    return without_load_options(tokenizer)


# How a tokenizer was loaded, which transformers keeps among its settings and writes into a saved folder's
# tokenizer_config.json: ``local_files_only`` follows HF_HUB_OFFLINE, so the same stage would write other
# bytes with the variable set (the test suite, a cluster node) than without it.
LOAD_OPTIONS = ("local_files_only",)


def without_load_options(tokenizer):
    """``tokenizer`` without :data:`LOAD_OPTIONS` among its saved settings: a model folder is the same file
    whatever the environment it was made in."""
    for option in LOAD_OPTIONS:
        tokenizer.init_kwargs.pop(option, None)
    return tokenizer


def probe_words(tokenizer) -> list[str]:
    """Up to :data:`PROBE_WORDS` words of the vocabulary, each decoded on its own, spread over the ids."""
    special = set(tokenizer.all_special_ids)
    ids = sorted(i for i in tokenizer.get_vocab().values() if i not in special)
    decoded = (tokenizer.decode([token_id]).strip() for token_id in ids[:: max(1, len(ids) // PROBE_SPREAD)])
    words = [text for text in decoded if text and text.isalnum()]  # no continuation pieces, bytes, punctuation
    return words[:: max(1, len(words) // PROBE_WORDS)][:PROBE_WORDS]


def model_vocab_size(name_or_path) -> int | None:
    """``vocab_size`` of the model in the folder ``name_or_path`` (its ``config.json``): how many rows its
    embedding matrix has. None where the folder has no readable config (a hub id, a tokenizer-only folder):
    the model's own loading reports a bad config."""
    try:
        config = json.loads((Path(name_or_path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    size = config.get("vocab_size") if isinstance(config, dict) else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def check_ids_fit_model(tokenizer, name_or_path) -> None:
    """Refuse a tokenizer that maps a token to an id beyond the model's embeddings (module docstring),
    naming the tokenizer's file, the token, its id and the model's vocabulary size."""
    size = model_vocab_size(name_or_path)
    if size is None:
        return
    vocab = tokenizer.get_vocab()
    if not vocab:
        return
    token, top = max(vocab.items(), key=lambda item: (item[1], item[0]))
    if top < size:
        return
    folder = Path(name_or_path)
    named = next((folder / name for name in ("tokenizer.json", "vocab.txt") if (folder / name).is_file()), folder)
    raise InputError(
        named,
        f"maps {token[:40]!r} to id {top}, beyond the model's {size} embeddings (vocab_size in config.json): "
        "the tokenizer does not belong to this model",
    )


def check_tokenizer(tokenizer, name_or_path) -> None:
    """Refuse a tokenizer that did not load completely or does not fit its model (see the module docstring)."""
    check_ids_fit_model(tokenizer, name_or_path)
    special = set(tokenizer.all_special_ids)
    if not [i for i in tokenizer.get_vocab().values() if i not in special]:
        raise InputError(
            name_or_path,
            "the tokenizer has no vocabulary besides its special tokens, so every word would be "
            f"{tokenizer.unk_token or 'unknown'} (is tokenizer.json or vocab.txt missing?)",
        )
    words = probe_words(tokenizer)
    if not words:
        raise InputError(name_or_path, "no entry of the tokenizer's vocabulary decodes to a word")
    ids = tokenizer(" ".join(words), add_special_tokens=False, verbose=False)["input_ids"]
    unknown = (
        sum(1 for token_id in ids if token_id == tokenizer.unk_token_id) if tokenizer.unk_token_id is not None else 0
    )
    if not ids or unknown > MAX_UNKNOWN_SHARE * len(ids):
        raise InputError(
            name_or_path,
            f"the tokenizer does not round-trip its own vocabulary: {unknown} of {len(ids)} tokens of "
            f"{len(words)} of its words come back as {tokenizer.unk_token} (an incomplete or mismatched "
            "tokenizer.json / vocab.txt)",
        )
