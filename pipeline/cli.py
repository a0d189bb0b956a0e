"""``python -m pipeline STAGE [options]``: the entry point every Snakemake rule calls.

Each stage module provides ``add_arguments(parser)`` and ``run(args)``; its docstring is
the stage's ``--help`` text. Bad input (:class:`~pipeline.errors.InputError`) ends the run
with a one-line message naming the file and exit status 2; so do the failures that
:func:`pipeline.errors.translate` knows (file system, decoding, Parquet) when they escape a
stage, wherever they were raised.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from pipeline import tracking
from pipeline.errors import translate

# stage name → (package, one-line summary). Stage X runs module ``pipeline.<package>.<X with - as _>``
# (the root package where the package is ""): one naming rule for every entry module
# (docs/design.md "Layout"). Only the stage that runs is imported, so a corpus stage never pays
# for torch and a broken optional dependency breaks only its stage.
STAGES = {
    "download": ("", "fetch a file and verify its checksum"),
    "download-model": ("", "one commit of a Hugging Face hub model → the data root"),
    "extract": ("corpus", "Wikipedia XML dump → docs shards"),
    "merge-slices": ("corpus", "docs shards of multistream slices → the part's docs shards"),
    "convert": ("corpus", "Traditional → Simplified Chinese (OpenCC) of a docs shard"),
    "clean": ("corpus", "docs shard → clean sentences"),
    "ngrams": ("ngrams", "sentences → per-document PMI n-grams + marked sentences"),
    "sample": ("ngrams", "seeded random sample of marked sentences over all shards"),
    "kenlm": ("ngrams", "corpus-level n-gram language model with KenLM's lmplz"),
    "word2vec": ("pretrain", "word2vec vectors on the clean corpus (bag-of-vectors baseline)"),
    "evaluate": ("evaluate", "evaluate an encoder on one task → metrics JSON"),
    "figures": ("evaluate", "PCA / t-SNE figures of analogy embeddings"),
    "tables": ("report", "metrics JSONs → the papers' result tables"),
    "plan": ("plan", "each published row → the runs a config makes for it, its deviations and GPU-hours"),
    "scoreboard": (
        "scoreboard",
        "a run's tables and its config's plan → published numbers and the papers' claims judged",
    ),
    "corpus-stats": ("report", "stats JSONs of the corpus / n-gram stages → a report page"),
    "training-curves": ("report", "a model's train_log.jsonl → its training curves"),
    "tiny-model": ("pretrain", "a tiny random BERT with a WordPiece tokenizer trained on the corpus"),
    "tokenize": ("pretrain", "marked sentences → token dataset with sub-word spans"),
    "pretrain": ("pretrain", "continue pre-training with one objective"),
    "finetune": ("finetune", "Siamese fine-tuning: twin (NLI + PPDB), sbert-nli or nli-mnrl"),
    "finetune-semeval": ("finetune", "SemEval-2013 5(a) as twin Table 3: the encoder fine-tuned → metrics JSON"),
    "classify": ("classify", "fine-tune on one GLUE / CLUE task with several seeds"),
    "classify-summary": ("classify", "classify runs of one model → GLUE / CLUE metrics JSON"),
    "classify-unpack": ("classify", "one file of a downloaded GLUE / CLUE archive → the data root"),
    "measure-tokens": ("classify", "GLUE / CLUE tokens per training example on the data root → classify_tokens.yaml"),
    "bilstm": ("bilstm", "train a BiLSTM sentence encoder (max / BF pooling) on NLI pairs"),
    "export": ("", "a model directory → a folder ready for the Hugging Face Hub (model card)"),
    "rehearsal": ("rehearsal", "a paper config in miniature on CPU: local mirror and hub, every job kind run once"),
    "gpu-acceptance": ("acceptance", "the papers' architectures on this GPU: every row checked, the plan's figures"),
    "gpu-bundle": ("acceptance", "the GPU acceptance run's data and wheels, for a host with no network"),
}


def stage_module(name: str) -> str:
    """The module that stage ``name`` runs: ``pipeline.<package>.<name with - as _>``."""
    package = STAGES[name][0]
    return ".".join(["pipeline", *([package] if package else []), name.replace("-", "_")])


def _stage_parser(sub, name: str) -> None:
    module = importlib.import_module(stage_module(name))
    doc = (module.__doc__ or "").strip()
    stage = sub.add_parser(
        name, help=STAGES[name][1], description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    module.add_arguments(stage)
    stage.set_defaults(run=module.run)


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one ``error:`` line (the usage stays in ``--help``), exit 2."""

    def error(self, message: str):
        self.exit(2, f"error: {self.prog}: {' '.join(message.split())}\n")


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="python -m pipeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="stage", required=True, metavar="STAGE")
    chosen = next((arg for arg in argv if not arg.startswith("-")), None)
    for name, (_, summary) in STAGES.items():
        if name == chosen:
            _stage_parser(sub, name)
        else:
            sub.add_parser(name, help=summary, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser(argv).parse_args(argv)
    except SystemExit as exc:  # --help (0) or a bad argument (2, one line already printed)
        return exc.code if isinstance(exc.code, int) else 2
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    try:
        if hasattr(args, "report_to"):  # a tracker whose library is missing: refused before any work
            tracking.require(args.report_to)
        args.run(args)
    except Exception as exc:  # known failures become one line; the rest keep their traceback
        known = translate(exc)
        if known is None:
            raise
        print(f"error: {' '.join(str(known).split())}", file=sys.stderr)  # one line, whatever the message holds
        return 2
    return 0
