"""Transfer tasks (paper 004 §3.2-3.5, Table 3): SentEval's protocol on frozen embeddings, any encoder.

``python -m pipeline evaluate transfer --model MODEL --data ROOT --out FILE.json`` scores the
encoder on (``--transfer-tasks``, default all):

- MR, CR, SUBJ, MPQA: nested ``--kfold``-fold cross-validation (:func:`.transfer_classifier.nested_kfold`);
- SST2 (train / dev / test) and SICK-E (TRAIN / TRIAL / TEST): the penalty chosen on dev;
- TREC and MRPC (train / test): the penalty chosen by k-fold on train; MRPC also F1;
- SICK-R and STS-B: trained relatedness regression (:mod:`.transfer_regression`), Pearson / Spearman;
- STS14: cosine similarity, Pearson / Spearman per subset, averaged over the subsets.

The accuracy tasks train SentEval's logistic regression with Adam and batches of 64, as paper 004
§3.2 did (``classifier="adam"``, the default; a grid's fits trained in lockstep), or scikit-learn's
(``"sklearn"``, 3 to 5 times faster on a CPU); :mod:`.transfer_classifier`. Sentences are embedded as they are; pairs use
SentEval's features ``[|u − v|; u * v]``. Each distinct sentence is encoded once per run, all of a
task's new sentences in one ``encode`` call (the encoders sort them by length), and reused by later
tasks (SICK-E and SICK-R share theirs).

The JSON (besides ``task``, ``model``, ``provenance`` from the CLI) holds, per task, its metric
at the top level: accuracy ×100 (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC, SICK-E), Pearson ×100
(SICK-R, STS-B, STS14); ``micro`` and ``macro``, the averages of the dev accuracies of the
accuracy tasks (paper 004 §3.2: macro the plain mean, micro weighted by the number of dev
samples); ``tasks`` with every task's details (``devacc``, ``acc``, ``ndev``, ``ntest``, the penalty
chosen: ``l2`` for Adam's weight decay, ``C`` for scikit-learn's;
MRPC ``f1``; SICK-R / STS-B ``pearson``, ``spearman``, ``mse``, ``devpearson``; STS14
``pearson``, ``spearman`` and its subsets); ``encoded`` (the distinct sentences encoded, in all
and per task); ``classifier``. Seconds are logged, not written: the same model, data and seed give the
same JSON.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time

import numpy as np
from scipy.stats import pearsonr, spearmanr
from threadpoolctl import threadpool_limits

from pipeline.tasks import transfer_classifier as logreg
from pipeline.tasks import transfer_regression as regression
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.sts import row_ids, scored_pairs
from pipeline.tasks.transfer_data import Split, load_task
from pipeline.tasks.vectors import paired_cosine

log = logging.getLogger("pipeline.tasks.transfer")

TASKS = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC", "SICK-E", "SICK-R", "STS14", "STS-B")
ACCURACY_TASKS = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC", "SICK-E")
KFOLD_TASKS = ("MR", "CR", "SUBJ", "MPQA")


class SentenceCache:
    """Embeddings of every distinct sentence of the run, each computed once."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.rows: dict[str, int] = {}
        self.blocks: list[np.ndarray] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.seconds = 0.0

    def add(self, texts: list[str]) -> int:
        """Encode the texts not seen yet (one ``encode`` call); returns how many were new."""
        new = list(dict.fromkeys(text for text in texts if text not in self.rows))
        if new:
            started = time.monotonic()
            vectors = np.asarray(self.encoder.encode(new), dtype=np.float32)
            self.seconds += time.monotonic() - started
            for text in new:
                self.rows[text] = len(self.rows)
            self.blocks.append(vectors)
            self.matrix = np.concatenate(self.blocks) if len(self.blocks) > 1 else vectors
            self.blocks = [self.matrix]
        return len(new)

    def __call__(self, texts: list[str]) -> np.ndarray:
        return self.matrix[[self.rows[text] for text in texts]]


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """SentEval's pair features [|u − v|; u * v]."""
    return np.concatenate([np.abs(u - v), u * v], axis=1)


def features(split: Split, embed: SentenceCache) -> np.ndarray:
    left = embed(split.left)
    return left if split.right is None else pair_features(left, embed(split.right))


def _texts(data) -> list[str]:
    if isinstance(data, Split):
        return data.texts()
    if all(isinstance(part, Split) for part in data.values()):
        return [text for part in data.values() for text in part.texts()]
    return [text for left, right, _ in data.values() for text in (*left, *right)]  # STS14 subsets


def test_hits(result, test) -> dict:
    """Each test item classified right (1) or not (0), in order, and its id (its line in the test file): the
    scoreboard's McNemar test (docs/stages/report.md "The scoreboard"). The k-fold tasks have no held-out
    test set to give."""
    if result.predictions is None:
        return {}
    hits = np.asarray(result.predictions) == np.asarray(test.y)
    return {"correct": "".join("1" if hit else "0" for hit in hits), "ids": test.ids()}


def run_task(task: str, data, embed: SentenceCache, kfold: int, seed: int, fitter: str = "adam") -> dict:
    """One task's details; ``fitter`` is the logistic regression (:data:`.transfer_classifier.CLASSIFIERS`)."""
    if task in KFOLD_TASKS:
        result = logreg.nested_kfold(features(data, embed), np.asarray(data.y), kfold, seed, fitter)
        return {**result.as_dict(), "ndev": len(data), "ntest": len(data)}
    if task in ("SST2", "SICK-E"):
        train, dev, test = (data[name] for name in ("train", "dev", "test"))
        result = logreg.dev_then_test(
            features(train, embed),
            np.asarray(train.y),
            features(dev, embed),
            np.asarray(dev.y),
            features(test, embed),
            np.asarray(test.y),
            seed,
            fitter,
        )
        return {**result.as_dict(), "ndev": len(dev), "ntest": len(test), **test_hits(result, test)}
    if task in ("TREC", "MRPC"):
        train, test = data["train"], data["test"]
        result = logreg.kfold_then_test(
            features(train, embed),
            np.asarray(train.y),
            features(test, embed),
            np.asarray(test.y),
            kfold,
            seed,
            fitter,
        )
        out = {**result.as_dict(), "ndev": len(train), "ntest": len(test), **test_hits(result, test)}
        if task == "MRPC":
            out["f1"] = logreg.f1(np.asarray(test.y), result.predictions)
        return out
    if task in ("SICK-R", "STS-B"):
        scale = (lambda y: 1.0 + 0.8 * np.asarray(y)) if task == "STS-B" else np.asarray
        train, dev, test = (data[name] for name in ("train", "dev", "test"))
        predicted, devpearson = regression.fit_predict(
            features(train, embed), scale(train.y), features(dev, embed), scale(dev.y), features(test, embed), seed
        )
        return {
            **regression.correlations(predicted, scale(test.y)),
            "devpearson": devpearson,
            "ndev": len(dev),
            "ntest": len(test),
            "items": {"test": scored_pairs(scale(test.y), predicted, test.ids())},
        }
    if task == "STS14":
        subsets, items = {}, {}
        for name, pairs in data.items():
            left, right, gold = pairs
            cosine = paired_cosine(embed(left), embed(right))
            items[name] = scored_pairs(gold, cosine, row_ids(pairs))
            subsets[name] = {
                "pearson": 100.0 * float(pearsonr(cosine, gold).statistic),
                "spearman": 100.0 * float(spearmanr(cosine, gold).statistic),
                "n": len(gold),
            }
        return {
            "pearson": float(np.mean([s["pearson"] for s in subsets.values()])),
            "spearman": float(np.mean([s["spearman"] for s in subsets.values()])),
            "subsets": subsets,
            "items": items,
        }
    raise ValueError(f"unknown transfer task {task!r}")


@contextlib.contextmanager
def single_threaded():
    """One BLAS / OpenMP / torch thread for the fits: their matrices are small, and on a loaded
    machine a second thread made a 10-fold selection of C six times slower, not faster."""
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch else None
    with threadpool_limits(limits=1):
        if torch:
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if torch:
                torch.set_num_threads(threads)


def headline(task: str, details: dict) -> float:
    """The task's number in the contract: accuracy, or Pearson for SICK-R, STS-B and STS14."""
    return details["acc"] if task in ACCURACY_TASKS else details["pearson"]


def averages(details: dict[str, dict]) -> dict:
    """Paper 004 §3.2: macro = mean dev accuracy, micro = dev accuracies weighted by dev sizes."""
    tasks = [task for task in ACCURACY_TASKS if task in details]
    if not tasks:
        return {"micro": None, "macro": None}
    dev = np.array([details[task]["devacc"] for task in tasks])
    sizes = np.array([details[task]["ndev"] for task in tasks], dtype=np.float64)
    return {"micro": float((dev * sizes).sum() / sizes.sum()), "macro": float(dev.mean())}


class TransferData:
    """The data root; each task's files are read when the task runs."""

    def __init__(self, data: DataRoot):
        self.data = data


def load(data: DataRoot) -> TransferData:
    return TransferData(data)


def evaluate(
    encoder, sets: TransferData, tasks=TASKS, kfold: int = 10, seed: int = 0, timing=None, classifier: str = "adam"
) -> dict:
    """Every task of ``tasks`` on ``encoder``, the accuracy tasks with ``classifier`` (``adam``, paper 004
    §3.2, or ``sklearn``: :mod:`.transfer_classifier`). ``timing``, a dict where given, receives the
    encoding and fitting seconds (``encode_seconds``, ``fit_seconds``), which the metrics leave out."""
    unknown = [task for task in tasks if task not in TASKS]
    if unknown:
        raise ValueError(f"unknown transfer tasks {unknown} (known: {', '.join(TASKS)})")
    if classifier not in logreg.CLASSIFIERS:
        raise ValueError(f"unknown transfer classifier {classifier!r} (known: {', '.join(logreg.CLASSIFIERS)})")
    embed = SentenceCache(encoder)
    details, encoded, fit_seconds = {}, {}, 0.0
    for task in tasks:
        data = load_task(sets.data, task)
        before = embed.seconds
        encoded[task] = embed.add(_texts(data))
        started = time.monotonic()
        with single_threaded():
            details[task] = run_task(task, data, embed, kfold, seed, classifier)
        fit = time.monotonic() - started
        fit_seconds += fit
        log.info(
            "%s: %.2f (%d new sentences encoded in %.1f s, fitted in %.1f s)",
            task,
            headline(task, details[task]),
            encoded[task],
            embed.seconds - before,
            fit,
        )
    log.info("%d distinct sentences encoded in %.1f s; fits took %.1f s", len(embed.rows), embed.seconds, fit_seconds)
    if timing is not None:
        timing.update(encode_seconds=embed.seconds, fit_seconds=fit_seconds)
    return {
        **{task: headline(task, details[task]) for task in tasks},
        **averages(details),
        "tasks": details,
        "kfold": kfold,
        "classifier": classifier,
        "encoded": {"sentences": len(embed.rows), "per_task": encoded},
    }
