"""Stage ``figures``: how an encoder lays out the analogy data (BURT Fig. 4 and Fig. 5).

- ``analogy_pca_male_female.png`` (Fig. 4): the two-dimensional PCA projection of male and
  female words, phrases and sentences (default pairs man/woman, king/queen, dad/mom; ``--pairs``)
  taken from the ``male-female`` files of the three levels, each pair joined by a dashed line.
  A word pair's phrases and sentences are those on the same line of the phrase and sentence
  files (they are built line by line from the word file). Labels follow the paper's Table XII:
  ``king``, ``p_king``, ``s_king``.
- ``analogy_tsne_differences.png`` (Fig. 5): t-SNE (scikit-learn, seeded, PCA initialisation) of
  the difference vectors ``unit(B) - unit(A)`` of every distinct pair of the tables' categories,
  one panel per level, coloured by category: a universal encoder keeps one direction per relation.

Embeddings use mean pooling unless ``--pooling`` says otherwise. Both PNGs carry the run's
provenance in their ``Description`` metadata and are written atomically (matplotlib's
object API, no pyplot state, so no display backend is involved).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE

from pipeline import provenance
from pipeline.arguments import BATCH, SEED, TOKENS
from pipeline.atomic import AtomicFiles
from pipeline.errors import InputError
from pipeline.models.pooling import POOLINGS
from pipeline.models.runtime import seed_everything
from pipeline.models.spec import LEXICAL, load_model, model_path
from pipeline.output_guard import refuse_inputs
from pipeline.tasks import analogy
from pipeline.tasks.data_root import DataRoot
from pipeline.tasks.vectors import unit_rows

log = logging.getLogger("pipeline.figures")

PCA_FILE = "analogy_pca_male_female.png"
TSNE_FILE = "analogy_tsne_differences.png"
PREFIX = {"word": "", "phrase": "p_", "sentence": "s_"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", required=True, help="checkpoint path or hub id, word2vec:PATH or input-embeddings:PATH_OR_ID"
    )
    parser.add_argument("--pooling", choices=POOLINGS, default="mean", help="token pooling (default mean)")
    parser.add_argument("--data", required=True, type=Path, help="data root holding ulr_analogy/")
    parser.add_argument("--out", required=True, type=Path, help="output directory for the two PNGs")
    parser.add_argument(
        "--pairs",
        default="man:woman,king:queen,dad:mom",
        help="male:female word pairs of Fig. 4 (default man:woman,king:queen,dad:mom)",
    )
    parser.add_argument("--batch-size", type=BATCH, default=64)
    parser.add_argument("--max-length", type=TOKENS, default=128)
    parser.add_argument("--seed", type=SEED, default=0, help="t-SNE and RNG seed (default 0)")


def male_female_sequences(categories: list[analogy.Category], pairs: list[tuple[str, str]]) -> list[dict]:
    """For each word pair: its words, and the phrases and sentences on the same line at the other levels."""
    files = {c.level: c for c in categories if c.name == "male-female"}
    if "word" not in files:
        raise InputError("ulr_analogy/semantic/word/male-female.txt", "needed for the male-female PCA figure")
    found = []
    for male, female in pairs:
        for line, row in enumerate(files["word"].rows):
            column = 0 if row[:2] == [male, female] else 2 if row[2:4] == [male, female] else None
            if column is None:
                continue
            entry = {"pair": (male, female)}
            for level, category in files.items():
                if line < len(category.rows):
                    entry[level] = category.rows[line][column : column + 2]
            found.append(entry)
            break
        else:
            log.warning("pair %s:%s is not in the word-level male-female file; left out", male, female)
    if not found:
        raise InputError(files["word"].name, f"none of the pairs {pairs} occurs as A:B or C:D")
    return found


def relation_pairs(categories: list[analogy.Category], level: str) -> list[tuple[str, str, str]]:
    """Distinct (category, A, B) pairs of the table categories at ``level`` (from A:B and C:D)."""
    pairs = {}
    for category in categories:
        if category.level == level and category.in_tables:
            for row in category.rows:
                pairs.setdefault((category.name, row[0], row[1]), None)
                pairs.setdefault((category.name, row[2], row[3]), None)
    return list(pairs)


def plot_pca(encoder, entries: list[dict], path: Path, metadata: dict) -> None:
    labels, texts, levels = [], [], []
    for entry in entries:
        for level in analogy.LEVELS:
            if level in entry:
                for word, text in zip(entry["pair"], entry[level]):
                    labels.append(PREFIX[level] + word)
                    texts.append(text)
                    levels.append(level)
    points = PCA(n_components=2, svd_solver="full").fit_transform(unit_rows(encoder.encode(texts)))
    figure = Figure(figsize=(7, 6))
    axes = figure.subplots()
    markers = {"word": "o", "phrase": "s", "sentence": "^"}
    for level in analogy.LEVELS:
        chosen = [i for i, lv in enumerate(levels) if lv == level]
        axes.scatter(points[chosen, 0], points[chosen, 1], marker=markers[level], label=level)
    for i in range(0, len(texts), 2):
        axes.plot(points[i : i + 2, 0], points[i : i + 2, 1], "k--", linewidth=0.8)
    for label, (x, y) in zip(labels, points):
        axes.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    axes.set(title="PCA of male / female words, phrases and sentences", xlabel="PC 1", ylabel="PC 2")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=120, metadata=metadata)


def tsne_points(vectors: np.ndarray, seed: int) -> np.ndarray:
    """2-D t-SNE of ``vectors``; all at the origin when they do not differ (sklearn's t-SNE would divide by 0)."""
    if len(vectors) < 3 or not np.ptp(vectors, axis=0).any():
        log.warning("t-SNE: %d vectors without spread; drawn at the origin", len(vectors))
        return np.zeros((len(vectors), 2))
    perplexity = max(1.0, min(30.0, (len(vectors) - 1) / 3))
    return TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(vectors)


def plot_tsne(encoder, categories: list[analogy.Category], path: Path, seed: int, metadata: dict) -> None:
    levels = [level for level in analogy.LEVELS if relation_pairs(categories, level)]
    figure = Figure(figsize=(6 * len(levels), 5.5))
    axes = figure.subplots(1, len(levels), squeeze=False)
    for axis, level in zip(axes[0], levels):
        pairs = relation_pairs(categories, level)
        vectors = unit_rows(encoder.encode([text for _, a, b in pairs for text in (a, b)]))
        differences = vectors[1::2] - vectors[0::2]
        points = tsne_points(differences, seed)
        names = [name for name, _, _ in pairs]
        # biggest category first, so a small one that shares pairs (capital-common in capital-world) stays visible
        for name in sorted(dict.fromkeys(names), key=lambda n: -names.count(n)):
            chosen = [i for i, n in enumerate(names) if n == name]
            axis.scatter(points[chosen, 0], points[chosen, 1], s=10, label=name)
        axis.set(title=f"{level}: t-SNE of B − A", xticks=[], yticks=[])
        axis.legend(fontsize=7, markerscale=1.5)
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=120, metadata=metadata)


def run(args: argparse.Namespace) -> None:
    if args.model in LEXICAL:
        raise InputError(args.model, "a lexical baseline has no embeddings to draw")
    pairs = [tuple(item.split(":", 1)) for item in args.pairs.split(",") if ":" in item]
    if not pairs:
        raise InputError("--pairs", f"expected male:female[,male:female...], got {args.pairs!r}")
    refuse_inputs(args.out, args.data, [args.model])  # never the model's folder, nor the data root
    data = DataRoot(args.data)
    categories = data.load(analogy.load)
    encoder = load_model(args.model, args.pooling, args.batch_size, args.max_length)
    seed_everything(args.seed)
    params = {
        "model": args.model,
        "model_path": model_path(args.model),
        "pooling": args.pooling,
        "pairs": args.pairs,
        "max_length": args.max_length,
    }
    record = provenance.make("figures", params, inputs=data.fingerprints(), seed=args.seed)
    record["checkpoint"] = encoder.describe()
    metadata = {"Description": json.dumps(record, sort_keys=True)}
    with AtomicFiles() as out:
        plot_pca(encoder, male_female_sequences(categories, pairs), out.temp(args.out / PCA_FILE), metadata)
        plot_tsne(encoder, categories, out.temp(args.out / TSNE_FILE), args.seed, metadata)
    log.info("figures → %s", args.out)
