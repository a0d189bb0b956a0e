"""The same run in two folders gives byte-identical Parquet and model files.

Provenance records input paths relative to the working directory (Snakemake runs every job
from the repository root), so nothing in an output names the folder it was made in. Here the
corpus and n-gram stages, the sample, word2vec and a tiny model run on the demo dumps in two
folders, once with absolute and once with relative paths, and every output file is compared.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from testdata import DEMO_DATA

from pipeline.cli import main


def run_pipeline(folder: Path, absolute: bool) -> None:
    data = folder / "data"
    shutil.copytree(DEMO_DATA / "wiki", data / "wiki")

    def p(relative: str) -> str:
        return str(folder / relative) if absolute else relative

    def stage(*args) -> None:
        assert main([str(a) for a in args]) == 0, args

    stage(
        "extract",
        "--dump",
        p("data/wiki/en/enwiki-demo-pages-articles.xml"),
        "--lang",
        "en",
        "--shards",
        2,
        "--out",
        p("results/corpus/en/docs"),
    )
    stage(
        "extract",
        "--dump",
        p("data/wiki/zh/zhwiki-demo-pages-articles.xml"),
        "--lang",
        "zh",
        "--out",
        p("results/corpus/zh/docs"),
    )
    stage("convert", "--input", p("results/corpus/zh/docs"), "--out", p("results/corpus/zh/simplified"))
    stage("clean", "--input", p("results/corpus/en/docs"), "--lang", "en", "--out", p("results/corpus/en/sentences"))
    for shard in ("shard-000", "shard-001"):
        stage(
            "ngrams",
            "--sentences",
            p(f"results/corpus/en/sentences/{shard}.parquet"),
            "--lang",
            "en",
            "--top-k",
            300,
            "--out",
            p(f"results/ngrams/en/{shard}"),
        )
    marked = [p(f"results/ngrams/en/{shard}/marked.parquet") for shard in ("shard-000", "shard-001")]
    for shard, only in zip(("shard-000", "shard-001"), marked, strict=True):
        stage(
            "sample", "--marked", *marked, "--only", only, "--size", 100, "--out", p(f"results/sample/{shard}.parquet")
        )
    sentences = [p(f"results/corpus/en/sentences/{shard}.parquet") for shard in ("shard-000", "shard-001")]
    stage(
        "word2vec",
        "--sentences",
        *sentences,
        "--lang",
        "en",
        "--dim",
        8,
        "--min-count",
        1,
        "--epochs",
        1,
        "--out",
        p("results/word2vec/en/vectors.bin"),
    )
    stage(
        "tiny-model",
        "--sentences",
        *sentences,
        "--lang",
        "en",
        "--vocab-size",
        300,
        "--hidden",
        16,
        "--layers",
        1,
        "--heads",
        2,
        "--max-length",
        32,
        "--out",
        p("results/models/tiny"),
    )


def outputs(folder: Path) -> dict[str, bytes]:
    """Every output but the stats JSONs, which hold run times."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted((folder / "results").rglob("*"))
        if path.is_file() and not path.name.endswith(".json") or path.name in ("config.json", "tokenizer.json")
    }


def test_same_run_in_two_folders_gives_the_same_bytes(tmp_path, monkeypatch):
    produced = []
    for name, absolute in (("first", True), ("second place", False)):
        folder = tmp_path / name
        folder.mkdir()
        monkeypatch.chdir(folder)
        run_pipeline(folder, absolute)
        produced.append(outputs(folder))
    first, second = produced
    assert sorted(first) == sorted(second)
    assert any(name.endswith(".parquet") for name in first) and "results/word2vec/en/vectors.bin" in first
    assert any(name.startswith("results/models/tiny/") for name in first)
    different = [name for name in first if first[name] != second[name]]
    assert different == []
    assert str(tmp_path).encode() not in b"".join(first.values())


def test_demo_workflow_in_two_folders_gives_the_same_bytes(tmp_path):
    """Snakemake itself, in two working directories (one with a space in its name): the demo's
    corpus, n-grams, sample, word2vec and tiny model, byte for byte (run times and logs aside)."""
    import os
    import subprocess
    import sys

    from testdata import REPO

    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PYTHONPATH": str(REPO), "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    targets = [
        "results/repro/sample/ulr/en/demo/shard-000.parquet",
        "results/repro/sample/burt/zh/demo/shard-001.parquet",
        "results/repro/word2vec/en/vectors.bin",
        "results/repro/models/tiny",
    ]
    produced = []
    for name in ("first", "second place"):
        folder = tmp_path / name
        folder.mkdir()
        result = subprocess.run(
            [
                str(bin_dir / "snakemake"),
                *targets,
                "--snakefile",
                str(REPO / "Snakefile"),
                "--directory",
                str(folder),
                "--cores",
                "1",
                "--configfile",
                str(REPO / "workflow/config/demo.yaml"),
                "--config",
                "run=repro",
                f"data_root={REPO / 'workflow/demo/data'}",
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        produced.append(
            {
                str(p.relative_to(folder)): p.read_bytes()
                for p in sorted((folder / "results").rglob("*"))
                if p.is_file() and p.suffix != ".json" and not {"logs", "benchmarks"} & set(p.parts)
            }
        )
    first, second = produced
    assert sorted(first) == sorted(second) and len(first) >= 20
    assert [name for name in first if first[name] != second[name]] == []
