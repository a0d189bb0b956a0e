"""Stage ``word2vec``: word vectors on the pipeline's clean corpus, for the bag-of-vectors baseline.

docs/method.md §5 "Baselines": the papers' BoW rows average pre-trained word vectors (GloVe); here the
vectors are trained on the same corpus as the models (ULR §5.2, BURT §4), with gensim's
Word2Vec (skip-gram by default) streamed over ``sentences`` Parquet files: the corpus is read
again for every pass and never held in memory. Tokens are those of the n-gram statistics
(:func:`pipeline.words.tokens`: whitespace words in English, characters in Chinese),
lower-cased unless ``--no-lowercase``.

``--nli`` adds the premises and hypotheses of NLI files to the corpus, each distinct sentence once
(the sources the ``finetune`` stage's ``--nli`` takes: CSV / jsonl / release ``.txt``, ``DIR:SPLIT``
of the three-file layout, ``ARCHIVE.zip:SPLIT``; :func:`pipeline.tasks.nli.read_source`), so that
the vectors cover the words a BiLSTM encoder reads (paper 004 §3.1 trains on SNLI with pretrained
GloVe 300D vectors, which cover it). Their raw text still holds punctuation, so they are split with
the BiLSTM's own tokenizer (:func:`pipeline.models.word_vectors.words`: word runs and single
punctuation marks), which yields the words the encoder will look up. English only.

Deterministic: one worker thread, a fixed seed, and a stable hash for the initial vectors
(gensim's default is Python's ``hash``, which varies between processes unless PYTHONHASHSEED
is fixed). Writes the vectors in word2vec's C binary format (``--out``, e.g.
``vectors.bin``: a ``N DIM`` header line, then each word and its float32 vector; the same
bytes on every rerun, and a format that, unlike gensim's pickled ``.kv``, cannot run code
when loaded), atomically, and ``<out>.json`` with the vocabulary size, counts and provenance.
"""

from __future__ import annotations

import argparse
import logging
import zlib
from pathlib import Path

from gensim.models import Word2Vec

from pipeline import contracts, languages, provenance
from pipeline.arguments import FREQUENCY, HIDDEN, SEED, THREADS, WHOLE_EPOCHS, WINDOW
from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.models.word_vectors import words as nli_words
from pipeline.output_guard import refuse_read_files
from pipeline.progress import Progress
from pipeline.shards import input_files
from pipeline.tasks.nli import read_source
from pipeline.words import tokens

log = logging.getLogger("pipeline.word2vec")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sentences", required=True, nargs="+", type=Path, help="sentences Parquet files or directories of them"
    )
    parser.add_argument(
        "--nli",
        nargs="+",
        default=[],
        metavar="SOURCE",
        help="NLI files whose premises and hypotheses join the corpus (CSV / jsonl / DIR:SPLIT; English)",
    )
    parser.add_argument("--lang", required=True, help="language: " + ", ".join(languages.SUPPORTED))
    parser.add_argument("--out", required=True, type=Path, help="word2vec binary file to write (e.g. vectors.bin)")
    parser.add_argument("--dim", type=HIDDEN, default=300, help="vector size (default 300)")
    parser.add_argument("--window", type=WINDOW, default=5, help="context window (default 5)")
    parser.add_argument("--min-count", type=FREQUENCY, default=5, help="drop rarer words (default 5)")
    parser.add_argument("--epochs", type=WHOLE_EPOCHS, default=5, help="passes over the corpus (default 5)")
    parser.add_argument("--sg", type=int, choices=(0, 1), default=1, help="1 skip-gram (default), 0 CBOW")
    parser.add_argument(
        "--lowercase",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="lower-case words (default on; evaluation sets are mostly lower-case)",
    )
    parser.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--workers",
        type=THREADS,
        default=1,
        help="training threads (default 1: gensim is deterministic only with one; more are faster "
        "on a large corpus, with vectors that differ from run to run)",
    )


def stable_hash(text: str) -> int:
    """Same value in every process (gensim seeds each word's initial vector with it)."""
    return zlib.crc32(text.encode("utf-8"))


def parquet_files(paths: list[Path]) -> list[Path]:
    files = input_files(paths, unique_names=False)  # shards of several parts share file names
    for file in files:
        contracts.check_schema(file, contracts.SENTENCES, ["text"])
    return files


def nli_sentences(sources: list[str], lowercase: bool) -> tuple[list[list[str]], list[Path]]:
    """Token lists of the distinct premises and hypotheses of ``sources`` in order of first use, and
    the files read (``DIR:SPLIT`` → its three files)."""
    distinct: dict[str, None] = {}
    files: list[Path] = []
    for source in sources:
        pairs = read_source(str(source))
        files += pairs.files
        for premise, hypothesis in zip(pairs.premises, pairs.hypotheses):
            distinct.setdefault(premise)
            distinct.setdefault(hypothesis)
    found = (nli_words(text.lower() if lowercase else text) for text in distinct)
    return [sentence for sentence in found if sentence], files


class SentenceStream:
    """Re-iterable token lists of every sentence in ``files``, read a batch at a time, then ``extra``."""

    def __init__(self, files: list[Path], lang: str, lowercase: bool, extra: list[list[str]] = ()):
        self.files, self.lang, self.lowercase = files, lang, lowercase
        self.extra = list(extra)
        self.passes = 0

    def __iter__(self):
        self.passes += 1
        progress = Progress(log, f"sentences (pass {self.passes})", total=len(self.files))
        for done, file in enumerate(self.files, 1):
            for batch in contracts.iter_rows(file, contracts.SENTENCES, ["text"]):
                for row in batch:
                    words = tokens(row["text"], self.lang, self.lowercase)
                    if words:
                        yield words
                progress.update(len(batch), position=done - 1)
            progress.position = done
        yield from self.extra


def run(args: argparse.Namespace) -> None:
    lang = languages.check(args.lang)
    files = parquet_files(args.sentences)
    if args.nli and lang != "en":
        raise InputError(args.nli[0], f"--nli is for English sentences, not --lang {lang}")
    extra, extra_files = nli_sentences(args.nli, args.lowercase)
    # the vectors and their OUT.json never over a sentences file or an NLI file (nor a folder of them)
    refuse_read_files([args.out, Path(f"{args.out}.json")], [*files, *extra_files], "word2vec")
    corpus = SentenceStream(files, lang, args.lowercase, extra)
    params = {
        "lang": lang,
        "dim": args.dim,
        "window": args.window,
        "min_count": args.min_count,
        "epochs": args.epochs,
        "sg": args.sg,
        "lowercase": args.lowercase,
        "workers": args.workers,
    }
    if args.nli:  # only then: the parameters (and outputs) of a corpus-only run stay as they were
        params.update(nli=[str(source) for source in args.nli], nli_sentences=len(extra))
        log.info("--nli: %d distinct NLI sentences join the corpus", len(extra))
    model = Word2Vec(
        vector_size=args.dim,
        window=args.window,
        min_count=args.min_count,
        sg=args.sg,
        workers=args.workers,
        seed=args.seed,
        hashfxn=stable_hash,
    )
    model.build_vocab(corpus)
    if not model.wv.key_to_index:
        raise InputError(files[0], f"no word occurs {args.min_count} times or more (lower --min-count?)")
    model.train(corpus, total_examples=model.corpus_count, epochs=args.epochs)
    stats = {
        "vocabulary": len(model.wv.key_to_index),
        "sentences": model.corpus_count,
        "words": model.corpus_total_words,
        "params": params,
        "provenance": provenance.make(
            "word2vec", params, [provenance.file_fingerprint(f) for f in [*files, *extra_files]], seed=args.seed
        ),
    }
    with AtomicFiles() as out:
        model.wv.save_word2vec_format(str(out.temp(args.out)), binary=True)
        out.temp(f"{args.out}.json").write_text(json_text(stats))
    log.info("word2vec: %d words, %d sentences → %s", stats["vocabulary"], stats["sentences"], args.out)
