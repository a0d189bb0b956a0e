"""Benchmark of the transfer tasks' Adam logistic regression (paper 004 §3.2, SentEval's PyTorchClassifier with
``nhid=0``): the fits of a grid trained in lockstep (``pipeline/tasks/transfer_adam.py``) against the same
protocols fitting one model after another, in one process on the same machine.

The baseline is ``pipeline/tasks/transfer_classifier.py`` at ``--baseline`` (a git revision; default a138d26,
the last with one ``torch.optim.Adam`` + ``nn.Linear`` fit at a time), loaded from ``git show``. Both run
single-threaded, as ``transfer.evaluate`` runs its fits (``transfer.single_threaded``).

Data: a seeded sample of MR (``--sentences``) from the real SentEval files, as fixed 384-dimensional features
(TF-IDF reduced by SVD, unit length: the size of all-MiniLM-L6-v2's embeddings without encoding anything).
Rows: ``choose_weight_decay`` (4 decays × ``--kfold`` folds, then a refit), ``nested_kfold`` on the first
rows of the sample for each of ``--nested-sentences`` (``--kfold`` outer folds, each such a grid) and
``dev_then_test`` (the sample split 60 / 20 / 20). Each row prints both times, their ratio and whether the
chosen decays and the accuracies agree; the baseline runs only up to ``--baseline-max`` sentences (a nested
10-fold on all of MR took it about 20 minutes), and scikit-learn's path of the same protocol is timed for scale.

Usage (repo root): ``python bench/transfer_adam.py [--data ../shared/data] [--sentences 2000] [--write-md]``
"""

from __future__ import annotations

import argparse
import os
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

from bench.harness import machine, markdown_table, module_at, write_section
from pipeline.tasks import transfer
from pipeline.tasks import transfer_classifier as current
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.transfer_data import load_task


def baseline_module(revision: str, folder: Path) -> types.ModuleType:
    """transfer_classifier.py as it was at ``revision`` (git show), imported from a file of its own."""
    return module_at(revision, "pipeline/tasks/transfer_classifier.py", folder)


def mr_features(data: Path, sentences: int, dim: int = 384) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    mr = load_task(DataRoot(data), "MR")
    pick = np.random.default_rng(0).permutation(len(mr.y))[:sentences]
    tfidf = TfidfVectorizer(min_df=2).fit_transform([mr.left[i] for i in pick])
    x = TruncatedSVD(dim, random_state=0).fit_transform(tfidf)
    return (x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-9)).astype(np.float32), np.asarray(mr.y)[pick]


def protocols(module, x, y, sentences: int, nested: list[int], k: int, classifier: str = "adam"):
    """(name, sentences, fits, call -> (chosen decays, accuracies)) per protocol; choose_weight_decay and
    dev_then_test on the first ``sentences`` rows, nested_kfold on the first of each of ``nested``."""
    split = [int(0.6 * sentences), int(0.8 * sentences)]
    train, dev, test = np.split(np.arange(sentences), split)

    def choose():
        if classifier == "sklearn":
            model, decay, score = module.choose_c(x[:sentences], y[:sentences], k, 0)
            return [decay], [score, score]
        model, decay, score = module.choose_weight_decay(x[:sentences], y[:sentences], k, 0)
        return [decay], [score, model.best]

    def nested_at(rows: int):
        result = module.nested_kfold(x[:rows], y[:rows], k, 0, classifier)
        return result.C, [result.devacc, result.acc]

    def split_fit():
        result = module.dev_then_test(x[train], y[train], x[dev], y[dev], x[test], y[test], 0, classifier)
        return [result.C], [result.devacc, result.acc]

    fits = len(current.WEIGHT_DECAY)
    yield f"choose_weight_decay ({k}-fold)", sentences, fits * k + 1, choose
    for rows in nested:
        yield f"nested_kfold ({k} × {k}-fold)", rows, k * (fits * k + 1), lambda rows=rows: nested_at(rows)
    yield "dev_then_test (60 / 20 / 20)", sentences, fits, split_fit


def timed(call) -> tuple[float, tuple]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--nested-sentences", default="400", help="comma-separated sizes, one nested_kfold row each")
    parser.add_argument("--baseline-max", type=int, default=2000, help="largest sample the baseline runs on")
    parser.add_argument("--kfold", type=int, default=10)
    parser.add_argument("--baseline", default="a138d26")
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args()
    nested = [int(size) for size in args.nested_sentences.split(",")]
    x, y = mr_features(args.data, max(args.sentences, *nested))
    with tempfile.TemporaryDirectory() as folder:
        baseline = baseline_module(args.baseline, Path(folder))
    rows, load_before = [], os.getloadavg()[0]
    cases = (protocols(module, x, y, args.sentences, nested, args.kfold) for module in (current, baseline))
    references = protocols(current, x, y, args.sentences, nested, args.kfold, "sklearn")
    with transfer.single_threaded():
        for module in (current, baseline):  # first calls import and allocate: outside the timings
            module.AdamLogisticRegression(1e-3, 0, module.AdamSettings(max_epoch=4)).fit(x[:100], y[:100])
        for (name, n, fits, now), (_, _, _, before), (_, _, _, sklearn) in zip(*cases, references):
            seconds, (decays, scores) = timed(now)
            sklearn_seconds, _ = timed(sklearn)
            cells = [name, f"{n:,}", f"{fits:,}"]
            if n <= args.baseline_max:
                old_seconds, (old_decays, old_scores) = timed(before)
                same = sum(a == b for a, b in zip(decays, old_decays))
                gap = max(abs(a - b) for a, b in zip(scores, old_scores))
                cells += [f"{old_seconds:,.1f}", f"{seconds:,.2f}", f"{old_seconds / seconds:,.1f}x"]
                cells += [f"{same} / {len(decays)}", " / ".join(f"{a:.2f}" for a in old_scores)]
            else:
                cells += ["not run", f"{seconds:,.2f}", "-", "-", "-"]
                gap = None
            cells += [" / ".join(f"{a:.2f}" for a in scores), "-" if gap is None else f"{gap:.2f}"]
            cells.append(f"{sklearn_seconds:,.2f}")
            rows.append(cells)
            print(" | ".join(cells), flush=True)
    head = ["protocol", "sentences", "fits", "before (s)", "lockstep (s)", "ratio", "same decays"]
    head += ["before: dev / test", "lockstep: dev / test", "largest gap", "scikit-learn (s)"]
    table = markdown_table(head, rows)
    load = (
        f"1-minute load average before / after: {load_before:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    text = f"{table}\n\n- {load}"
    print(text)
    if args.write_md:
        header = (
            f"## transfer: Adam fits in lockstep\n\nRun {time.strftime('%Y-%m-%d')} on {machine(sys.executable)}; "
            f"torch {torch.__version__}, one thread (as transfer.evaluate fits). A seeded MR sample as fixed "
            "384-dimensional features (TF-IDF, SVD); before: "
            f"{args.baseline}'s transfer_classifier.py (one torch.optim.Adam fit at a time), run up to "
            f"{args.baseline_max:,} sentences. choose_weight_decay's scores are the chosen decay's mean fold "
            "accuracy and the refit's validation accuracy; scikit-learn: the same protocol with "
            '`classifier="sklearn"`, for scale.\n\n'
            f"Command (from the repo root): `python bench/transfer_adam.py --sentences {args.sentences} "
            f"--nested-sentences {args.nested_sentences} --write-md`\n\n"
        )
        write_section("transfer: Adam fits in lockstep", header + text + "\n")


if __name__ == "__main__":
    main()
