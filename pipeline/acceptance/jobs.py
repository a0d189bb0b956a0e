"""The jobs of the GPU acceptance run (pipeline/acceptance/gpu_acceptance.py): data and models made by the pipeline's
own stages, each training job run as ``python -m pipeline STAGE`` (several in one process where they need no
process of their own: pipeline/acceptance/peak_memory.py), and what it left read back.

Nothing here trains or masks anything itself: the data is the demo's English Wikipedia dump taken through
``extract``, ``clean``, ``ngrams`` and ``sample`` (single sentences and, for NSP / SOP, ``--with-next``
pairs), the models are ``tiny-model`` outputs (``--architecture`` at the papers' sizes on CUDA, tiny shapes of
the same families on CPU), and the fine-tuning task is an SST-2-format folder of the same sentences joined
into inputs longer than 128 tokens (so every classify batch is full length, the length the memory model
assumes), with a label the models can learn (:func:`make_glue`): seeds then train apart, by far more than the
tolerance of the fused-against-solo rows, so that those rows can fail (pipeline/acceptance/verdicts.py). Each
training job runs under pipeline/acceptance/peak_memory.py, which calls the package's entry point and records
``torch.cuda.max_memory_allocated``.
"""

from __future__ import annotations

import ast
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO_DUMP = REPO / "workflow" / "demo" / "data" / "wiki" / "en" / "enwiki-demo-pages-articles.xml"
PRETRAIN_FUNCTIONS = REPO / "workflow" / "rules" / "functions" / "pretrain.smk"
PRETRAIN_RULES = REPO / "workflow" / "rules" / "pretrain.smk"
PEAK = "pipeline.acceptance.peak_memory"
SENTENCES_PER_INPUT = 8  # demo sentences joined into one fine-tuning input: about 200 tokens, cut at 128
TRAIN_INPUTS, DEV_INPUTS = 64, 32
CHID_CANDIDATES = 10  # CLUE's ChID: ten candidate idioms a blank (workloads.yaml sequences_per_example)
CHID_SENTENCES = 16  # demo sentences a ChID passage: about 400 tokens, cut at 256
CHID_WORDS = 120  # a ChID candidate: one word this many times, about half of its 256 tokens
# the jobs find this interpreter's tools first (torchrun), as `make` puts the venv first on PATH
# (read when a job starts: the host's wheels and offline switches are set in os.environ first); jobs compared in
# float32 add NVIDIA_TF32_OVERRIDE=0, so that no cuBLAS product rounds to TF32 in the jobs themselves


def job_env(extra: dict | None = None) -> dict:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, **(extra or {})}


# classify's per-seed log line (pipeline/classify/classify.py log_seed)
SEED_LINE = re.compile(r"seed (\d+): (\d+) steps in ([\d.]+) s \(([\d.]+) train examples/s\)")


@dataclass
class Job:
    """One finished (or failed) training process: its exit status, its log, the GPU peak it recorded."""

    name: str
    status: int
    seconds: float
    log: str
    peak_bytes: int | None = None
    out: Path | None = None
    extra: dict = field(default_factory=dict)

    def tail(self, lines: int = 3) -> str:
        return " | ".join(self.log.strip().splitlines()[-lines:])[-400:]


def stage(argv: list) -> None:
    """One data-making stage in this process (``pipeline.cli.main``, as ``python -m pipeline`` runs it)."""
    from pipeline.cli import main

    argv = [str(a) for a in argv]
    if main(argv) != 0:
        raise RuntimeError(f"python -m pipeline {' '.join(argv)} failed")


def make_data(work: Path) -> dict[str, Path]:
    """The demo's English dump through the corpus and n-gram stages: the sentence sample and the pair sample."""
    made = {"sentences": work / "sentences", "sample": work / "sample.parquet", "pairs": work / "pairs.parquet"}
    if made["pairs"].exists():
        return made
    marked = work / "ngrams" / "marked.parquet"
    stage(["extract", "--dump", DEMO_DUMP, "--lang", "en", "--out", work / "docs"])
    stage(["clean", "--input", work / "docs" / "shard-000.parquet", "--lang", "en", "--out", made["sentences"]])
    shard = made["sentences"] / "shard-000.parquet"
    stage(["ngrams", "--sentences", shard, "--lang", "en", "--lowercase", "--out", marked.parent])
    stage(["sample", "--marked", marked, "--size", 10**6, "--out", made["sample"]])
    stage(["sample", "--marked", marked, "--size", 10**6, "--with-next", "--out", made["pairs"]])
    return made


def _frequent_words(sentences: Path) -> tuple[list[str], list[str]]:
    """The first shard's sentences (whitespace made single), and their lower-cased words, most frequent first
    (ties by the word): the marker words of the learnable tasks below."""
    import pyarrow.parquet as pq

    texts = [" ".join(t.split()) for t in pq.read_table(sentences / "shard-000.parquet").column("text").to_pylist()]
    counts: dict[str, int] = {}
    for text in texts:
        for word in text.lower().split():
            counts[word] = counts.get(word, 0) + 1
    return texts, sorted(counts, key=lambda w: (-counts[w], w))


def make_glue(work: Path, sentences: Path) -> Path:
    """A data root holding ``glue/SST-2/{train,dev}.tsv`` of long inputs (module docstring); returns the root.
    The label is whether the input opens with the corpus's most frequent word or its second: one embedding
    decides it, so even a random-weight model learns it within the run's few steps, and seeds' losses part."""

    root = work / "glue-data"
    folder = root / "glue" / "SST-2"
    if (folder / "dev.tsv").exists():
        return root
    texts, frequent = _frequent_words(sentences)
    markers = frequent[:2]
    draw = random.Random(0)
    inputs = []
    for k in range(TRAIN_INPUTS + DEV_INPUTS):
        start = k * SENTENCES_PER_INPUT // 2 % max(len(texts) - SENTENCES_PER_INPUT, 1)
        label = draw.randint(0, 1)
        inputs.append((f"{markers[label]} {' '.join(texts[start : start + SENTENCES_PER_INPUT])}", label))
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("train", inputs[:TRAIN_INPUTS]), ("dev", inputs[TRAIN_INPUTS:])):
        lines = ["sentence\tlabel", *(f"{text}\t{label}" for text, label in rows)]
        (folder / f"{name}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def make_chid(root: Path, sentences: Path) -> Path:
    """``chinese/chid/{train,dev}.json`` under ``root`` (FewCLUE's layout, pipeline/classify/clue_readers.py
    ``read_chid``): passages of the demo's sentences, longer than 256 tokens, opening with one ``#idiom#`` blank,
    and :data:`CHID_CANDIDATES` candidates, each one word :data:`CHID_WORDS` times (so that the choices differ
    in half of their tokens, and seeds' heads score them apart from the first step: with idioms of four
    characters in a passage of 256 tokens, a random-weight model scores every choice alike, every seed's loss
    stays ln 10 and the row could not tell a permuted stack). The answer is the
    corpus's most frequent word, at a random place, the others the nine next most frequent: one embedding decides it (as :func:`make_glue`'s label), so seeds part. Returns ``root``."""

    folder = root / "chinese" / "chid"
    if (folder / "dev.json").exists():
        return root
    texts, frequent = _frequent_words(sentences)
    words = frequent[:CHID_CANDIDATES]
    draw = random.Random(0)
    lines = []
    for k in range(TRAIN_INPUTS + DEV_INPUTS):
        start = k * CHID_SENTENCES // 4 % max(len(texts) - CHID_SENTENCES, 1)
        answer = draw.randrange(CHID_CANDIDATES)
        openers = words[1:]
        draw.shuffle(openers)
        openers = openers[:answer] + [words[0]] + openers[answer:]
        candidates = [" ".join([word] * CHID_WORDS) for word in openers]
        content = f"#idiom# {' '.join(texts[start : start + CHID_SENTENCES])}"
        lines.append(json.dumps({"content": content, "candidates": candidates, "answer": answer}))
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("train", lines[:TRAIN_INPUTS]), ("dev", lines[TRAIN_INPUTS:])):
        (folder / f"{name}.json").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def make_model(work: Path, name: str, sentences: Path, shape: list[str], vocab_size: int) -> Path:
    """``tiny-model`` of ``shape`` (its options: ``--architecture NAME`` or the tiny sizes) into ``work/name``."""
    out = work / "models" / name
    if not (out / "config.json").exists():
        stage(
            ["tiny-model", "--sentences", sentences, "--lang", "en", "--vocab-size", vocab_size, *shape, "--out", out]
        )
    return out


def tokenize(work: Path, model: Path, marked: Path) -> Path:
    """``tokenize`` of a sample for a model's tokenizer, at 128 tokens (ULR-BERT §4)."""
    out = work / "tokens" / f"{model.name}-{marked.stem}.parquet"
    if not out.exists():
        stage(["tokenize", "--marked", marked, "--model", model, "--lang", "en", "--max-length", 128, "--out", out])
    return out


def run_jobs(batch: list[tuple[str, list]], work: Path, timeout: float, env: dict | None = None) -> list[Job]:
    """Each ``(name, argv)`` of ``batch`` (a stage and its options) run in turn in one process of its own, under
    pipeline/acceptance/peak_memory.py: its Job, with the job's own log and GPU peak."""
    folder = work / "peaks"
    folder.mkdir(parents=True, exist_ok=True)
    listed = []
    for name, argv in batch:
        peak, log = folder / f"{name}.json", folder / f"{name}.log"
        peak.unlink(missing_ok=True)
        listed.append({"name": name, "argv": [str(a) for a in argv], "log": str(log), "peak": str(peak)})
    manifest = folder / f"batch-{batch[0][0]}.json"
    manifest.write_text(json.dumps(listed, indent=1), encoding="utf-8")
    command = [sys.executable, "-m", PEAK, str(manifest)]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, cwd=REPO, env=job_env(env), capture_output=True, text=True, timeout=timeout, check=False
        )
        crash = done.stderr[-400:] if done.returncode > 100 or done.returncode < 0 else ""
    except subprocess.TimeoutExpired:
        crash = f"timed out after {timeout:.0f} s"
    jobs = []
    for entry in listed:
        peak, log = Path(entry["peak"]), Path(entry["log"])
        record = json.loads(peak.read_text()) if peak.exists() else {"status": 124 if crash else 1, "peak_bytes": None}
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        text += f"\n{crash}" if crash and not peak.exists() else ""
        seconds = record.get("seconds", time.monotonic() - started)
        jobs.append(Job(entry["name"], record["status"], seconds, text, record["peak_bytes"]))
    return jobs


def run_job(name: str, argv: list, work: Path, timeout: float, launcher: list[str] | None = None, env=None) -> Job:
    """``argv`` in a process of its own: under pipeline/acceptance/peak_memory.py, or, with ``launcher``, as
    ``LAUNCHER -m pipeline ARGV`` (the pretrain rule's launch line: no peak recorded)."""
    if not launcher:
        return run_jobs([(name, argv)], work, timeout, env)[0]
    command = [*launcher, "-m", "pipeline", *[str(a) for a in argv]]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, cwd=REPO, env=job_env(env), capture_output=True, text=True, timeout=timeout, check=False
        )
        status, log = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as expired:
        status, log = 124, f"timed out after {timeout:.0f} s: {(expired.stderr or b'')[-300:]!r}"
    return Job(name, status, time.monotonic() - started, log)


def killed_and_resumed(name: str, argv: list, save_folder: Path, work: Path, timeout: float) -> Job:
    """``classify ARGV`` killed (SIGKILL, its whole process group) once its first resume save is written, then
    run again to the end: the second run's Job, with ``extra['killed_at']``, the save it found."""
    argv = [str(a) for a in argv]
    command = [sys.executable, "-m", "pipeline", *argv]
    log_path = work / "peaks" / f"{name}-killed.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            command, cwd=REPO, env=job_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        killed_at = None
        while process.poll() is None and time.monotonic() - started < timeout:
            saves = sorted(save_folder.glob("*.pt")) if save_folder.is_dir() else []
            if saves:
                os.killpg(process.pid, signal.SIGKILL)
                killed_at = saves[0].name
                break
            time.sleep(0.02)
        if process.poll() is None and killed_at is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    rerun = run_job(name, argv, work, timeout)
    rerun.extra["killed_at"] = killed_at
    rerun.extra["first_status"] = process.returncode
    return rerun


# ------------------------------------------------------------------ what the jobs left
def train_log(model: Path) -> list[dict]:
    path = model / "train_log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def losses(model: Path) -> list[float]:
    return [float(entry["loss"]) for entry in train_log(model) if "loss" in entry]


def falling(values: list[float]) -> bool:
    """Every loss finite, and the mean of the last quarter of the steps below the first quarter's."""
    if len(values) < 4 or not all(math.isfinite(v) for v in values):
        return False
    quarter = max(len(values) // 4, 1)
    return sum(values[-quarter:]) / quarter < sum(values[:quarter]) / quarter


def timed_steps(model: Path, skip: int) -> list[dict]:
    """The steps at steady state: after the first ``skip`` (warm-up: allocator, autotuning), each with the
    seconds it took. Those are ``step_seconds`` where the log has them (the step's own compute, CUDA events on a
    GPU: pipeline/pretrain/step_timer.py, so no data-loader restart is inside them); else, from an older log, the
    wall clock of ``tokens_per_s``, leaving out every step that opens an epoch (its loader's workers start then)."""
    entries = [e for e in train_log(model) if e.get("tokens_per_s")][skip:]
    found = []
    for before, entry in zip([None, *entries], entries, strict=False):
        if entry.get("step_seconds"):
            found.append({**entry, "seconds": entry["step_seconds"]})
        elif before is not None and before.get("epoch") == entry.get("epoch"):
            found.append({**entry, "seconds": entry["tokens"] / entry["tokens_per_s"]})
    return found


def throughput(model: Path, skip: int) -> tuple[float, float]:
    """``(tokens/s, processed tokens/s)`` over the steady-state steps (:func:`timed_steps`): tokens are the
    non-pad ones train_log.jsonl counts, processed ones include the padding (its ``padding_share``), as the
    plan's cost model counts work (pipeline/budget/cost.py)."""
    entries = timed_steps(model, skip)
    if not entries:
        return 0.0, 0.0
    seconds = sum(e["seconds"] for e in entries)
    tokens = sum(e["tokens"] for e in entries)
    processed = sum(e["tokens"] / (1 - e.get("padding_share", 0.0)) for e in entries)
    return tokens / seconds, processed / seconds


def longest_batch(model: Path, batch: int, inputs: float = 1.0) -> int:
    """The longest padded length of a step's batch: processed tokens over the batch's inputs, ``inputs`` per
    example (MiSAD's S, and w and R packed in a row beside it, logged together)."""
    entries = [e for e in train_log(model) if e.get("tokens")]
    return max((round(e["tokens"] / (1 - e.get("padding_share", 0.0)) / batch / inputs) for e in entries), default=0)


def mean_speed(log: str, batch: int) -> float:
    """ms per member-step, averaged over the seeds of a classify log (0 where it logged none)."""
    speeds = seed_speeds(log, batch)
    return sum(speeds.values()) / len(speeds) if speeds else 0.0


def weights(model: Path) -> dict:
    """A model folder's weights (``model.safetensors``): name -> tensor."""
    from safetensors.torch import load_file

    return load_file(str(model / "model.safetensors"))


def seed_speeds(log: str, batch: int) -> dict[int, float]:
    """ms per member-step of each seed, from classify's per-seed log line (examples/s at ``batch`` a step)."""
    return {int(m[1]): 1000 * batch / float(m[4]) for m in SEED_LINE.finditer(log) if float(m[4]) > 0}


def seed_seconds(log: str) -> dict[int, float]:
    """Each seed's training seconds, from classify's per-seed log line (a fused member's: the stack's over K)."""
    return {int(m[1]): float(m[3]) for m in SEED_LINE.finditer(log)}


def padded_tokens(out: Path) -> dict[int, int]:
    """Each seed's processed tokens, padding included, over its epochs (metrics.json ``processed_tokens``,
    pipeline/classify/processed_tokens.py): what its steps computed on."""
    path = out / "metrics.json"
    if not path.exists():
        return {}
    found = {}
    for seed, record in json.loads(path.read_text())["per_seed"].items():
        padded = (record.get("processed_tokens") or {}).get("padded") or []
        found[int(seed)] = int(sum(padded))
    return found


def per_seed_losses(out: Path) -> dict[str, float]:
    path = out / "metrics.json"
    if not path.exists():
        return {}
    return {seed: float(r["train_loss"]) for seed, r in json.loads(path.read_text())["per_seed"].items()}


def same_outcome(a: Path, b: Path) -> tuple[bool, str]:
    """Whether two classify outputs hold the same per-seed numbers and byte-identical prediction files."""
    if not (a / "metrics.json").exists() or not (b / "metrics.json").exists():
        return False, "a metrics.json is missing"
    seeds = [json.loads((x / "metrics.json").read_text())["per_seed"] for x in (a, b)]
    if seeds[0] != seeds[1]:
        return False, "per-seed losses or metrics differ"
    files = sorted(p.name for p in a.glob("*predictions*"))
    differ = [n for n in files if (a / n).read_bytes() != (b / n).read_bytes()]
    if differ or not files:
        return False, f"predictions differ: {', '.join(differ) or 'none written'}"
    return True, f"per-seed numbers and {len(files)} prediction files identical"


# ------------------------------------------------------------------ the pretrain rule's launch line
def rule_launcher(processes: int) -> list[str]:
    """The pretrain rule's launcher (workflow/rules/functions/pretrain.smk ``launcher``, read from the file and
    run as written) for two GPUs, its process count then set to ``processes``: torchrun's line, which the
    workflow takes only above one GPU, with one process, so that one GPU runs it."""
    tree = ast.parse(PRETRAIN_FUNCTIONS.read_text(encoding="utf-8"))
    found = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "launcher")
    space: dict = {}
    exec(compile(ast.Module([found], []), str(PRETRAIN_FUNCTIONS), "exec"), space)  # noqa: S102 (the repo's own file)
    line = list(space["launcher"](2))
    line[line.index("--nproc_per_node") + 1] = str(processes)
    return line


def rule_shell() -> str:
    """The pretrain rule's shell line (workflow/rules/pretrain.smk), for the table to show what ran."""
    text = PRETRAIN_RULES.read_text(encoding="utf-8")
    found = re.search(r'"(\{params\.launcher:q\} -m pipeline pretrain[^"]*)"', text)
    return found[1] if found else ""
