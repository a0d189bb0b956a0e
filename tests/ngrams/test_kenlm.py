"""The kenlm stage (lmplz → build_binary) and corpus-level PMI from the LM (docs/method.md §2).

Tests that estimate a model need KenLM's binaries (``make install`` builds them into the
venv); they skip, saying so, where those are absent. The failure-path tests use stand-in
scripts and run everywhere.
"""

from __future__ import annotations

import json
import math
import stat
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import contracts
from pipeline.errors import InputError
from pipeline.ngrams import kenlm as kenlm_stage
from pipeline.ngrams.kenlm import CorpusLM

kenlm = pytest.importorskip("kenlm")

HAND_MADE = [  # 22 words, 15 distinct once lower-cased
    "The cat sat on the mat",
    "the dog sat on the log",
    "new york is a big city",
    "i love new york",
]
CHINESE = ["北京是中国的首都", "我爱北京天安门", "北京 有 很多 大学", "上海是中国的城市"]


def write_sentences(path: Path, texts: list[str], doc_ids: list[int] | None = None) -> Path:
    doc_ids = doc_ids or [0] * len(texts)
    table = pa.table(
        {
            "doc_id": pa.array(doc_ids, pa.int64()),
            "sent_id": pa.array(range(len(texts)), pa.int32()),
            "text": pa.array(texts, pa.string()),
            "entities": pa.array([[] for _ in texts], contracts.SENTENCES.field("entities").type),
        }
    )
    contracts.write_table(path, table, contracts.SENTENCES, {"stage": "test"})
    return path


def read_arpa(path: Path) -> dict[tuple[str, ...], tuple[float, float]]:
    """n-gram → (log10 p, log10 backoff) from an ARPA file."""
    entries, order = {}, 0
    for line in path.read_text().splitlines():
        if line.startswith("\\") and line.endswith("-grams:"):
            order = int(line[1:].split("-")[0])
        elif order and line.strip() and not line.startswith("\\"):  # \end\
            fields = line.split("\t")
            words = tuple(fields[1].split(" "))
            assert len(words) == order
            entries[words] = (float(fields[0]), float(fields[2]) if len(fields) > 2 else 0.0)
    return entries


@pytest.fixture(scope="module")
def binaries():
    try:
        return kenlm_stage.find_binaries()
    except InputError as exc:
        pytest.skip(f"KenLM's lmplz/build_binary are not built ({exc}); run `make install`")


@pytest.fixture(scope="module")
def hand_lm(binaries, tmp_path_factory, cli_module):
    root = tmp_path_factory.mktemp("hand")
    sentences = write_sentences(root / "shard-000.parquet", HAND_MADE)
    out = root / "lm" / "lm.binary"
    status = cli_module(
        "kenlm",
        "--sentences",
        sentences,
        "--lang",
        "en",
        "--order",
        3,
        "--lowercase",
        "--memory",
        "64M",
        "--arpa",
        root / "lm" / "lm.arpa",
        "--out",
        out,
    )
    assert status == 0
    return out


@pytest.fixture(scope="module")
def cli_module():
    from pipeline.cli import main

    return lambda *args: main([str(a) for a in args])


def test_stage_writes_binary_arpa_and_stats(hand_lm):
    arpa = hand_lm.with_name("lm.arpa")
    for path in (hand_lm, arpa):  # both forms load in the Python module
        assert kenlm.Model(str(path)).order == 3
    stats = json.loads(hand_lm.with_name("lm.binary.json").read_text())
    assert (stats["sentences"], stats["lines"], stats["tokens"]) == (4, 4, 22)
    assert stats["order"] == 3 and stats["lowercase"] is True and stats["lang"] == "en"
    assert stats["ngrams_per_order"]["1"] == 15 + 3  # the words, <s>, </s>, <unk>
    assert stats["fallback_discount_orders"] == [1, 2, 3]  # four sentences: no Kneser-Ney estimate
    assert "--discount_fallback" in stats["lmplz_args"] and "--skip_symbols" in stats["lmplz_args"]
    assert stats["provenance"]["stage"] == "kenlm"
    assert stats["provenance"]["inputs"][0]["path"].endswith("shard-000.parquet")
    vocab = {words[0] for words in read_arpa(arpa) if len(words) == 1}
    assert "the" in vocab and "The" not in vocab  # --lowercase
    assert not [p.name for p in hand_lm.parent.iterdir() if p.name.startswith(".")]  # no temporaries left


def test_pmi_equals_hand_computation_from_arpa(hand_lm):
    arpa = read_arpa(hand_lm.with_name("lm.arpa"))
    lm = CorpusLM(hand_lm)
    p = {words: logp for words, (logp, _) in arpa.items()}
    backoff = {words: bo for words, (_, bo) in arpa.items()}
    # "new york" and "new york is" are in the model: P(w) is read off by the chain rule.
    by_hand = math.log(10) * (p[("new", "york")] - p[("york",)]) / 2
    assert lm.pmi(("new", "york")) == pytest.approx(by_hand, abs=1e-6)
    joint = p[("new",)] + p[("new", "york")] + p[("new", "york", "is")]
    parts = p[("new",)] + p[("york",)] + p[("is",)]
    assert lm.pmi(("new", "york", "is")) == pytest.approx(math.log(10) * (joint - parts) / 3, abs=1e-6)
    # "cat dog" was never seen: P(dog | cat) backs off, P = p(cat) * bo(cat) * p(dog).
    joint = p[("cat",)] + backoff[("cat",)] + p[("dog",)]
    parts = p[("cat",)] + p[("dog",)]
    assert lm.pmi(("cat", "dog")) == pytest.approx(math.log(10) * (joint - parts) / 2, abs=1e-6)
    assert lm.pmi(("york",)) == 0.0


def test_pmi_equals_the_models_own_scores(hand_lm):
    model = kenlm.Model(str(hand_lm))
    lm = CorpusLM(hand_lm)
    candidates = [("new", "york"), ("sat", "on", "the"), ("the", "log"), ("york", "new"), ("zebra", "the")]
    for words in candidates:
        joint = sum(score for score, _, _ in model.full_scores(" ".join(words), bos=False, eos=False))
        parts = sum(model.score(word, bos=False, eos=False) for word in words)
        # KenLM sums in float32 inside score(), full_scores() hands out each term: equal to ~1e-7.
        assert lm.pmi(words) == pytest.approx(math.log(10) * (joint - parts) / len(words), abs=1e-5)
    many = lm.pmi_many(candidates)
    assert many.dtype == np.float64 and many.shape == (5,)
    np.testing.assert_allclose(many, [lm.pmi(words) for words in candidates], rtol=0, atol=1e-12)
    assert lm.pmi(("new", "york")) > lm.pmi(("york", "new"))
    assert lm.stats["lowercase"] is True


def test_same_input_same_outputs(hand_lm, tmp_path, cli_module):
    sentences = hand_lm.parent.parent / "shard-000.parquet"
    out = tmp_path / "lm.binary"
    assert (
        cli_module(
            "kenlm",
            "--sentences",
            sentences,
            "--lang",
            "en",
            "--order",
            3,
            "--lowercase",
            "--memory",
            "64M",
            "--out",
            out,
        )
        == 0
    )
    assert out.read_bytes() == hand_lm.read_bytes()
    assert out.with_name("lm.binary.json").read_text() == hand_lm.with_name("lm.binary.json").read_text()


def test_collocations_outscore_random_pairs_on_wikipedia(binaries, data_root, tmp_path, cli_module):
    source = pq.read_table(data_root / "reference_pmi" / "sentences.parquet").slice(0, 500)
    sentences = write_sentences(
        tmp_path / "shard-000.parquet", source.column("text").to_pylist(), source.column("doc_id").to_pylist()
    )
    out = tmp_path / "lm.binary"
    assert (
        cli_module("kenlm", "--sentences", sentences, "--lang", "en", "--order", 4, "--memory", "64M", "--out", out)
        == 0
    )
    stats = json.loads(out.with_name("lm.binary.json").read_text())
    assert stats["sentences"] == 500 and stats["tokens"] == sum(len(t.split()) for t in source["text"].to_pylist())
    lm = CorpusLM(out)
    collocations = [("United", "States"), ("such", "as"), ("free", "love"), ("associated", "with")]
    random_pairs = [("the", "of"), ("as", "such"), ("States", "United"), ("with", "the", "and")]
    worst_collocation = lm.pmi_many(collocations).min()
    assert worst_collocation > 1.0
    assert worst_collocation > lm.pmi_many(random_pairs).max()


def test_chinese_is_modelled_by_characters(binaries, tmp_path, cli_module):
    sentences = write_sentences(tmp_path / "zh.parquet", CHINESE)
    out = tmp_path / "lm.binary"
    arpa = tmp_path / "lm.arpa"
    assert (
        cli_module(
            "kenlm",
            "--sentences",
            sentences,
            "--lang",
            "zh",
            "--order",
            3,
            "--memory",
            "64M",
            "--arpa",
            arpa,
            "--out",
            out,
        )
        == 0
    )
    stats = json.loads(out.with_name("lm.binary.json").read_text())
    # The whitespace runs of the third sentence are lines of their own (n-gram boundaries, docs/method.md §2).
    assert (stats["sentences"], stats["lines"]) == (4, 7)
    assert stats["tokens"] == sum(len(text.replace(" ", "")) for text in CHINESE)
    unigrams = {words[0] for words in read_arpa(arpa) if len(words) == 1} - {"<s>", "</s>", "<unk>"}
    assert unigrams == set("".join(CHINESE).replace(" ", ""))
    assert ("有", "很") not in read_arpa(arpa)  # never adjacent inside one run
    lm = CorpusLM(out)
    assert lm.stats["lang"] == "zh"
    assert lm.pmi(("北", "京")) > lm.pmi(("京", "北"))
    assert lm.pmi(("中", "国", "的")) > lm.pmi(("的", "国", "中"))


# ---- failures: no binaries needed ------------------------------------------------------------


def fake_kenlm(folder: Path, lmplz_body: str) -> Path:
    """Stand-in lmplz / build_binary scripts in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in (("lmplz", lmplz_body), ("build_binary", "exit 0")):
        script = folder / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def test_missing_lmplz_is_a_clear_error(tmp_path, cli, capsys):
    sentences = write_sentences(tmp_path / "s.parquet", HAND_MADE)
    out = tmp_path / "out" / "lm.binary"
    assert cli("kenlm", "--sentences", sentences, "--lang", "en", "--lmplz", "/nonexistent/lmplz", "--out", out) == 2
    message = capsys.readouterr().err
    assert "/nonexistent/lmplz" in message and "make install" in message and "install_kenlm.sh" in message
    assert not out.exists() and not out.with_name("lm.binary.json").exists()


def test_binaries_are_found_in_kenlm_bin_first(tmp_path, monkeypatch):
    fake = fake_kenlm(tmp_path / "kenlm-bin", "exit 0")
    monkeypatch.setenv("KENLM_BIN", str(fake))
    assert kenlm_stage.find_binaries() == (fake / "lmplz", fake / "build_binary")
    assert kenlm_stage.find_binaries(fake) == (fake / "lmplz", fake / "build_binary")  # --lmplz FOLDER
    (fake / "build_binary").unlink()
    with pytest.raises(InputError, match="build_binary"):
        kenlm_stage.find_binaries(fake / "lmplz")


@pytest.mark.parametrize("bad", ["not parquet", "no text column"])
def test_bad_input_file(tmp_path, cli, capsys, bad):
    path = tmp_path / "shard-000.parquet"
    if bad == "not parquet":
        path.write_text("the cat sat on the mat\n")
    else:
        pq.write_table(pa.table({"doc_id": [1], "sentence": ["the cat"]}), path)
    out = tmp_path / "lm.binary"
    assert cli("kenlm", "--sentences", path, "--lang", "en", "--out", out) == 2
    message = capsys.readouterr().err
    assert str(path) in message and ("Parquet" in message or "'text'" in message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shard-000.parquet"]


def test_empty_corpus_is_an_input_error(tmp_path, cli, capsys):
    sentences = write_sentences(tmp_path / "empty.parquet", [])
    fake = fake_kenlm(tmp_path / "bin", "cat > /dev/null")
    assert cli("kenlm", "--sentences", sentences, "--lang", "en", "--lmplz", fake, "--out", tmp_path / "lm.binary") == 2
    assert "no tokens" in capsys.readouterr().err


def test_order_beyond_kenlm_max_is_refused(tmp_path, cli, capsys):
    status = cli("kenlm", "--sentences", tmp_path / "s.parquet", "--lang", "en", "--order", 7, "--out", tmp_path / "lm")
    assert status == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: ") and "--order" in errors[0]


def test_failed_lmplz_leaves_no_partial_output(tmp_path, cli, capsys):
    sentences = write_sentences(tmp_path / "s.parquet", HAND_MADE * 50)
    # Reads part of the input, writes half an ARPA where it was told to, then fails.
    fake = fake_kenlm(
        tmp_path / "bin",
        'head -c 10 > /dev/null\nfor a; do case "$prev" in --arpa) '
        'echo "\\\\data\\\\" > "$a";; esac; prev=$a; done\necho "boom: disk full" >&2\nexit 3',
    )
    out_dir = tmp_path / "out"
    assert (
        cli(
            "kenlm",
            "--sentences",
            sentences,
            "--lang",
            "en",
            "--lmplz",
            fake / "lmplz",
            "--arpa",
            out_dir / "lm.arpa",
            "--out",
            out_dir / "lm.binary",
        )
        == 2
    )
    assert "lmplz failed (exit status 3): boom: disk full" in capsys.readouterr().err
    assert list(out_dir.iterdir()) == []  # no binary, no JSON, no ARPA, no temporaries


def test_corpus_lm_rejects_a_file_that_is_not_a_model(tmp_path):
    bogus = tmp_path / "lm.binary"
    bogus.write_text("not a language model\n")
    with pytest.raises(InputError, match="lm.binary"):
        CorpusLM(bogus)
    with pytest.raises(InputError, match="not found"):
        CorpusLM(tmp_path / "absent.binary")


def test_pmi_refuses_strings_and_empty_ngrams(hand_lm):
    lm = CorpusLM(hand_lm)
    for bad in ("new york", ()):
        with pytest.raises(ValueError):
            lm.pmi(bad)
    with pytest.raises(ValueError, match="not strings"):
        lm.pmi_many(["new york"])
    assert lm.pmi_many([]).shape == (0,)


def test_install_script_skips_when_built_and_checks_its_arguments(tmp_path):
    import subprocess

    script = Path(__file__).resolve().parents[2] / "workflow" / "scripts" / "install_kenlm.sh"
    fake_kenlm(tmp_path / "prefix" / "bin", "exit 0")
    done = subprocess.run(
        [str(script), str(tmp_path / "prefix")], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "already built" in done.stderr
    assert str(tmp_path / "prefix" / "bin" / "lmplz") in done.stderr
    usage = subprocess.run([str(script)], check=False, capture_output=True, text=True, timeout=60)
    assert usage.returncode == 64 and "usage" in usage.stderr
