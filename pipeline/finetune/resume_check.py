"""What a resume reads from ``.OUT.work/checkpoint-N/``, checked before training starts.

``--resume`` is passed by every workflow run, so a checkpoint folder found on disk is not
trusted (docs/behaviour.md, "Nothing untrusted is unpickled"). The trainer itself reads its
``.pt``/``.pth`` files with ``torch.load(weights_only=True)``, but a planted or damaged file
would then fail deep inside ``trainer.train`` with a traceback. :func:`verify_checkpoint` opens
every file the resume will read, the same safe way (with the trainer's allow-list of numpy
array types, which its RNG state needs), and stops with one line naming the first
that is corrupt or holds more than tensors and plain containers. It also refuses a
``modules.json`` naming module classes other than the model being trained, since
sentence-transformers imports the classes that file names when it loads the checkpoint.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from pipeline.errors import InputError

# Saved by the trainer for the record, never read on resume (a pickled TrainingArguments,
# which weights_only=True would refuse): left alone, and never loaded by us either.
NOT_READ = {"training_args.bin"}
HINT = "delete the work folder or run without --resume"


def _reason(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def verify_checkpoint(folder: Path, model) -> None:
    """Raise :class:`InputError` naming the first file of ``folder`` that the resume cannot trust."""
    import torch
    from safetensors import safe_open
    from transformers.trainer_pt_utils import safe_globals

    folder = Path(folder)
    state = folder / "trainer_state.json"
    try:
        step = json.loads(state.read_text(encoding="utf-8"))["global_step"]
        if not isinstance(step, int) or step < 0:
            raise ValueError(f"global_step {step!r}")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise InputError(state, f"corrupt checkpoint state ({_reason(exc)}); {HINT}") from exc
    _check_module_types(folder / "modules.json", model)
    for path in sorted(folder.rglob("*")):
        if path.name in NOT_READ or not path.is_file():
            continue
        try:
            if path.suffix in (".pt", ".pth", ".bin"):
                with safe_globals():  # the trainer's own allow-list: numpy arrays and dtypes (its RNG state)
                    torch.load(path, map_location="cpu", weights_only=True, mmap=True)
            elif path.suffix == ".safetensors":
                with safe_open(path, framework="pt") as weights:
                    for key in weights.keys():  # noqa: SIM118 (safe_open is not iterable)
                        weights.get_slice(key)
        except pickle.UnpicklingError as exc:
            raise InputError(
                path,
                f"holds objects other than tensors and plain containers; refused, as loading it could run code ({HINT})",
            ) from exc
        except Exception as exc:  # whatever the loaders raise on a damaged file: torch, zipfile, safetensors
            raise InputError(path, f"corrupt checkpoint file ({_reason(exc)}); {HINT}") from exc


def _check_module_types(path: Path, model) -> None:
    if not path.exists():
        return
    # the names sentence-transformers writes for the model's own modules (``module.__name__``)
    ours = {f"{type(module).__module__}.{type(module).__name__}" for module in model._modules.values()}
    try:
        named = {entry["type"] for entry in json.loads(path.read_text(encoding="utf-8"))}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise InputError(path, f"corrupt checkpoint ({_reason(exc)}); {HINT}") from exc
    foreign = sorted(map(str, named - ours))
    if foreign:
        raise InputError(
            path, f"names module classes the model being trained does not have ({', '.join(foreign)}); {HINT}"
        )
