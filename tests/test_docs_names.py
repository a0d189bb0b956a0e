"""The names the docs give for objectives, masking strategies and tables are the registries' (issue 57): a
renamed or removed objective or table fails here, instead of a page going stale unnoticed. The registries
are pipeline/objective_registry.py, pipeline/pretrain/masking.py STRATEGIES and
pipeline/report/table_specs.py; the docs name them where they list."""

from __future__ import annotations

import re

import yaml
from testdata import REPO

from pipeline.objective_registry import OBJECTIVES, PACKABLE
from pipeline.report.table_specs import TABLE_NAMES

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def text(page: str) -> str:
    return (REPO / page).read_text(encoding="utf-8")


def ticked(fragment: str) -> list[str]:
    return re.findall(r"`([^`]+)`", fragment)


def config_objectives() -> dict[str, list[str]]:
    """Every ``pretrain.objectives`` and experiment's ``objectives`` of the docs' YAML blocks, by page."""
    found: dict[str, list[str]] = {}
    for page in PAGES:
        for block in re.findall(r"```yaml\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.DOTALL):
            pretrain = (yaml.safe_load(block) or {}).get("pretrain") or {}
            lists = [pretrain.get("objectives") or []]
            lists += [e.get("objectives") or [] for e in (pretrain.get("experiments") or {}).values()]
            names = [name for listed in lists for name in listed]
            if names:
                found.setdefault(page.relative_to(REPO).as_posix(), []).extend(names)
    return found


def test_the_docs_config_examples_name_registered_objectives():
    found = config_objectives()
    assert {"docs/running.md", "docs/stages/pretrain.md"} <= set(found)  # the lists this test reads
    for page, names in found.items():
        assert set(names) <= set(OBJECTIVES), f"{page}: {sorted(set(names) - set(OBJECTIVES))} not in the registry"


def test_the_prose_lists_of_objectives_are_registered():
    readme = re.search(r"objective of the papers — (.*?) — on", " ".join(text("README.md").split())).group(1)
    assert set(ticked(readme)) <= set(OBJECTIVES) and len(ticked(readme)) >= 5, readme
    method = " ".join(text("docs/method.md").split())
    strategies = re.search(r"Every strategy masks whole units .*?\. Where", method).group(0)
    assert set(ticked(strategies)) - {"pipeline/pretrain/span_sampling.py"} <= set(OBJECTIVES), strategies
    packed = re.search(
        r"Packed input is for the masking objectives \((.*?)\);", " ".join(text("docs/stages/pretrain.md").split())
    )
    assert set(ticked(packed.group(1))) - {"pipeline/objective_registry.py", "packable"} <= set(PACKABLE), packed


def test_the_docs_name_only_tables_of_the_registry():
    report = text("docs/stages/report.md")
    section = report[report.index("## Tables") : report.index("In every table")]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    named = [name for row in rows for name in ticked(row)]
    assert len(named) >= 10 and set(named) <= set(TABLE_NAMES), sorted(set(named) - set(TABLE_NAMES))
    for page in PAGES:  # a table's file anywhere in the docs: tables/NAME.md, tables/NAME.*
        files = set(re.findall(r"tables/([a-z_]+)\.(?:md|csv|tex|html|\*|\{)", page.read_text(encoding="utf-8")))
        assert files - {"tables"} <= set(TABLE_NAMES), f"{page.name}: {sorted(files - set(TABLE_NAMES))}"
