"""What a resume reads from ``.OUT.work/checkpoint-N/``, checked before training starts.

``--resume`` is passed by every workflow run, so a checkpoint folder found on disk is not
trusted (docs/behaviour.md, "Nothing untrusted is unpickled"; "A resume continues the run it
resumes, or is refused"). The trainer itself reads its ``.pt``/``.pth`` files with
``torch.load(weights_only=True)``, but a planted or damaged file would then fail deep inside
``trainer.train`` with a traceback, and a file it cannot find it silently does without: a
missing (or not regular) ``optimizer.pt``, ``scheduler.pt`` or ``rng_state.pth`` gives a fresh
optimizer, schedule or random stream, so the run would end with other weights than an
uninterrupted one. :func:`verify_checkpoint` therefore stops with one line naming the first file
that fails any of:

- the set is complete: the trainer state, the weights, ``modules.json``, the optimizer, the
  schedule, this process's random state and the task heads (:data:`REQUIRED`);
- every entry is a regular file or folder inside the checkpoint: not a link (a link out of the
  checkpoint, or to ``/dev/urandom``), not a device, a FIFO or a socket (which would block a
  reader), and no larger than the model could make it (:func:`size_bound`);
- ``trainer_state.json`` is consistent with the folder and the run: its ``global_step`` is the
  folder's ``N`` and within the run's planned steps (a step of 10⁹ would end training at once and
  save the checkpoint's weights as the final model), its ``max_steps`` is the run's, a best
  checkpoint it names is one of this work folder's, and it holds only the trainer's own fields,
  each of its JSON kind (transformers builds its state from the file's keys);
- every ``.pt``/``.pth``/``.bin`` holds only tensors and plain containers (opened the trainer's
  safe way, with its allow-list of numpy array types, which its RNG state needs), and every
  ``.safetensors`` reads back; the weights are the model's and ``heads.pt`` holds this run's
  task heads, name for name and shape for shape;
- ``modules.json`` names no module classes other than the model being trained, since
  sentence-transformers imports the classes that file names when it loads the checkpoint, and
  no module folder outside the checkpoint.
"""

from __future__ import annotations

import json
import math
import pickle
import re
import stat
from pathlib import Path

from pipeline.errors import InputError
from pipeline.tasks.bounded_lines import text_lines

# Saved by the trainer for the record, never read on resume (a pickled TrainingArguments,
# which weights_only=True would refuse): left alone, and never loaded by us either.
NOT_READ = {"training_args.bin"}
HINT = "delete the work folder or run without --resume"
# What a resume of our trainer reads (transformers' Trainer and TwinTrainer): the rest it would
# silently do without, and the run would not continue the one it resumes.
REQUIRED = ("trainer_state.json", "modules.json", "optimizer.pt", "scheduler.pt", "heads.pt")
WEIGHTS = ("model.safetensors", "pytorch_model.bin")
SLACK_BYTES = 256 << 20  # the JSON and tokenizer files; a trainer state with a log line per step
SETTINGS_BYTES = 1 << 20  # the work folder's settings.json: a few hundred bytes


def _reason(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def size_bound(model) -> int:
    """The largest file a checkpoint of ``model`` can hold: Adam's two moments per parameter (the
    optimizer state, the largest file) and the weights themselves, twice over, plus slack."""
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    return 4 * weights + SLACK_BYTES


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def is_regular_file(path: Path, bound: int) -> bool:
    """Is ``path`` itself (not through a link) a regular file of at most ``bound`` bytes."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size <= bound


def resumed_log(path: Path, step: int) -> str:
    """The step log ``train_log.jsonl`` of the work folder up to ``step``, the steps the resume keeps
    (the later ones it redoes). The log must be a regular file (never a link: it is rewritten) of
    JSON lines each with an integer ``step``; anything else is refused in one line."""
    if not path.exists() and not path.is_symlink():
        return ""
    mode = path.lstat().st_mode
    if not stat.S_ISREG(mode):
        raise InputError(path, f"is {_kind(mode)}, not the run's step log; {HINT}")
    kept = []
    with open(path, "rb") as handle:
        for number, line in text_lines(handle, path):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                logged = entry["step"]
                if not isinstance(logged, int) or isinstance(logged, bool):
                    raise TypeError(f"step {logged!r}")
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                raise InputError(
                    path, f"not a step-log line ({_reason(exc)}); {HINT}", where=f"line {number}"
                ) from None
            if logged <= step:
                kept.append(line.rstrip("\r\n") + "\n")
    return "".join(kept)


# What transformers' TrainerState holds, as JSON kinds (trainer_state.json is TrainerState(**json)).
STATE_FIELDS = {
    "epoch": "a number",
    "global_step": "an integer",
    "max_steps": "an integer",
    "logging_steps": "a number",
    "eval_steps": "a number",
    "save_steps": "a number",
    "train_batch_size": "an integer or null",
    "num_train_epochs": "an integer",
    "num_input_tokens_seen": "an integer",
    "total_flos": "a number",
    "log_history": "a list",
    "best_metric": "a number or null",
    "best_global_step": "an integer or null",
    "best_model_checkpoint": "a string or null",
    "is_local_process_zero": "a boolean",
    "is_world_process_zero": "a boolean",
    "is_hyper_param_search": "a boolean",
    "trial_name": "a string or null",
    "trial_params": "an object or null",
    "stateful_callbacks": "an object or null",
}
_KINDS = {
    "a number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "a list": lambda v: isinstance(v, list),
    "a string": lambda v: isinstance(v, str),
    "a boolean": lambda v: isinstance(v, bool),
    "an object": lambda v: isinstance(v, dict),
}


def _is(value, kind: str) -> bool:
    if kind.endswith(" or null"):
        return value is None or _KINDS[kind.removesuffix(" or null")](value)
    return _KINDS[kind](value)


def _check_entries(folder: Path, bound: int) -> None:
    """Every entry of ``folder``: a regular file (or folder) of at most ``bound`` bytes, never followed
    through a link, never opened (opening a FIFO blocks)."""
    if folder.is_symlink():
        raise InputError(folder, f"the checkpoint is a link, not a folder of this run; {HINT}")
    for path in sorted(folder.rglob("*")):  # rglob does not descend into linked folders
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode):
            continue
        if not stat.S_ISREG(mode):
            target = f" to {path.readlink()}" if stat.S_ISLNK(mode) else ""
            raise InputError(path, f"is {_kind(mode)}{target}, not a regular file of the checkpoint; {HINT}")
        size = path.lstat().st_size
        if size > bound:
            raise InputError(path, f"{size:,} bytes, more than a checkpoint of this model holds ({bound:,}); {HINT}")


def _check_complete(folder: Path, world_size: int, process_index: int) -> None:
    rng = "rng_state.pth" if world_size <= 1 else f"rng_state_{process_index}.pth"
    missing = [name for name in (*REQUIRED, rng) if not (folder / name).exists()]
    if not any((folder / name).exists() for name in WEIGHTS):
        missing.append(" or ".join(WEIGHTS))
    if missing:
        raise InputError(
            folder,
            f"incomplete checkpoint: no {', '.join(missing)} (resuming without them would not continue the run); {HINT}",
        )


def _check_state(folder: Path, max_steps: int) -> int:
    """``global_step`` of ``trainer_state.json``, checked against the folder's name and the run."""
    state_path = folder / "trainer_state.json"
    try:
        state = json.loads(state_path.read_text(encoding="utf-8"))
        if not isinstance(state, dict):
            raise TypeError("not a JSON object")
        step = state["global_step"]
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise ValueError(f"global_step {step!r}")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise InputError(state_path, f"corrupt checkpoint state ({_reason(exc)}); {HINT}") from exc
    named = re.fullmatch(r"checkpoint-(\d+)", folder.name)
    if named is None or int(named.group(1)) != step:
        raise InputError(state_path, f"global_step {step} is not the step of its folder {folder.name}; {HINT}")
    if not 1 <= step <= max_steps:
        raise InputError(state_path, f"global_step {step} is outside this run's planned 1-{max_steps} steps; {HINT}")
    planned = state.get("max_steps")
    if planned != max_steps:
        raise InputError(state_path, f"max_steps {planned!r} is not this run's {max_steps}; {HINT}")
    for key, value in state.items():  # transformers builds TrainerState(**state): a stray key is a TypeError
        if key not in STATE_FIELDS:
            raise InputError(state_path, f"{key!r} is not a field of the trainer's state; {HINT}")
        if not _is(value, STATE_FIELDS[key]):
            raise InputError(state_path, f"{key} {repr(value)[:40]} is not {STATE_FIELDS[key]}; {HINT}")
    if any(not isinstance(entry, dict) for entry in state.get("log_history", [])):
        raise InputError(state_path, f"log_history holds an entry that is not a JSON object; {HINT}")
    epoch = state.get("epoch", 0)
    if not math.isfinite(epoch) or epoch < 0:
        raise InputError(state_path, f"epoch {epoch!r} is not a number of passes; {HINT}")
    best = state.get("best_model_checkpoint")
    if best is not None:  # loaded at the end with --select-best: one of this work folder's checkpoints only
        best_path = Path(best) if isinstance(best, str) else None
        if (
            best_path is None
            or best_path.is_symlink()
            or best_path.resolve().parent != folder.resolve().parent
            or not re.fullmatch(r"checkpoint-\d+", best_path.name)
        ):
            raise InputError(
                state_path, f"best_model_checkpoint {best!r} is not a checkpoint of this work folder; {HINT}"
            )
    return step


def verify_checkpoint(folder: Path, trainer) -> None:
    """Raise :class:`InputError` naming the first file of ``folder`` that the resume of ``trainer``
    (its model, planned steps and processes) cannot trust or cannot honour."""
    import torch
    from safetensors import safe_open
    from transformers.trainer_pt_utils import safe_globals

    folder = Path(folder)
    model = trainer.model
    _check_entries(folder, size_bound(model))
    _check_complete(folder, trainer.args.world_size, trainer.args.process_index)
    _check_state(folder, trainer.args.max_steps)
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
    if (folder / "model.safetensors").exists():
        _check_weights(folder / "model.safetensors", model)
    if isinstance(trainer.loss, dict):
        _check_heads(folder / "heads.pt", trainer.loss)


def _check_weights(path: Path, model) -> None:
    """The encoder's weights are the model's, name for name and shape for shape: a file from another
    model would fail to load deep in the trainer, or leave weights at their initial values."""
    from safetensors import safe_open

    expected = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    with safe_open(path, framework="pt") as weights:
        found = {key: tuple(weights.get_slice(key).get_shape()) for key in weights.keys()}  # noqa: SIM118
    first = next(iter(found), None)
    prefixes = [name[: len(name) - len(first)] for name in expected if first and name.endswith(first)]
    prefix = next((p for p in prefixes if (not p or p.endswith(".")) and all(p + k in expected for k in found)), None)
    if prefix is None:
        raise InputError(path, f"holds weights the model being trained does not have; {HINT}")
    wrong = [key for key, shape in found.items() if expected[prefix + key] != shape]
    missing = [name[len(prefix) :] for name in expected if name.startswith(prefix) and name[len(prefix) :] not in found]
    if wrong or missing:
        what = f"shapes differ ({', '.join(wrong[:3])})" if wrong else f"lacks {', '.join(missing[:3])}"
        raise InputError(path, f"not the weights of the model being trained: {what}; {HINT}")


def _check_heads(path: Path, losses: dict) -> None:
    """``heads.pt`` holds this run's task heads, each with its parameters' names and shapes: a head
    left out would be trained afresh from the checkpoint on (TwinTrainer loads them by name)."""
    import torch

    expected = {
        task: {key: tuple(value.shape) for key, value in loss.state_dict().items() if not key.startswith("model.")}
        for task, loss in losses.items()
    }
    state = torch.load(path, map_location="cpu", weights_only=True)
    found = (
        {
            task: {key: tuple(value.shape) if isinstance(value, torch.Tensor) else None for key, value in head.items()}
            for task, head in state.items()
            if isinstance(head, dict)
        }
        if isinstance(state, dict)
        else None
    )
    if found != expected:
        raise InputError(
            path, f"does not hold this run's task heads ({', '.join(sorted(expected))}) and their shapes; {HINT}"
        )


def _check_module_types(path: Path, model) -> None:
    if not path.exists():
        return
    # the names sentence-transformers writes for the model's own modules (``module.__name__``)
    ours = {f"{type(module).__module__}.{type(module).__name__}" for module in model._modules.values()}
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        named = {entry["type"] for entry in entries}
        folders = [str(entry.get("path", "")) for entry in entries]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise InputError(path, f"corrupt checkpoint ({_reason(exc)}); {HINT}") from exc
    inside = path.parent.resolve()
    for folder in folders:  # each module loads from its folder: one of the checkpoint's own
        target = (path.parent / folder).resolve()
        if target != inside and inside not in target.parents:
            raise InputError(path, f"names a module folder outside the checkpoint ({folder!r}); {HINT}")
    foreign = sorted(map(str, named - ours))
    if foreign:
        raise InputError(
            path, f"names module classes the model being trained does not have ({', '.join(foreign)}); {HINT}"
        )
