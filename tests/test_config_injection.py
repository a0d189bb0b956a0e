"""No config value runs as a shell command (docs/method.md is silent here: this is the workflow's own contract).

Every string-valued key of the config schema (found by walking the schema, so a new key
joins the test by itself), every string in a list and every name of a user-named map (dump
parts, backbones, evaluated models) is set, one at a time, to a value that would run
``touch`` three ways (``;``, ``$(...)``, backquotes) if a shell read it as code, on top of
the demo config. Snakemake then plans the run and prints every job's shell command
(``snakemake -n -p``). Either the config is refused with a line naming the key, or every
printed command keeps the value inside one shell word (quoted); and no marker file appears.
"""

from __future__ import annotations

import copy
import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from testdata import REPO

from pipeline.workflow_config import ConfigError, check, coerce

SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
DEMO = yaml.safe_load((REPO / "workflow" / "config" / "demo.yaml").read_text())
# Names given to the entries of maps whose keys the user chooses (additionalProperties).
MAP_ENTRY = {"dumps": "demo", "backbones": "tiny", "models": "extra"}


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _is_string(node: dict) -> bool:
    node = _resolve(node)
    kinds = node.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return "string" in kinds or all(isinstance(v, str) for v in node.get("enum", [0]))


def string_keys(node: dict | None = None, path: tuple = (), refs: tuple = ()) -> list[tuple]:
    """Config paths (tuples of keys; 0 = a list's first item) whose value is a string,
    plus ("<name>",)-terminated paths for the user-chosen names of a map. A definition that
    refers to itself (a dump's index is a dump) is walked once."""
    node = SCHEMA if node is None else node
    if "$ref" in node:
        if node["$ref"] in refs:
            return []
        refs = (*refs, node["$ref"])
    node = _resolve(node)
    found = []
    if _is_string(node) and path:
        found.append(path)
    if node.get("type") == "array" and isinstance(node.get("items"), dict) and _is_string(node["items"]):
        found.append((*path, 0))
    for key, child in node.get("properties", {}).items():
        if path == ("corpus",) and key == "zh":
            continue  # the zh section has the en section's schema; en covers it (and the zh-only demo keys below)
        found += string_keys(child, (*path, key), refs)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        entry = MAP_ENTRY.get(path[-1] if path else "", "entry")
        found.append((*path, "<name>"))
        found += string_keys(extra, (*path, entry), refs)
    return found


KEYS = string_keys() + [("corpus", "zh", "opencc")]


def _set(config: dict, path: tuple, value: str) -> None:
    node = config
    for key in path[:-1]:
        if key == 0:
            node = node[0]
            continue
        if not isinstance(node.get(key), dict | list):
            node[key] = {} if path[path.index(key) + 1] != 0 else [{}]
        node = node[key]
    last = path[-1]
    if last == "<name>":
        node[value] = next(iter(node.values())) if node else "tiny"
    elif last == 0:
        node[:] = [value]
    else:
        node[last] = value


def _dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path if p not in (0, "<name>"))


def payload(marker_dir: Path) -> str:
    return (
        f"x; touch {marker_dir}/semicolon $(touch {marker_dir}/dollar) `touch {marker_dir}/backquote`"
        f" | touch {marker_dir}/pipe"
    )


def plan(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "-n", "-p", "--cores", "1", "--forceall", *args],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def unquoted(output: str, value: str) -> list[str]:
    """Printed shell commands in which ``value`` is not one shell word."""
    bad = []
    for line in output.splitlines():
        if (
            line.startswith("Shell command:")
            and value.split()[0] in line
            and not any(value in word for word in shlex.split(line.removeprefix("Shell command:")))
        ):
            bad.append(line)
    return bad


def poisoned(path: tuple, case: Path) -> dict:
    config = copy.deepcopy(DEMO)
    _set(config, path, payload(case))
    return config


def test_every_string_key_is_found():
    dotted = {_dotted(k) for k in KEYS}
    for key in (
        "run",
        "data_root",
        "corpus.en.dumps.demo.url",
        "corpus.en.dumps.demo.checksums_url",
        "corpus.en.clean.rules",
        "corpus.zh.opencc",
        "corpus.en.variants",
        "kenlm.memory",
        "models.backbones.tiny",
        "evaluate.models.extra.path",
        "ngrams.mode",
        "pretrain.backbones",
    ):
        assert key in dotted, key
    assert len(KEYS) >= 25


def test_no_config_value_reaches_a_shell_as_code(tmp_path):
    """The schema check that the Snakefile runs refuses every poisoned key, naming it; a key
    it let through would be planned by Snakemake and its shell commands checked for quoting."""
    accepted = []
    for path in KEYS:
        case = tmp_path / "_".join(str(p).strip("<>") for p in path)
        case.mkdir()
        config = poisoned(path, case)
        try:
            check(coerce(config, SCHEMA), SCHEMA)
        except ConfigError as exc:
            named = _dotted(path) if path[-1] != "<name>" else _dotted(path[:-1])
            assert named in str(exc) or named.rsplit(".", 1)[0] in str(exc), (path, str(exc))
            assert len(str(exc).splitlines()) <= 4, str(exc)  # a line per problem, no schema dump
            continue
        accepted.append((path, case, config))
    for path, case, config in accepted:
        (case / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
        result = plan("--configfile", str(case / "config.yaml"))
        assert unquoted(result.stdout + result.stderr, payload(case)) == [], path
        assert sorted(p.name for p in case.iterdir()) == ["config.yaml"], f"{path}: a command ran"
    assert all(not any(case.iterdir()) for case in tmp_path.iterdir() if not (case / "config.yaml").exists())


def test_the_issue_reproduction_is_refused_with_one_line_per_key(tmp_path):
    result = plan(
        "--config",
        f"corpus={{languages: [en, zh], en: {{clean: {{rules: 'en; touch {tmp_path}/pwned1'}}}}, "
        f"zh: {{opencc: 't2s $(touch {tmp_path}/pwned2)'}}}}",
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "corpus.en.clean.rules: 'en; touch" in output and "corpus.zh.opencc: 't2s $(touch" in output
    assert len(output.splitlines()) < 20  # not the schema
    assert list(tmp_path.iterdir()) == []


def test_a_path_with_a_space_stays_one_shell_word(tmp_path):
    """Quoting does not rely on the schema: a data root with a space (allowed) is one word."""
    (tmp_path / "demo data").symlink_to(REPO / "workflow" / "demo" / "data")
    data = tmp_path / "demo data"
    result = plan("--config", f"data_root={data}")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-2000:]
    commands = [line for line in output.splitlines() if line.startswith("Shell command:") and str(data) in line]
    assert commands
    assert unquoted(output, str(data)) == []
