"""SemEval-2013 Task 5(a), word vs. two-word phrase (BURT twin §4.2, Table 3 "SemEval"; docs/method.md §5).

Each instance pairs a bigram with a single word, labelled 1 when they mean the same and 0
otherwise (e.g. *megalomania* / *great madness* is 0). The paper trains on 11,722 instances
and tests on 7,814; the public copy here is Yu & Dredze's preprocessed, POS-tagged subset
(TACL 2015: 11,175 train / 7,490 test), under ``phrase_similarity/semeval2013_task5a/``, so the
numbers are "SemEval-2013 5(a) (Yu & Dredze subset)". Format: four lines per instance: the
bigram's first word TAB its POS tag, its second word TAB its POS tag, the single word, the label.

Two protocols, as BURT twin §4.2 runs them: "Our BURT and baseline models are first fine-tuned
on the training set ... Parameters of the pre-trained word embeddings, SkipThought, InferSent and
GenSen are held fixed during training." The transformer encoders are fine-tuned with a softmax
head on ``[u; v; |u - v|]`` (the ``finetune-semeval`` stage, ``pipeline/finetune/finetune_semeval.py``,
which reads the splits here); the fixed encoders (bags of word vectors, BiLSTMs) are scored here.

Protocol here (frozen encoder, as the paper's fixed-parameter baselines): the bigram ("w1 w2") and
the word are embedded as two sequences u and v; the pair features are SentEval's
``[u; v; |u - v|; u * v]``; a scikit-learn logistic regression on standardised features is
fitted on the train split with C chosen from :data:`C_GRID` by 5-fold stratified
cross-validation on train (folds fixed by :data:`FOLD_SEED`, so every model sees the same
folds; each fold's C path warm-started, :func:`cross_validated_accuracy`), refitted on all of
train, and scored once on test. Reported: test accuracy ×100, the chosen C and its cross-validation
accuracy; ``correct``, each test instance right or not, and ``ids``, each one's number in the test file
(four lines an instance, none dropped), for the scoreboard.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pipeline.errors import InputError
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.numbered_lines import numbered_lines

FOLDER = "phrase_similarity/semeval2013_task5a"
SPLITS = {"train": f"{FOLDER}/en.trainSet", "test": f"{FOLDER}/en.testSet"}
LABELS = ("0", "1")
INSTANCE_LINES = 4  # bigram word TAB POS, its second word TAB POS, the candidate word, the label
C_GRID = tuple(2.0**t for t in range(-16, 3, 2))  # 2^-16 ... 4: strong regularisation wins on 1,536 features
FOLDS = 5
FOLD_SEED = 0
DATA = "SemEval-2013 Task 5(a), Yu & Dredze POS-tagged subset"

Instances = tuple[list[str], list[str], np.ndarray]  # bigrams, words, labels (0/1)


def read_instances(path) -> Instances:
    """The (bigram, word, label) instances of one split, checking the four-line layout."""
    lines = [(number, line) for number, line in numbered_lines(path)]
    while lines and not lines[-1][1].strip():
        lines.pop()
    if len(lines) % INSTANCE_LINES:
        number = lines[-(len(lines) % INSTANCE_LINES)][0]
        raise InputError(
            path,
            f"{len(lines)} lines do not make four-line instances (the last one is cut short)",
            where=f"line {number}",
        )
    bigrams, words, labels = [], [], []
    for start in range(0, len(lines), INSTANCE_LINES):
        block = lines[start : start + INSTANCE_LINES]
        parts = []
        for number, line in block[:2]:
            fields = line.split("\t")
            if len(fields) != 2 or not fields[0].strip():
                raise InputError(
                    path, f"expected 'word TAB POS' (2 fields), found {len(fields)} field(s)", where=f"line {number}"
                )
            parts.append(fields[0].strip())
        number, word = block[2]
        if "\t" in word or len(word.split()) != 1:
            raise InputError(path, f"expected a single word, found {word!r}", where=f"line {number}")
        number, label = block[3]
        if label.strip() not in LABELS:
            raise InputError(path, f"label {label.strip()!r} is not 0 or 1", where=f"line {number}")
        bigrams.append(" ".join(parts))
        words.append(word.strip())
        labels.append(int(label))
    if len(set(labels)) < 2:
        raise InputError(
            path, f"{len(labels)} instance(s) with labels {sorted(set(labels))}; the classifier needs both 0 and 1"
        )
    return bigrams, words, np.asarray(labels, dtype=np.int64)


def load(data: DataRoot) -> dict[str, Instances]:
    return {
        split: read_instances(data.file(relative, f"SemEval-2013 Task 5(a) {split} set"))
        for split, relative in SPLITS.items()
    }


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """SentEval's pair features ``[u; v; |u - v|; u * v]`` (float64)."""
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    return np.hstack([u, v, np.abs(u - v), u * v])


def cross_validated_accuracy(train_x: np.ndarray, train_y: np.ndarray, folds) -> np.ndarray:
    """Mean held-out accuracy of each C of :data:`C_GRID` over ``folds`` (the features standardised on each
    fold's own training part, as a scaler inside the cross-validation does). Each fold fits the C path in
    ascending order, every fit warm-started from the last (scikit-learn's ``LogisticRegressionCV`` does the
    same): the weakly regularised ends of the path, which took lbfgs up to its 2,000 iterations from zero,
    start next to their optimum (on the BiLSTMs' 2,400 features, most of a job's time: BENCHMARKS.md "Sample
    run"). Each fit still runs to lbfgs's tolerance, so the chosen C is the one cold fits choose."""
    scores = np.zeros((folds.get_n_splits(), len(C_GRID)))
    for fold, (fit_rows, held) in enumerate(folds.split(train_x, train_y)):
        scaler = StandardScaler().fit(train_x[fit_rows])
        fit_x, held_x = scaler.transform(train_x[fit_rows]), scaler.transform(train_x[held])
        model = LogisticRegression(max_iter=2000, warm_start=True)
        for column, C in enumerate(C_GRID):  # ascending: strong regularisation first
            model.set_params(C=C).fit(fit_x, train_y[fit_rows])
            scores[fold, column] = np.mean(model.predict(held_x) == train_y[held])
    return scores.mean(axis=0)


def fit_and_score(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray) -> dict:
    """C by stratified k-fold accuracy on train, refit on all of train, accuracy ×100 on test."""
    folds = StratifiedKFold(
        n_splits=max(2, min(FOLDS, int(np.bincount(train_y).min()))), shuffle=True, random_state=FOLD_SEED
    )
    accuracy = cross_validated_accuracy(train_x, train_y, folds)
    best = int(np.argmax(accuracy))  # the first of equals: the strongest regularisation, as GridSearchCV picks
    model = make_pipeline(StandardScaler(), LogisticRegression(C=C_GRID[best], max_iter=2000))
    hits = model.fit(train_x, train_y).predict(test_x) == test_y
    return {
        "accuracy": 100.0 * float(hits.mean()),
        "correct": hit_string(hits),
        "C": float(C_GRID[best]),
        "cv_accuracy": 100.0 * float(accuracy[best]),
    }


def hit_string(hits) -> str:
    """Each test item right (1) or not (0), in file order: the scoreboard's McNemar test
    (docs/stages/report.md "The scoreboard")."""
    return "".join("1" if hit else "0" for hit in hits)


def test_ids(splits: dict[str, Instances]) -> list[int]:
    """Each test instance's id beside ``correct``: its number in the test file (four lines an instance, none
    dropped), so the scoreboard counts each instance once."""
    return list(range(len(splits["test"][2])))


def counts(splits: dict[str, Instances]) -> dict:
    """Instances and positives per split, as both protocols report them."""
    return {
        "n": {split: len(labels) for split, (_, _, labels) in splits.items()},
        "positives": {split: int(labels.sum()) for split, (_, _, labels) in splits.items()},
    }


def evaluate(encoder, splits: dict[str, Instances]) -> dict:
    texts = [t for bigrams, words, _ in splits.values() for t in (*bigrams, *words)]
    vectors = encoder.encode(texts)
    features, offset = {}, 0
    for split, (bigrams, _, _) in splits.items():
        n = len(bigrams)
        features[split] = pair_features(vectors[offset : offset + n], vectors[offset + n : offset + 2 * n])
        offset += 2 * n
    result = fit_and_score(features["train"], splits["train"][2], features["test"], splits["test"][2])
    return {
        **result,
        "ids": test_ids(splits),
        **counts(splits),
        "protocol": "frozen",
        "features": "[u; v; |u-v|; u*v]",
        "c_grid": list(C_GRID),
        "folds": FOLDS,
        "data": DATA,
    }
