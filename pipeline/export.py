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
import shutil
from pathlib import Path

from pipeline.errors import InputError
from pipeline.models.card import write_card
from pipeline.models.directory import AtomicDir, complete_model_dir

log = logging.getLogger("pipeline.export")
SKIPPED = ("checkpoint", ".git")


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


def export(model: Path, repo_id: str, out: Path, metrics: list[dict], base_model: str | None = None) -> Path:
    if not (model / "config.json").exists():
        raise InputError(model, "not a model directory (no config.json)")
    with AtomicDir(out) as tmp:
        shutil.copytree(model, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*SKIPPED))
        complete_model_dir(tmp, final=out)  # directories written before model cards existed
    write_card(out, metrics, repo_id=repo_id, base_model=base_model)
    return out


def run(args: argparse.Namespace) -> None:
    out = args.out or Path("export") / args.repo_id.split("/")[-1]
    export(args.model, args.repo_id, out, read_metrics(args.metrics), args.base_model)
    log.info("%s: ready for huggingface_hub.upload_folder(repo_id=%r, folder_path=%r)", out, args.repo_id, str(out))
    if args.upload:
        from huggingface_hub import HfApi

        api = HfApi()
        api.create_repo(args.repo_id, exist_ok=True)
        api.upload_folder(repo_id=args.repo_id, folder_path=str(out))
        log.info("uploaded to https://huggingface.co/%s", args.repo_id)
