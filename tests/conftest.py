"""Shared fixtures: the real data root, small dumps written on the fly, the CLI."""

from __future__ import annotations

import bz2
from pathlib import Path

import pytest
from testdata import DATA_ROOT, dump_xml, page_xml

from pipeline.cli import main


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The real public data (../shared/data, or $ULR_DATA_ROOT); skips where it is absent."""
    if not (DATA_ROOT / "SOURCES.md").exists():
        pytest.skip(f"real data not found at {DATA_ROOT} (set ULR_DATA_ROOT to its location)")
    return DATA_ROOT


@pytest.fixture
def small_dump(tmp_path) -> Path:
    """A three-article dump with a redirect and a page in another namespace, bz2-compressed."""
    pages = [
        page_xml(
            1,
            "Paris",
            "'''Paris''' is the capital of [[France]].<ref>A source.</ref> It lies on the [[Seine|river Seine]].\n\n== History ==\nThe city grew along the [[river]]s.",
        ),
        page_xml(
            2,
            "France",
            "{{Infobox country|capital=[[Paris]]}}\n[[France]] is a country in [[Europe]]. Its capital is [[Paris]].",
        ),
        page_xml(3, "Capital of France", "#REDIRECT [[Paris]]", redirect="Paris"),
        page_xml(4, "Category:Capitals", "Capital cities.", ns=14),
        page_xml(5, "Seine", "The [[Seine]] is a river. It flows through [[Paris]] to the [[English Channel]]."),
    ]
    path = tmp_path / "small.xml.bz2"
    path.write_bytes(bz2.compress(dump_xml(pages).encode()))
    return path


@pytest.fixture
def cli():
    """Run ``python -m pipeline ARGS`` in-process; returns the exit status."""
    return lambda *args: main([str(a) for a in args])
