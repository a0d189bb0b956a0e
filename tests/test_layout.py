"""The package's layout holds (docs/design.md "Layout"): arrows run down, one naming rule, small modules.

- Ground floor: the modules at the package root and the packages ``models`` and ``tasks``; they never
  import a stage package.
- ``models`` and ``tasks`` do not import each other.
- Stage packages (``corpus``, ``ngrams``, ...) import only the ground floor and themselves.
- The top floor (``rehearsal``, which runs the whole workflow; ``acceptance``, which runs its stages on a GPU)
  may read the stage packages' registries;
  nothing imports it.
- No import cycle, counting imports inside functions too; no import chain longer than :data:`LONGEST_CHAIN`.
- ``python -m pipeline X`` runs ``pipeline/<package>/<X with - as _>.py``.
- No module over 500 lines, no rule file over 250.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from pipeline.cli import STAGES, stage_module

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "pipeline"
GROUND_PACKAGES = {"models", "tasks", "budget"}
STAGE_PACKAGES = {"corpus", "ngrams", "pretrain", "finetune", "classify", "bilstm", "evaluate", "report", "plan"}
TOP_PACKAGES = {"rehearsal", "scoreboard", "acceptance"}
# The longest chain of imports (modules, the package itself counted): scoreboard -> scoreboard_inputs -> plan ->
# plan_costs -> fused_groups -> models.spec -> ... -> provenance -> pipeline. 13 before the plan, the budget and
# the scoreboard left report/ (issue 45); a new floor has to be argued for, not grown into.
LONGEST_CHAIN = 11


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in the file (functions included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(target for target in targets if target in known and target != name)
    return found


def subpackage(name: str) -> str:
    """``pipeline.models.spec`` → ``models`` ("" for the package itself)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def floor(name: str) -> str:
    """The stage or top package a module belongs to, or "ground"."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in STAGE_PACKAGES | TOP_PACKAGES else "ground"


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def test_every_package_is_placed_on_a_floor():
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert packages == GROUND_PACKAGES | STAGE_PACKAGES | TOP_PACKAGES


def test_arrows_run_down_only(graph):
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in targets
        if floor(target) not in ("ground", floor(name)) and floor(name) not in TOP_PACKAGES
    )
    wrong += sorted(f"{name} -> {target}" for name, targets in graph.items() for target in targets
                    if floor(target) in TOP_PACKAGES and floor(name) not in TOP_PACKAGES)  # fmt: skip
    assert not wrong, "imports sideways or upwards:\n" + "\n".join(wrong)


def test_models_and_tasks_stand_apart(graph):
    """A task is handed an encoder and never loads one; a model knows no task."""
    crossing = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in targets
        if {subpackage(name), subpackage(target)} == {"models", "tasks"}
    )
    assert not crossing, crossing


def test_no_import_cycle(graph):
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> list[str] | None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                return [*path, name, target]
            if target not in state and (cycle := visit(target, [*path, name])):
                return cycle
        state[name] = 2
        return None

    for name in sorted(graph):
        if name not in state:
            cycle = visit(name, [])
            assert cycle is None, "import cycle: " + " -> ".join(cycle[cycle.index(cycle[-1]) :])


def test_only_the_tables_readers_import_the_tables_stage(graph):
    """``pipeline.report`` is the tables and the report pages: the plan, the budget, the grouping of fused runs
    and the workflow's rules find what they need elsewhere; the scoreboard, a floor above, reads the tables'
    registry and published rows; so does the tables rule, its one import of the stage (issue 57: its outputs are
    the registry's tables)."""
    readers = {"report", "scoreboard"}
    allowed = {"workflow/rules/report.smk": "from pipeline.report.table_specs import TABLE_NAMES\n"}
    outside = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in targets
        if floor(target) == "report" and floor(name) not in readers
    )
    rules = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").rglob("*.smk"))]
    for path in rules:
        where = path.relative_to(REPO).as_posix()
        text = path.read_text(encoding="utf-8").replace(allowed.get(where, "\0"), "", 1)
        outside += [where] if "pipeline.report" in text else []
    assert not outside, outside


def test_no_import_chain_grows_past_the_bound(graph):
    depth: dict[str, int] = {}

    def visit(name: str) -> int:  # the graph has no cycle (above)
        if name not in depth:
            depth[name] = 1 + max((visit(target) for target in graph[name]), default=0)
        return depth[name]

    longest = max(graph, key=visit)
    chain = [longest]
    while graph[chain[-1]]:
        chain.append(max(graph[chain[-1]], key=visit))
    assert len(chain) <= LONGEST_CHAIN, " -> ".join(chain)


def test_every_stage_runs_the_module_named_after_it():
    for name, (package, _summary) in STAGES.items():
        module = stage_module(name)
        assert module.rsplit(".", 1)[-1] == name.replace("-", "_")
        assert module.split(".")[1:-1] == ([package] if package else [])
        assert importlib.util.find_spec(module) is not None, f"stage {name}: no module {module}"


def test_modules_and_rule_files_stay_small():
    long_modules = {
        str(path.relative_to(REPO)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > 500
    }
    long_rules = {
        str(path.relative_to(REPO)): n
        for path in (REPO / "workflow" / "rules").rglob("*.smk")
        if (n := len(path.read_text().splitlines())) > 250
    }
    assert not long_modules and not long_rules, (long_modules, long_rules)


def test_no_grab_bag_modules():
    assert not [path for path in PACKAGE.rglob("*.py") if path.stem in {"utils", "helpers", "misc", "common"}]


def test_test_modules_have_unique_names():
    """pytest imports test modules by their base name (rootdir import, no packages under tests/): two files of
    one name in two folders stop the whole suite at collection, which a run of either folder alone hides."""
    seen: dict[str, Path] = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        assert path.name not in seen, f"{path.relative_to(REPO)} and {seen[path.name].relative_to(REPO)}"
        seen[path.name] = path
