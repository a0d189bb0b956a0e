"""The saved BiLSTM encoder (format in :mod:`pipeline.models.bilstm`) and its use as an evaluation model.

:func:`save` writes ``config.json``, ``vocab.txt`` and ``model.safetensors`` (plus the
training log) into a directory, all at once or not at all, and only into a new or empty one or
an encoder it saved before (:func:`check_output`: a folder of other files is refused untouched); :func:`load_encoder` reads them
back (safetensors, never pickle). :class:`SavedBiLSTM` is what ``--model bilstm:DIR`` loads
(:mod:`pipeline.models.spec`): ``encode(texts)`` → float32 ``(len(texts), dim)``, each distinct text
encoded once, sorted by length so a batch pads to its own longest sentence.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.models.bilstm.encoder import BILSTM_POOLINGS, BiLSTMEncoder
from pipeline.models.directory import check_output_dir
from pipeline.models.weights import check_safetensors
from pipeline.models.word_vectors import WordVectors
from pipeline.provenance import file_fingerprint

FORMAT = "bilstm-sentence-encoder"
FORMAT_VERSION = 1
FILES = ("config.json", "vocab.txt", "model.safetensors")
LOG = "train_log.jsonl"  # one line per epoch, beside FILES


def is_bilstm_dir(directory) -> bool:
    """A directory :func:`save` wrote: its ``config.json`` names the format."""
    try:
        config = json.loads((Path(directory) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("format") == FORMAT


def check_output(directory) -> Path:
    """Fail fast unless ``directory`` is new, empty or a saved BiLSTM encoder (a stage calls it before training)."""
    return check_output_dir(directory, owned=is_bilstm_dir)


def save(directory, encoder: BiLSTMEncoder, vocabulary: list[str], config: dict, log_lines: list[dict]) -> None:
    directory = check_output(directory)
    config = {
        **config,
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "pooling": encoder.pooling.name,
        "hidden": encoder.hidden,
        "word_dim": encoder.embedding.embedding_dim,
        "dim": encoder.dim,
        "vocabulary": len(vocabulary),
    }
    tensors = {name: tensor.detach().cpu().contiguous() for name, tensor in encoder.state_dict().items()}
    with AtomicFiles() as files:
        save_file(tensors, str(files.temp(directory / "model.safetensors")), metadata={"format": FORMAT})
        files.temp(directory / "vocab.txt").write_text("".join(f"{word}\n" for word in vocabulary), encoding="utf-8")
        files.temp(directory / "config.json").write_text(json_text(config), encoding="utf-8")
        files.temp(directory / LOG).write_text(
            "".join(json.dumps(line, sort_keys=True) + "\n" for line in log_lines), encoding="utf-8"
        )


def load_encoder(directory) -> tuple[BiLSTMEncoder, WordVectors, dict]:
    directory = Path(directory)
    for name in FILES:
        if not (directory / name).is_file():
            raise InputError(directory / name, f"missing file of a saved BiLSTM encoder ({', '.join(FILES)})")
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(directory / "config.json", f"not JSON: {exc}") from exc
    if config.get("format") != FORMAT or config.get("pooling") not in BILSTM_POOLINGS:
        raise InputError(
            directory / "config.json",
            f"not a {FORMAT} config (format {config.get('format')!r}, pooling {config.get('pooling')!r})",
        )
    vocabulary = (directory / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    weights = directory / "model.safetensors"
    if "embedding.weight" not in check_safetensors(weights):  # truncated or lying headers: one line
        raise InputError(weights, "no embedding.weight tensor: not a saved BiLSTM encoder")
    tensors = load_file(str(weights))
    table = tensors["embedding.weight"]
    if table.shape[0] != len(vocabulary):
        raise InputError(directory / "vocab.txt", f"{len(vocabulary)} words for {table.shape[0]} embedding rows")
    try:
        encoder = BiLSTMEncoder(table, config["hidden"], config["pooling"])
        encoder.load_state_dict(tensors)
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(weights, f"does not match its config.json: {message}") from exc
    return encoder.eval(), WordVectors(vocabulary, table.numpy()), config


class SavedBiLSTM:
    """A trained BiLSTM encoder as an evaluation model (``--model bilstm:DIR``)."""

    kind = "bilstm"

    def __init__(self, directory, batch_size: int = 64):
        self.path = str(directory)
        self.encoder, self.vectors, self.config = load_encoder(directory)
        self.pooling = self.config["pooling"]
        self.dim = self.encoder.dim
        self.batch_size = batch_size

    def describe(self) -> dict:
        return {
            "kind": self.kind,
            "path": self.path,
            "pooling": self.pooling,
            "hidden": self.config["hidden"],
            "dim": self.dim,
            "checkpoint": {name: file_fingerprint(Path(self.path) / name) for name in FILES},
        }

    def encode(self, texts: list[str]) -> np.ndarray:
        rows: dict[str, int] = {}
        positions = np.array([rows.setdefault(text, len(rows)) for text in texts], dtype=np.int64)
        unique = list(rows)
        ids = [self.vectors.ids(text) for text in unique]
        order = sorted(range(len(unique)), key=lambda i: (-len(ids[i]), i))
        out = np.zeros((len(unique), self.dim), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                chosen = order[start : start + self.batch_size]
                out[chosen] = self.encoder([ids[i] for i in chosen]).float().numpy()
        return out[positions]
