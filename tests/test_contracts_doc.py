"""The data-contract table exists once, in docs/design.md, and is what pipeline/contracts.py renders."""

from __future__ import annotations

import pyarrow as pa
import pytest
from testdata import REPO

from pipeline import contracts

DESIGN = REPO / "docs" / "design.md"


def test_the_design_page_holds_the_table_rendered_from_the_contracts():
    documented = contracts.documented(DESIGN.read_text(encoding="utf-8"))
    assert documented is not None, f"docs/design.md has no {contracts.BEGIN_MARKER} … {contracts.END_MARKER} block"
    assert documented == contracts.markdown(), (
        "docs/design.md's contract table differs from pipeline/contracts.py; "
        f"regenerate it with `{contracts.REGENERATE}`"
    )


def test_no_other_page_copies_the_table():
    header = contracts.markdown().splitlines()[0]
    pages = [REPO / "README.md", *(REPO / "docs").rglob("*.md")]
    copies = [page.relative_to(REPO).as_posix() for page in pages if page != DESIGN and header in page.read_text()]
    assert not copies, f"the contract table belongs only in docs/design.md; link to it from {copies}"


def test_every_contract_is_rendered_with_every_column_and_its_arrow_type():
    table = contracts.markdown()
    assert set(contracts.CONTRACTS) == {
        "docs",
        "sentences",
        "ngrams",
        "marked",
        "marked pairs",
        "tokens",
        "tokens pairs",
    }
    for name, contract in contracts.CONTRACTS.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| {name} |"))
        for field in contract.schema:
            assert f"`{field.name}` " in row, (name, field.name)
        assert "`doc_id` int64" in row
    assert "list<{start int32, end int32, target string}>" in table  # a nested type, spelled out
    assert "`pmi` double (nullable;" in table  # the one nullable column says so


def test_the_registered_schemas_are_the_module_constants():
    registered = {name: contract.schema for name, contract in contracts.CONTRACTS.items()}
    assert registered == {
        "docs": contracts.DOCS,
        "sentences": contracts.SENTENCES,
        "ngrams": contracts.NGRAMS,
        "marked": contracts.MARKED,
        "marked pairs": contracts.MARKED_PAIRS,
        "tokens": contracts.TOKENS,
        "tokens pairs": contracts.TOKENS_PAIRS,
    }
    assert all(isinstance(schema, pa.Schema) for schema in registered.values())


def test_the_table_is_rewritten_between_the_markers_only():
    page = f"before\n{contracts.BEGIN_MARKER} -->\nstale table\n{contracts.END_MARKER}\nafter\n"
    rewritten = contracts.with_table(page)
    assert rewritten.startswith("before\n") and rewritten.endswith(f"{contracts.END_MARKER}\nafter\n")
    assert contracts.documented(rewritten) == contracts.markdown()
    with pytest.raises(ValueError, match="contracts:begin"):
        contracts.with_table("no markers here\n")


def test_the_module_prints_the_table_and_rewrites_a_page(tmp_path, capsys):
    assert contracts.main([]) == 0
    assert capsys.readouterr().out == contracts.markdown()
    page = tmp_path / "design.md"
    page.write_text(f"{contracts.BEGIN_MARKER} -->\n{contracts.END_MARKER}\n", encoding="utf-8")
    assert contracts.main(["--write", str(page)]) == 0
    assert contracts.documented(page.read_text(encoding="utf-8")) == contracts.markdown()
