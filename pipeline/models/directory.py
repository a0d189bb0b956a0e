"""A model directory: written whole or not at all, and complete as a Hugging Face / sentence-transformers model.

Every model directory the pipeline writes (``tiny-model``, ``pretrain``, ``finetune``; ``export``
copies one) is filled under a hidden temporary name beside the target by :class:`AtomicDir` and
renamed into place when complete (the directory analogue of :class:`pipeline.atomic.AtomicFiles`),
so a killed run never leaves a half-saved model under the output name, and a failure while completing
or renaming leaves no temporary behind. Only an output of the pipeline's own is replaced
(docs/behaviour.md): ``--out`` must be new, an empty folder or a model directory with a stage's
settings file and provenance (:func:`is_own_model_dir`) that holds nothing but the files it was
written with (its :data:`FILES_RECORD`, :func:`model_dir_strangers`; a user's ``.notes`` or ``.git/``
counts, hidden or not); anything else, a regular file or a folder of other files, is refused
untouched, by :func:`check_output_dir` (which a stage calls before any work), again on entering
:class:`AtomicDir`, and again at the rename (:func:`replace_dir`). A full
disk names the model directory being written (:mod:`pipeline.atomic`). Just before the rename,
:func:`complete_model_dir` adds what the training code does not write itself:

- the **sentence-transformers files** (``modules.json``, ``sentence_bert_config.json``,
  ``1_Pooling/config.json``, ``config_sentence_transformers.json``) where missing, so that
  ``SentenceTransformer(DIR)`` loads the encoder with the pooling it was trained with (mean
  unless the run says otherwise, docs/method.md §3 / §5). :func:`write_sentence_transformers_files`
  is their one writer: :func:`save_model` (a masked-LM model, ``pretrain``) writes them with the
  run's pooling and length, and completion fills in the rest from the stage's settings file;
- the **pooler weights** (:func:`save_pooler`): a masked-LM model saves no pooler, so ``AutoModel``
  would initialise one at random on every load; the starting checkpoint's pooler is saved where it
  has one, otherwise a seeded initialisation, so every load gives the same model;
- the **model card** ``README.md`` (:mod:`pipeline.models.card`).

The module files are written by hand rather than through ``SentenceTransformer.save``, which would
re-save the encoder without its MLM head. :func:`vocab_sha256` names a tokenizer, to tie a token
dataset to it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from pipeline.atomic import abandon_temp_folder, json_text, open_temp_folder, resolve_target
from pipeline.errors import InputError, os_message
from pipeline.folder_contents import listing, own_names, unproven, written_record
from pipeline.leftovers import leftover_name
from pipeline.models.card import CARD_MARK, SETTINGS_FILES, hub_id, read_settings, write_card
from pipeline.models.pooling import POOLING_FLAGS
from pipeline.small_files import MIB, read_small_text

log = logging.getLogger("pipeline.models.directory")
_NOT_A_FOLDER = NotADirectoryError(errno.ENOTDIR, "not a directory")
# The list of what a model directory was written with (:func:`record_files`), so that a rerun replaces only that.
FILES_RECORD = ".pipeline-files.json"
# Snakemake's mark in a directory() output it was asked to ``--touch``: the workflow's own, beside the stage's files.
WORKFLOW_MARKS = (".snakemake_timestamp",)
Strangers = Callable[[Path], list[str]]
# What transformers' save_pretrained (a model: its config, its weights whole or in shards with their index,
# generation settings) and a tokenizer's save_pretrained write, by name.
_SAVED_MODEL = (
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "model-*-of-*.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model-*-of-*.bin",
    "pytorch_model.bin.index.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "chat_template.jinja",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
)
# The names a model directory's files have when a stage wrote them (issue 55 §1): a record that lists a file
# under any other name (a user's thesis.txt with its true hash) does not make it the stage's to delete.
MODEL_DIR_NAMES = own_names(
    (
        *_SAVED_MODEL,
        *(f"generator/{name}" for name in _SAVED_MODEL),  # an ELECTRA discriminator's generator, beside it
        # sentence-transformers: its module list and settings, and each module's folder (1_Pooling, 2_Dense)
        "modules.json",
        "config_sentence_transformers.json",
        "sentence_*config.json",
        "[0-9]*_*/**",
        # ours: the card, the record, each stage's settings, statistics, log and heads, pretrain's kept checkpoint
        "README.md",
        FILES_RECORD,
        *SETTINGS_FILES,
        "stats.json",
        "train_log.jsonl",
        "heads.pt",
        "checkpoint/state.pt",
        "checkpoint/settings.json",
        "checkpoint/rng-*.pt",
    )
)


class AtomicDir:
    """``with AtomicDir(target) as tmp:`` fill ``tmp``; it becomes ``target`` on success.

    ``target`` may be replaced only where it is absent, an empty folder or one of ours holding nothing
    but what it was written with (:func:`check_output_dir`, checked on entry and again at the rename);
    ``card``: what :func:`pipeline.models.card.write_card` adds to the card (metrics, repo id, base
    model). The new directory records its files (:func:`record_files`) for the next run's check.
    Whatever fails, inside the block or while completing and renaming, the temporary is removed.
    """

    def __init__(self, target, owned: Callable[[Path], bool] | None = None, card: dict | None = None) -> None:
        self.target = Path(target)
        self.owned = owned or is_own_model_dir
        self.card = card or {}
        self.temp: Path | None = None

    def __enter__(self) -> Path:
        check_output_dir(self.target, self.owned, model_dir_strangers)
        self.temp = open_temp_folder(self.target, resolve_target(self.target))  # beside a link's folder
        return self.temp

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            try:
                complete_model_dir(self.temp, final=self.target, card=self.card)
                record_files(self.temp)
                replace_dir(self.temp, self.target, self.owned, model_dir_strangers)
                return
            except Exception as failure:  # noqa: BLE001 - completing or renaming failed: nothing is left behind
                exc = failure
        abandon_temp_folder(self.temp, self.target, exc)
        if exc_type is None:
            raise exc


def is_own_model_dir(directory: Path) -> bool:
    """A model directory the pipeline wrote: a settings file of its stage with the run's provenance
    (:data:`pipeline.models.card.SETTINGS_FILES`), or, for an export, the card the pipeline writes."""
    directory = Path(directory)
    for name in SETTINGS_FILES:
        try:
            settings = json.loads((directory / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(settings, dict) and isinstance(settings.get("provenance"), dict):
            return True
    try:
        card = (directory / "README.md").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return False
    return (directory / "config.json").is_file() and card.startswith("---") and CARD_MARK in card


def is_resume_checkpoint(directory: Path) -> bool:
    """A resume checkpoint of ``pretrain`` (``state.pt`` beside ``settings.json``), replaced at every save."""
    return (Path(directory) / "state.pt").is_file() and (Path(directory) / "settings.json").is_file()


def is_own_output(directory: Path) -> bool:
    """What :func:`replace_dir` replaces unless told otherwise: a model directory or a resume checkpoint."""
    return is_own_model_dir(directory) or is_resume_checkpoint(directory)


# ------------------------------------------------------------------ what an earlier output holds beyond its own files
def record_files(directory: Path) -> None:
    """Write :data:`FILES_RECORD`: every file the stage put in ``directory``, each with the SHA-256 and size
    it was written with (:func:`pipeline.folder_contents.written_record`): a list that names a file proves
    nothing about it, its bytes do."""
    directory = Path(directory)
    files = written_record(directory, [FILES_RECORD])
    (directory / FILES_RECORD).write_text(json_text({"files": files}), encoding="utf-8")


def model_dir_strangers(directory: Path) -> list[str]:
    """What an earlier model directory holds that the stage cannot prove it wrote into it: anything, hidden
    or not, that its :data:`FILES_RECORD` does not list with the bytes it still has, or lists under a name no
    stage writes into a model directory (:data:`MODEL_DIR_NAMES`; :func:`pipeline.folder_contents.unproven`;
    Snakemake's :data:`WORKFLOW_MARKS` aside). A record of an
    earlier version (bare names, no hashes) proves none of its files: all are named. A directory without a
    readable record (written before the pipeline kept one) cannot tell its files from a user's: refused."""
    directory = Path(directory)
    try:
        record = json.loads(
            read_small_text(directory / FILES_RECORD, 64 * MIB, f"the {FILES_RECORD} record", missing="")
        )
        files = record["files"]
        if not isinstance(files, list | dict):
            raise TypeError(files)
    except (OSError, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise InputError(
            directory,
            f"holds no list of the files the pipeline wrote into it ({FILES_RECORD}; an output of an earlier "
            "version?), so its own files cannot be told from anyone else's: refused, nothing touched; "
            "remove it or choose another output folder",
        ) from exc
    files = files if isinstance(files, dict) else {}
    return unproven(directory, files, [FILES_RECORD, *WORKFLOW_MARKS], own=MODEL_DIR_NAMES)


def output_strangers(directory: Path) -> list[str]:
    """:func:`model_dir_strangers` of a model directory; nothing for a resume checkpoint, which lives in the
    stage's own work folder (``.OUT.work/``, removed whole when the run ends: docs/stages/pretrain.md)."""
    return [] if is_resume_checkpoint(directory) else model_dir_strangers(directory)


def check_output_dir(target, owned: Callable[[Path], bool] | None = None, strangers: Strangers | None = None) -> Path:
    """Fail fast, before any work, unless ``target`` may be written: absent, an empty folder, or a folder
    that ``owned`` (default: :func:`is_own_model_dir`) recognises as an earlier output of the pipeline and
    that holds nothing ``strangers`` finds (default, with the default ``owned``: :func:`model_dir_strangers`,
    a file outside the record of what the stage wrote, hidden or not: a ``.notes``, a ``.git/``).
    Anything else (a regular file, a folder of other files, ``.`` or ``..``) is refused untouched. A symbolic
    link (a chain of them, a dangling one) is judged by the folder it points to, which is the one written
    (:func:`pipeline.atomic.resolve_target`): the link is kept. A caller that only adds files to the folder
    (the BiLSTM's :func:`pipeline.models.bilstm.saved.save`) passes its own ``owned`` and no ``strangers``:
    what else the folder holds stays."""
    target = Path(target)
    if owned is None:
        owned, strangers = is_own_model_dir, strangers or model_dir_strangers
    if target.name in ("", ".", ".."):
        raise InputError(target, "is not a folder name to write a model to (give a new or empty folder)")
    if not target.exists():
        for parent in resolve_target(target).parents:
            if parent.exists():
                if not parent.is_dir():
                    raise InputError(target.parent, f"cannot create the output folder: {os_message(_NOT_A_FOLDER)}")
                break
        return target
    if not target.is_dir():
        raise InputError(target, "exists and is a file, not an output folder of the pipeline: refused, nothing touched")
    try:
        empty = next(target.iterdir(), None) is None
        found = [] if empty or strangers is None or not owned(target) else strangers(target)
    except OSError as exc:
        raise InputError(target, f"cannot read the existing output folder: {os_message(exc)}") from exc
    if not empty and not owned(target):
        raise InputError(
            target,
            "exists and holds files the pipeline did not write (not an earlier output of this stage): "
            "refused, nothing touched; remove it or choose another output folder",
        )
    if found:
        raise InputError(
            target,
            f"is an earlier output that also holds files the pipeline did not write ({listing(found)}), or not "
            "with these bytes: refused, nothing touched; move them out or choose another output folder",
        )
    return target


def replace_dir(
    source: Path, target: Path, owned: Callable[[Path], bool] | None = None, strangers: Strangers | None = None
) -> None:
    """Move ``source`` to ``target``, replacing an existing ``target`` only where it is empty, or ``owned``
    recognises it and ``strangers`` finds nothing else in it (default :func:`is_own_output` and
    :func:`output_strangers`: a model directory or a resume checkpoint holding only its own files); the old
    one is moved aside first and removed after the rename. Anything else raises :class:`InputError`.
    Where ``target`` is a symbolic link, the folder it points to is replaced and the link kept."""
    source, target = Path(source), Path(target)
    if owned is None:
        owned, strangers = is_own_output, strangers or output_strangers
    check_output_dir(target, owned, strangers)
    target = resolve_target(target)
    old = target.with_name(leftover_name(target.name, "old"))
    moved = False
    if target.exists():
        os.replace(target, old)
        moved = True
    try:
        os.replace(source, target)
    except OSError:
        if moved:
            os.replace(old, target)  # the previous output stays where it was
        raise
    if moved:
        shutil.rmtree(old, ignore_errors=True)


# ------------------------------------------------------------------ sentence-transformers files
def save_model(directory: Path, model, tokenizer, max_length: int, pooling: str) -> None:
    """``save_pretrained`` of the model (a masked-LM model keeps its MLM head) and its tokenizer, with the
    sentence-transformers files for ``pooling`` and ``max_length``."""
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    write_sentence_transformers_files(directory, model.config.hidden_size, max_length, pooling)


def write_sentence_transformers_files(directory: Path, hidden_size: int, max_length: int, pooling: str) -> None:
    """The module files sentence-transformers reads; existing ones (written by the training stage) are kept.
    Its version comes from the installed package's metadata: importing sentence-transformers costs a job that
    writes a model folder about 4 CPU seconds (BENCHMARKS.md "CI"), and this file needs only the number."""
    from importlib.metadata import version

    import torch
    import transformers

    directory = Path(directory)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    if pooling == "pooler":  # MiSAD's pooler (ULR-BERT §3.2): [CLS], then its dense + tanh (pretrain saves it)
        pooling = "cls"
        modules.append({"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    files = {
        "modules.json": modules,
        "sentence_bert_config.json": {"max_seq_length": max_length, "do_lower_case": False},
        "1_Pooling/config.json": {
            "word_embedding_dimension": hidden_size,
            **{flag: flag == POOLING_FLAGS[pooling] for flag in POOLING_FLAGS.values()},
        },
        "config_sentence_transformers.json": {
            "__version__": {
                "sentence_transformers": version("sentence-transformers"),
                "transformers": transformers.__version__,
                "pytorch": torch.__version__,
            },
            "model_type": "SentenceTransformer",
            "prompts": {},
            "default_prompt_name": None,
            "similarity_fn_name": "cosine",
        },
    }
    for name, content in files.items():
        path = directory / name
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(content, indent=2) + "\n")


# ------------------------------------------------------------------ pooler
def _encoder_prefix(keys) -> str | None:
    """``bert.`` in a masked-LM state dict, ``""`` in a bare encoder's; ``None`` when unrecognised."""
    for key in keys:
        if key.endswith("embeddings.word_embeddings.weight"):
            return key.removesuffix("embeddings.word_embeddings.weight")
    return None


def _pooler_of_checkpoint(base: str | None) -> dict | None:
    """The pooler tensors of the starting checkpoint (a local directory, or a Hub id in the local cache)."""
    if not base:
        return None
    weights = Path(base) / "model.safetensors"
    if not weights.exists():
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(base, "model.safetensors") if hub_id(base) else None
        if not isinstance(cached, str):
            return None
        weights = Path(cached)
    from safetensors.torch import load_file

    state = load_file(weights)
    prefix = _encoder_prefix(state)
    if prefix is None:
        return None
    pooler = {key.removeprefix(prefix): value for key, value in state.items() if key.startswith(f"{prefix}pooler.")}
    return pooler or None


def save_pooler(directory: Path, base: str | None = None, seed: int = 0) -> bool:
    """Add the pooler to ``model.safetensors`` where it has none; True when added."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import AutoConfig, AutoModel

    weights = Path(directory) / "model.safetensors"
    if not weights.exists():
        return False
    state = load_file(weights)
    prefix = _encoder_prefix(state)
    if prefix is None or any(key.startswith(f"{prefix}pooler.") for key in state):
        return False
    with torch.random.fork_rng():  # a seeded initialisation that leaves the caller's RNG alone
        torch.manual_seed(seed)
        fresh = {
            key: value
            for key, value in AutoModel.from_config(AutoConfig.from_pretrained(directory)).state_dict().items()
            if key.startswith("pooler.")
        }
    if not fresh:
        return False  # an architecture without a pooler
    pooler = _pooler_of_checkpoint(base)
    if pooler is None or {k: v.shape for k, v in pooler.items()} != {k: v.shape for k, v in fresh.items()}:
        pooler = fresh
    state.update({f"{prefix}{key}": value.contiguous() for key, value in pooler.items()})
    save_file(state, weights, metadata={"format": "pt"})
    return True


# ------------------------------------------------------------------ completion
def complete_model_dir(directory: Path, final: Path | None = None, card: dict | None = None) -> None:
    """Card, pooler and sentence-transformers files for a freshly written model directory (no-op elsewhere).

    ``final``: the path the directory is moved to afterwards (the card names it), if not ``directory``;
    ``card``: keyword arguments of :func:`~pipeline.models.card.write_card` (metrics, repo id, base model).
    """
    directory = Path(directory)
    if not (directory / "config.json").exists():
        return
    config = json.loads((directory / "config.json").read_text())
    _, settings = read_settings(directory)
    max_length = int(settings.get("max_length") or config.get("max_position_embeddings", 512))
    write_sentence_transformers_files(directory, config["hidden_size"], max_length, settings.get("pooling", "mean"))
    if save_pooler(directory, base=settings.get("model"), seed=int(settings.get("seed", 0))):
        log.info("%s: pooler weights saved", directory)
    write_card(directory, final=final, **(card or {}))


def vocab_sha256(tokenizer) -> str:
    """SHA-256 of the tokenizer's vocabulary (token → id, key-sorted), to tie a dataset to its tokenizer."""
    vocab = json.dumps(tokenizer.get_vocab(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(vocab.encode()).hexdigest()
