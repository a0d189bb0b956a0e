"""The conda environments in envs/ mirror the pip dependencies of pyproject.toml."""

import re
import tomllib

import yaml
from conftest import REPO


def names(requirements):
    return {re.split(r"[<>=!~ \[]", r, maxsplit=1)[0].lower() for r in requirements}


def test_corpus_env_mirrors_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((REPO / "envs" / "corpus.yaml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    in_env = names(conda) | names(pip)
    needed = names(project["dependencies"]) - {"snakemake", "jsonschema"}  # the workflow's own, not a rule's
    assert needed <= in_env, needed - in_env
    pinned_pip = {r for r in project["dependencies"] if "==" in r}
    assert pinned_pip <= set(pip) | set(conda)
