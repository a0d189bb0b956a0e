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
import re
import shutil
from pathlib import Path

from pipeline.errors import InputError
from pipeline.models.directory import AtomicDir, check_output_dir

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


def read_metrics(paths: list[Path]) -> list[dict]:
    records = []
    for path in paths:
        try:
            records.append(json.loads(Path(path).read_text()))
        except FileNotFoundError:
            raise InputError(path, "metrics file not found") from None
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON ({exc.msg})", where=f"line {exc.lineno}") from None
    return records


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
    if not (model / "config.json").exists():
        raise InputError(model, "not a model directory (no config.json)")
    card = {"metrics": metrics, "repo_id": repo_id, "base_model": base_model}
    with AtomicDir(out, card=card) as tmp:  # completed (card with the metrics included) before the rename
        shutil.copytree(model, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*SKIPPED))
    return out


def run(args: argparse.Namespace) -> None:
    out = args.out or Path("export") / check_repo_id(args.repo_id).split("/")[-1]
    export(args.model, args.repo_id, out, read_metrics(args.metrics), args.base_model)
    log.info("%s: ready for huggingface_hub.upload_folder(repo_id=%r, folder_path=%r)", out, args.repo_id, str(out))
    if args.upload:
        from huggingface_hub import HfApi

        api = HfApi()
        api.create_repo(args.repo_id, exist_ok=True)
        api.upload_folder(repo_id=args.repo_id, folder_path=str(out))
        log.info("uploaded to https://huggingface.co/%s", args.repo_id)
