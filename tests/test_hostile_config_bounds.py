"""Hostile configs the schema alone lets through: a YAML alias bomb, nesting thousands deep, a
number that is not finite, a data path that leaves the data root (docs/behaviour.md). Each is one
line, both from ``plan`` and from Snakemake reading the Snakefile, before the DAG is built."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from test_workflow_config import SCHEMA
from testdata import REPO

from pipeline.workflow_config import MAX_VALUES, ConfigError, check, check_shape, check_unique_keys, coerce

DEMO = (REPO / "workflow" / "config" / "demo.yaml").read_text(encoding="utf-8")
BASE = {"run": "r", "data_root": "d", "corpus": {"languages": ["en"], "en": {"dumps": {"p": {"path": "x"}}}}}
MEMORY = 1536 * 2**20  # address space of the subprocesses below: the bombs took 2.6 and 2.7 GB


def bomb_yaml(levels: int = 8) -> str:
    """``transfer.models``: 10 anchors, each a list of ten aliases of the one before (10**levels leaves)."""
    items = ["    - &a0 [x, x, x, x, x, x, x, x, x, x]"]
    items += [f"    - &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(["run: bomb", "data_root: workflow/demo/data", "transfer:", "  models:", *items]) + "\n"


def demo_with(old: str, new: str) -> str:
    """demo.yaml with the line that starts with ``old`` (its first) replaced by ``new``."""
    lines = DEMO.splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith(old))
    return "\n".join([*lines[:index], new, *lines[index + 1 :]]) + "\n"


def limited(*command: str) -> subprocess.CompletedProcess:
    """``command`` from the repository root under an address-space limit (RLIMIT_AS)."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        command, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, preexec_fn=limit
    )


def plan(config) -> subprocess.CompletedProcess:
    return limited(sys.executable, "-m", "pipeline", "plan", "--configfile", str(config))


def assert_one_line(result: subprocess.CompletedProcess, *fragments: str) -> str:
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 2 and "Traceback" not in result.stderr and len(errors) == 1, result.stderr[-3000:]
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def assert_snakemake_refuses(*args: str, fragment: str) -> None:
    """Snakemake stops while it reads the Snakefile (no job, no DAG) with ``fragment``, in short output."""
    snakemake = Path(sys.executable).parent / "snakemake"  # as test_workflow_config runs it, but limited
    result = limited(str(snakemake), "-n", "-p", "--cores", "1", "--forceall", *args)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and fragment in output, output[-3000:]
    assert "Job stats" not in output and "MemoryError" not in output and len(output) < 20_000, output[-3000:]


# ---------------------------------------------------------------------------- alias bombs
def test_an_alias_bomb_is_one_line_from_plan(tmp_path):
    config = tmp_path / "bomb.yaml"
    config.write_text(bomb_yaml())
    line = assert_one_line(plan(config), str(config), "transfer.models expands to 1,234,567,904 values")
    assert len(line) < 400


def test_an_alias_bomb_is_refused_by_snakemake_before_the_schema_sees_it(tmp_path):
    config = tmp_path / "bomb.yaml"
    config.write_text(bomb_yaml())
    assert_snakemake_refuses("--configfile", str(config), fragment="transfer.models expands to 1,234,567,904 values")


def test_an_alias_bomb_given_with_config_on_the_command_line_is_refused():
    """``--config`` values are YAML too: the same bound, from the values Snakemake parsed."""
    anchors = "[&a0 [x, x, x, x, x, x, x, x, x, x], " + ", ".join(
        f"&a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)
    )
    assert_snakemake_refuses("--config", f"transfer={{models: {anchors}]}}", fragment="transfer.models expands to")


def test_shared_lists_are_counted_at_each_use_without_walking_them():
    level = ["x"] * 10
    for _ in range(12):  # 10**12 leaves: a walk would never end
        level = [level] * 10
    with pytest.raises(ConfigError, match=r"config: transfer.models expands to [0-9,]+ values"):
        coerce({**BASE, "transfer": {"models": level}}, SCHEMA)
    with pytest.raises(ConfigError, match="expands to"):
        check({**BASE, "transfer": {"models": level}}, SCHEMA)


def test_a_config_just_under_the_bound_passes_the_shape_check():
    check_shape({"transfer": {"models": ["x"] * (MAX_VALUES - 10)}})


def test_an_alias_that_contains_itself_is_one_line(tmp_path):
    config = tmp_path / "loop.yaml"
    config.write_text("run: loop\ndata_root: d\ntransfer:\n  models: &a [x, *a]\n")
    with pytest.raises(ConfigError, match=r"loop.yaml: transfer.models.1: an alias refers to a value that contains it"):
        check_unique_keys([config])
    assert_one_line(plan(config), str(config), "contains it")


# ---------------------------------------------------------------------------- nesting
@pytest.mark.parametrize("depth", [5000, 200])
def test_a_config_nested_thousands_deep_is_one_line_from_plan(tmp_path, depth):
    config = tmp_path / "deep.yaml"
    config.write_text(f"run: deep\ndata_root: d\ntransfer: {{models: {'[' * depth}{']' * depth}}}\n")
    assert_one_line(plan(config), str(config), "nested deeper than 32 levels")


def test_deep_nesting_from_the_command_line_is_one_line():
    """200 levels: PyYAML reads them, the bound refuses them before the schema's recursive walk."""
    assert_snakemake_refuses("--config", f"transfer={{models: {'[' * 200}{']' * 200}}}", fragment="nested deeper than")


# ---------------------------------------------------------------------------- numbers that are not finite
@pytest.mark.parametrize(
    "old, new, key",
    [
        ("  lr: 1.0e-3  #", "  lr: .nan", "pretrain.lr: nan is not a finite number"),
        ("  dev_fraction:", "  dev_fraction: .nan", "bilstm.dev_fraction: nan is not a finite number"),
        ("  lr: 1.0e-3  #", "  lr: .inf", "pretrain.lr: inf is not a finite number"),
        ("  dev_fraction:", "  dev_fraction: -.inf", "bilstm.dev_fraction: -inf is not a finite number"),
    ],
)
def test_a_number_that_is_not_finite_is_refused_when_the_config_is_checked(tmp_path, old, new, key):
    config = tmp_path / "nan.yaml"
    config.write_text(demo_with(old, new))
    assert_one_line(plan(config), str(config), key)
    assert_snakemake_refuses("--configfile", str(config), fragment=key)


def test_nan_given_on_the_command_line_is_refused():
    assert_snakemake_refuses("--config", "pretrain={lr: nan}", fragment="pretrain.lr: nan is not a finite number")


def test_every_number_of_the_config_is_checked_wherever_it_is():
    config = {**BASE, "classify": {"lr": {"glue": [1e-5, float("nan")]}}}
    with pytest.raises(ConfigError, match=re.escape("classify.lr.glue.1: nan is not a finite number")):
        check(config, SCHEMA)


# ---------------------------------------------------------------------------- data paths
OUTSIDE = ["../../../../etc/hostname", "/etc/hostname", "nli/../../x.csv"]
PATH_KEYS = [
    ("bilstm: {train: [VALUE]}", "bilstm.train.0"),
    ("bilstm: {dev: [VALUE]}", "bilstm.dev.0"),
    ("bilstm: {test: [nli/x.csv, VALUE]}", "bilstm.test.1"),
    ("bilstm: {vectors: VALUE}", "bilstm.vectors"),
    ("bilstm: {downloads: {VALUE: {url: 'https://example.org/x'}}}", "bilstm.downloads"),
    ("finetune: {nli: [VALUE]}", "finetune.nli.0"),
    ("finetune: {ppdb: VALUE}", "finetune.ppdb"),
    ("finetune: {download_checksums: {VALUE: '" + "0" * 64 + "'}}", "finetune.download_checksums"),
    ("word2vec: {nli: [VALUE]}", "word2vec.nli.0"),
]


@pytest.mark.parametrize("section, key", PATH_KEYS, ids=[key for _, key in PATH_KEYS])
@pytest.mark.parametrize("value", OUTSIDE)
def test_a_data_path_outside_the_data_root_is_refused(section, key, value):
    import yaml

    config = coerce({**BASE, **yaml.safe_load(section.replace("VALUE", value))}, SCHEMA)
    with pytest.raises(ConfigError, match=re.escape(f"{key}: {value!r} ")):
        check(config, SCHEMA)


@pytest.mark.parametrize("field", ["path", "index"])
def test_a_dump_path_outside_the_data_root_is_refused(field):
    dump = {"path": "../x.xml"} if field == "path" else {"path": "x.xml", "index": {"path": "/etc/x.txt"}}
    config = {**BASE, "corpus": {"languages": ["en"], "en": {"dumps": {"p": dump}}}}
    key = "corpus.en.dumps.p.path" if field == "path" else "corpus.en.dumps.p.index.path"
    with pytest.raises(ConfigError, match=re.escape(key)):
        check(config, SCHEMA)


def test_bilstm_train_outside_the_data_root_never_reaches_a_command(tmp_path):
    config = tmp_path / "outside.yaml"
    config.write_text(demo_with("  train: [nli/", "  train: [../../../../etc/hostname]"))
    fragment = "bilstm.train.0: '../../../../etc/hostname' leaves the data root"
    assert_one_line(plan(config), str(config), fragment)
    assert_snakemake_refuses("--configfile", str(config), fragment=fragment)


def test_paths_inside_the_data_root_pass():
    config = {**BASE, "bilstm": {"train": ["nli/a/../b.csv", "./nli/c.csv"], "vectors": "word2vec"}}
    check(coerce(config, SCHEMA), SCHEMA)


# ---------------------------------------------------------------------------- counts the workflow lists
@pytest.mark.parametrize(
    "override, fragment",
    [
        ("corpus={shards: 1000000000}", "corpus.shards: 1000000000 is more than 1,000"),
        ("classify={seeds: 1000000000}", "classify.seeds: 1000000000 is more than 100"),
    ],
)
def test_a_count_that_becomes_a_list_of_jobs_is_bounded(override, fragment):
    """Snakemake built range(shards) and range(seeds) while reading the rules: 10**9 of them ran out of memory."""
    assert_snakemake_refuses("--config", override, fragment=fragment)


def test_dump_slices_are_bounded():
    config = {**BASE, "corpus": {"languages": ["en"], "en": {"dumps": {"p": {"path": "x", "slices": 10**9}}}}}
    with pytest.raises(ConfigError, match=re.escape("corpus.en.dumps.p.slices: 1000000000 is more than 1,000")):
        check(config, SCHEMA)


def test_a_classify_grid_of_a_billion_settings_is_one_line(tmp_path):
    """Four lists of 200 values each (800 values, a small config) make 1.6 * 10**9 settings."""
    import yaml

    config = yaml.safe_load(DEMO)
    values = [1 + i for i in range(200)]
    config["classify"]["batch_sizes"] = {"glue": values, "clue": [8]}
    for key in ("lr", "epochs"):
        config["classify"][key] = {"glue": values, "clue": 1}
    config["classify"]["max_length"] = {"glue": [8 + i for i in range(200)], "clue": 128}
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(config))
    assert_snakemake_refuses("--configfile", str(path), fragment="has 1,600,000,000 settings; at most 1,000")


def test_ngrams_max_n_past_the_flags_bound_is_refused_when_the_config_is_checked():
    """ngrams --max-n takes at most 16 (pipeline/arguments.py NGRAM_LENGTH); the config says so before a job runs."""
    with pytest.raises(ConfigError, match="ngrams.max_n: 127 is greater than the maximum of 16"):
        check({**BASE, "ngrams": {"max_n": 127}}, SCHEMA)
    check({**BASE, "ngrams": {"max_n": 16}}, SCHEMA)


def test_every_input_under_data_root_is_joined_by_the_one_checking_helper():
    """The kind, not the instances: a rule file that joins data_root itself would skip the check."""
    rules = sorted((REPO / "workflow" / "rules").rglob("*.smk"))
    joins = [f"{path.name}: {line.strip()}" for path in rules for line in path.read_text().splitlines()]
    assert [j for j in joins if "join(DATA_ROOT" in j and "return os.path.join(DATA_ROOT, relative)" not in j] == []


def test_every_schema_key_said_to_lie_under_data_root_is_checked():
    """A path key added to the schema with "under data_root" in its description joins DATA_PATHS."""
    from pipeline.workflow_config import DATA_PATHS

    found = []

    def walk(schema, where):
        if not isinstance(schema, dict):
            return
        text = str(schema.get("description", ""))
        if re.search(r"(under|relative to) data_root", text) and where[-1] not in ("data_root", "download"):
            found.append(where)
        for key, child in schema.get("properties", {}).items():
            walk(child, (*where, key))
        walk(schema.get("additionalProperties"), (*where, "*"))

    walk(SCHEMA, ("",))
    checked = {tuple(part for part in pattern if part is not None) for pattern in DATA_PATHS}
    dumps = {("corpus", "*", "dumps", "*", "path")}
    assert found and {where[1:] for where in found} - checked - dumps == set()


@pytest.mark.parametrize(
    "file, folder",
    [("../outside.txt", "../outdir"), ("/etc/hostname", "/etc"), ("sts/../../outside.txt", "sts/../../outdir")],
)
def test_a_task_file_outside_the_data_root_is_refused(tmp_path, file, folder):
    from pipeline.errors import InputError
    from pipeline.tasks.data_root import DataRoot

    (tmp_path / "outside.txt").write_text("x\n")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "root" / "sts").mkdir(parents=True)
    with pytest.raises(InputError, match="data root"):
        DataRoot(tmp_path / "root").file(file)
    with pytest.raises(InputError, match="data root"):
        DataRoot(tmp_path / "root").folder(folder)
