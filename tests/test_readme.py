"""Every ``snakemake`` command of the README and of docs/ runs as written: each is dry-run (``-n``) here.

A command is taken from the ``bash`` blocks of README.md and of every docs/**/*.md page
(continuation lines joined, trailing comments dropped) and run from the repository root with
``-n`` added. Commands whose data is not on this machine are skipped with the reason.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys

import pytest
from testdata import DATA_ROOT, REPO

README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").rglob("*.md"))]


def page_commands(page) -> list[str]:
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith("snakemake "):
                commands.append(line)
    return commands


def documented_commands() -> dict[str, str]:
    """Each distinct command → the first page that shows it (README first, then docs/ in path order)."""
    found: dict[str, str] = {}
    for page in PAGES:
        for command in page_commands(page):
            found.setdefault(command, page.relative_to(REPO).as_posix())
    return found


COMMANDS = documented_commands()


def test_the_docs_have_the_commands_a_user_needs():
    assert len(COMMANDS) >= 10
    assert any("--unlock" in c for c in COMMANDS) and any("--report" in c for c in COMMANDS)
    assert any("--until download" in c for c in COMMANDS)
    # The README itself shows how to run the demo's report, the sample and a cluster run.
    readme = page_commands(README)
    assert any("--report" in c for c in readme) and any("--until download" in c for c in readme)
    assert any("workflow/profiles/slurm" in c for c in readme)


def test_the_readme_is_a_front_page_not_a_manual():
    """What it is, the two commands, configs, layout, outputs, clusters and links: the manuals are in docs/."""
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move manuals to docs/"
    for heading in ("## The two commands", "## Configs and the data root", "## Layout", "## Outputs"):
        assert heading in lines, heading
    assert "make demo" in README.read_text() and "make test" in README.read_text()


def skip_reason(argv: list[str]) -> str | None:
    if "--profile" in argv and "workflow/profiles/slurm" in argv:
        import importlib.util

        if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
            return "the SLURM executor plugin is not installed"
        if shutil.which("conda") is None:
            return "the SLURM profile deploys the rules' conda environments, and conda is not installed"
    configfile = argv[argv.index("--configfile") + 1] if "--configfile" in argv else ""
    overrides = " ".join(argv[argv.index("--config") + 1 :]) if "--config" in argv else ""
    if configfile.endswith("sample.yaml") and "data_root=" not in overrides and not (DATA_ROOT / "SOURCES.md").exists():
        return f"the sample data root ({DATA_ROOT}) is absent"
    return None


@pytest.mark.parametrize("command", COMMANDS, ids=[f"{page}: {command}" for command, page in COMMANDS.items()])
def test_documented_command_dry_runs(command, tmp_path):
    argv = shlex.split(command)
    assert "--cores" in argv or "--workflow-profile" in argv or "--profile" in argv, (
        f"{COMMANDS[command]}: needs --cores or a profile to run: {command}"
    )
    if reason := skip_reason(argv):
        pytest.skip(reason)
    if "--report" in argv:
        # A report is built from a finished run; -n checks that the DAG and its report items resolve.
        argv = argv[: argv.index("--report")] + argv[argv.index("--report") + 2 :]
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", *argv[1:], "-n", "--quiet", "rules"],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{COMMANDS[command]}: {command}\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
