"""Does the BiLSTM encoder of paper 004 learn? SNLI test accuracy with word vectors that cover the NLI words.

The word vectors are built through the stages' own commands: the real English Wikipedia sample
(extract → clean, as ``testdata.build_token_sample`` starts) and ``word2vec`` on its sentences alone
(the sample config's old vectors) or with ``--nli`` adding the premises and hypotheses of the training
pairs. Their out-of-vocabulary rates on SNLI dev / test and MultiNLI dev matched / mismatched are
measured as the encoder looks words up (``pipeline.models.word_vectors.coverage``). The ``bilstm``
stage then trains each pooling (default ``max`` and ``bf-combined``, paper 004 eqs. 1 and 3) on SNLI
dev + MultiNLI dev matched + mismatched (29,489 labelled pairs; 5% held out as the dev set that
drives the rate schedule) and scores SNLI test (9,824 pairs). The baseline is a bag of the same
vectors: the mean of a sentence's word vectors, the pair features ``[u; v; |u−v|; u*v]`` of paper
004 §2.2 and a logistic regression (C picked on the same held-out dev pairs). Chance is 33.3.

Data (``--data``, read in place, nothing is copied): ``wiki/en/enwiki-latest-pages-articles1…bz2``,
``nli/snli_dev_test_csv/snli_1.0_{dev,test}.csv``, ``nli/mnli_dev/multinli_1.0_dev_{matched,mismatched}.csv``.

Usage (repo root; 2 CPU cores → set ``OMP_NUM_THREADS=1 MKL_NUM_THREADS=1``):
``python bench/learning_bilstm.py [--data ../shared/data] [--hidden 128] [--epochs 10] [--lr 1.0]
[--bilstm-vectors wiki wiki+nli] [--write-md PATH]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from testdata import EN_SAMPLE

from pipeline.bilstm import nli_data
from pipeline.bilstm.bilstm import split_dev
from pipeline.bilstm.nli_model import pair_features
from pipeline.cli import main as cli
from pipeline.models import word_vectors

SNLI = "nli/snli_dev_test_csv/snli_1.0_{}.csv"
MNLI = "nli/mnli_dev/multinli_1.0_dev_{}.csv"
OOV_SETS = {
    "SNLI dev": SNLI.format("dev"),
    "SNLI test": SNLI.format("test"),
    "MNLI dev m": MNLI.format("matched"),
    "MNLI dev mm": MNLI.format("mismatched"),
}


def stage(*argv) -> float:
    """Run ``python -m pipeline ARGV`` in-process; its wall time in seconds."""
    started = time.perf_counter()
    if cli([str(a) for a in argv]) != 0:
        raise RuntimeError(f"python -m pipeline {' '.join(map(str, argv))} failed")
    return time.perf_counter() - started


def build_vectors(data: Path, work: Path, args) -> tuple[dict[str, Path], dict[str, float]]:
    """extract → clean → word2vec (wiki only, and wiki + the training pairs' sentences)."""
    seconds = {
        "extract": stage("extract", "--dump", data / EN_SAMPLE, "--lang", "en", "--out", work / "docs"),
        "clean": stage(
            "clean", "--input", work / "docs" / "shard-000.parquet", "--lang", "en", "--out", work / "sentences"
        ),
    }
    common = ["word2vec", "--sentences", work / "sentences", "--lang", "en", "--dim", args.dim]
    common += ["--min-count", args.min_count, "--epochs", args.w2v_epochs]
    paths = {"wiki": work / "wiki.bin", "wiki+nli": work / "wiki-nli.bin"}
    seconds["word2vec wiki"] = stage(*common, "--out", paths["wiki"])
    seconds["word2vec wiki+nli"] = stage(*common, "--nli", *train_files(data), "--out", paths["wiki+nli"])
    return paths, seconds


def train_files(data: Path) -> list[Path]:
    return [data / SNLI.format("dev"), data / MNLI.format("matched"), data / MNLI.format("mismatched")]


def oov_rates(data: Path, vectors: dict[str, word_vectors.WordVectors]) -> dict[str, dict[str, dict]]:
    rates = {}
    for name, path in OOV_SETS.items():
        pairs = nli_data.read(data / path)
        texts = pairs.premises + pairs.hypotheses
        rates[name] = {label: word_vectors.coverage(vecs, texts) for label, vecs in vectors.items()}
    return rates


def train_bilstm(pooling: str, label: str, vectors: Path, data: Path, work: Path, args) -> dict:
    name = f"bilstm-{pooling}-{label.replace('+', '-')}"
    out, metrics = work / name, work / f"{name}.json"
    argv = ["bilstm", "--train", *train_files(data), "--test", data / SNLI.format("test"), "--vectors", vectors]
    argv += ["--pooling", pooling, "--hidden", args.hidden, "--epochs", args.epochs, "--lr", args.lr]
    argv += ["--batch-size", args.batch_size, "--seed", args.seed, "--out", out, "--metrics", metrics]
    seconds = stage(*argv)
    result = json.loads(metrics.read_text())
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    return {
        "model": f"BiLSTM-{pooling} {result['dim']} ({label})",
        "dev": result["dev"],
        "test": result["test"],
        "parameters": result["parameters"],
        "epochs": len(log),
        "seconds": seconds,
    }


def mean_vectors(texts: list[str], vectors: word_vectors.WordVectors) -> np.ndarray:
    out = np.zeros((len(texts), vectors.dim), dtype=np.float32)
    for row, text in enumerate(texts):
        ids = vectors.ids(text)
        if ids:
            out[row] = vectors.vectors[ids].mean(axis=0)
    return out


def bag_features(pairs, vectors: word_vectors.WordVectors) -> np.ndarray:
    import torch

    u = torch.from_numpy(mean_vectors(pairs.premises, vectors))
    v = torch.from_numpy(mean_vectors(pairs.hypotheses, vectors))
    return pair_features(u, v).numpy()


def bag_baseline(vectors: word_vectors.WordVectors, label: str, data: Path, args) -> dict:
    """Mean word vectors, [u; v; |u−v|; u*v], logistic regression with C chosen on the held-out dev pairs."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    started = time.perf_counter()
    train, dev = split_dev(nli_data.read_all(train_files(data)), 0.05, args.seed)  # the bilstm stage's split
    test = nli_data.read(data / SNLI.format("test"))
    scaler = StandardScaler().fit(bag_features(train, vectors))
    x_train, x_dev, x_test = (scaler.transform(bag_features(p, vectors)) for p in (train, dev, test))
    best = None
    for c in (0.01, 0.1, 1.0, 10.0):
        model = LogisticRegression(C=c, max_iter=2000).fit(x_train, train.labels)
        dev_acc = 100.0 * model.score(x_dev, dev.labels)
        if best is None or dev_acc > best[0]:
            best = (dev_acc, c, model)
    dev_acc, c, model = best
    return {
        "model": f"bag of vectors ({label}), logistic regression C={c:g}",
        "dev": dev_acc,
        "test": 100.0 * model.score(x_test, test.labels),
        "parameters": model.coef_.size + model.intercept_.size,
        "epochs": None,
        "seconds": time.perf_counter() - started,
    }


def markdown(oov: dict, results: list[dict], seconds: dict, vocab: dict, args) -> str:
    lines = [
        (
            f"`python bench/learning_bilstm.py --hidden {args.hidden} --epochs {args.epochs} --lr {args.lr}`: "
            f"word2vec {args.dim}-d (skip-gram, min count {args.min_count}, {args.w2v_epochs} epochs) on the "
            "English Wikipedia sample (106 articles), alone or with `--nli` (the training pairs' sentences); "
            "BiLSTMs trained on SNLI dev + MultiNLI dev m/mm (5% held out as dev), SGD with the paper's schedule "
            f"at lr {args.lr}, batch {args.batch_size}; 1 CPU thread."
        ),
        "",
        "Out-of-vocabulary rates (tokens / types, %) as the encoder looks words up:",
        "",
        "| vectors | words | " + " | ".join(OOV_SETS) + " |",
        "|---|---:|" + "---:|" * len(OOV_SETS),
    ]
    for label, size in vocab.items():
        cells = [
            f"{oov[name][label]['oov_token_rate']:.1f} / {oov[name][label]['oov_type_rate']:.1f}" for name in OOV_SETS
        ]
        lines.append(f"| {label} | {size:,} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "SNLI accuracy (chance 33.3):",
        "",
        "| model | held-out dev | SNLI test | parameters | epochs | wall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        epochs = "" if result["epochs"] is None else result["epochs"]
        lines.append(
            f"| {result['model']} | {result['dev']:.1f} | {result['test']:.1f} | {result['parameters']:,} | "
            f"{epochs} | {result['seconds'] / 60:.1f} min |"
        )
    built = ", ".join(f"{name} {value:.0f} s" for name, value in seconds.items())
    return "\n".join(lines) + f"\n\nVectors built in: {built}.\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--poolings", nargs="+", default=["max", "bf-combined"])
    parser.add_argument(
        "--bilstm-vectors",
        nargs="+",
        choices=["wiki", "wiki+nli"],
        default=["wiki+nli"],
        help="the vectors each pooling is trained with (default wiki+nli)",
    )
    parser.add_argument("--hidden", type=int, default=128, help="LSTM units per direction")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dim", type=int, default=100, help="word2vec dimensions")
    parser.add_argument("--min-count", type=int, default=2)
    parser.add_argument("--w2v-epochs", type=int, default=5)
    parser.add_argument("--work", type=Path, help="keep the built files here (default: a temporary folder)")
    parser.add_argument("--write-md", type=Path, help="also write the markdown tables to this file")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        paths, seconds = build_vectors(args.data, work, args)
        vectors = {label: word_vectors.load(path) for label, path in paths.items()}
        oov = oov_rates(args.data, vectors)
        results = [bag_baseline(vecs, label, args.data, args) for label, vecs in vectors.items()]
        for label in args.bilstm_vectors:
            for pooling in args.poolings:
                results.append(train_bilstm(pooling, label, paths[label], args.data, work, args))
                print(json.dumps(results[-1]), flush=True)
    text = markdown(oov, results, seconds, {label: len(vecs.words) for label, vecs in vectors.items()}, args)
    print(text)
    if args.write_md:
        args.write_md.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
