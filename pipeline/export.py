"""Stage ``export``: a trained model directory → a folder ready for the Hugging Face Hub.

Copies the model (weights, tokenizer, sentence-transformers files, ``pretrain_config.json``,
``train_log.jsonl``; never a resume checkpoint) to ``--out`` (default ``export/<repo name>``),
completes it as the pipeline does for every model directory (pooler, module files), and writes
the model card for ``--repo-id`` with the run's evaluation results from ``--metrics`` (metrics
JSONs of the ``evaluate`` stage for this model). The folder is what
``huggingface_hub.upload_folder(repo_id=..., folder_path=...)`` takes; ``--upload`` does that
(it needs network and a token: ``HF_TOKEN`` or ``hf auth login``).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import shutil
from pathlib import Path

from pipeline.errors import InputError
from pipeline.models.card import CARD_METRICS, SETTINGS_FILES
from pipeline.models.directory import AtomicDir, check_output_dir
from pipeline.output_guard import refuse_inputs

log = logging.getLogger("pipeline.export")
SKIPPED = ("checkpoint", ".git")
_REPO_PART = re.compile(r"^[A-Za-z0-9]([\w.-]*[A-Za-z0-9])?$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, type=Path, help="a model directory written by the pipeline")
    parser.add_argument("--repo-id", required=True, help="Hub repository id, e.g. user/ulr-minilm-misad")
    parser.add_argument("--metrics", nargs="*", type=Path, default=[], help="metrics JSONs of this model")
    parser.add_argument("--base-model", help="Hub id of the starting checkpoint, where the run used a local copy")
    parser.add_argument("--out", type=Path, help="folder to write (default export/<repo name>)")
    parser.add_argument("--upload", action="store_true", help="upload the folder with huggingface_hub")


def _json_kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def read_json_object(path: Path, what: str) -> dict:
    """The JSON object in ``path``; anything else (not found, not UTF-8, not JSON, a list) is one line naming it."""
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, f"{what} not found") from None
    except UnicodeDecodeError:
        raise InputError(path, f"{what} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not JSON ({exc.msg})", where=f"line {exc.lineno}") from None
    except (OSError, RecursionError, ValueError) as exc:
        raise InputError(path, f"cannot read the {what}: {type(exc).__name__}") from None
    if not isinstance(value, dict):
        raise InputError(path, f"{what} is {_json_kind(value)}, expected a JSON object")
    return value


def check_metrics(path: Path, record: dict) -> dict:
    """What the model card reads from a metrics JSON of ``evaluate`` (:func:`pipeline.models.card.card_text`):
    ``task`` a name, ``model`` an object with a ``pooling`` name, ``metrics`` an object, and the task's card
    score a finite number. Anything else is one line naming the file and the key."""
    task = record.get("task")
    if task is not None and not isinstance(task, str):
        raise InputError(path, f"'task' is {_json_kind(task)}, expected a task name")
    model = record.get("model", {})
    if not isinstance(model, dict):
        raise InputError(path, f"'model' is {_json_kind(model)}, expected an object (name, pooling)")
    if not isinstance(model.get("pooling", "mean"), str):
        raise InputError(path, f"'model.pooling' is {_json_kind(model['pooling'])}, expected a pooling name")
    scores = record.get("metrics", record)
    if not isinstance(scores, dict):
        raise InputError(path, f"'metrics' is {_json_kind(scores)}, expected an object of scores")
    if task in CARD_METRICS and CARD_METRICS[task][0] in scores:
        key = CARD_METRICS[task][0]
        value = scores[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise InputError(path, f"score {key!r} of task {task!r} is {value!r}, expected a finite number")
    return record


def read_metrics(paths: list[Path]) -> list[dict]:
    return [check_metrics(path, read_json_object(path, "metrics file")) for path in paths]


def check_model_files(model: Path) -> None:
    """The model's ``config.json`` and settings files (``pretrain_config.json``, ...) are JSON objects, checked
    before anything is copied: the card is written from them."""
    if not (model / "config.json").exists():
        raise InputError(model, "not a model directory (no config.json)")
    config = read_json_object(model / "config.json", "model config")
    hidden = config.get("hidden_size")
    if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 1:
        raise InputError(model / "config.json", f"'hidden_size' is {hidden!r}, expected a positive integer")
    for name in SETTINGS_FILES:
        if (model / name).exists():
            settings = read_json_object(model / name, "settings file")
            for key in ("objective", "model", "pooling"):
                if not isinstance(settings.get(key, ""), str | None):
                    raise InputError(model / name, f"{key!r} is {_json_kind(settings[key])}, expected a name")
            provenance = settings.get("provenance", {})
            environment = provenance.get("environment", {}) if isinstance(provenance, dict) else None
            if not isinstance(environment, dict) or not all(
                isinstance(environment.get(key, {}), dict) for key in ("libraries", "hardware")
            ):
                raise InputError(model / name, "'provenance' is not the object a stage writes (environment, libraries)")
            break  # the card reads the first settings file found


def check_repo_id(repo_id: str) -> str:
    """``USER/NAME`` as the Hub spells a repository (letters, digits, ``-``, ``_``, ``.``; neither part
    starting or ending with ``-`` or ``.``, nor holding ``--`` or ``..``): it also names the folder."""
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(_REPO_PART.match(part) and "--" not in part and ".." not in part for part in parts):
        raise InputError(
            "--repo-id",
            f"{repo_id!r} is not a Hub repository id USER/NAME (letters, digits, - _ . inside each part)",
        )
    return repo_id


def export(model: Path, repo_id: str, out: Path, metrics: list[dict], base_model: str | None = None) -> Path:
    check_repo_id(repo_id)
    check_output_dir(out)  # before anything is copied: a folder of other files is never replaced
    check_model_files(Path(model))
    card = {"metrics": metrics, "repo_id": repo_id, "base_model": base_model}
    try:
        with AtomicDir(out, card=card) as tmp:  # completed (card with the metrics included) before the rename
            shutil.copytree(model, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*SKIPPED))
    except (TypeError, AttributeError, KeyError, ValueError) as exc:  # a settings value of another shape
        named = next((model / name for name in SETTINGS_FILES if (model / name).exists()), model / "config.json")
        raise InputError(
            named, f"a value the model card reads has another type or is missing ({exc!s:.80}): nothing exported"
        ) from exc
    return out


def run(args: argparse.Namespace) -> None:
    out = args.out or Path("export") / check_repo_id(args.repo_id).split("/")[-1]
    refuse_inputs(out, None, [str(args.model)], args.metrics)  # never the model it exports, nor its metrics
    export(args.model, args.repo_id, out, read_metrics(args.metrics), args.base_model)
    log.info("%s: ready for huggingface_hub.upload_folder(repo_id=%r, folder_path=%r)", out, args.repo_id, str(out))
    if args.upload:
        from huggingface_hub import HfApi

        api = HfApi()
        api.create_repo(args.repo_id, exist_ok=True)
        api.upload_folder(repo_id=args.repo_id, folder_path=str(out))
        log.info("uploaded to https://huggingface.co/%s", args.repo_id)
