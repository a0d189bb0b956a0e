"""Stage ``kenlm``: clean sentences → a corpus-level n-gram language model (KenLM), for corpus PMI.

docs/method.md §2; BURT (002) §3.1 and ULR (000) §3.1: PMI from counts "in the corpus, normalised by the
corpus size", n-grams extracted with an LM toolkit (SRILM in BURT §3.1); BURT §5.1 then counts
*per document* instead, which is the pipeline's default. Corpus-wide statistics, for the
corpus-level PMI ablation (``ngrams --mode corpus``) and for scales where per-shard count tables
do not fit, come from a modified Kneser-Ney LM estimated over the whole clean corpus by KenLM's
``lmplz`` (in SRILM's place), stored by ``build_binary`` for memory-mapped queries.

The sentences are streamed, one line per sentence, into ``lmplz``'s standard input (the corpus
is never held in memory or written out as text): English as whitespace words, Chinese as
characters separated by spaces (:mod:`pipeline.words`). In Chinese a whitespace gap is
an n-gram boundary (docs/method.md §2), so each whitespace-free run is its own line there.

``--discount_fallback`` is passed by default: the closed-form Kneser-Ney discounts need
n-grams seen once and twice at every order, which small corpora (the demo, tests, a sample)
lack; lmplz then stops with "Could not calculate Kneser-Ney discounts". With the flag it uses
fixed discounts (0.5, 1, 1.5) only for the orders where the estimate fails, so a large corpus
is unaffected; the orders where it happened are recorded in the stats. ``<s>``, ``</s>`` and
``<unk>`` inside the text are treated as whitespace (``--skip_symbols``).

Outputs: the KenLM binary at ``--out`` and ``<out>.json`` beside it (sentences, lines, tokens,
order, n-grams per order, lmplz arguments, provenance), written together atomically; with
``--arpa`` the ARPA text too. lmplz and build_binary are looked up via ``--lmplz`` (either
binary's path or their folder), ``$KENLM_BIN``, the bin folder of this Python, then ``PATH``;
``make install`` or ``workflow/scripts/install_kenlm.sh PREFIX`` builds them.

Failures are one line each (docs/behaviour.md): a ``--memory`` lmplz cannot parse is refused
before it starts; when lmplz stops because its sorting memory is too small (it aborts, SIGABRT,
with "Vocab hash size estimate ... exceeds total memory ...", or exits with "Sort block size ... is
below the minimum block size") or cannot be had, the line names ``--memory`` and its value; any
other failure of lmplz or build_binary gives its exit status or signal and its last message.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from pipeline import contracts, languages, provenance
from pipeline.atomic import AtomicFiles, json_text
from pipeline.errors import InputError
from pipeline.output_guard import refuse_read_files
from pipeline.progress import Progress
from pipeline.words import runs

log = logging.getLogger("pipeline.kenlm")

MAX_ORDER = 6  # KENLM_MAX_ORDER of the PyPI `kenlm` module and of install_kenlm.sh's build
LN10 = math.log(10.0)
INSTALL_HINT = (
    "build it with `make install` (into .venv/bin) or `workflow/scripts/install_kenlm.sh PREFIX`, "
    "then pass --lmplz PATH or set KENLM_BIN to the folder holding lmplz and build_binary"
)


# lmplz's (and build_binary's) size syntax: a whole number and at most one suffix; no suffix = KiB
MEMORY = re.compile(r"[0-9]+[bKMGTPEZY%]?")
MEMORY_HINT = "give it more, e.g. --memory 1G or a share of RAM such as 25%"


def check_memory(memory: str, out: Path) -> None:
    if not MEMORY.fullmatch(memory):
        raise InputError(
            out,
            f"--memory {memory}: not a size lmplz understands (a whole number with an optional suffix "
            "b, K, M, G, T or %, such as 25%, 500M or 2G; no suffix means K)",
        )


def _order(value: str) -> int:
    order = int(value)
    if not 1 <= order <= MAX_ORDER:
        raise argparse.ArgumentTypeError(f"order must be 1..{MAX_ORDER} (KenLM's compiled KENLM_MAX_ORDER)")
    return order


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sentences", required=True, nargs="+", type=Path, help="sentences Parquet files")
    parser.add_argument("--lang", required=True, help="language: " + ", ".join(languages.SUPPORTED))
    parser.add_argument(
        "--order", type=_order, default=6, help="n-gram order of the LM (default 6, as N in docs/method.md §2)"
    )
    parser.add_argument("--lowercase", action="store_true", help="lower-case tokens (uncased model's tokenizer)")
    parser.add_argument(
        "--memory",
        default="25%",
        help="lmplz and build_binary sorting memory, GNU sort style (25%%, 2G, 500M; default 25%%)",
    )
    parser.add_argument(
        "--lmplz", type=Path, help="path of lmplz (build_binary is looked up beside it) or their folder"
    )
    parser.add_argument("--temp-dir", type=Path, help="folder for lmplz's on-disk sort (default: the output's folder)")
    parser.add_argument(
        "--binary-type",
        choices=["trie", "probing"],
        default="trie",
        help="build_binary data structure: trie (small, default) or probing (faster queries)",
    )
    parser.add_argument(
        "--discount-fallback",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fixed Kneser-Ney discounts where the closed-form estimate fails (small corpora)",
    )
    parser.add_argument("--arpa", type=Path, help="also keep the ARPA text here")
    parser.add_argument("--out", required=True, type=Path, help="output KenLM binary (stats go to OUT.json)")


# ---- finding the binaries ---------------------------------------------------------------------


def _candidate_folders(lmplz: Path | None) -> list[tuple[str, Path]]:
    if lmplz is not None:
        return [("--lmplz", lmplz if lmplz.is_dir() else lmplz.parent)]
    folders = []
    if os.environ.get("KENLM_BIN"):
        folders.append(("$KENLM_BIN", Path(os.environ["KENLM_BIN"])))
    # Not resolved: a venv's python is a symlink to the base interpreter, and the venv's bin is wanted.
    folders.append(("this Python's bin", Path(sys.executable).parent))
    on_path = shutil.which("lmplz")
    if on_path:
        folders.append(("PATH", Path(on_path).parent))
    return folders


def find_binaries(lmplz: Path | None = None) -> tuple[Path, Path]:
    """``(lmplz, build_binary)``: from ``--lmplz``, ``$KENLM_BIN``, this Python's bin, then PATH."""
    folders = _candidate_folders(lmplz)
    if lmplz is not None and not lmplz.is_dir():
        chosen = (lmplz, lmplz.parent / "build_binary")
        missing = [str(p) for p in chosen if not os.access(p, os.X_OK)]
        if missing:
            raise InputError(lmplz, f"KenLM binary not found or not executable: {', '.join(missing)}; {INSTALL_HINT}")
        return chosen
    for _, folder in folders:
        chosen = (folder / "lmplz", folder / "build_binary")
        if all(os.access(p, os.X_OK) for p in chosen):
            return chosen
    where = "; ".join(f"{name}: {folder}" for name, folder in folders) or "PATH"
    raise InputError(lmplz or "lmplz", f"KenLM's lmplz/build_binary not found (looked in {where}); {INSTALL_HINT}")


# ---- streaming the corpus into lmplz ------------------------------------------------------------


def corpus_lines(
    paths: Sequence[Path], lang: str, lowercase: bool, counts: dict, progress: Progress | None = None
) -> Iterable[str]:
    """One line of space-separated tokens per sentence (per whitespace-free run in Chinese)."""
    total = sum(path.stat().st_size for path in paths)
    done_bytes = 0
    for path in paths:
        parquet = pq.ParquetFile(path)
        for group in range(parquet.num_row_groups):
            try:
                texts = parquet.read_row_group(group, columns=["text"]).column("text").to_pylist()
            except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
                raise InputError(path, f"unreadable Parquet row group: {exc}", where=f"row group {group}") from exc
            for text in texts:
                counts["sentences"] += 1
                for _, tokens in runs(text, lang, lowercase):
                    if tokens:
                        counts["lines"] += 1
                        counts["tokens"] += len(tokens)
                        yield " ".join(tokens)
            if progress is not None:
                progress.update(len(texts), done_bytes + path.stat().st_size * (group + 1) / parquet.num_row_groups)
        done_bytes += path.stat().st_size
    if progress is not None:
        progress.position = total


_FALLBACK = re.compile(r"Substituting fallback discounts for order (\d+)")
_ARPA_COUNT = re.compile(r"^ngram (\d+)=(\d+)$")


def _messages(text: str) -> list[str]:
    """The lines of a KenLM program's stderr that say something (not its progress bar), without a final full stop."""
    lines = (line.strip().rstrip(".") for line in text.splitlines())
    return [line for line in lines if line and not set(line) <= set("*-0123456789")]


_TOO_SMALL = re.compile(r"exceeds total memory|below the minimum block size")
_NO_MEMORY = re.compile(r"Cannot allocate memory|MallocException|bad_alloc", re.IGNORECASE)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def failure_reason(program: str, status: int, output: str, memory: str) -> str:
    """One line for a KenLM program that failed: its exit status or signal, and why; when the
    why is memory, the ``--memory`` value that caused it."""
    messages = _messages(output)
    how = f"killed by {_signal_name(-status)}" if status < 0 else f"exit status {status}"
    too_small = next((line for line in reversed(messages) if _TOO_SMALL.search(line)), None)
    if too_small:
        return f"{program} failed ({how}): --memory {memory} is too small ({too_small}); {MEMORY_HINT}"
    no_memory = next((line for line in reversed(messages) if _NO_MEMORY.search(line)), None)
    if no_memory:
        return (
            f"{program} failed ({how}): it could not allocate the memory --memory {memory} asks for "
            f"({no_memory}); give it less, e.g. --memory 1G"
        )
    last = messages[-1] if messages else ""
    if status < 0:
        hint = {
            signal.SIGABRT: f"it aborted; if memory ran short, --memory {memory} may be too small",
            signal.SIGKILL: f"the system may have run out of memory; --memory {memory} may be too large",
        }.get(-status, signal.strsignal(-status) or "")
        return f"{program} failed ({how}): {last + '; ' if last else ''}{hint}"
    return f"{program} failed ({how}): {last}"


def _run_lmplz(lmplz: Path, arguments: list[str], lines: Iterable[str], log_path: Path, memory: str) -> None:
    with log_path.open("wb") as stderr:
        process = subprocess.Popen(
            [str(lmplz), *arguments], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr
        )
        try:
            batch: list[str] = []
            for line in lines:
                batch.append(line)
                if len(batch) >= 4096:
                    process.stdin.write(("\n".join(batch) + "\n").encode())
                    batch.clear()
            if batch:
                process.stdin.write(("\n".join(batch) + "\n").encode())
            process.stdin.close()
        except BrokenPipeError:
            pass  # lmplz died early; its exit status and log say why
        except BaseException:
            process.kill()
            process.wait()
            raise
        status = process.wait()
    if status != 0:
        # lmplz fails on its input, its memory or the storage under it (a full disk, a file size
        # limit): one line, naming the folder it was writing in (its log goes with the temporary folder)
        output = log_path.read_text(errors="replace") if log_path.exists() else ""
        raise InputError(log_path.parent.parent, failure_reason("lmplz", status, output, memory))


def _arpa_counts(arpa: Path) -> dict[str, int]:
    counts = {}
    with arpa.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if line.startswith("\\") and line != "\\data\\":
                break
            match = _ARPA_COUNT.match(line)
            if match:
                counts[match.group(1)] = int(match.group(2))
    return counts


def run(args: argparse.Namespace) -> None:
    lang = languages.check(args.lang)
    check_memory(args.memory, args.out)
    for path in args.sentences:
        contracts.check_schema(path, contracts.SENTENCES, ["text"])
    # the LM, its OUT.json and the --arpa text never over a sentences file
    outputs = [args.out, args.out.with_name(args.out.name + ".json"), *([args.arpa] if args.arpa else [])]
    refuse_read_files(outputs, args.sentences, "kenlm")
    lmplz, build_binary = find_binaries(args.lmplz)
    out = args.out
    temp_dir = args.temp_dir or out.parent
    temp_dir.mkdir(parents=True, exist_ok=True)
    lmplz_args = ["--order", str(args.order), "--memory", args.memory, "--skip_symbols"]
    if args.discount_fallback:
        lmplz_args.append("--discount_fallback")
    log.info(
        "%s %s < %d sentences file(s), lang %s%s",
        lmplz,
        " ".join(lmplz_args),
        len(args.sentences),
        lang,
        ", lower-cased" if args.lowercase else "",
    )
    counts = {"sentences": 0, "lines": 0, "tokens": 0}
    with AtomicFiles() as files, tempfile.TemporaryDirectory(prefix=".kenlm-", dir=temp_dir) as work:
        work = Path(work)
        arpa = files.temp(args.arpa) if args.arpa else work / "lm.arpa"
        progress = Progress(log, "sentences", total=sum(p.stat().st_size for p in args.sentences))
        lines = corpus_lines(args.sentences, lang, args.lowercase, counts, progress)
        first = next(lines, None)
        if first is None:
            raise InputError(
                args.sentences[0],
                f"no tokens in the {len(args.sentences)} sentences file(s): nothing to estimate an LM from",
            )
        lines = itertools.chain([first], lines)
        _run_lmplz(
            lmplz,
            [*lmplz_args, "--temp_prefix", str(work) + "/", "--arpa", str(arpa)],
            lines,
            work / "lmplz.log",
            args.memory,
        )
        progress.done()
        lmplz_log = (work / "lmplz.log").read_text(errors="replace")
        fallback_orders = sorted({int(order) + 1 for order in _FALLBACK.findall(lmplz_log)})
        if fallback_orders:
            log.warning(
                "fixed fallback discounts used for orders %s (corpus too small for Kneser-Ney estimates)",
                fallback_orders,
            )
        binary_args = ["-S", args.memory, "-T", str(work) + "/", args.binary_type]
        result = subprocess.run(
            [str(build_binary), *binary_args, str(arpa), str(files.temp(out))],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if result.returncode != 0:
            raise InputError(out, failure_reason("build_binary", result.returncode, result.stderr, args.memory))
        params = {
            "lang": lang,
            "order": args.order,
            "lowercase": args.lowercase,
            "memory": args.memory,
            "binary_type": args.binary_type,
            "discount_fallback": args.discount_fallback,
        }
        stats = {
            **counts,
            "order": args.order,
            "lang": lang,
            "lowercase": args.lowercase,
            "ngrams_per_order": _arpa_counts(arpa),
            "fallback_discount_orders": fallback_orders,
            # Temporary paths left out, so the same input gives the same JSON.
            "lmplz_args": lmplz_args,
            "build_binary_args": ["-S", args.memory, args.binary_type],
            "provenance": provenance.make("kenlm", params, [provenance.file_fingerprint(p) for p in args.sentences]),
        }
        files.temp(out.with_name(out.name + ".json")).write_text(json_text(stats))
    log.info(
        "wrote %s (%d sentences, %d tokens, n-grams per order %s)",
        out,
        counts["sentences"],
        counts["tokens"],
        stats["ngrams_per_order"],
    )


# ---- queries: corpus-level PMI ---------------------------------------------------------------------


class CorpusLM:
    """A KenLM model of the whole corpus, answering corpus-level PMI queries (docs/method.md §2).

    The papers' PMI (ULR 000 §3.1, BURT 002 §3.1 eq. 2; docs/method.md §2's default formula) is
    ``PMI(w) = (1/|w|) * (ln P(w) - Σ_k ln P(x_k))``. Per document, ``P(w) = c_n(w) / T_n``.
    Here both come from the corpus LM instead: ``ln P(w)`` is the LM's chain-rule probability
    of the n-gram ``P(x_1) P(x_2 | x_1) … P(x_n | x_1..x_{n-1})`` with no sentence-begin or
    sentence-end marker (``model.score(" ".join(w), bos=False, eos=False)``), which for
    maximum-likelihood estimates is exactly ``c(w) / T``, smoothed by Kneser-Ney here; and
    ``P(x_k)`` is the LM's unigram probability. KenLM scores are log10; they are converted to
    natural logs so corpus and document PMI share a scale. A unigram's PMI is 0.

    Tokens must be cased and split as the LM's corpus was (``stats["lowercase"]``, ``stats["lang"]``
    from ``<path>.json`` when it exists): English words, Chinese characters.
    """

    def __init__(self, path):
        import kenlm  # the query module; the stage itself needs only the binaries

        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(self.path, "KenLM model not found")
        try:
            self.model = kenlm.Model(str(self.path))
        except (OSError, RuntimeError) as exc:
            raise InputError(self.path, f"not a loadable KenLM model: {exc}") from exc
        self.order = self.model.order
        stats_path = self.path.with_name(self.path.name + ".json")
        self.stats = _read_json(stats_path) if stats_path.exists() else {}
        self._unigram: dict[str, float] = {}

    def log10_prob(self, tokens: Sequence[str]) -> float:
        """log10 P(w) by the chain rule, without ``<s>`` / ``</s>``."""
        return self.model.score(" ".join(tokens), bos=False, eos=False)

    def unigram_log10(self, token: str) -> float:
        value = self._unigram.get(token)
        if value is None:
            value = self._unigram[token] = self.model.score(token, bos=False, eos=False)
        return value

    def pmi(self, tokens: Sequence[str]) -> float:
        """Corpus-level PMI of one n-gram (natural log, divided by its length)."""
        if not tokens or isinstance(tokens, str):
            raise ValueError(f"PMI needs a non-empty sequence of tokens, got {tokens!r}")
        joint = self.log10_prob(tokens)
        parts = sum(self.unigram_log10(token) for token in tokens)
        return LN10 * (joint - parts) / len(tokens)

    def pmi_many(self, candidates: Iterable[Sequence[str]]) -> np.ndarray:
        """PMI of many n-grams (token tuples), as a float64 array in the same order."""
        candidates = list(candidates)
        if candidates and isinstance(candidates[0], str):  # "new york" would be scored letter by letter
            raise ValueError(f"pmi_many takes token sequences, not strings: {candidates[0]!r}")
        score = self.model.score
        unigram = self.unigram_log10
        values = [
            (score(" ".join(tokens), bos=False, eos=False) - sum(map(unigram, tokens))) / len(tokens)
            for tokens in candidates
        ]
        return np.asarray(values, dtype=np.float64) * LN10


def _read_json(path: Path) -> dict:
    import json

    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(path, f"unreadable KenLM stats JSON: {exc}") from exc
