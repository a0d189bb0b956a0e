"""Benchmark of the transfer tasks' Adam logistic regression (paper 004 §3.2, SentEval's PyTorchClassifier with
``nhid=0``): the fits of a grid trained in lockstep (``pipeline/tasks/transfer_adam.py``) against the same
protocols fitting one model after another, in one process on the same machine.

The baseline is ``pipeline/tasks/transfer_classifier.py`` at ``--baseline`` (a git revision; default a138d26,
the last with one ``torch.optim.Adam`` + ``nn.Linear`` fit at a time), loaded from ``git show``. Both run
single-threaded, as ``transfer.evaluate`` runs its fits (``transfer.single_threaded``).

Data: a seeded sample of MR (``--sentences``) from the real SentEval files, as fixed 384-dimensional features
(TF-IDF reduced by SVD, unit length: the size of all-MiniLM-L6-v2's embeddings without encoding anything).
Rows: ``choose_weight_decay`` (4 decays × ``--kfold`` folds, then a refit), ``nested_kfold`` on the first
``--nested-sentences`` of the sample (``--kfold`` outer folds, each such a grid) and ``dev_then_test`` (the
sample split 60 / 20 / 20). Each row prints both times, their ratio and whether the chosen decays and the
accuracies agree.

Usage (repo root): ``python bench/transfer_adam.py [--data ../shared/data] [--sentences 2000] [--write-md]``
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as pipeline/__init__.py sets it for the stages

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness import machine, markdown_table, write_section
from pipeline.tasks import transfer
from pipeline.tasks import transfer_classifier as current
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.transfer_data import load_task


def baseline_module(revision: str, folder: Path) -> types.ModuleType:
    """transfer_classifier.py as it was at ``revision`` (git show), imported from a file of its own."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{revision}:pipeline/tasks/transfer_classifier.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = folder / "transfer_classifier_baseline.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("transfer_classifier_baseline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def mr_features(data: Path, sentences: int, dim: int = 384) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    mr = load_task(DataRoot(data), "MR")
    pick = np.random.default_rng(0).permutation(len(mr.y))[:sentences]
    tfidf = TfidfVectorizer(min_df=2).fit_transform([mr.left[i] for i in pick])
    x = TruncatedSVD(dim, random_state=0).fit_transform(tfidf)
    return (x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-9)).astype(np.float32), np.asarray(mr.y)[pick]


def protocols(module, x, y, nested_rows: int, k: int):
    """(name, sentences, fits, call -> (chosen decays, accuracies)) per protocol."""
    nx, ny = x[:nested_rows], y[:nested_rows]
    split = [int(0.6 * len(y)), int(0.8 * len(y))]
    train, dev, test = np.split(np.arange(len(y)), split)

    def choose():
        model, decay, score = module.choose_weight_decay(x, y, k, 0)
        return [decay], [score, model.best]

    def nested():
        result = module.nested_kfold(nx, ny, k, 0, "adam")
        return result.C, [result.devacc, result.acc]

    def split_fit():
        result = module.dev_then_test(x[train], y[train], x[dev], y[dev], x[test], y[test], 0, "adam")
        return [result.C], [result.devacc, result.acc]

    fits = len(current.WEIGHT_DECAY)
    yield f"choose_weight_decay ({k}-fold)", len(y), fits * k + 1, choose
    yield f"nested_kfold ({k} × {k}-fold)", nested_rows, k * (fits * k + 1), nested
    yield "dev_then_test (60 / 20 / 20)", len(y), fits, split_fit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--nested-sentences", type=int, default=400)
    parser.add_argument("--kfold", type=int, default=10)
    parser.add_argument("--baseline", default="a138d26")
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args()
    x, y = mr_features(args.data, args.sentences)
    with tempfile.TemporaryDirectory() as folder:
        baseline = baseline_module(args.baseline, Path(folder))
    rows, load_before = [], os.getloadavg()[0]
    with transfer.single_threaded():
        for (name, n, fits, now), (_, _, _, before) in zip(
            protocols(current, x, y, args.nested_sentences, args.kfold),
            protocols(baseline, x, y, args.nested_sentences, args.kfold),
        ):
            started = time.perf_counter()
            old_decays, old_scores = before()
            old_seconds = time.perf_counter() - started
            started = time.perf_counter()
            decays, scores = now()
            seconds = time.perf_counter() - started
            same = sum(a == b for a, b in zip(decays, old_decays))
            gap = max(abs(a - b) for a, b in zip(scores, old_scores))
            rows.append(
                [
                    name,
                    f"{n:,}",
                    f"{fits:,}",
                    f"{old_seconds:,.1f}",
                    f"{seconds:,.2f}",
                    f"{old_seconds / seconds:,.1f}x",
                    f"{same} / {len(decays)}",
                    " / ".join(f"{a:.2f}" for a in old_scores),
                    " / ".join(f"{a:.2f}" for a in scores),
                    f"{gap:.2f}",
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
    head = ["protocol", "sentences", "fits", "before (s)", "lockstep (s)", "ratio", "same decays"]
    head += ["before: dev / test", "lockstep: dev / test", "largest gap"]
    table = markdown_table(head, rows)
    load = (
        f"1-minute load average before / after: {load_before:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    text = f"{table}\n\n- {load}"
    print(text)
    if args.write_md:
        header = (
            f"## transfer: Adam fits in lockstep\n\nRun {time.strftime('%Y-%m-%d')} on {machine(sys.executable)}; "
            f"torch {torch.__version__}, one thread (as transfer.evaluate fits). MR sample of {args.sentences:,} "
            f"sentences as fixed 384-dimensional features (TF-IDF, SVD); baseline {args.baseline}'s "
            "transfer_classifier.py (one torch.optim.Adam fit at a time). choose_weight_decay's scores are "
            "its chosen decay's mean fold accuracy and the refit's validation accuracy.\n\n"
            f"Command (from the repo root): `python bench/transfer_adam.py --sentences {args.sentences} "
            f"--nested-sentences {args.nested_sentences} --write-md`\n\n"
        )
        write_section("transfer: Adam fits in lockstep", header + text + "\n")


if __name__ == "__main__":
    main()
