"""Resume of fused fine-tuning (pipeline/classify/fused_training.py; docs/stages/classify.md, "Fused seeds"):
a group's state while it trains, and its outcomes once it is done, so that a killed classify job goes on
where it stopped: the groups it finished are not trained again, the group it was in goes on from its last
save, and the job's files are those of an unbroken job."""

from __future__ import annotations

import json
import logging
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

import torch

log = logging.getLogger("pipeline.classify")


def _plain(value):
    """JSON for what a group's outcomes hold beyond JSON's own types (numpy scalars in predictions)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not kept in a resume file")


def _read(path: Path, identity: dict):
    """What ``path`` holds for ``identity``, or None (with the reason in the log) when it is not there, cannot
    be read, or is another run's. A state is read as tensors and plain containers only (``weights_only``),
    outcomes as JSON: nothing in the folder is unpickled."""
    if not path.is_file():
        return None
    try:
        if path.suffix == ".json":
            state = json.loads(path.read_text(encoding="utf-8"))
            identity = json.loads(json.dumps(identity, default=_plain))  # as JSON keeps it (tuples are lists)
        else:
            state = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError, ValueError, pickle.UnpicklingError) as error:
        log.warning("%s cannot be read (%s); starting afresh", path, error)
        return None
    if not isinstance(state, dict) or state.get("identity") != identity:
        log.warning("%s is not this run's save; starting afresh", path)
        return None
    return state


def _write(path: Path, state: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    if path.suffix == ".json":
        temporary.write_text(json.dumps(state, default=_plain), encoding="utf-8")
    else:
        torch.save(state, temporary)
    os.replace(temporary, path)  # the last whole save survives a kill mid-write


@dataclass(frozen=True)
class Resume:
    """Where a fused run keeps its state every ``every`` steps (the stacked weights, AdamW's moments, the
    step, the loss sums and the random state), so that a killed job goes on from its last save: each member's
    batches are replayed up to that step from its seeded sampler, and the run ends as an unbroken one. Beside
    it, once the group is done, its outcomes (:meth:`keep`), which the job reads back (:meth:`finished`)
    instead of training the group again, until its files are written (:meth:`drop`)."""

    path: Path
    every: int

    def load(self, identity: dict) -> dict | None:
        state = _read(self.path, identity)
        if state is not None:
            log.info("resuming %d member(s) at step %d from %s", len(identity["members"]), state["step"], self.path)
        return state

    def save(self, state: dict) -> None:
        _write(self.path, state)

    def finish(self) -> None:
        self.path.unlink(missing_ok=True)
        self._tidy()

    @property
    def done_path(self) -> Path:
        return self.path.with_name(self.path.stem + ".done.json")

    def keep(self, identity: dict, outcomes: list[dict]) -> None:
        """The group's outcomes (predictions, metrics, steps, losses), kept until the job's files are written."""
        _write(self.done_path, {"identity": identity, "outcomes": outcomes})

    def finished(self, identity: dict) -> list[dict] | None:
        """The outcomes of this group where it finished in an earlier, killed try of the job; else None."""
        state = _read(self.done_path, identity)
        if state is None:
            return None
        log.info(
            "%d member(s) finished in an earlier try: their outcomes from %s", len(state["outcomes"]), self.done_path
        )
        return state["outcomes"]

    def drop(self) -> None:
        """Remove the kept outcomes (the job's files are written)."""
        self.done_path.unlink(missing_ok=True)
        self._tidy()

    def _tidy(self) -> None:
        if self.path.parent.is_dir() and not any(self.path.parent.iterdir()):
            self.path.parent.rmdir()
