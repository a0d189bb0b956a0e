"""Benchmark the ``kenlm`` stage against plain lmplz on a text file, and PMI queries, in one run.

What it measures, on the reference sentences (``reference_pmi/sentences.parquet``: 106 real
English Wikipedia articles) replicated to ``--words`` words:

* ours: ``python -m pipeline kenlm --order 6`` reading the sentences Parquet and streaming the
  tokens into lmplz's stdin, then build_binary (trie);
* baseline: the same two binaries run by hand the usual way, ``lmplz --text corpus.txt`` on a
  ready-made tokenised text file (its writing not counted) then ``build_binary``.

Both ARPA files are compared (byte-identical) before any number is reported.

    ratio = (baseline wall seconds) / (our wall seconds)      (1.0 = streaming costs nothing)

Peak RSS of ours (the stage and lmplz, the larger) is taken at full size and at a quarter of
it: the Python side streams, so only lmplz's sort memory (``--memory``) should matter.

Queries: corpus-level PMI of n-grams (n = 2..6) drawn from the corpus, by
``CorpusLM.pmi_many`` (unigram scores cached) against the direct formula with one
``model.score`` call per n-gram and per token; both give the same values.

    python bench/kenlm_stage.py                 # print the tables and ratios
    python bench/kenlm_stage.py --write-md      # also update the "## kenlm" section of BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import REPO, Run, machine, markdown_table, measure, write_section

from pipeline import contracts
from pipeline.ngrams.kenlm import CorpusLM, find_binaries

REFERENCE = Path("reference_pmi/sentences.parquet")


def build_corpus(data_root: Path, words: int, work: Path) -> tuple[Path, Path, int]:
    """Sentences Parquet and the same text tokenised, one sentence a line, about ``words`` words."""
    texts = pq.read_table(data_root / REFERENCE, columns=["text"]).column("text").to_pylist()
    per_copy = sum(len(t.split()) for t in texts)
    copies = max(1, round(words / per_copy))
    parquet, text = work / f"sentences-{copies}x.parquet", work / f"sentences-{copies}x.txt"
    if not (parquet.exists() and text.exists()):
        entities = pa.array([[] for _ in texts], contracts.SENTENCES.field("entities").type)
        with contracts.open_writer(parquet, contracts.SENTENCES) as writer, text.open("w") as sink:
            for copy in range(copies):
                writer.write_table(
                    pa.table(
                        {
                            "doc_id": pa.array([copy] * len(texts), pa.int64()),
                            "sent_id": pa.array(range(len(texts)), pa.int32()),
                            "text": pa.array(texts, pa.string()),
                            "entities": entities,
                        },
                        schema=contracts.SENTENCES,
                    )
                )
                sink.writelines(" ".join(t.split()) + "\n" for t in texts if t.split())
    return parquet, text, per_copy * copies


def run_ours(python: str, sentences: Path, out: Path, memory: str) -> Run:
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        python,
        "-m",
        "pipeline",
        "kenlm",
        "--sentences",
        str(sentences),
        "--lang",
        "en",
        "--order",
        "6",
        "--memory",
        memory,
        "--arpa",
        str(out.with_suffix(".arpa")),
        "--out",
        str(out),
    ]
    return measure(cmd, out.with_suffix(".log"), env={"OMP_NUM_THREADS": "1"})


def run_baseline(text: Path, out: Path, memory: str) -> Run:
    lmplz, build_binary = find_binaries()
    out.parent.mkdir(parents=True, exist_ok=True)
    script = (
        f"{lmplz} --order 6 --memory {memory} --skip_symbols --discount_fallback --temp_prefix {out.parent}/ "
        f"--text {text} --arpa {out.with_suffix('.arpa')} && "
        f"{build_binary} -S {memory} -T {out.parent}/ trie {out.with_suffix('.arpa')} {out}"
    )
    return measure(["bash", "-c", script], out.with_suffix(".log"))


def candidates(text: Path, count: int, seed: int = 0) -> list[tuple[str, ...]]:
    rng = random.Random(seed)
    lines = [line.split() for line in text.read_text().splitlines()[:50_000]]
    picked = []
    while len(picked) < count:
        words = rng.choice(lines)
        n = rng.randint(2, 6)
        if len(words) >= n:
            start = rng.randrange(len(words) - n + 1)
            picked.append(tuple(words[start : start + n]))
    return picked


def direct_pmi(model, grams) -> np.ndarray:
    """The formula with no cache: one score call per n-gram and one per token."""
    values = []
    for tokens in grams:
        joint = model.score(" ".join(tokens), bos=False, eos=False)
        parts = sum(model.score(token, bos=False, eos=False) for token in tokens)
        values.append(math.log(10) * (joint - parts) / len(tokens))
    return np.asarray(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--words", type=int, default=4_000_000)
    parser.add_argument("--memory", default="1G", help="lmplz / build_binary sort memory, both runs")
    parser.add_argument("--queries", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "work" / "kenlm")
    parser.add_argument("--write-md", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    python = sys.executable

    sentences, text, words = build_corpus(args.data_root, args.words, args.work)
    quarter, _, quarter_words = build_corpus(args.data_root, args.words // 4, args.work)
    ours_runs = [run_ours(python, sentences, args.work / "ours" / "lm.binary", args.memory) for _ in range(args.repeat)]
    base_runs = [run_baseline(text, args.work / "baseline" / "lm.binary", args.memory) for _ in range(args.repeat)]
    quarter_run = run_ours(python, quarter, args.work / "quarter" / "lm.binary", args.memory)
    same = (args.work / "ours" / "lm.arpa").read_bytes() == (args.work / "baseline" / "lm.arpa").read_bytes()
    if not same:
        raise SystemExit("error: the stage's ARPA differs from lmplz's on the text file")
    ours = min(ours_runs, key=lambda r: r.wall)
    base = min(base_runs, key=lambda r: r.wall)

    lm = CorpusLM(args.work / "ours" / "lm.binary")
    grams = candidates(text, args.queries)
    started = time.perf_counter()
    fast = lm.pmi_many(grams)
    fast_s = time.perf_counter() - started
    started = time.perf_counter()
    slow = direct_pmi(lm.model, grams)
    slow_s = time.perf_counter() - started
    np.testing.assert_allclose(fast, slow, atol=1e-9)

    rows = [
        [
            "ours: pipeline kenlm (Parquet → stdin)",
            f"{words:,}",
            f"{ours.wall:.2f}",
            f"{ours.cpu:.2f}",
            f"{words / ours.wall / 1e6:.2f}",
            f"{ours.peak_rss_mb:,.0f}",
        ],
        [
            "ours, quarter size",
            f"{quarter_words:,}",
            f"{quarter_run.wall:.2f}",
            f"{quarter_run.cpu:.2f}",
            f"{quarter_words / quarter_run.wall / 1e6:.2f}",
            f"{quarter_run.peak_rss_mb:,.0f}",
        ],
        [
            "baseline: lmplz --text + build_binary",
            f"{words:,}",
            f"{base.wall:.2f}",
            f"{base.cpu:.2f}",
            f"{words / base.wall / 1e6:.2f}",
            f"{base.peak_rss_mb:,.0f}",
        ],
    ]
    table = markdown_table(["run", "words", "wall s", "CPU s", "M words/s", "peak RSS MB"], rows)
    query_rows = [
        ["CorpusLM.pmi_many", f"{len(grams):,}", f"{fast_s:.2f}", f"{len(grams) / fast_s:,.0f}"],
        ["direct formula, no cache", f"{len(grams):,}", f"{slow_s:.2f}", f"{len(grams) / slow_s:,.0f}"],
    ]
    query_table = markdown_table(["PMI queries (order-6 trie)", "n-grams", "s", "n-grams/s"], query_rows)
    ratio = base.wall / ours.wall
    query_ratio = slow_s / fast_s
    print(table, "\n", query_table, sep="\n")
    print(f"\nratio (baseline wall / ours wall): {ratio:.2f}; ARPA identical: {same}")
    print(f"PMI query speed-up (pmi_many / direct): {query_ratio:.2f}")
    if args.write_md:
        section = (
            "## kenlm\n\n"
            f"Run {datetime.date.today()} on {machine(python)}; KenLM 0.3.0 (lmplz, build_binary from "
            "`workflow/scripts/install_kenlm.sh`).\n\n"
            "Command (from the repo root): `python bench/kenlm_stage.py --write-md`\n\n"
            f"Input: the reference sentences replicated to {words:,} words; order 6, `--memory {args.memory}`, "
            f"trie binary. Best of {args.repeat} run(s) by wall time; peak RSS is the largest of the process and "
            "its children (lmplz).\n\n"
            f"{table}\n\n"
            f"- ratio (baseline wall / ours wall): {ratio:.2f} (1.00 = streaming from Parquet costs nothing); "
            "the two ARPA files are byte-identical\n"
            f"- streaming overhead (tokenising in Python, the pipe): "
            f"{(ours.wall - base.wall) / (words / 1e6):.2f} wall s per million words\n"
            f"- peak RSS at full vs quarter size: {ours.peak_rss_mb:,.0f} / {quarter_run.peak_rss_mb:,.0f} MB "
            "(the larger of the stage and lmplz, whose sort buffers dominate: the stage's side streams)\n"
            f"- 1-minute load average at the end of the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
            "(a shared machine: wall times are noisy)\n\n"
            f"{query_table}\n\n"
            f"- PMI query speed-up (pmi_many with cached unigrams / direct formula): {query_ratio:.2f}\n"
        )
        write_section("kenlm", section)


if __name__ == "__main__":
    main()
