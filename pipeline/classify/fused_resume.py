"""Resume of fused fine-tuning (pipeline/classify/fused_training.py; docs/stages/classify.md, "Fused seeds"):
a group's state while it trains, and its outcomes once it is done, so that a killed classify job goes on
where it stopped: the groups it finished are not trained again, the group it was in goes on from its last
save, and the job's files are those of an unbroken job.

A save proves what it holds (issue 47 §2): its identity names the training data as the run sees it (a
fingerprint of the encoded examples, :func:`data_fingerprint`), and what it holds is checked against what the
run expects (every tensor's shape and dtype, the step within the run, one outcome per member). A save that
fails either is set aside with one line in the log, and the group trains afresh: never a traceback, never a
run that silently goes on from something else.

A save also proves it is what the run wrote (issue 55 §2): once it is complete and in place, a digest beside
it (``NAME.digest``) records its SHA-256 and size and what it claims (the step it was made at, or how many
outcomes it keeps). A save whose bytes were changed since (weights all +0.5 or all zeros, kept metrics
edited, a step set to "finished" over an early step's weights) or that has no digest (a kill between the
save and its digest, an older version's save) is set aside like any other. The digest is no signature:
it catches a save changed by anything but this writer, not one forged together with its digest.

The saves live in the run's own ``.resume`` folder (:func:`check_folder`): a ``.resume`` that is a link
(to a user's folder, whose file of a save's name a finished group would delete) or holds a link is
refused in one line, exit 2. Each save is written under a unique temporary
(:class:`pipeline.atomic.AtomicFiles`), never a fixed name at which a planted link would have
``torch.save`` write through it into a user's file."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import weakref
from dataclasses import astuple, dataclass
from pathlib import Path

import torch

from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.small_files import read_small_text

log = logging.getLogger("pipeline.classify")
DIGEST = ".digest"  # beside each save: NAME.digest
_DIGEST_LIMIT = 4096  # a digest is a few lines of JSON


def _plain(value):
    """JSON for what a group's outcomes hold beyond JSON's own types (numpy scalars in predictions)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not kept in a resume file")


# one fingerprint per encoded split and job: every group of a job trains on the same features
_fingerprints: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def data_fingerprint(examples: list, features) -> dict:
    """The data a run sees, as its identity in a save: the number of examples, how many are labelled, and a
    SHA-256 over the examples and their encoded features (what --max-train-examples, --train-from-dev,
    --max-length, the tokenizer and the data files make of them), so that a save made on other data is
    not resumed (issue 47 §2)."""
    if features in _fingerprints:
        return _fingerprints[features]
    digest = hashlib.sha256()
    for example in examples:
        digest.update(json.dumps(astuple(example), default=_plain).encode("utf-8"))
    digest.update(b"\0features\0")
    for index in range(len(features)):
        digest.update(json.dumps(features[index], sort_keys=True, default=_plain).encode("utf-8"))
    found = {
        "examples": len(examples),
        "labelled": sum(example.label is not None for example in examples),
        "sha256": digest.hexdigest(),
    }
    _fingerprints[features] = found
    return found


def _mismatch(found, expected, where: str) -> str | None:
    """What in ``found`` differs in kind from ``expected`` (tensors by shape and dtype, mappings by their
    keys, whole numbers by type), or None: a save's contents as the run that reads it would use them."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(found, torch.Tensor):
            return f"{where} is not a tensor"
        if found.shape != expected.shape or found.dtype != expected.dtype:
            return (
                f"{where} is {str(found.dtype).removeprefix('torch.')} {list(found.shape)}, "
                f"the run's is {str(expected.dtype).removeprefix('torch.')} {list(expected.shape)}"
            )
        return None
    if isinstance(expected, dict):
        if not isinstance(found, dict):
            return f"{where} is not a mapping"
        missing = [key for key in expected if key not in found]
        if missing:
            return f"{where} lacks {missing[0]!r}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
        extra = [key for key in found if key not in expected]
        if extra:
            return f"{where} holds {extra[0]!r}, which the run does not have"
        for key, value in expected.items():
            wrong = _mismatch(found[key], value, key if where == "the save" else f"{where}[{key!r}]")
            if wrong:
                return wrong
        return None
    if isinstance(expected, list):  # every GPU's generator state, one per device
        if not isinstance(found, list) or len(found) != len(expected):
            return f"{where} is not a list of {len(expected)}"
        return next((w for f, e in zip(found, expected) if (w := _mismatch(f, e, where))), None)
    if isinstance(expected, int) and (isinstance(found, bool) or not isinstance(found, int)):
        return f"{where} is not a whole number"
    return None


def _state_problem(state: dict, expected: dict, steps: int) -> str | None:
    """Why a read state cannot be resumed by a run that expects ``expected`` (its own state at step 0) and
    trains ``steps`` steps; None when it can."""
    wrong = _mismatch({key: value for key, value in state.items() if key != "identity"}, expected, "the save")
    if wrong:
        return wrong
    if not 0 <= state["step"] <= steps:
        return f"its step {state['step']} is outside the run's 0..{steps}"
    if state["optimiser"]["step"] != state["step"]:
        return f"its optimiser is at step {state['optimiser']['step']}, its weights at {state['step']}"
    return None


def cuda_rng_state() -> list:
    """Every GPU's generator state (``torch.cuda.get_rng_state_all``; none without CUDA), which a save keeps
    beside the CPU's, as pre-training's checkpoints do (pipeline/pretrain/checkpoint.py), so that anything
    drawn on the GPU after a resume is what an unbroken run draws."""
    return torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []


def restore_cuda_rng(saved: list | None) -> None:
    """Put back the GPU generators a save kept (a save made without CUDA, or on CPU now, has none to restore)."""
    if saved and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(saved)


# what the job logs and writes of a member's training (run_members' outcome)
NUMBERS = ("steps", "train_loss", "train_seconds", "train_examples_per_second")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _token_record(record) -> bool:
    """Whether ``record`` is a run's processed tokens (pipeline/classify/processed_tokens.py): whole numbers
    ``padded`` and ``real``, and ``per_epoch`` a list of such pairs."""

    def whole(pair) -> bool:
        return isinstance(pair, dict) and all(
            isinstance(pair.get(key), int) and not isinstance(pair.get(key), bool) and pair[key] >= 0
            for key in ("padded", "real")
        )

    return whole(record) and isinstance(record.get("per_epoch"), list) and all(map(whole, record["per_epoch"]))


def _outcomes_problem(outcomes, identity: dict) -> str | None:
    """Why kept ``outcomes`` are not one complete outcome per member of ``identity``, with every evaluation
    set's predictions (one per example) and metrics (where the set is labelled); None when they are."""
    members = identity["members"]
    if not isinstance(outcomes, list) or len(outcomes) != len(members):
        count = len(outcomes) if isinstance(outcomes, list) else "no list of"
        return f"it holds {count} outcome(s) for {len(members)} member(s)"
    sets = identity.get("evaluations", {})
    for member, outcome in zip(members, outcomes):
        who = f"seed {member['seed']} of {member['model_path']}"
        if not isinstance(outcome, dict):
            return f"the outcome of {who} is not a mapping"
        if any(outcome.get(key) != member[key] for key in ("seed", "lr", "model_path")):
            found = f"seed {outcome.get('seed')} of {outcome.get('model_path')}"
            return f"the outcome of {who} is missing ({found} is in its place)"
        if not all(_number(outcome.get(key)) for key in NUMBERS):
            return f"the outcome of {who} lacks a number of {', '.join(NUMBERS)}"
        if not _token_record(outcome.get("processed_tokens")):
            return f"the outcome of {who} lacks its processed tokens"
        if not isinstance(outcome.get("sets"), dict) or sorted(outcome["sets"]) != sorted(sets):
            return f"the outcome of {who} does not hold the sets {', '.join(sorted(sets))}"
        for name, data in sets.items():
            result = outcome["sets"][name]
            predictions = result.get("predictions") if isinstance(result, dict) else None
            if not isinstance(predictions, list) or len(predictions) != data["examples"]:
                return f"the outcome of {who} lacks {data['examples']} {name} predictions"
            metrics = result.get("metrics")
            if data["labelled"] < data["examples"]:  # as run_members scores: only a set labelled throughout
                if metrics is not None:
                    return f"the outcome of {who} has {name} metrics, but {name} is unlabelled"
            elif not isinstance(metrics, dict) or not all(_number(value) for value in metrics.values()):
                return f"the outcome of {who} lacks its {name} metrics"
    return None


def check_folder(folder: Path) -> None:
    """Refuse (:class:`InputError`, exit 2) a resume folder that is not a plain folder of the run: a link (to
    a user's folder, where saves would be written and a finished group's be deleted), or anything but a
    folder, or one that holds a link (a save read or written through it would be a user's file)."""
    folder = Path(folder)
    if not os.path.lexists(folder):
        return
    if folder.is_symlink() or not folder.is_dir():
        what = "a link" if folder.is_symlink() else "not a folder"
        raise InputError(
            folder,
            f"is {what}: a run keeps its resume saves only in a plain folder of its own, so that no file elsewhere "
            "is written or deleted as one; refused, nothing touched: remove it",
        )
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink():
            raise InputError(
                entry, "is a link in the run's resume folder: a save is never read or written through one; remove it"
            )


def _digest_path(path: Path) -> Path:
    return path.with_name(path.name + DIGEST)


def _read(path: Path, identity: dict):
    """What ``path`` holds for ``identity`` and the SHA-256 of its bytes as read, or None (with the reason in
    the log) when it is not there, cannot be read, or is another run's. A state is read as tensors and plain
    containers only (``weights_only``), outcomes as JSON: nothing in the folder is unpickled. The bytes are
    hashed and loaded from one open file (never through a link), so the digest checked is of what was loaded."""
    if not path.is_file():
        return None
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
            digest = hashlib.sha256()
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
            handle.seek(0)
            if path.suffix == ".json":
                state = json.loads(handle.read().decode("utf-8"))
                identity = json.loads(json.dumps(identity, default=_plain))  # as JSON keeps it (tuples are lists)
            else:
                state = torch.load(handle, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError, ValueError, pickle.UnpicklingError) as error:
        log.warning("%s cannot be read (%s); starting afresh", path, error)
        return None
    if not isinstance(state, dict) or not isinstance(state.get("identity"), dict):
        log.warning("%s is not this run's save; starting afresh", path)
        return None
    if state["identity"] != identity:
        saved = state["identity"]
        differing = [key for key in identity if saved.get(key) != identity[key]] or sorted(saved)
        log.warning("%s is not this run's save (its %s differ); starting afresh", path, ", ".join(differing))
        return None
    return state, digest.hexdigest()


def _digest_problem(path: Path, sha256: str, claims: dict) -> str | None:
    """Why the save at ``path`` (its bytes' ``sha256`` as read) is not what its digest says was written, with
    the ``claims`` it makes (its step, its number of outcomes); None when it is."""
    digest = _digest_path(path)
    try:
        text = read_small_text(digest, _DIGEST_LIMIT, "a resume save's digest", missing=None)
        record = json.loads(text) if text is not None else None
    except (InputError, ValueError, RecursionError):
        record = "unreadable"
    if record is None:
        return f"it has no digest ({digest.name}: the save was not completed, or was made by an older version)"
    if not isinstance(record, dict) or not isinstance(record.get("sha256"), str):
        return f"its digest {digest.name} is not one this stage writes"
    if record["sha256"] != sha256:
        return f"its bytes are not those its digest {digest.name} records (changed since it was saved)"
    for key, value in claims.items():
        if record.get(key) != value:
            return f"it claims {key} {value}, its digest {digest.name} records {record.get(key)}"
    return None


def _write(path: Path, state: dict, claims: dict) -> None:
    """``state`` saved at ``path`` under a unique temporary (renamed in place: the last whole save survives a
    kill mid-write), then its digest with ``claims`` beside it, written once the save is complete."""
    check_folder(path.parent)  # again at every save: a link planted while the run trains
    with AtomicFiles() as files:
        temporary = files.temp(path)
        if path.suffix == ".json":
            temporary.write_text(json.dumps(state, default=_plain), encoding="utf-8")
        else:
            torch.save(state, temporary)
        with temporary.open("rb") as handle:
            sha256 = hashlib.file_digest(handle, "sha256").hexdigest()
    with AtomicFiles() as files:
        files.temp(_digest_path(path)).write_text(json_text({"sha256": sha256, **claims}), encoding="utf-8")


def _remove(path: Path) -> None:
    """A save and its digest (the digest first: a save left without one is never resumed)."""
    _digest_path(path).unlink(missing_ok=True)
    path.unlink(missing_ok=True)


@dataclass(frozen=True)
class Resume:
    """Where a fused run keeps its state every ``every`` steps (the stacked weights, AdamW's moments, the
    step, the loss sums and the random state), so that a killed job goes on from its last save: each member's
    batches are replayed up to that step from its seeded sampler, and the run ends as an unbroken one. Beside
    it, once the group is done, its outcomes (:meth:`keep`), which the job reads back (:meth:`finished`)
    instead of training the group again, until its files are written (:meth:`drop`)."""

    path: Path
    every: int

    def load(self, identity: dict, expected: dict, steps: int) -> dict | None:
        """The state saved for ``identity``, or None: a state is resumed only where it holds what the run
        holds (``expected``: the run's own state before its first step, by key, shape and dtype) at a step
        within the run's ``steps``; anything else is set aside with one line in the log."""
        check_folder(self.path.parent)
        read = _read(self.path, identity)
        if read is None:
            return None
        state, sha256 = read
        problem = _state_problem(state, expected, steps) or _digest_problem(self.path, sha256, {"step": state["step"]})
        if problem:
            log.warning("%s is not a usable save: %s; starting afresh", self.path, problem)
            return None
        log.info("resuming %d member(s) at step %d from %s", len(identity["members"]), state["step"], self.path)
        return state

    def save(self, state: dict) -> None:
        _write(self.path, state, {"step": state["step"]})

    def finish(self) -> None:
        _remove(self.path)
        self._tidy()

    @property
    def done_path(self) -> Path:
        return self.path.with_name(self.path.stem + ".done.json")

    def keep(self, identity: dict, outcomes: list[dict]) -> None:
        """The group's outcomes (predictions, metrics, steps, losses), kept until the job's files are written."""
        _write(self.done_path, {"identity": identity, "outcomes": outcomes}, {"outcomes": len(outcomes)})

    def finished(self, identity: dict) -> list[dict] | None:
        """The outcomes of this group where it finished in an earlier, killed try of the job; else None."""
        check_folder(self.path.parent)
        read = _read(self.done_path, identity)
        if read is None:
            return None
        state, sha256 = read
        problem = _outcomes_problem(state.get("outcomes"), state["identity"]) or _digest_problem(
            self.done_path, sha256, {"outcomes": len(state["outcomes"])}
        )
        if problem:
            log.warning("%s is not a usable save: %s; training the group afresh", self.done_path, problem)
            return None
        log.info(
            "%d member(s) finished in an earlier try: their outcomes from %s", len(state["outcomes"]), self.done_path
        )
        return state["outcomes"]

    def drop(self) -> None:
        """Remove the kept outcomes (the job's files are written)."""
        _remove(self.done_path)
        self._tidy()

    def _tidy(self) -> None:
        if self.path.parent.is_dir() and not any(self.path.parent.iterdir()):
            self.path.parent.rmdir()
