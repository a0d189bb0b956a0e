"""Argument types with their domains, for every stage's ``add_arguments``.

A value outside its domain (``--max-steps -1``, ``--lr nan``, ``--mlm-probability 1.5``,
``--batch-size 0``) stops the stage before it reads anything, with one line naming the flag
and exit status 2 (docs/behaviour.md); argparse reports it as ``argument --FLAG: ...``.

Every count has an upper bound too (``--seeds 1000000000`` would build a list of a billion
seeds before the first one trains): the bounds below are far above anything the papers or the
configs use, and low enough that what a stage sizes by them (lists, tensors, threads, files)
fits in memory. A stage that allocates by a product of counts checks the product itself.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _number(text: str, kind: type) -> float | int:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {'an integer' if kind is int else 'a number'}: {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def integer(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An integer in ``[low, high]`` (either bound may be open-ended)."""

    def parse(text: str) -> int:
        value = _number(text, int)
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {_range(low, high)}, got {text}")
        return value

    parse.__name__ = "integer"
    return parse


def number(low: float | None = None, high: float | None = None, *, low_open=False, high_open=False):
    """A finite float in the interval from ``low`` to ``high``, each end closed unless ``*_open``."""

    def parse(text: str) -> float:
        value = _number(text, float)
        below = low is not None and (value <= low if low_open else value < low)
        above = high is not None and (value >= high if high_open else value > high)
        if below or above:
            raise argparse.ArgumentTypeError(f"must be a number {_range(low, high, low_open, high_open)}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def _range(low, high, low_open=False, high_open=False) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low}"
    return f"{'<' if high_open else '<='} {high}"


POSITIVE = integer(1)  # counts that must be at least one: batch sizes, steps of accumulation
COUNT = integer(0)  # counts where 0 means "none" or "off": --max-steps 0 runs --epochs, --save-every 0 never
MAX_SEED = 2**32 - 1  # numpy's seeds are 32-bit
SEED = integer(0, MAX_SEED)
PROBABILITY = number(0, 1, low_open=True)  # a masking rate: (0, 1]
FRACTION = number(0, 1, high_open=True)  # warm-up share, dropout: [0, 1)
RATE = number(0, low_open=True)  # a learning rate, a number of epochs, a gradient norm: > 0
NON_NEGATIVE = number(0)  # weight decay: >= 0

# ---------------------------------------------------------------- bounded counts (the papers' values in brackets)
MAX_STEPS = 10**8  # optimizer steps [BERT's 10**6; SpanBERT 2.4 * 10**6]
MAX_EPOCHS = 1000  # passes over the data [1 to 20; CLUEWSC 50]
MAX_BATCH = 2**16  # examples per batch and process [16 to 256; LAMB's largest 65,536]
MAX_LENGTH = 8192  # tokens per input [128, 256, 512 (BURT §5.2)]
MAX_WORKERS = 256  # processes or threads of one job
MAX_EXAMPLES = 10**10  # examples, sentences or pairs (more than any corpus here holds)
MAX_SENTENCE_TOKENS = 10**6  # a bound on one sentence's length
MAX_SEEDS = 100  # fine-tuning seeds of one job or one config [5; ULR-BERT Table 6]
MAX_SHARDS = 1000  # shard files of one part, or jobs of one dump (the workflow names them shard-000 .. shard-999)

SEEDS = integer(1, MAX_SEEDS)
STEPS = integer(0, MAX_STEPS)  # a number of steps, 0 for "off" (--max-steps 0 runs the epochs)
POSITIVE_STEPS = integer(1, MAX_STEPS)  # a number of steps, at least one
EPOCHS = number(0, MAX_EPOCHS, low_open=True)  # a (fractional) number of epochs: (0, 1000]
WHOLE_EPOCHS = integer(1, MAX_EPOCHS)
BATCH = integer(1, MAX_BATCH)  # a batch size, the steps of gradient accumulation, documents per row group
TOKENS = integer(3, MAX_LENGTH)  # tokens per input: [CLS] x [SEP] at least
WORKERS = integer(0, MAX_WORKERS)  # data-loader worker processes (0: in the main process)
THREADS = integer(1, MAX_WORKERS)
EXAMPLES = integer(0, MAX_EXAMPLES)  # a cap on examples, sentences or pairs, 0 for "all" (or "none")
SAMPLE = integer(1, MAX_EXAMPLES)  # sentences in a sample
CHARACTERS = integer(1, 2**30)  # characters buffered before a flush [2 to 4 million]
SHARDS = integer(1, MAX_SHARDS)
SHARD = integer(0, MAX_SHARDS - 1)  # one of them
SENTENCE_TOKENS = integer(0, MAX_SENTENCE_TOKENS)  # a bound on a sentence's length in tokens, 0 for "none"
MIN_TOKENS = integer(1, MAX_SENTENCE_TOKENS)
HIDDEN = integer(1, 4096)  # units of a layer, a vector's dimension [300, 512, 1024 (BERT-large), 2048 (InferSent)]
LAYERS = integer(1, 48)  # transformer layers [12, 24]
HEADS = integer(1, 64)  # attention heads [12, 16]
VOCABULARY = integer(0, 10**7)  # words or tokens kept, 0 for "all" [200,000; fastText's 2 * 10**6]
VOCABULARY_SIZE = integer(1, 10**6)  # a tokenizer's vocabulary [30,522 (BERT) to 250,002 (XLM-R)]
FREQUENCY = integer(1, 10**9)  # a minimum number of occurrences
TOP_K = integer(1, 10**6)  # items kept per document or sentence [K = 3000 n-grams]
NEGATIVES = integer(1, 1000)  # sampled negatives per positive [k = 3, BURT Table 4]
WINDOW = integer(1, 1000)  # a context window in words [5]
FOLDS = integer(2, 100)  # folds of a cross-validation [10, SentEval]
# the longest n-gram: docs/method.md §2 compares N 4 to 10 [ULR-BERT 6, BURT 5]; every sentence
# is counted at each n up to N, so N bounds the per-sentence work
NGRAM_LENGTH = integer(2, 16)
MIN_MFU = 0.001  # below 0.1 % of the peak no run is worth planning, and a tinier share gives infinite GPU-hours
MFU = number(MIN_MFU, 1)  # a share of the GPU's peak FLOPs, [0.001, 1]
