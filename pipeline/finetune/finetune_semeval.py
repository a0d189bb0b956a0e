"""Stage ``finetune-semeval``: SemEval-2013 Task 5(a) as BURT twin §4.2 ran it for its encoder rows.

BURT twin §4.2: "Our BURT and baseline models are first fine-tuned on the training set of size
11,722 and then evaluated on 7,814 examples. Parameters of the pre-trained word embeddings,
SkipThought, InferSent and GenSen are held fixed during training." The transformer rows (BERT,
BURT, ALBURT) are fine-tuned; the fixed encoders keep the ``evaluate`` stage's logistic regression
on frozen features (:mod:`pipeline.tasks.semeval5a`).

``python -m pipeline finetune-semeval --model MODEL --pooling mean|cls|max --data ROOT --out
METRICS.json [--epochs 3] [--batch-size 16] [--lr 3e-5] [--seed 0]`` builds MODEL as the Siamese
encoder of the ``finetune`` stage (:func:`pipeline.finetune.encoder.build`: Transformer + the
pooling asked for, dropout 0.1), puts the twin structure's classifier on it (twin §3.2,
``P(c|A,B) = softmax(W·[u; v; |u−v|])``: sentence-transformers' ``SoftmaxLoss``, 2 classes, u the
bigram, v the word), trains encoder and head together on every training pair with
sentence-transformers' trainer, and scores the head's argmax on the test pairs once. The paper
states no setting for this fine-tuning: it runs under the twin structure's optimiser (twin §3.3: Adam,
β2 0.98, ε 1e-9, linear warm-up over the first 10% then linear decay, batch 16, dropout 0.1) with the
budget the same authors give their sentence-pair classification fine-tuning (GLUE: "learning rates of
3e-5 for 3 epochs", BURT §5.3, ULR-BERT §6.2), ``--epochs`` 3 and ``--lr`` 3e-5 by default
(``--max-steps`` fixes the steps instead), and keeps the last step (no dev set to select on: the paper
names none).

Output: the ``evaluate`` stage's ``semeval5a`` metrics JSON (``accuracy`` ×100 on test, ``n``,
``positives``, ``task``, ``model``, ``provenance``) with ``protocol: fine-tuned``, the settings, the
optimizer steps and the first and last training losses; the same seed gives the same file.
"""

from __future__ import annotations

import argparse
import logging
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from pipeline import arguments, provenance
from pipeline.atomic import check_file_target, write_json
from pipeline.errors import InputError
from pipeline.finetune import encoder
from pipeline.finetune.recipes import CONCATENATIONS, trainer_arguments
from pipeline.models.pooling import POOLINGS
from pipeline.output_guard import refuse_inputs, refuse_read_files
from pipeline.tasks import semeval5a
from pipeline.tasks.data_root import DataRoot
from pipeline.training_settings import RECIPE_OPTIMISERS

log = logging.getLogger("pipeline.finetune_semeval")

CONCATENATION = "uv-diff"  # twin §3.2's [u; v; |u−v|], the default of every twin head (recipes.CONCATENATIONS)
OPTIMISER = RECIPE_OPTIMISERS["twin"]  # twin §3.3's Adam
PROTOCOL = "fine-tuned"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="checkpoint directory, hub id or package:NAME")
    parser.add_argument("--pooling", choices=POOLINGS, default="mean", help="token pooling (default mean)")
    parser.add_argument("--data", required=True, type=Path, help="data root (phrase_similarity/semeval2013_task5a/)")
    parser.add_argument("--out", required=True, type=Path, help="the semeval5a metrics JSON")
    parser.add_argument("--name", help="label of the model in the result tables (default: the --model value)")
    parser.add_argument("--epochs", type=arguments.EPOCHS, default=3.0, help="passes over the training pairs")
    parser.add_argument(
        "--max-steps", type=arguments.STEPS, default=0, help="optimizer steps instead of --epochs (0: the epochs)"
    )
    parser.add_argument("--batch-size", type=arguments.BATCH, default=16, help="pairs per batch (twin §3.3: 16)")
    parser.add_argument("--lr", type=arguments.RATE, default=3e-5, help="peak learning rate (the authors' GLUE: 3e-5)")
    parser.add_argument("--warmup", type=arguments.FRACTION, default=0.1, help="share of steps with linear warm-up")
    parser.add_argument("--dropout", type=arguments.FRACTION, default=0.1)
    parser.add_argument("--max-length", type=arguments.TOKENS, default=128, help="tokens per sequence")
    parser.add_argument("--seed", type=arguments.SEED, default=0)


def pair_features(u, v):
    """``[u; v; |u−v|]`` in ``SoftmaxLoss``'s order (its flags from :data:`CONCATENATION`)."""
    import torch

    rep, difference, product = CONCATENATIONS[CONCATENATION]
    parts = ([u, v] if rep else []) + ([torch.abs(u - v)] if difference else []) + ([u * v] if product else [])
    return torch.cat(parts, 1)


def steps_of(pairs: int, batch_size: int, epochs: float) -> int:
    """Optimizer steps of ``epochs`` passes over ``pairs`` (the last batch of a pass may be short)."""
    return max(1, math.ceil(epochs * math.ceil(pairs / batch_size)))


def fine_tune(args: argparse.Namespace, train: semeval5a.Instances, work: Path):
    """The encoder and its softmax head trained together on the training pairs; (model, loss, history)."""
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer
    from sentence_transformers.sentence_transformer.losses import SoftmaxLoss
    from transformers.trainer_utils import set_seed

    bigrams, words, labels = train
    set_seed(args.seed)  # the head is initialised from it
    model = encoder.build(args.model, args.pooling, args.max_length, args.dropout)
    rep, difference, product = CONCATENATIONS[CONCATENATION]
    loss = SoftmaxLoss(
        model,
        model.get_embedding_dimension(),
        len(semeval5a.LABELS),
        concatenation_sent_rep=rep,
        concatenation_sent_difference=difference,
        concatenation_sent_multiplication=product,
    )
    steps = args.max_steps or steps_of(len(labels), args.batch_size, args.epochs)
    settings = trainer_arguments(
        work,
        OPTIMISER,
        max_steps=steps,
        batch_size=args.batch_size,
        lr=args.lr,
        warmup_steps=math.ceil(args.warmup * steps),
        seed=args.seed,
        report_to="none",
        save_strategy="no",  # the last step is kept: no dev set to select on
        dataloader_drop_last=False,
    )
    data = Dataset.from_dict({"sentence1": list(bigrams), "sentence2": list(words), "label": labels.tolist()})
    trainer = SentenceTransformerTrainer(model=model, args=settings, train_dataset=data, loss=loss)
    trainer.train()
    history = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    return model, loss, {"steps": trainer.state.global_step, "losses": history}


def predict(model, loss, bigrams: list[str], words: list[str], batch_size: int = 64) -> np.ndarray:
    """The head's class (0/1) for each (bigram, word) pair, in eval mode (no dropout). Each distinct string
    is encoded once (a split repeats its words and bigrams across pairs: the 37,330 sides of train's and
    test's 18,665 pairs are 9,731 + 6,765 distinct strings, 2.3 times fewer)."""
    import torch

    strings = list(dict.fromkeys([*bigrams, *words]))
    row = {text: i for i, text in enumerate(strings)}
    model.eval()
    with torch.no_grad():
        table = model.encode(strings, batch_size=batch_size, convert_to_tensor=True, show_progress_bar=False)
        u = table[[row[text] for text in bigrams]]
        v = table[[row[text] for text in words]]
        features = pair_features(u, v).to(loss.classifier.weight.dtype)
        return loss.classifier(features).argmax(dim=1).cpu().numpy()


def check_args(args: argparse.Namespace) -> None:
    if args.batch_size < 1 or not 0 <= args.warmup < 1 or not args.epochs > 0 or not args.lr > 0:
        raise InputError(
            "--batch-size/--warmup/--epochs/--lr", "need batch size >= 1, 0 <= warmup < 1, epochs > 0, lr > 0"
        )
    check_file_target(args.out)
    refuse_inputs(args.out, args.data, [args.model])  # never the model, its config.json, or the data


def run(args: argparse.Namespace) -> None:
    from pipeline.models.fingerprint import checkpoint_fingerprint
    from pipeline.models.spec import model_path, resolve_path

    check_args(args)
    started = time.monotonic()
    data = DataRoot(args.data)
    splits = data.load(semeval5a.load)
    refuse_read_files([args.out], data.used, "this fine-tuning")  # a data file the root links to from elsewhere
    with tempfile.TemporaryDirectory(prefix="finetune-semeval-") as work:
        model, loss, trained = fine_tune(args, splits["train"], Path(work))
    bigrams, words, gold = splits["test"]
    hits = predict(model, loss, bigrams, words) == gold
    accuracy = float(hits.mean())
    train_accuracy = float((predict(model, loss, *splits["train"][:2]) == splits["train"][2]).mean())
    log.info(
        "%s: test accuracy %.2f after %d steps (%.1f s)",
        args.model,
        100 * accuracy,
        trained["steps"],
        time.monotonic() - started,
    )
    settings = {
        "epochs": None if args.max_steps else args.epochs,
        "steps": trained["steps"],
        "batch_size": args.batch_size,
        "lr": args.lr,
        "warmup": args.warmup,
        "dropout": args.dropout,
        "max_length": args.max_length,
        "optimizer": OPTIMISER.record(),
    }
    params = {"task": "semeval5a", "model": args.model, "pooling": args.pooling, "protocol": PROTOCOL, **settings}
    params["data_root"] = provenance.portable_path(args.data)
    record = provenance.make("finetune-semeval", params, inputs=data.fingerprints(), seed=args.seed)
    record["checkpoint"] = checkpoint_fingerprint(resolve_path(args.model))
    result = {
        "accuracy": 100.0 * accuracy,
        "correct": semeval5a.hit_string(hits),  # each test item, for the scoreboard's McNemar test
        "ids": semeval5a.test_ids(splits),  # and its number in the test file: each counts once
        "train_accuracy": 100.0 * train_accuracy,
        **semeval5a.counts(splits),
        "protocol": PROTOCOL,
        "head": "softmax on [u; v; |u-v|] (twin §3.2), trained with the encoder",
        "settings": settings,
        "train_loss": {"first": trained["losses"][0], "last": trained["losses"][-1]} if trained["losses"] else None,
        "data": semeval5a.DATA,
        "notes": ["SemEval 5(a): the encoder fine-tuned on the training pairs, as BURT twin §4.2 does"],
        "task": "semeval5a",
        "model": {
            "name": args.name or args.model,
            "path": model_path(args.model),
            "kind": "transformer",
            "pooling": args.pooling,
        },
        "provenance": record,
    }
    write_json(args.out, result)
