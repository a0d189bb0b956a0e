"""Stage ``bilstm``: train a BiLSTM sentence encoder on NLI pairs (paper 004; docs/method.md §4).

One BiLSTM over frozen word vectors (``--vectors``: word2vec binary ``.bin``, word2vec text,
GloVe text or a zip of one; the vectors of every word of the NLI files, read from the whole file as
InferSent did, and the file's ``--frequent-words`` first words) with one pooling (``max``,
``bf-balanced``, ``bf-combined``, ``bf-attention``, ``inner-attention``), ``--hidden`` units per
direction (the paper's 300 and 2048: sentence vectors of 600 and 4096), trained with the NLI
classifier and schedule of §2.2 / §3.1.

``--train`` / ``--dev`` / ``--test`` take NLI files (CSV with sentence1, sentence2, label, or
the ``s1.<split>`` of the three-file layout). Without ``--dev``, ``--dev-fraction`` of the
training pairs (a seeded draw) is held out as the dev set that drives the learning rate.

Writes the encoder directory ``--out`` (format in :mod:`pipeline.bilstm`) and ``--metrics``,
the SNLI metrics JSON of paper 004 Table 2 (task ``snli``: ``dev`` and ``test`` accuracy ×100,
``dim``, ``parameters`` of the encoder, pair counts, the model and provenance) with ``oov``: the
out-of-vocabulary rates of the training and test sentences under ``--vectors`` (tokens and types, %;
:func:`pipeline.models.word_vectors.coverage`), also logged: words without a vector are dropped, so
vectors that miss many NLI words leave the encoder little to read.
"""

from __future__ import annotations

import argparse
import logging
import random
from pathlib import Path

import numpy as np
import torch

from pipeline import provenance, tracking
from pipeline.arguments import BATCH, EXAMPLES, HIDDEN, RATE, SEED, VOCABULARY, WHOLE_EPOCHS, number
from pipeline.atomic import write_json
from pipeline.bilstm import nli_data, train
from pipeline.errors import InputError
from pipeline.models import word_vectors
from pipeline.models.bilstm import saved
from pipeline.models.bilstm.encoder import BILSTM_POOLINGS
from pipeline.output_guard import refuse_read_files

log = logging.getLogger("pipeline.bilstm")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--train", required=True, nargs="+", type=Path, help="NLI training files")
    parser.add_argument("--dev", nargs="*", default=[], type=Path, help="NLI dev files (default: held out of --train)")
    parser.add_argument(
        "--dev-fraction",
        type=number(0, 1, low_open=True, high_open=True),
        default=0.05,
        help="share of the training pairs held out as dev when no --dev is given (default 0.05)",
    )
    parser.add_argument("--test", nargs="*", default=[], type=Path, help="NLI test files (the Test column)")
    parser.add_argument("--vectors", required=True, type=Path, help="word vectors (.bin word2vec binary, or text)")
    parser.add_argument(
        "--frequent-words",
        type=VOCABULARY,
        default=200_000,
        help="besides every word of the NLI data found anywhere in the vectors file, keep its first N words,"
        " for sentences outside the data (evaluation; default 200000)",
    )
    parser.add_argument("--pooling", required=True, choices=sorted(BILSTM_POOLINGS))
    parser.add_argument("--hidden", type=HIDDEN, default=300, help="LSTM units per direction (default 300)")
    parser.add_argument(
        "--max-train-pairs",
        type=EXAMPLES,
        default=0,
        help="train on a seeded sample of this many pairs (default 0 = all)",
    )
    parser.add_argument("--epochs", type=WHOLE_EPOCHS, default=20, help="at most this many epochs (default 20)")
    parser.add_argument("--batch-size", type=BATCH, default=64)
    parser.add_argument("--lr", type=RATE, default=0.1)
    parser.add_argument(
        "--decay", type=number(0, 1, low_open=True), default=0.99, help="learning-rate factor per epoch"
    )
    parser.add_argument("--shrink", type=number(1), default=5.0, help="divide the rate by this when dev drops")
    parser.add_argument("--min-lr", type=RATE, default=1e-5, help="stop when the rate falls below this")
    parser.add_argument("--classifier-hidden", type=HIDDEN, default=512)
    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--name", help="model label in the tables (default: the --out folder name)")
    parser.add_argument("--out", required=True, type=Path, help="encoder directory to write")
    parser.add_argument("--metrics", required=True, type=Path, help="SNLI metrics JSON (paper 004 Table 2)")
    tracking.add_arguments(parser)  # live curves (pipeline/tracking.py)


def split_dev(pairs: nli_data.Pairs, fraction: float, seed: int) -> tuple[nli_data.Pairs, nli_data.Pairs]:
    """(train, dev): a seeded ``fraction`` of ``pairs`` held out."""
    order = np.random.default_rng(seed).permutation(len(pairs))
    held = max(1, round(fraction * len(pairs)))
    return pairs.subset(sorted(order[held:])), pairs.subset(sorted(order[:held]))


def oov_rates(pairs: nli_data.Pairs, vectors: word_vectors.WordVectors) -> dict[str, float]:
    """Out-of-vocabulary rates (%) of the premises and hypotheses: ``tokens`` and ``types``."""
    found = word_vectors.coverage(vectors, pairs.premises + pairs.hypotheses)
    return {"tokens": found["oov_token_rate"], "types": found["oov_type_rate"]}


def load_vectors(path: Path, data: list[nli_data.Pairs | None], frequent: int) -> word_vectors.WordVectors:
    """The vectors of every word of ``data`` (train, dev, test) found anywhere in ``path``, and its first
    ``frequent`` words: InferSent's ``build_vocab`` + ``get_w2v``, which read all of GloVe's 2.2M words for
    the words of SNLI, not a frequency cut (docs/stages/bilstm.md). The encoder's embeddings are frozen,
    so the frequent words change nothing in training; they give sentences outside the data (the
    evaluation tasks) vectors for their common words, as the saved encoder carries no vectors file."""
    wanted = word_vectors.data_words(
        text for pairs in data if pairs is not None for text in (*pairs.premises, *pairs.hypotheses)
    )
    vectors = word_vectors.load(path, limit=frequent, vocabulary=wanted)
    found = sum(1 for word in vectors.words if word in wanted)
    log.info(
        "%s: %d word vectors of %d dimensions (%d of the data's %d word forms, and the file's first %d words)",
        path,
        len(vectors.words),
        vectors.dim,
        found,
        len(wanted),
        frequent,
    )
    if not vectors.words:
        raise InputError(path, "no vector for any word of the NLI data")
    return vectors


def run(args: argparse.Namespace) -> None:
    if not 0 < args.dev_fraction < 1:
        raise InputError("--dev-fraction", f"must be between 0 and 1, not {args.dev_fraction}")
    saved.check_output(args.out)  # before any work: --out may replace only an earlier encoder of ours
    # an earlier encoder's folder keeps other files, and --metrics may name any file: neither over an input
    outputs = [args.out / name for name in (*saved.FILES, saved.LOG)] + [args.metrics]
    refuse_read_files(outputs, [*args.train, *args.dev, *args.test, args.vectors], "bilstm")
    random.seed(args.seed)
    np.random.seed(args.seed)
    pairs = nli_data.read_all(args.train)
    dev_read = nli_data.read_all(args.dev) if args.dev else None
    test_pairs = nli_data.read_all(args.test) if args.test else None
    vectors = load_vectors(args.vectors, [pairs, dev_read, test_pairs], args.frequent_words)
    if dev_read is not None:
        train_pairs, dev_pairs = pairs, dev_read
    else:
        train_pairs, dev_pairs = split_dev(pairs, args.dev_fraction, args.seed)
    if args.max_train_pairs and len(train_pairs) > args.max_train_pairs:
        keep = np.random.default_rng(args.seed + 1).permutation(len(train_pairs))[: args.max_train_pairs]
        train_pairs = train_pairs.subset(sorted(keep))
    if not len(train_pairs) or not len(dev_pairs):
        raise InputError(args.train[0], f"{len(train_pairs)} training and {len(dev_pairs)} dev pairs: need both")
    oov = {name: oov_rates(found, vectors) for name, found in (("train", train_pairs), ("test", test_pairs)) if found}
    for name, rates in oov.items():
        log.info("%s sentences: %.1f%% of tokens, %.1f%% of types without a vector", name, *rates.values())
    schedule = train.Schedule(
        lr=args.lr,
        decay=args.decay,
        shrink=args.shrink,
        min_lr=args.min_lr,
        batch_size=args.batch_size,
        max_epochs=args.epochs,
        classifier_hidden=args.classifier_hidden,
    )
    with tracking.Tracker(args, args.name or Path(args.out).name) as curves:  # live curves, one point an epoch
        model, lines = train.train(
            train_pairs, dev_pairs, vectors, args.hidden, args.pooling, schedule, args.seed, on_epoch=curves.log
        )
    dev = train.accuracy(model, train.Encoded.of(dev_pairs, vectors))
    test_hits = train.hits(model, train.Encoded.of(test_pairs, vectors)) if test_pairs else None
    test = None if test_hits is None else 100.0 * float(test_hits.sum()) / max(len(test_hits), 1)
    params = {
        key: (str(value) if isinstance(value, Path) else value)
        for key, value in vars(args).items()
        if key not in ("run", "verbose", "report_to", "tracking_dir")  # trackers change no result
    }
    params.update(train=[str(p) for p in args.train], dev=[str(p) for p in args.dev], test=[str(p) for p in args.test])
    inputs = [provenance.file_fingerprint(p) for p in [*args.train, *args.dev, *args.test, args.vectors]]
    record = provenance.make("bilstm", params, inputs=inputs, seed=args.seed)
    record["torch"] = torch.__version__
    counts = {"train": len(train_pairs), "dev": len(dev_pairs), "test": len(test_pairs) if test_pairs else 0}
    saved.save(
        args.out,
        model.encoder,
        vectors.words,
        {
            "tokenizer": word_vectors.TOKENIZER,
            "vectors": provenance.file_fingerprint(args.vectors),
            "pairs": counts,
            "dev_accuracy": dev,
            "test_accuracy": test,
            "provenance": record,
        },
        lines,
    )
    name = args.name or args.out.name
    write_json(
        args.metrics,
        {
            "task": "snli",
            "dev": dev,
            "test": test,
            # each test pair right (1) or not (0), in file order: the scoreboard's McNemar test
            "test_correct": None if test_hits is None else "".join("1" if hit else "0" for hit in test_hits),
            # each test pair's id (its line in the test file): the scoreboard counts a pair once
            "test_ids": None if test_hits is None else test_pairs.ids(),
            "dim": model.encoder.dim,
            "parameters": model.encoder.trainable_parameters(),
            "n": counts,
            "epochs": len(lines),
            "oov": oov,
            "model": {"name": name, "path": str(args.out), "kind": "bilstm", "pooling": model.encoder.pooling.name},
            "provenance": {**record, "checkpoint": {"path": str(args.out)}},
        },
    )
    log.info(
        "%s: dev %.2f, test %s, %d parameters",
        name,
        dev,
        "-" if test is None else f"{test:.2f}",
        model.encoder.trainable_parameters(),
    )
