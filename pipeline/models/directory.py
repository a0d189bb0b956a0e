"""Model directories that appear whole or not at all, and the identity of a tokenizer.

A model directory is written under a hidden temporary name beside the target and renamed
into place when complete (the directory analogue of :class:`pipeline.atomic.AtomicFiles`),
so a killed run never leaves a half-saved model under the output name.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from pathlib import Path

from pipeline.atomic import output_error, temp_path, writer_is_gone
from pipeline.errors import InputError, os_message


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
        from pipeline.models.card import complete_model_dir  # model card, pooler, sentence-transformers files

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


def vocab_sha256(tokenizer) -> str:
    """SHA-256 of the tokenizer's vocabulary (token → id, key-sorted), to tie a dataset to its tokenizer."""
    vocab = json.dumps(tokenizer.get_vocab(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(vocab.encode()).hexdigest()
