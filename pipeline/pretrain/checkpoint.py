"""Exact resume: model, optimizer, scheduler, every RNG state and the data position.

A checkpoint is a directory written atomically (a temporary directory renamed into place):
``state.pt`` (model, optimizer, scheduler, position, settings; written by rank 0, DDP replicas
being identical) and ``rng-<rank>.pt`` (python, numpy, torch and CUDA generator states of each
process: dropout draws differ per process). The data position is ``(epoch, batches done in
the epoch, optimizer step)``; since the sample order and the masks are functions of
``(seed, epoch, index)``, nothing else about the data needs saving. ``settings.json`` repeats
the settings that must match for a resume (objective, data checksum, batch size, schedule,
world size, ...); :func:`differences` reads only that file.

A checkpoint on disk is not trusted: ``--resume`` is passed by every workflow run, so a planted
``.OUT.work/checkpoint/`` would otherwise be loaded by an ordinary rerun. Both files are read
with ``torch.load(weights_only=True)``, which rebuilds tensors and plain containers (dict, list,
tuple, str, numbers) and refuses every other pickled object instead of running it; that is why
the RNG states are stored as tensors and plain lists, not as the numpy and Python objects their
libraries return (docs/behaviour.md, "Nothing untrusted is unpickled").
"""

from __future__ import annotations

import json
import pickle
import random
import shutil
import zipfile
from pathlib import Path

import numpy as np
import torch

from pipeline import leftovers
from pipeline.atomic import writing
from pipeline.errors import InputError
from pipeline.models.directory import is_resume_checkpoint, replace_dir
from pipeline.models.runtime import World, barrier, shared_text

STATE = "state.pt"


# The settings a resumed run must share with its checkpoint (``differences`` compares them).
RESUME_KEYS = (
    "model",
    "generator",
    "objective",
    "misad_choice",
    "misad_max_candidates",
    "misad_loss",
    "span_max_words",
    "pooling",
    "ngram_pool",
    "input",
    "max_length",
    "batching",
    "max_steps",
    "epochs",
    "batch_size",
    "grad_accum",
    "lr",
    "warmup",
    "weight_decay",
    "dropout",
    "max_grad_norm",
    "mlm_probability",
    "seed",
    "heldout",
)


def rng_state() -> dict:
    """Every generator's state as tensors and plain Python values (loadable with ``weights_only=True``)."""
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {
        "python": [version, list(internal), gauss],
        "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos)},
        "numpy_gauss": [int(has_gauss), float(cached)],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    numpy = state["numpy"]
    has_gauss, cached = state["numpy_gauss"]
    np.random.set_state((numpy["kind"], numpy["keys"].numpy().astype(np.uint32), numpy["pos"], has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _load_safely(path: Path) -> dict:
    """``torch.load(weights_only=True)``: tensors and plain containers only, any other object refused.

    A checkpoint that is corrupt, or that holds anything a resume does not need (a pickled class,
    a function), stops with one line naming it; nothing in it is run.
    """
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError as exc:
        raise InputError(path, "checkpoint file missing (delete the checkpoint folder or pass --restart)") from exc
    except pickle.UnpicklingError as exc:
        raise InputError(
            path,
            "checkpoint holds objects other than tensors and plain containers; refused, as loading it "
            "could run code (delete the checkpoint folder or pass --restart)",
        ) from exc
    except (RuntimeError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(path, f"corrupt checkpoint ({reason}); delete it or pass --restart") from exc
    if not isinstance(state, dict):
        raise InputError(path, f"not a checkpoint of this stage (holds a {type(state).__name__}, not a dict)")
    return state


def exists(directory: Path) -> bool:
    return (Path(directory) / STATE).exists()


def save(directory: Path, world: World, model, optimizer, scheduler, position: dict, settings: dict) -> None:
    """Write the checkpoint (a full disk is one line naming ``directory``: torch reports it only in its text)."""
    directory = Path(directory)
    with writing(directory):
        _save(directory, world, model, optimizer, scheduler, position, settings)


def _save(directory: Path, world: World, model, optimizer, scheduler, position: dict, settings: dict) -> None:
    # A new temporary of the atomic writers' form (pipeline/leftovers.py: host, pid, random token), made by rank
    # 0 and named to the other ranks: a fixed name let a link or a folder planted there be written through or
    # deleted, and a name of this form is never one a user's file or an earlier run's live save has.
    name = leftovers.leftover_name(directory.name) if world.is_main else ""
    temp = directory.with_name(shared_text(world, name))
    if world.is_main:
        temp.parent.mkdir(parents=True, exist_ok=True)
        temp.mkdir()  # exclusive: never into a folder that is there
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "position": position,
                "settings": settings,
            },
            temp / STATE,
        )
        (temp / "settings.json").write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")
    barrier(world)
    torch.save(rng_state(), temp / f"rng-{world.rank}.pt")
    barrier(world)
    if world.is_main:
        try:
            replace_dir(temp, directory, owned=is_resume_checkpoint)
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)  # made above, exclusively: ours to remove
            raise
    barrier(world)


def differences(directory: Path, settings: dict) -> str:
    """The settings that differ from the checkpoint's, as ``key: checkpoint X, now Y; ...`` ('' if none)."""
    path = Path(directory) / "settings.json"
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InputError(
            path, "checkpoint settings unreadable or not JSON; delete the checkpoint or pass --restart"
        ) from exc
    if not isinstance(saved, dict):
        raise InputError(path, "checkpoint settings are not a JSON object; delete the checkpoint or pass --restart")
    changed = {key: (saved.get(key), value) for key, value in settings.items() if saved.get(key) != value}
    return "; ".join(f"{key}: checkpoint {old!r}, now {new!r}" for key, (old, new) in sorted(changed.items()))


def load(directory: Path, world: World, model, optimizer, scheduler, settings: dict) -> dict:
    """Restore everything in place; returns the data position."""
    directory = Path(directory)
    changed = differences(directory, settings)
    if changed:
        raise InputError(directory, f"checkpoint was made with other settings ({changed})")
    state = _load_safely(directory / STATE)
    rng = _load_safely(directory / f"rng-{world.rank}.pt")
    missing = {"model", "optimizer", "scheduler", "position"} - set(state)
    if missing:
        raise InputError(directory / STATE, f"not a checkpoint of this stage (no {', '.join(sorted(missing))})")
    try:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        set_rng_state(rng)
    except (RuntimeError, KeyError, ValueError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(directory, f"checkpoint does not fit this run ({reason}); pass --restart") from exc
    position = state["position"]
    if not (
        isinstance(position, dict)
        and all(isinstance(position.get(key), int) and position[key] >= 0 for key in ("step", "epoch", "batches_done"))
    ):
        raise InputError(
            directory / STATE, "checkpoint's data position is not three counts (step, epoch, batches_done)"
        )
    return position
