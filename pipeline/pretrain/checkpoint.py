"""Exact resume: model, optimizer, scheduler, every RNG state and the data position.

A checkpoint is a directory written atomically (a temporary directory renamed into place):
``state.pt`` (model, optimizer, scheduler, position, settings; written by rank 0, DDP replicas
being identical) and ``rng-<rank>.pt`` (python, numpy, torch and CUDA generator states of each
process: dropout draws differ per process). The data position is ``(epoch, batches done in
the epoch, optimizer step)``; since the sample order and the masks are functions of
``(seed, epoch, index)``, nothing else about the data needs saving. ``settings.json`` repeats
the settings that must match for a resume (objective, data checksum, batch size, schedule,
world size, ...); :func:`differences` reads only that file.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import torch

from pipeline.errors import InputError
from pipeline.models.directory import replace_dir
from pipeline.models.runtime import World, barrier

STATE = "state.pt"


def rng_state() -> dict:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def exists(directory: Path) -> bool:
    return (Path(directory) / STATE).exists()


def save(directory: Path, world: World, model, optimizer, scheduler, position: dict, settings: dict) -> None:
    directory = Path(directory)
    temp = directory.with_name(f".{directory.name}.tmp")
    if world.is_main:
        shutil.rmtree(temp, ignore_errors=True)
        temp.mkdir(parents=True)
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
        replace_dir(temp, directory)
    barrier(world)


def differences(directory: Path, settings: dict) -> str:
    """The settings that differ from the checkpoint's, as ``key: checkpoint X, now Y; ...`` ('' if none)."""
    saved = json.loads((Path(directory) / "settings.json").read_text())
    changed = {key: (saved.get(key), value) for key, value in settings.items() if saved.get(key) != value}
    return "; ".join(f"{key}: checkpoint {old!r}, now {new!r}" for key, (old, new) in sorted(changed.items()))


def load(directory: Path, world: World, model, optimizer, scheduler, settings: dict) -> dict:
    """Restore everything in place; returns the data position."""
    directory = Path(directory)
    changed = differences(directory, settings)
    if changed:
        raise InputError(directory, f"checkpoint was made with other settings ({changed})")
    state = torch.load(directory / STATE, map_location="cpu", weights_only=False)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    set_rng_state(torch.load(directory / f"rng-{world.rank}.pt", map_location="cpu", weights_only=False))
    return state["position"]
