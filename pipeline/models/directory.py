"""A model directory: written whole or not at all, and complete as a Hugging Face / sentence-transformers model.

Every model directory the pipeline writes (``tiny-model``, ``pretrain``, ``finetune``; ``export``
copies one) is filled under a hidden temporary name beside the target by :class:`AtomicDir` and
renamed into place when complete (the directory analogue of :class:`pipeline.atomic.AtomicFiles`),
so a killed run never leaves a half-saved model under the output name. Just before the rename,
:func:`complete_model_dir` adds what the training code does not write itself:

- the **sentence-transformers files** (``modules.json``, ``sentence_bert_config.json``,
  ``1_Pooling/config.json``, ``config_sentence_transformers.json``) where missing, so that
  ``SentenceTransformer(DIR)`` loads the encoder with the pooling it was trained with (mean
  unless the run says otherwise, docs/method.md §3 / §5). :func:`write_sentence_transformers_files`
  is their one writer: :func:`save_model` (a masked-LM model, ``pretrain``) writes them with the
  run's pooling and length, and completion fills in the rest from the stage's settings file;
- the **pooler weights** (:func:`save_pooler`): a masked-LM model saves no pooler, so ``AutoModel``
  would initialise one at random on every load; the starting checkpoint's pooler is saved where it
  has one, otherwise a seeded initialisation, so every load gives the same model;
- the **model card** ``README.md`` (:mod:`pipeline.models.card`).

The module files are written by hand rather than through ``SentenceTransformer.save``, which would
re-save the encoder without its MLM head. :func:`vocab_sha256` names a tokenizer, to tie a token
dataset to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
from pathlib import Path

from pipeline.atomic import output_error, temp_path, writer_is_gone
from pipeline.errors import InputError, os_message
from pipeline.models.card import hub_id, read_settings, write_card
from pipeline.models.pooling import POOLING_FLAGS

log = logging.getLogger("pipeline.models.directory")


class AtomicDir:
    """``with AtomicDir(target) as tmp:`` fill ``tmp``; it becomes ``target`` on success."""

    def __init__(self, target) -> None:
        self.target = Path(target)
        self.temp = temp_path(self.target)

    def __enter__(self) -> Path:
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            for stale in self.target.parent.glob(f".{self.target.name}.tmp-*"):
                if writer_is_gone(stale):  # another live writer's temporary is left alone
                    shutil.rmtree(stale, ignore_errors=True)
            self.temp.mkdir()
        except OSError as exc:
            raise InputError(self.target, f"cannot create the output folder: {os_message(exc)}") from exc
        return self.temp

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            shutil.rmtree(self.temp, ignore_errors=True)
            translated = output_error(exc, {self.target: self.temp}) if isinstance(exc, OSError) else None
            if translated is not None:
                raise translated from exc
            return
        complete_model_dir(self.temp, final=self.target)
        replace_dir(self.temp, self.target)


def replace_dir(source: Path, target: Path) -> None:
    """Move ``source`` to ``target``, replacing an existing ``target`` (the old one is moved aside first)."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        os.replace(target, old)
    os.replace(source, target)
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(old)


# ------------------------------------------------------------------ sentence-transformers files
def save_model(directory: Path, model, tokenizer, max_length: int, pooling: str) -> None:
    """``save_pretrained`` of the model (a masked-LM model keeps its MLM head) and its tokenizer, with the
    sentence-transformers files for ``pooling`` and ``max_length``."""
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    write_sentence_transformers_files(directory, model.config.hidden_size, max_length, pooling)


def write_sentence_transformers_files(directory: Path, hidden_size: int, max_length: int, pooling: str) -> None:
    """The module files sentence-transformers reads; existing ones (written by the training stage) are kept."""
    import sentence_transformers
    import torch
    import transformers

    directory = Path(directory)
    files = {
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        ],
        "sentence_bert_config.json": {"max_seq_length": max_length, "do_lower_case": False},
        "1_Pooling/config.json": {
            "word_embedding_dimension": hidden_size,
            **{flag: flag == POOLING_FLAGS[pooling] for flag in POOLING_FLAGS.values()},
        },
        "config_sentence_transformers.json": {
            "__version__": {
                "sentence_transformers": sentence_transformers.__version__,
                "transformers": transformers.__version__,
                "pytorch": torch.__version__,
            },
            "model_type": "SentenceTransformer",
            "prompts": {},
            "default_prompt_name": None,
            "similarity_fn_name": "cosine",
        },
    }
    for name, content in files.items():
        path = directory / name
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(content, indent=2) + "\n")


# ------------------------------------------------------------------ pooler
def _encoder_prefix(keys) -> str | None:
    """``bert.`` in a masked-LM state dict, ``""`` in a bare encoder's; ``None`` when unrecognised."""
    for key in keys:
        if key.endswith("embeddings.word_embeddings.weight"):
            return key.removesuffix("embeddings.word_embeddings.weight")
    return None


def _pooler_of_checkpoint(base: str | None) -> dict | None:
    """The pooler tensors of the starting checkpoint (a local directory, or a Hub id in the local cache)."""
    if not base:
        return None
    weights = Path(base) / "model.safetensors"
    if not weights.exists():
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(base, "model.safetensors") if hub_id(base) else None
        if not isinstance(cached, str):
            return None
        weights = Path(cached)
    from safetensors.torch import load_file

    state = load_file(weights)
    prefix = _encoder_prefix(state)
    if prefix is None:
        return None
    pooler = {key.removeprefix(prefix): value for key, value in state.items() if key.startswith(f"{prefix}pooler.")}
    return pooler or None


def save_pooler(directory: Path, base: str | None = None, seed: int = 0) -> bool:
    """Add the pooler to ``model.safetensors`` where it has none; True when added."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import AutoConfig, AutoModel

    weights = Path(directory) / "model.safetensors"
    if not weights.exists():
        return False
    state = load_file(weights)
    prefix = _encoder_prefix(state)
    if prefix is None or any(key.startswith(f"{prefix}pooler.") for key in state):
        return False
    with torch.random.fork_rng():  # a seeded initialisation that leaves the caller's RNG alone
        torch.manual_seed(seed)
        fresh = {
            key: value
            for key, value in AutoModel.from_config(AutoConfig.from_pretrained(directory)).state_dict().items()
            if key.startswith("pooler.")
        }
    if not fresh:
        return False  # an architecture without a pooler
    pooler = _pooler_of_checkpoint(base)
    if pooler is None or {k: v.shape for k, v in pooler.items()} != {k: v.shape for k, v in fresh.items()}:
        pooler = fresh
    state.update({f"{prefix}{key}": value.contiguous() for key, value in pooler.items()})
    save_file(state, weights, metadata={"format": "pt"})
    return True


# ------------------------------------------------------------------ completion
def complete_model_dir(directory: Path, final: Path | None = None) -> None:
    """Card, pooler and sentence-transformers files for a freshly written model directory (no-op elsewhere).

    ``final``: the path the directory is moved to afterwards (the card names it), if not ``directory``.
    """
    directory = Path(directory)
    if not (directory / "config.json").exists():
        return
    config = json.loads((directory / "config.json").read_text())
    _, settings = read_settings(directory)
    max_length = int(settings.get("max_length") or config.get("max_position_embeddings", 512))
    write_sentence_transformers_files(directory, config["hidden_size"], max_length, settings.get("pooling", "mean"))
    if save_pooler(directory, base=settings.get("model"), seed=int(settings.get("seed", 0))):
        log.info("%s: pooler weights saved", directory)
    write_card(directory, final=final)


def vocab_sha256(tokenizer) -> str:
    """SHA-256 of the tokenizer's vocabulary (token → id, key-sorted), to tie a dataset to its tokenizer."""
    vocab = json.dumps(tokenizer.get_vocab(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(vocab.encode()).hexdigest()
