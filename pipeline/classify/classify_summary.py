"""Stage ``classify-summary``: every ``classify`` run of one model → one GLUE (or CLUE) metrics JSON.

Runs of the same task with the same setting (batch size, learning rate, epochs, length; one
directory per seed, or one with several seeds) are pooled by seed; the setting with the best dev
mean of the task's main metric is kept, as the papers choose on dev (ULR-BERT §5.1.2: "batch sizes
in {8, 16, 32, 64}"; BURT Table V's CLUE grid: :mod:`pipeline.classify.hyperparameters`), and its
per-seed spread (mean, std, max, min; ULR-BERT Table 6) is what the tables print. The average is
the papers' "Avg.": the mean of the table's columns (MNLI counted as matched and mismatched),
here over the tasks that were run (``avg.columns`` says which), with its spread over seeds
(``avg.per_seed``: each seed's average; ``avg.std`` their sample std), so that the scoreboard can
test a difference of averages across seeds. ``--geogranno`` copies a model's
GEOGRANNO Top-1/5/10 (an ``evaluate`` metrics JSON) beside the GLUE dev average, as ULR-BERT
Table 8 prints them.

Output (the ``tables`` stage reads it): ``task`` (glue / clue), ``model`` {name, path, kind,
pooling}, ``tasks`` {task: {metric, setting, batch_size, seeds, dev, dev_mm?, test?, search, per_seed}}
(``setting``: the chosen grid point; ``search``: every setting's label -> its dev mean),
``avg`` {mean, std, per_seed, columns}, ``geogranno``, ``provenance``, and ``notes`` where a run used a
substitute for a benchmark's own release (``classify --allow-substitutes``), which the tables
print under the model's row.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pipeline import provenance
from pipeline.atomic import write_json
from pipeline.classify import tasks
from pipeline.classify.hyperparameters import GRID_KEYS, setting_label
from pipeline.classify.metrics import spread
from pipeline.errors import InputError, reading
from pipeline.output_guard import refuse_read_files

SETS = ("dev", "dev_mm", "test")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", nargs="+", required=True, type=Path, help="classify output directories")
    parser.add_argument("--benchmark", required=True, choices=("glue", "clue"))
    parser.add_argument("--name", required=True, help="the model's row name in the tables")
    parser.add_argument(
        "--geogranno",
        nargs="*",
        default=[],
        type=Path,
        help="the model's GEOGRANNO metrics JSON (ULR-BERT Table 8); none: no GEOGRANNO cells",
    )
    parser.add_argument("--out", required=True, type=Path)


def _load(directory: Path) -> dict:
    path = directory / "metrics.json" if directory.is_dir() else directory
    if not path.is_file():
        raise InputError(path, "classify metrics not found")
    data = _json(path)
    for key in ("task", "per_seed", "settings", "model", "metric"):
        if key not in data:
            raise InputError(path, f"missing key {key!r}")
    data["_path"] = str(path)
    return data


def pooled(runs: list[dict]) -> dict:
    """Per-seed metrics of runs that share task and setting, merged by seed, with their spread."""
    per_seed: dict[str, dict] = {}
    for run in runs:
        for seed, result in run["per_seed"].items():
            if seed in per_seed:
                raise InputError(
                    run["_path"],
                    f"seed {seed} of {run['task']} at {setting_label(**setting_of(run))} is already in another run",
                )
            per_seed[seed] = result
    summary = {"seeds": sorted(int(s) for s in per_seed)}
    for set_name in SETS:
        results = [r.get(set_name) for r in per_seed.values()]
        if results and all(results):
            summary[set_name] = {metric: spread([r[metric] for r in results]) for metric in results[0]}
    summary["_per_seed"] = per_seed
    return summary


def setting_of(run: dict) -> dict:
    """The grid point a run was trained at (its metrics' ``settings``), typed for comparison."""
    try:
        settings = run["settings"]
        return {
            "batch_size": int(settings["batch_size"]),
            "lr": float(settings["lr"]),
            "epochs": float(settings["epochs"]),
            "max_length": int(settings["max_length"]),
        }
    except (KeyError, TypeError, ValueError):
        raise InputError(run["_path"], f"settings need numbers for {', '.join(GRID_KEYS)}") from None


def summarise_task(runs: list[dict]) -> dict:
    metric = runs[0]["metric"]
    by_setting: dict[str, list[dict]] = {}
    settings: dict[str, dict] = {}
    for run in runs:
        setting = setting_of(run)
        label = setting_label(**setting)
        settings[label] = setting
        by_setting.setdefault(label, []).append(run)
    order = sorted(by_setting, key=lambda label: tuple(settings[label].values()))
    candidates = {label: pooled(by_setting[label]) for label in order}
    # the best dev mean; a tie goes to the first setting in grid order (smallest batch, lr, ...)
    best = max(order, key=lambda label: (candidates[label]["dev"][metric]["mean"], -order.index(label)))
    chosen = {key: value for key, value in candidates[best].items() if key != "_per_seed"}
    # the main metric seed by seed, so that the average over tasks has a spread over seeds too
    per_seed = {
        str(seed): {set_name: result[set_name][metric] for set_name in SETS if result.get(set_name)}
        for seed, result in sorted(candidates[best]["_per_seed"].items(), key=lambda item: int(item[0]))
    }
    return {
        "metric": metric,
        "setting": settings[best],
        "batch_size": settings[best]["batch_size"],
        **chosen,
        "per_seed": per_seed,
        "search": {label: candidates[label]["dev"][metric]["mean"] for label in order},
        "runs": [run["_path"] for run in by_setting[best]],
    }


def table_columns(summary: dict) -> dict[str, float]:
    """The paper's columns (task, or MNLI m / mm) → dev mean of the main metric."""
    columns = {}
    for name, result in summary.items():
        columns[name if name != "mnli" else "mnli_m"] = result["dev"][result["metric"]]["mean"]
        if name == "mnli" and "dev_mm" in result:
            columns["mnli_mm"] = result["dev_mm"][result["metric"]]["mean"]
    return columns


def seed_average(summary: dict) -> dict:
    """The average over the table's columns, seed by seed, and its mean and sample std over seeds.

    ULR-BERT Tables 3 and 5 and BURT Tables V and VI print one average per model; our seeds give one average
    each (the mean of that seed's column scores), so a comparison of averages can be tested across seeds.
    Only seeds that every column ran count (none in common: the std is null; one seed: 0, as each column's). ``mean`` stays the mean of
    the columns' means (the tables' Avg.), equal to the mean of the per-seed averages when every column ran
    the same seeds.
    """
    by_column: dict[str, dict[str, float]] = {}
    for name, result in summary.items():
        for seed, sets in result["per_seed"].items():
            by_column.setdefault(name if name != "mnli" else "mnli_m", {})[seed] = sets["dev"]
            if name == "mnli" and "dev_mm" in sets:
                by_column.setdefault("mnli_mm", {})[seed] = sets["dev_mm"]
    common = set.intersection(*(set(values) for values in by_column.values())) if by_column else set()
    per_seed = {
        seed: sum(values[seed] for values in by_column.values()) / len(by_column) for seed in sorted(common, key=int)
    }
    columns = table_columns(summary)
    averages = list(per_seed.values())
    std = spread(averages)["std"] if averages else None  # 0 for one seed, as the columns' std
    return {
        "mean": sum(columns.values()) / len(columns),
        "std": std,
        "per_seed": per_seed,
        "columns": list(columns),
    }


def geogranno_top_k(path: Path) -> dict:
    data = _json(path)
    split = data.get("splits", {}).get("all") or next(iter(data.get("splits", {}).values()), None)
    if not split:
        raise InputError(path, "no GEOGRANNO split in the metrics")
    return {f"top{k}": split.get(f"top{k}") for k in (1, 5, 10)}


def _json(path: Path) -> dict:
    """A metrics JSON object; one :class:`InputError` naming ``path`` for anything else (docs/behaviour.md)."""
    with reading(path):  # missing, unreadable, not UTF-8
        text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except RecursionError:
        raise InputError(path, "not usable metrics: JSON nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError, and ints beyond Python's digit limit
        raise InputError(path, f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object, found {type(data).__name__}")
    return data


def run(args: argparse.Namespace) -> None:
    runs = [_load(directory) for directory in args.runs]
    by_task: dict[str, list[dict]] = {}
    for item in runs:
        task = tasks.get(item["task"])
        if task.benchmark != args.benchmark:
            raise InputError(item["_path"], f"task {task.name} is not a {args.benchmark.upper()} task")
        by_task.setdefault(task.name, []).append(item)
    order = [name for name in tasks.TASKS if name in by_task]
    summary = {name: summarise_task(by_task[name]) for name in order}
    kept = {path for result in summary.values() for path in result["runs"]}  # the chosen settings' runs
    substitutes = {
        (tasks.get(run["task"]).title, split, file)
        for run in runs
        if run["_path"] in kept
        for split, file in run.get("substitutes", {}).items()
    }
    record = {
        "task": args.benchmark,
        "model": {"name": args.name, "path": runs[0]["model"]["path"], "kind": "classifier", "pooling": None},
        "tasks": summary,
        "avg": seed_average(summary),
        "geogranno": geogranno_top_k(args.geogranno[0]) if args.geogranno else None,
        "provenance": {
            **provenance.make(
                "classify-summary",
                {"name": args.name, "benchmark": args.benchmark},
                inputs=[provenance.file_fingerprint(r["_path"]) for r in runs],
            ),
            "checkpoint": runs[0].get("provenance", {}).get("checkpoint"),
            "seed": sorted({s for r in summary.values() for s in r["seeds"]}),
        },
    }
    if substitutes:  # the tables print these under the row (docs/stages/classify.md)
        record["notes"] = [
            f"{title} {split} from {file}, a substitute for the benchmark's own release"
            for title, split, file in sorted(substitutes)
        ]
    # never over a run's metrics.json or the GEOGRANNO metrics it summarises
    refuse_read_files([args.out], [r["_path"] for r in runs] + list(args.geogranno), "classify-summary")
    write_json(args.out, record)
