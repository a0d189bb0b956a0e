"""The model card (``README.md``) of a model directory: Hugging Face metadata, usage, training, citation.

The card holds the Hugging Face metadata block (base model, objective, data, licence, evaluation
results of the run where there are any), how to load the model (with the pooling it was trained
with, docs/method.md §3 / §5), the training settings and provenance, and the citation of the papers.
A stage that saves a model writes its settings and provenance as ``<stage>_config.json`` (see
:data:`SETTINGS_FILES`); the card is written when the directory is completed
(:func:`pipeline.models.directory.complete_model_dir`), and :func:`write_card` rewrites it alone,
e.g. with the run's metrics once they exist (``python -m pipeline export``).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from pipeline.models.pooling import pooling_of
from pipeline.objective_registry import REGISTRY

# Metric keys shown in the card's results, per task (percentages, docs/method.md §5).
CARD_METRICS = {
    "analogy": ("overall", "universal analogy accuracy"),
    "sts": ("avg", "STS Spearman"),
    "wordsim": ("avg", "word similarity Spearman"),
    "geogranno": ("top1", "GEOGRANNO Top-1"),
    "faq": ("avg", "FAQ Acc@1"),
}
CITATION = """@inproceedings{li-zhao-2021-pre,
  title = {Pre-training Universal Language Representation},
  author = {Li, Yian and Zhao, Hai},
  booktitle = {Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics},
  year = {2021}
}
@article{li2020burt,
  title = {BURT: BERT-inspired Universal Representation from Learning Meaningful Segment},
  author = {Li, Yian and others},
  journal = {arXiv preprint},
  year = {2020}
}"""


def objective_text(objective: str, settings: dict) -> str:
    """The card's description of a pre-training objective (its registry entry's, with the run's settings)."""
    entry = REGISTRY.get(objective)
    return entry.card_text(settings.get("span_max_words"), settings.get("misad_loss")) if entry else objective


def hub_id(name: str | None) -> str | None:
    """``name`` if it reads as a Hugging Face Hub id (not a local path)."""
    if not name or Path(name).exists() or name.startswith((".", "/")) or name.count("/") > 1:
        return None
    return name


def _language(settings: dict) -> str:
    """The language of the pre-training data (the token dataset's provenance), English where unknown."""
    data = settings.get("data")
    if isinstance(data, list):  # the token shards of one dataset: they share their provenance
        data = next((path for path in data if isinstance(path, str) and Path(path).exists()), None)
    if isinstance(data, str) and data.endswith(".parquet") and Path(data).exists():
        from pipeline import contracts

        try:
            return contracts.read_provenance(data).get("params", {}).get("lang") or "en"
        except (OSError, ValueError):
            return "en"
    return "en"


def _metric_results(metrics: list[dict]) -> list[dict]:
    """model-index results from metrics JSONs (docs/method.md §5: every number is a percentage)."""
    results = []
    for record in metrics:
        task = record.get("task")
        if task not in CARD_METRICS or CARD_METRICS[task][0] not in record.get("metrics", record):
            continue
        key, label = CARD_METRICS[task]
        value = record.get("metrics", record)[key]
        pooling = record.get("model", {}).get("pooling", "mean")
        results.append(
            {
                "task": {"type": "sentence-similarity", "name": label},
                "dataset": {"name": task, "type": task},
                "metrics": [{"type": key, "value": round(float(value), 2), "name": f"{label} ({pooling})"}],
            }
        )
    return results


# Where a stage that saves a model puts its resolved settings and provenance (first found wins).
SETTINGS_FILES = ("pretrain_config.json", "finetune_config.json", "classify_config.json", "tiny_model.json")
# In every card this module writes: with the metadata block, how an exported folder is known as ours.
CARD_MARK = "the ulr-pipeline repository"


def read_settings(directory: Path) -> tuple[str | None, dict]:
    """The settings file of a model directory and its content (``None, {}`` where there is none)."""
    for name in SETTINGS_FILES:
        path = Path(directory) / name
        if path.exists():
            return name, json.loads(path.read_text())
    return None, {}


def card_text(
    directory: Path,
    metrics: list[dict] | None = None,
    repo_id: str | None = None,
    base_model: str | None = None,
    final: Path | None = None,
) -> str:
    """The card of ``directory``; ``final`` is where it will live (a model is completed under a temporary name)."""
    directory = Path(directory)
    final = Path(final or directory)
    settings_file, settings = read_settings(directory)
    config = json.loads((directory / "config.json").read_text())
    objective = settings.get("objective")
    base = base_model or hub_id(settings.get("model"))
    pooling = pooling_of(directory)
    name = repo_id or final.name
    meta = {
        "library_name": "sentence-transformers",
        "pipeline_tag": "sentence-similarity",
        "tags": ["sentence-transformers", "feature-extraction", "fill-mask", "universal-representation"]
        + ([objective] if objective else []),
        "license": "other",
        "license_name": "research-only-data",
        "license_link": "LICENSE",
        "language": [_language(settings)],
    }
    if base:
        meta["base_model"] = base
    meta["datasets"] = ["wikipedia"]
    results = _metric_results(metrics or [])
    if results:
        meta["model-index"] = [{"name": name, "results": results}]
    provenance = settings.get("provenance", {})
    environment = provenance.get("environment", {})
    lines = ["---", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip(), "---", "", f"# {name}", ""]
    if objective and settings_file == "pretrain_config.json":
        lines += [
            (
                f"Continued pre-training of `{base or settings.get('model')}` with the **{objective}** objective: "
                f"{objective_text(objective, settings)}, for {settings.get('total_steps', '?')} optimizer steps "
                f"on sentences of Wikipedia marked with their per-document PMI n-grams (docs/method.md §1–§3 of "
                f"the ulr-pipeline repository)."
            ),
            "",
        ]
    elif settings_file == "tiny_model.json":
        params = provenance.get("params", {})
        family = {"albert": "ALBERT", "electra": "ELECTRA discriminator (its generator in generator/)"}
        what = family.get(params.get("family"), "BERT")
        if params.get("architecture"):  # tiny-model --architecture: a released checkpoint's shape
            what = f"{what} of {params['architecture']}'s shape"
        lines += [
            (
                f"A {'randomly initialised' if params.get('architecture') else 'small randomly initialised'} {what} "
                "with a WordPiece vocabulary trained on the corpus, made by the ulr-pipeline repository for its "
                "demo and tests. It has not been trained: its embeddings are random."
            ),
            "",
        ]
    else:
        lines += [
            f"A model trained by the ulr-pipeline repository from `{base or settings.get('model', '?')}`"
            + (f"; `{settings_file}` holds its settings and provenance." if settings_file else "."),
            "",
        ]
    lines += [
        "## Usage",
        "",
        "```python",
        "from sentence_transformers import SentenceTransformer",
        "",
        # the folder's name, not its path: the card's bytes do not depend on where the run was made
        f'model = SentenceTransformer("{repo_id or final.name}")  # {pooling} pooling',
        'embeddings = model.encode(["a word", "a short phrase", "A whole sentence."])',
        "```",
        "",
        (
            "The directory also loads with `transformers.AutoModel` (encoder and pooler) and "
            "`AutoModelForMaskedLM` (encoder and MLM head)."
        ),
        "",
    ]
    if results:
        lines += ["## Evaluation (this run)", "", "| task | metric | value |", "|---|---|---|"]
        lines += [
            f"| {r['dataset']['name']} | {r['metrics'][0]['name']} | {r['metrics'][0]['value']} |" for r in results
        ]
        lines += [""]
    else:
        lines += [
            "## Evaluation",
            "",
            ("Not evaluated yet: `python -m pipeline export --metrics ...` adds the run's metrics to this card."),
            "",
        ]
    if settings and settings_file != "tiny_model.json":
        shown = (
            "objective",
            "total_steps",
            "effective_batch_size",
            "lr",
            "warmup",
            "max_length",
            "pooling",
            "seed",
            "precision",
            "world_size",
        )
        lines += ["## Training", "", "| setting | value |", "|---|---|"]
        lines += [f"| {key} | {settings[key]} |" for key in shown if key in settings]
        lines += [f"| hidden size / layers | {config.get('hidden_size')} / {config.get('num_hidden_layers')} |", ""]
        lines += [
            (
                "`train_log.jsonl` holds every loss term, the learning rate and tokens/s per step; "
                f"`{settings_file}` the resolved settings and provenance."
            ),
            "",
        ]
    if provenance:
        libraries = ", ".join(f"{k} {v}" for k, v in environment.get("libraries", {}).items() if v)
        hardware = environment.get("hardware", {})
        lines += [
            "## Provenance",
            "",
            f"- code version: `{provenance.get('code_version')}`",
            f"- libraries: {libraries}" if libraries else "- libraries: not recorded",
            f"- hardware: {hardware.get('cpu', '?')} ({hardware.get('cpus', '?')} CPUs)"
            + (f", GPUs: {', '.join(hardware['gpus'])}" if hardware.get("gpus") else ", no GPU"),
            "",
        ]
    lines += [
        "## Licence",
        "",
        (
            "The code that made this model is MIT-licensed. The weights derive from the base model (see its "
            "licence) and Wikipedia text (CC BY-SA); the evaluation sets, several of them for research or "
            "non-commercial use only, are listed in the repository's `docs/data.md`. Use the model for research."
        ),
        "",
        "## Citation",
        "",
        "```bibtex",
        CITATION,
        "```",
        "",
    ]
    return "\n".join(lines)


def write_card(
    directory: Path,
    metrics: list[dict] | None = None,
    repo_id: str | None = None,
    base_model: str | None = None,
    final: Path | None = None,
) -> None:
    (Path(directory) / "README.md").write_text(card_text(directory, metrics, repo_id, base_model, final))
