"""The conda environments in envs/ mirror the pip dependencies of pyproject.toml."""

import re
import tomllib

import pytest
import yaml
from testdata import REPO

# conda packages that go by another name on PyPI
CONDA_NAMES = {"pytorch": "torch"}


def names(requirements):
    found = {re.split(r"[<>=!~ \[]", r, maxsplit=1)[0].lower() for r in requirements}
    return {CONDA_NAMES.get(name, name) for name in found}


@pytest.mark.parametrize("env, extra", [("corpus", None), ("ngrams", "ngrams"), ("models", "models")])
def test_env_mirrors_pyproject(env, extra):
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    required = project["dependencies"] + (project["optional-dependencies"][extra] if extra else [])
    spec = yaml.safe_load((REPO / "envs" / f"{env}.yaml").read_text())
    conda = [d for d in spec["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    in_env = names(conda) | names(pip)
    needed = names(required) - {"snakemake", "jsonschema"}  # the workflow's own, not a rule's
    assert needed <= in_env, needed - in_env
    pinned = {r for r in required if "==" in r}
    assert pinned <= set(pip) | set(conda), pinned - (set(pip) | set(conda))
