"""Shared fixtures: the real data root, small dumps written on the fly, the CLI."""

from __future__ import annotations

import bz2
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.cli import main

REPO = Path(__file__).resolve().parent.parent
DEMO_DATA = REPO / "workflow" / "demo" / "data"
DATA_ROOT = Path(os.environ.get("ULR_DATA_ROOT", REPO.parent / "shared" / "data"))

EN_SAMPLE = "wiki/en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
ZH_SAMPLE = "wiki/zh/zhwiki-test-pages.xml"


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The real public data (../shared/data, or $ULR_DATA_ROOT); skips where it is absent."""
    if not (DATA_ROOT / "SOURCES.md").exists():
        pytest.skip(f"real data not found at {DATA_ROOT} (set ULR_DATA_ROOT to its location)")
    return DATA_ROOT


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
    return (f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{page_id}</id>\n"
            f"    {redirect_tag}\n    <revision>\n      <id>{page_id * 10}</id>\n"
            f'      <text xml:space="preserve">{escape(text)}</text>\n    </revision>\n  </page>\n')


def dump_xml(pages: list[str]) -> str:
    return HEADER + "".join(pages) + "</mediawiki>\n"


@pytest.fixture
def small_dump(tmp_path) -> Path:
    """A three-article dump with a redirect and a page in another namespace, bz2-compressed."""
    pages = [
        page_xml(1, "Paris", "'''Paris''' is the capital of [[France]].<ref>A source.</ref> It lies on the [[Seine|river Seine]].\n\n== History ==\nThe city grew along the [[river]]s."),
        page_xml(2, "France", "{{Infobox country|capital=[[Paris]]}}\n[[France]] is a country in [[Europe]]. Its capital is [[Paris]]."),
        page_xml(3, "Capital of France", "#REDIRECT [[Paris]]", redirect="Paris"),
        page_xml(4, "Category:Capitals", "Capital cities.", ns=14),
        page_xml(5, "Seine", "The [[Seine]] is a river. It flows through [[Paris]] to the [[English Channel]]."),
    ]
    path = tmp_path / "small.xml.bz2"
    path.write_bytes(bz2.compress(dump_xml(pages).encode()))
    return path


def read_dir(directory: Path) -> pa.Table:
    tables = [pq.read_table(p) for p in sorted(Path(directory).glob("*.parquet"))]
    return pa.concat_tables(tables) if tables else None


@pytest.fixture
def cli():
    """Run ``python -m pipeline ARGS`` in-process; returns the exit status."""
    return lambda *args: main([str(a) for a in args])
