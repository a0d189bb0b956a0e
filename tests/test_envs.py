"""The dependency files stay in step: the conda environments in envs/ mirror the pip dependencies of
pyproject.toml, and requirements.lock (what `make install` installs) pins every one of them at a
version inside pyproject's range."""

import re
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from testdata import REPO

# conda packages that go by another name on PyPI
CONDA_NAMES = {"pytorch": "torch"}
# torch's CUDA builds pull these; the lock leaves torch out and holds the CPU build's dependencies
CUDA_ONLY = re.compile(r"nvidia-.*|triton|cuda-.*")


def names(requirements):
    found = {re.split(r"[<>=!~ \[]", r, maxsplit=1)[0].lower() for r in requirements}
    return {CONDA_NAMES.get(name, name) for name in found}


def project():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def makefile_variable(name):
    """The value of `NAME := value` in the Makefile."""
    return re.search(rf"^{name} := (.+)$", (REPO / "Makefile").read_text(), re.MULTILINE)[1].strip()


def lock():
    """requirements.lock as {name: (version, sha256 hashes)}."""
    pins, current = {}, None
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if pin := re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line):
            current = canonicalize_name(pin[1])
            pins[current] = (Version(pin[2]), [])
        elif hashed := re.match(r"\s+--hash=sha256:([0-9a-f]{64})", line):
            pins[current][1].append(hashed[1])
    return pins


def env_specs(env):
    spec = yaml.safe_load((REPO / "envs" / f"{env}.yaml").read_text())
    conda = [d for d in spec["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    return conda, pip


@pytest.mark.parametrize("env, extra", [("corpus", None), ("ngrams", "ngrams"), ("models", "models")])
def test_env_mirrors_pyproject(env, extra):
    required = project()["dependencies"] + (project()["optional-dependencies"][extra] if extra else [])
    conda, pip = env_specs(env)
    in_env = names(conda) | names(pip)
    needed = names(required) - {"snakemake", "jsonschema"}  # the workflow's own, not a rule's
    assert needed <= in_env, needed - in_env
    pinned = {r for r in required if "==" in r}
    assert pinned <= set(pip) | set(conda), pinned - (set(pip) | set(conda))


def test_lock_pins_every_dependency_inside_its_range():
    """Core dependencies and the extras `make install` sets up (torch aside: the Makefile installs it)."""
    extras = makefile_variable("EXTRAS").split(",")
    required = project()["dependencies"] + [r for e in extras for r in project()["optional-dependencies"][e]]
    pins = lock()
    for requirement in map(Requirement, required):
        name = canonicalize_name(requirement.name)
        if name == "torch" or (requirement.marker and not requirement.marker.evaluate()):
            continue
        assert name in pins, f"{name} is not in requirements.lock: run `make lock`"
        version = pins[name][0]
        assert requirement.specifier.contains(version, prereleases=True), f"{name}=={version} outside {requirement}"


def test_lock_is_hashed_and_leaves_torch_to_the_makefile():
    pins = lock()
    assert len(pins) > 50
    assert not [name for name, (_, hashes) in pins.items() if not hashes]
    assert "torch" not in pins and not [name for name in pins if CUDA_ONLY.fullmatch(name)]
    # resolved against the CPU build the Makefile installs first, which pyproject's range admits
    torch = makefile_variable("TORCH")
    header = (REPO / "requirements.lock").read_text().split("\n", 2)[1]
    assert "make lock" in header and f"torch=={torch}+cpu" in header, header
    torch_range = next(Requirement(r) for r in project()["optional-dependencies"]["models"] if r.startswith("torch"))
    assert torch_range.specifier.contains(torch)


def test_make_installs_from_the_lock():
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^\$\(VENV\)/\.installed: .*\$\(LOCK\)", makefile, re.MULTILINE)
    assert makefile_variable("LOCK") == "requirements.lock"
    assert "pip install --quiet --require-hashes -r $(LOCK)" in makefile
    assert "pip install --quiet --no-deps --no-build-isolation -e ." in makefile
    assert re.search(r"^lock:", makefile, re.MULTILINE)


@pytest.mark.parametrize("env", ["corpus", "ngrams", "models"])
def test_env_ranges_admit_the_locked_versions(env):
    """envs/ keep pyproject's ranges (conda-forge builds are not PyPI's), but none excludes what CI tested."""
    pins = {name: version for name, (version, _) in lock().items()}
    pins["torch"] = Version(makefile_variable("TORCH"))
    conda, pip = env_specs(env)
    for spec in conda + pip:
        if spec == "pip" or spec.startswith("python="):
            continue
        requirement = Requirement(spec)
        name = canonicalize_name(CONDA_NAMES.get(requirement.name, requirement.name))
        assert name in pins, f"envs/{env}.yaml: {name} is not in requirements.lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), f"envs/{env}.yaml: {spec} vs {pins[name]}"
