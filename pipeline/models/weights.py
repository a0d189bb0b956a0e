"""A transformers checkpoint's weights, checked before they are loaded (docs/behaviour.md, "Bad input").

A checkpoint folder whose weights are truncated, whose safetensors header claims an absurd length,
whose ``config.json`` describes another size than the weights, or whose ``pytorch_model.bin`` is a
pickle that holds more than tensors, stops with one line naming the file, not a traceback:

- :func:`check_safetensors` reads only the header of each ``*.safetensors`` file (its length is
  checked against the file before anything is read or allocated) and checks that every tensor lies
  inside the file;
- :func:`check_config_fits` compares the config's vocabulary size, width, positions and layer count
  with the tensor shapes in those headers, before a model of the config's size is built;
- :func:`load_pretrained` runs ``from_pretrained`` after both checks and turns what the loaders
  still raise (torch's refusal of a pickle, a mismatch found by transformers) into an
  :class:`~pipeline.errors.InputError`. Pickles are loaded only by torch's ``weights_only``
  unpickler, which refuses anything but tensors: nothing in the file runs.
"""

from __future__ import annotations

import json
import math
import pickle
import re
from pathlib import Path

from pipeline.errors import InputError

HEADER_LIMIT = 100_000_000  # bytes: safetensors' own limit on its JSON header
DTYPE_BYTES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
}
_LAYER = re.compile(r"(?:^|\.)layer\.(\d+)\.")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_safetensors(path: Path) -> dict:
    """The tensor entries of a safetensors file's header ({name: {dtype, shape, data_offsets}}), or the
    one-line error of a file that is truncated, not safetensors, or whose header lies about its size."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            prefix = handle.read(8)
            if len(prefix) < 8:
                raise InputError(path, f"not a safetensors file: {size} bytes, shorter than its header length")
            length = int.from_bytes(prefix, "little")
            if length > HEADER_LIMIT or length > size - 8:
                raise InputError(
                    path,
                    f"not a complete safetensors file: its header claims {length:,} bytes, the file holds {size:,}",
                )
            header = json.loads(handle.read(length))
    except (OSError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(path, f"not a readable safetensors file: {_first_line(exc)}") from exc
    if not isinstance(header, dict):
        raise InputError(path, "not a safetensors file: its header is not a JSON object")
    tensors = {name: entry for name, entry in header.items() if name != "__metadata__"}
    data = size - 8 - length
    for name, entry in tensors.items():
        try:
            start, end = (int(offset) for offset in entry["data_offsets"])
            shape = [int(n) for n in entry["shape"]]
            width = DTYPE_BYTES[entry["dtype"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(path, f"not a safetensors file: malformed entry for tensor {name}") from exc
        if not 0 <= start <= end or end - start != math.prod(shape) * width:
            raise InputError(path, f"not a safetensors file: tensor {name} has inconsistent offsets")
        if end > data:
            raise InputError(
                path, f"truncated: tensor {name} ends at byte {end:,} of the data, the file holds {data:,}"
            )
    return tensors


def _shape_of(tensors: dict, suffix: str) -> list[int] | None:
    for name, entry in tensors.items():
        if name.endswith(suffix):
            return [int(n) for n in entry["shape"]]
    return None


def check_config_fits(folder: Path, tensors: dict) -> None:
    """Fail when ``config.json`` describes another model than the weights (sizes read from headers)."""
    config_path = Path(folder) / "config.json"
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # transformers reports a missing or unreadable config itself
    if not isinstance(config, dict):
        raise InputError(config_path, "not a model config: not a JSON object")
    problems = []
    words = _shape_of(tensors, "embeddings.word_embeddings.weight")
    if words and len(words) == 2:
        width = config.get("embedding_size") or config.get("hidden_size") or config.get("dim")
        if config.get("vocab_size") not in (None, words[0]):
            problems.append(f"vocab_size {config['vocab_size']}, the weights {words[0]}")
        if width not in (None, words[1]):
            problems.append(f"embedding width {width}, the weights {words[1]}")
    positions = _shape_of(tensors, "embeddings.position_embeddings.weight")
    if positions and config.get("max_position_embeddings") not in (None, positions[0]):
        problems.append(f"max_position_embeddings {config['max_position_embeddings']}, the weights {positions[0]}")
    layers = {int(match.group(1)) for name in tensors if (match := _LAYER.search(name))}
    layer_count = config.get("num_hidden_layers") or config.get("n_layers")
    if layers and layer_count not in (None, max(layers) + 1):
        problems.append(f"{layer_count} layers, the weights {max(layers) + 1}")
    if problems:
        raise InputError(config_path, "does not match the model's weights: " + "; ".join(problems))


def check_weights(path_or_id: str) -> None:
    """:func:`check_safetensors` and :func:`check_config_fits` on a local checkpoint folder (no-op for a hub id)."""
    folder = Path(path_or_id)
    if not folder.is_dir():
        return
    tensors: dict = {}
    for weights in sorted(folder.glob("*.safetensors")):
        tensors.update(check_safetensors(weights))
    if tensors:
        check_config_fits(folder, tensors)


def _with_sdpa(model_class, path_or_id: str, kwargs: dict):
    """The model with torch's fused scaled-dot-product attention (flash / memory-efficient kernels on
    CUDA) where its architecture has an SDPA implementation, else its default attention."""
    if "attn_implementation" in kwargs:
        return model_class.from_pretrained(path_or_id, **kwargs)
    try:
        return model_class.from_pretrained(path_or_id, attn_implementation="sdpa", **kwargs)
    except ValueError as exc:
        # transformers names it "sdpa" or, for an architecture without one (XLNet), spells it out
        if not any(name in str(exc).lower() for name in ("sdpa", "scaled_dot_product_attention")):
            raise
        return model_class.from_pretrained(path_or_id, **kwargs)


def load_pretrained(model_class, path_or_id: str, **kwargs):
    """``model_class.from_pretrained(path_or_id, **kwargs)`` after :func:`check_weights`; what the loader
    raises on bad weights or config becomes one :class:`InputError` naming the checkpoint."""
    check_weights(path_or_id)
    try:
        return _with_sdpa(model_class, path_or_id, kwargs)
    except InputError:
        raise
    except pickle.UnpicklingError as exc:
        pickled = sorted(Path(path_or_id).glob("*.bin")) if Path(path_or_id).is_dir() else []
        raise InputError(
            pickled[0] if len(pickled) == 1 else path_or_id,
            "refused: a pickle that holds more than tensors (loading it could run code); "
            "torch's weights-only loader stopped before running anything",
        ) from exc
    except (OSError, ValueError, RuntimeError, EOFError, KeyError, TypeError) as exc:
        if "out of memory" in str(exc).lower():  # the machine, not the checkpoint
            raise
        raise InputError(path_or_id, f"cannot load the model's weights: {_first_line(exc)}") from exc
    except Exception as exc:  # safetensors' and tokenizers' own error types derive from Exception only
        if type(exc).__module__.split(".")[0] not in ("safetensors", "builtins"):
            raise
        raise InputError(path_or_id, f"cannot load the model's weights: {_first_line(exc)}") from exc
