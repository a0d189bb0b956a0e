"""Stage ``training-curves``: a model's ``train_log.jsonl`` → one PNG of its training curves.

The log has one line per optimizer step (docs/method.md §3): every loss term (``loss`` and its
parts, e.g. ``mlm`` + ``misad``, or ``mlm`` + ``nsp``), the learning rate, tokens and tokens/s,
and whatever else the training stage records (masking statistics, for instance). The figure
has one panel per kind: the loss terms (each on its own axis scale, since MiSAD's MSE is orders
of magnitude below the MLM loss), the learning rate, the throughput, the held-out accuracies in one
panel (``pretrain --heldout``: masked-token and whole-n-gram accuracy on sentences never trained
on, pipeline/pretrain/heldout.py), and every other numeric series.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError
from pipeline.output_guard import refuse_inputs

log = logging.getLogger("pipeline.training_curves")
NOT_SERIES = ("step", "epoch", "tokens", "heldout_ngrams")
HELDOUT_ACCURACIES = ("heldout_token_acc", "heldout_ngram_acc", "heldout_ngram_token_acc")
LOSS_TERMS = ("loss", "mlm", "misad", "nsp", "sop")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log", required=True, type=Path, help="train_log.jsonl of a model directory")
    parser.add_argument("--title", help="figure title (default: the model directory's name)")
    parser.add_argument("--out", required=True, type=Path, help="PNG to write")


def read_log(path: Path) -> list[dict]:
    entries = []
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        raise InputError(path, "training log not found") from None
    for number, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON ({exc.msg})", where=f"line {number}") from None
        if not isinstance(entry, dict) or "step" not in entry:
            raise InputError(path, "an entry without a step", where=f"line {number}")
        entries.append(entry)
    if not entries:
        raise InputError(path, "the training log is empty")
    return entries


def series(entries: list[dict]) -> dict[str, list[tuple[int, float]]]:
    """name → (step, value) for every numeric field except the step counters."""
    found: dict[str, list[tuple[int, float]]] = {}
    for entry in entries:
        for key, value in entry.items():
            if key not in NOT_SERIES and isinstance(value, int | float) and not isinstance(value, bool):
                found.setdefault(key, []).append((entry["step"], float(value)))
    return found


def panels(found: dict[str, list]) -> list[tuple[str, list[str]]]:
    losses = [k for k in found if k in LOSS_TERMS or k.endswith("loss")]
    held = [k for k in HELDOUT_ACCURACIES if k in found]
    rest = [k for k in found if k not in losses and k not in ("lr", "tokens_per_s", *held)]
    terms = [k for k in losses if k != "loss"]
    if len(terms) == 1 and "loss" in losses:  # the total is that one term: plot it once
        losses = terms
    chosen = [("total loss" if term == "loss" else f"{term} loss", [term]) for term in losses]
    chosen += [("learning rate", ["lr"])] if "lr" in found else []
    chosen += [("tokens/s", ["tokens_per_s"])] if "tokens_per_s" in found else []
    chosen += [("held-out accuracy", held)] if held else []
    chosen += [(name, [name]) for name in rest]
    return chosen


def plot(entries: list[dict], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = series(entries)
    layout = panels(found)
    columns = min(3, len(layout))
    rows = -(-len(layout) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.8 * rows), squeeze=False)
    for axis, (name, keys) in zip(axes.flat, layout):
        for key in keys:
            steps, values = zip(*found[key])
            axis.plot(steps, values, marker="." if len(steps) < 30 else None, label=key.removeprefix("heldout_"))
        if len(keys) > 1:
            axis.legend(fontsize="small")
        axis.set_title(name)
        axis.set_xlabel("step")
        axis.ticklabel_format(axis="y", style="sci", scilimits=(-3, 4))
    for axis in list(axes.flat)[len(layout) :]:
        axis.axis("off")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=100, metadata={"Software": None})
    plt.close(figure)


def run(args: argparse.Namespace) -> None:
    refuse_inputs(args.out, files=[args.log])  # the PNG never over the training log it plots
    entries = read_log(args.log)
    with AtomicFiles() as files:
        plot(entries, args.title or Path(args.log).parent.name, files.temp(args.out))
    log.info("%s: %d steps, series %s", args.out, len(entries), ", ".join(series(entries)))
