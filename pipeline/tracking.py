"""Live training curves: every training stage mirrors its step log to an experiment tracker while it
trains (docs/running.md, "Watching a run").

``pretrain``, ``finetune``, ``classify`` and ``bilstm`` write one ``train_log.jsonl`` line per step or
epoch (loss terms, learning rate, held-out accuracy, tokens/s, padding share, GPU memory where there is
a GPU); the same numbers go to the tracker as they are written, so a run can be watched live::

    tensorboard --logdir results/<run>

The tracker is ``tracking.report_to`` in the config (``--report-to`` of the stages), or the environment
variable ``ULR_REPORT_TO``, which wins: ``tensorboard`` (the default: event files under
``results/<run>/logs/tensorboard/<stage>/<label>``, nothing leaves the machine), ``wandb`` or ``mlflow``
(their own libraries, which the user installs and configures with their own environment variables:
``WANDB_PROJECT``, ``MLFLOW_TRACKING_URI``, ...), or ``none``. The stages built on the transformers
``Trainer`` (finetune, classify) hand ``wandb`` and ``mlflow`` to its ``report_to`` integrations and
write TensorBoard's files with :func:`trainer_callbacks`; the others (pretrain, bilstm) log through
:class:`Tracker`, which uses the same libraries.

The event files are logs: a rerun adds a file beside the earlier ones, and they are not outputs of the
rules (a killed job may leave a partial one, as it leaves a partial log).

A tracker whose library is not installed is refused before the stage builds anything (:func:`require`,
called by the CLI on every stage with ``--report-to``); a write that fails under the TensorBoard folder
(a full disk) is one line naming that folder (docs/behaviour.md).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import os
import socket
import time
from pathlib import Path
from typing import Self

from pipeline.errors import InputError, os_message

TRACKERS = ("tensorboard", "wandb", "mlflow", "none")
ENV = "ULR_REPORT_TO"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--report-to",
        choices=TRACKERS,
        default="tensorboard",
        help=f"experiment tracker for live curves (${ENV} overrides): " + ", ".join(TRACKERS),
    )
    parser.add_argument("--tracking-dir", type=Path, help="where tensorboard writes its event files (default: none)")


def backend(flag: str | None) -> str:
    """The tracker: ``$ULR_REPORT_TO`` where set, else the flag."""
    chosen = os.environ.get(ENV) or flag or "tensorboard"
    if chosen not in TRACKERS:
        raise InputError(f"${ENV}", f"unknown tracker {chosen!r}; one of {', '.join(TRACKERS)}")
    return chosen


def require(flag: str | None) -> str:
    """The tracker (:func:`backend`), refused at once where its library cannot be imported: a stage
    must not build its work folder, or train for hours, before it finds that ``wandb`` is missing."""
    chosen = backend(flag)
    if chosen in ("wandb", "mlflow"):
        try:
            importlib.import_module(chosen)
        except ImportError:
            source = f"${ENV}" if os.environ.get(ENV) else "--report-to"
            raise InputError(
                source,
                f"tracker {chosen!r} needs the {chosen} package, which is not installed: "
                f"pip install {chosen}, or set tracking.report_to (or ${ENV}) to tensorboard or none",
            ) from None
    return chosen


def scalars(record: dict, prefix: str = "") -> dict[str, float]:
    """The finite numbers of a log record, nested keys joined with "/" (strings, lists and nulls left out)."""
    found = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            found.update(scalars(value, f"{name}/"))
        elif isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            found[name] = float(value)
    return found


def trainer_report_to(args: argparse.Namespace) -> list[str]:
    """``TrainingArguments(report_to=...)`` for the stages on the transformers Trainer: ``wandb`` or
    ``mlflow`` through its integrations; TensorBoard is not among them, it is :func:`trainer_callbacks`'s."""
    chosen = backend(args.report_to)
    return [chosen] if chosen in ("wandb", "mlflow") else []


def trainer_callbacks(args: argparse.Namespace) -> list:
    """The Trainer callbacks of the live curves: TensorBoard event files in ``--tracking-dir``, written by
    :class:`EventFile` in the training thread (the Trainer's own TensorBoard callback writes from
    ``SummaryWriter``'s thread, whose failure on a full disk is a thread's traceback)."""
    if backend(args.report_to) != "tensorboard" or args.tracking_dir is None:
        return []
    from transformers import TrainerCallback

    folder = args.tracking_dir

    class TensorBoardCurves(TrainerCallback):
        """The Trainer's log records as scalars, named as its TensorBoard callback names them
        (``train/loss``, ``eval/<metric>``)."""

        def __init__(self):
            self.events = None

        def on_log(self, args, state, control, logs=None, **kwargs):
            if not state.is_world_process_zero or not logs:
                return
            if self.events is None:
                self.events = EventFile(folder)
            named = {
                key.replace("eval_", "eval/", 1) if key.startswith("eval_") else f"train/{key}": value
                for key, value in logs.items()
            }
            self.events.add_scalars(scalars(named), state.global_step)

        def on_train_end(self, args, state, control, **kwargs):
            if self.events is not None:
                self.events.close()
                self.events = None

    return [TensorBoardCurves()]


class EventFile:
    """A TensorBoard event file written in the caller's thread.

    ``SummaryWriter`` writes from a background thread: a failed write (a full disk) prints that thread's
    traceback and comes back later as an ``OSError`` without a file name. Written here, the failure is
    one :class:`InputError` naming the folder, when it happens. The format is TensorBoard's own (its
    ``RecordWriter`` and ``Event`` protos), read by ``tensorboard --logdir`` as before.
    """

    def __init__(self, folder: Path):
        from tensorboard.compat.proto import event_pb2
        from tensorboard.summary.writer.record_writer import RecordWriter

        self.folder = Path(folder)
        self._event = event_pb2.Event
        name = f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}.0"
        with self._writing():
            self.folder.mkdir(parents=True, exist_ok=True)
            self._file = RecordWriter((self.folder / name).open("ab"))
        self._write(self._event(wall_time=time.time(), file_version="brain.Event:2"))

    @contextlib.contextmanager
    def _writing(self):
        try:
            yield
        except OSError as exc:
            raise InputError(self.folder, f"TensorBoard folder: {os_message(exc)}") from None

    def _write(self, event) -> None:
        with self._writing():
            self._file.write(event.SerializeToString())
            self._file.flush()  # live: the curve shows each point as it is logged

    def add_scalars(self, values: dict[str, float], step: int) -> None:
        from tensorboard.compat.proto.summary_pb2 import Summary

        summary = Summary(value=[Summary.Value(tag=name, simple_value=number) for name, number in values.items()])
        self._write(self._event(wall_time=time.time(), step=step, summary=summary))

    def close(self) -> None:
        with self._writing():
            self._file.close()


class Tracker:
    """Mirrors log records to the chosen tracker; a no-op for ``none`` or without a place to write."""

    def __init__(self, args: argparse.Namespace | None, run_name: str, config: dict | None = None):
        """``args=None``: log nothing (a process other than the main one of a distributed run)."""
        self.kind = "none" if args is None else backend(getattr(args, "report_to", None))
        self.writer = None
        if self.kind == "tensorboard" and getattr(args, "tracking_dir", None) is not None:
            self.writer = EventFile(args.tracking_dir)
        elif self.kind == "wandb":
            import wandb

            self.writer = wandb.init(name=run_name, config=config or {}, reinit=True)
        elif self.kind == "mlflow":
            import mlflow

            self.writer = mlflow.start_run(run_name=run_name)
            if config:
                mlflow.log_params({k: str(v)[:250] for k, v in scalars(config).items()})

    def log(self, record: dict, step: int) -> None:
        if self.writer is None:
            return
        values = scalars(record)
        values.pop("step", None)
        if self.kind == "tensorboard":
            self.writer.add_scalars(values, step)
        elif self.kind == "wandb":
            self.writer.log(values, step=step)
        else:
            import mlflow

            mlflow.log_metrics(values, step=step)

    def close(self) -> None:
        writer, self.writer = self.writer, None  # closed once, even where closing fails
        if writer is None:
            return
        if self.kind == "tensorboard":
            writer.close()
        elif self.kind == "wandb":
            writer.finish()
        else:
            import mlflow

            mlflow.end_run()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
