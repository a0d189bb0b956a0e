"""The workflow's config before Snakemake validates it: typed overrides and short errors.

``snakemake --config ngrams='{top_k: 100}'`` parses a nested value with YAML's base loader,
so every scalar inside it arrives as a string ("100") and fails the schema's ``integer``.
:func:`coerce` walks the config along the schema (``properties``, ``additionalProperties``,
``items``, ``$ref``) and turns such strings into the integer, number, boolean or null the
schema asks for, in place. :func:`check` then reports what is still wrong in one line per
problem (the key's dotted path and what is expected; for an unknown key, the allowed ones)
instead of jsonschema's dump of the whole schema; and what the schema does not say: a number
that is not finite (``.nan`` passes every ``minimum``), a data path that leaves the data root,
a count past the bound of the flag it becomes (pipeline/arguments.py).

Before either walks the config, :func:`check_shape` bounds it: a 2 KB file of YAML aliases
(``&a8 [*a7, *a7, ...]``) loads as a few shared lists, but expands to 10⁹ values for anything
that walks it (the schema's validator, which also puts the value's repr in its message), and
a config nested thousands deep overflows Python's stack. Both are refused in one line first.

:func:`resolve_config` reads a config file as the workflow sees it (checked, its defaults filled in), for
what reads a config outside Snakemake: the plan, the rehearsal, the tests.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import yaml

from pipeline.arguments import MAX_SEEDS, MAX_SHARDS
from pipeline.tasks.data_root import leaves_root

_INTEGER = re.compile(r"^[+-]?[0-9]+$")
_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off"}
_NULL = {"null", "~", ""}


MAX_VALUES = 100_000  # values in a config, aliases expanded (the paper configs hold about 1,000)
MAX_DEPTH = 32  # levels of nesting (the schema's deepest is 6)


class ConfigError(ValueError):
    """What is wrong with the config, one line per problem."""


def check_shape(config, where: str = "config") -> None:
    """Raise :class:`ConfigError` if ``config`` expands (aliases counted at each use) to more than
    :data:`MAX_VALUES` values, nests deeper than :data:`MAX_DEPTH`, or contains itself.

    Iterative, and each distinct list or mapping is visited once, so the check itself costs what
    the loaded YAML costs, however far its aliases expand.
    """
    sizes: dict[int, int] = {}  # id of a list or mapping -> its values, expanded
    path: list = []  # the containers open on the walk; path[i] is at depth i + 1
    keys: list = []  # the key under which each of them was reached
    stack: list = [(config, None, False)]
    while stack:
        node, key, finished = stack.pop()
        if not isinstance(node, (dict, list)) or (id(node) in sizes and not finished):
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        if finished:
            path.pop(), keys.pop()
            sizes[id(node)] = 1 + sum(sizes.get(id(child), 1) for child in children)
            continue
        if any(node is open_ for open_ in path):
            raise ConfigError(f"{where}: {_dotted(keys[1:] + [key])}: an alias refers to a value that contains it")
        path.append(node), keys.append(key)
        if len(path) > MAX_DEPTH:
            raise ConfigError(f"{where}: {_dotted(keys[1 : MAX_DEPTH + 1])}...: nested deeper than {MAX_DEPTH} levels")
        stack.append((node, key, True))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((child, name, False) for name, child in items)
    total = sizes.get(id(config), 1)
    if total > MAX_VALUES:
        raise ConfigError(
            f"{where}: {_largest(config, sizes)} expands to {total:,} values (YAML aliases counted at each use); "
            f"a config holds at most {MAX_VALUES:,}"
        )


def _largest(config, sizes: dict[int, int]) -> str:
    """The dotted key of the mapping entry that holds most of the values (down through mappings)."""
    names, node = [], config
    while isinstance(node, dict) and node:
        name, child = max(node.items(), key=lambda item: sizes.get(id(item[1]), 1))
        if sizes.get(id(child), 1) <= MAX_VALUES:
            break
        names.append(name)
        node = child
    return _dotted(names)


def _resolve(schema: dict, root: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return schema
        node = root
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema if isinstance(schema, dict) else {}


def _types(schema: dict) -> list[str]:
    kind = schema.get("type", [])
    return [kind] if isinstance(kind, str) else list(kind)


def _scalar(value: str, types: list[str]):
    """``value`` as the first of ``types`` it reads as; unchanged when none (or string) fits."""
    text = value.strip()
    if "string" in types:
        return value
    for kind in types:
        if kind == "null" and text.lower() in _NULL:
            return None
        if kind == "boolean" and text.lower() in _TRUE | _FALSE:
            return text.lower() in _TRUE
        if kind == "integer" and _INTEGER.match(text):
            return int(text)
        if kind == "number":
            try:
                return int(text) if _INTEGER.match(text) else float(text)
            except ValueError:
                continue
    return value


def coerce(config, schema: dict, root: dict | None = None):
    """Convert, in place where it can, the strings that the schema types otherwise; returns the value.
    The whole config (``root`` None) is first bounded by :func:`check_shape`."""
    if root is None:
        check_shape(config)
    root = root or schema
    schema = _resolve(schema, root)
    if isinstance(config, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key in list(config):
            child = properties.get(key, extra if isinstance(extra, dict) else None)
            if child is not None:
                config[key] = coerce(config[key], child, root)
        return config
    if isinstance(config, list):
        items = schema.get("items")
        if isinstance(items, dict):
            config[:] = [coerce(item, items, root) for item in config]
        return config
    if isinstance(config, str):
        return _scalar(config, _types(schema))
    return config


def _dotted(path) -> str:
    return ".".join(str(part) for part in path) or "(top level)"


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _message(error) -> str:
    """One line for one jsonschema error."""
    where = _dotted(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        prefix = f"{where}." if error.absolute_path else ""
        names = ", ".join(f"{prefix}{key}" for key in unknown)
        return f"unknown key {names}; allowed: {', '.join(allowed)}"
    if error.validator == "enum":
        return f"{where}: {_short(repr(error.instance))} is not one of {', '.join(map(str, error.validator_value))}"
    if error.validator == "pattern":
        return (
            f"{where}: {_short(repr(error.instance))} does not match {error.validator_value} (characters that a shell "
            "or a path would misread are not allowed, and a name that becomes a folder may not start with "
            "'.', so that '.' and '..' cannot leave results/)"
        )
    if error.validator == "maxLength":  # the value itself may be long: its length says what is wrong
        return f"{where}: {len(error.instance):,} characters, longer than {error.validator_value} (a name becomes a file name)"
    return f"{where}: {_short(error.message, 200)}"


# Config keys whose values are paths under data_root (a list: each item; "*": any key), as the
# workflow joins them (workflow/rules/common.smk data_path): none may leave the data root.
DATA_PATHS = (
    ("corpus", "*", "dumps", "*", "path"),
    ("corpus", "*", "dumps", "*", "index", "path"),
    ("finetune", "nli"),
    ("finetune", "ppdb"),
    ("finetune", "download_checksums", None),
    ("word2vec", "nli"),
    ("bilstm", "vectors"),
    ("bilstm", "train"),
    ("bilstm", "dev"),
    ("bilstm", "test"),
    ("bilstm", "downloads", None),
)


def _at(config, pattern: tuple, found: tuple = ()):
    """(dotted key, value) of every value at ``pattern`` (``None`` last: the mapping's keys themselves)."""
    if not pattern:
        for i, item in enumerate(config if isinstance(config, list) else [config]):
            yield _dotted(found + ((i,) if isinstance(config, list) else ())), item
        return
    head, rest = pattern[0], pattern[1:]
    if not isinstance(config, dict):
        return
    if head is None:
        for key in config:
            yield _dotted(found), key
        return
    for key in config if head == "*" else [head]:
        if key in config:
            yield from _at(config[key], rest, (*found, key))


# Counts of the config that the workflow turns into lists of files or jobs while it reads the
# Snakefile (range(shards), range(slices), range(seeds)): bounded as the stages' flags are.
COUNTS = (
    (("corpus", "shards"), MAX_SHARDS),
    (("corpus", "*", "dumps", "*", "slices"), MAX_SHARDS),
    (("corpus", "*", "dumps", "*", "index", "slices"), MAX_SHARDS),
    (("classify", "seeds"), MAX_SEEDS),
)


def _too_many(config):
    for pattern, bound in COUNTS:
        for where, value in _at(config, pattern):
            if isinstance(value, int) and value > bound:
                yield f"{where}: {value} is more than {bound:,}"


def _unfinished_numbers(config, found: tuple = ()):
    stack = [(config, found)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            yield f"{_dotted(where)}: {node} is not a finite number"
        elif isinstance(node, dict):
            stack.extend((value, (*where, key)) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, (*where, i)) for i, value in enumerate(node))


def _outside_data_root(config):
    for pattern in DATA_PATHS:
        for where, value in _at(config, pattern):
            if isinstance(value, str) and value != "word2vec" and (reason := leaves_root(value)):
                yield f"{where}: {_short(repr(value))} {reason}"


def check(config: dict, schema: dict) -> None:
    """Raise :class:`ConfigError` listing every problem, one line each (after :func:`coerce`): the
    schema's, a number that is not finite, and a data path that leaves the data root."""
    import jsonschema

    check_shape(config)
    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(config), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    problems = [_message(error) for error in errors]
    problems += sorted(_unfinished_numbers(config)) + list(_outside_data_root(config)) + list(_too_many(config))
    if problems:
        raise ConfigError("invalid config:\n" + "\n".join(f"  {problem}" for problem in problems))


def check_unique_keys(paths) -> None:
    """Raise :class:`ConfigError` where a config file gives one key twice in the same mapping.

    YAML keeps the last of duplicate keys without a word, so ``lr: 5e-5`` written twice in a
    config would silently run with the second. Snakemake reads the files itself; this reads
    them again with a loader that refuses a repeated key, naming the file and the line.
    """

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen: dict = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise ConfigError(
                        f"{self.name}: key {key!r} given twice in one mapping "
                        f"(line {seen[key] + 1} and line {key_node.start_mark.line + 1}); YAML would keep only the last"
                    )
                seen[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep=deep)

    for path in paths:
        with open(path, encoding="utf-8") as handle:
            loader = StrictLoader(handle)
            try:
                data = loader.get_single_data()
            except yaml.YAMLError as exc:
                raise ConfigError(f"{path}: not valid YAML ({_short(' '.join(str(exc).split()), 300)})") from None
            except RecursionError:  # PyYAML composes nested nodes recursively
                raise ConfigError(f"{path}: nested deeper than {MAX_DEPTH} levels") from None
            finally:
                loader.dispose()
        check_shape(data, str(path))


def write_run_config(config: dict, out: str, log: str) -> None:
    """The run's resolved config as one JSON file (the scoreboard reads it as ``--config FILE``: a config of
    any size, where one command-line argument stops at Linux's 128 KiB), written atomically."""
    import json

    from pipeline.atomic import AtomicFiles

    with AtomicFiles() as files:
        files.temp(Path(out)).write_text(json.dumps(config, sort_keys=True) + "\n", encoding="utf-8")
    Path(log).write_text(f"wrote {out}\n", encoding="utf-8")


# The one schema of every config (workflow/schemas/config.schema.yaml; read it with :func:`load_schema`).
SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


def load_schema() -> dict:
    """The config schema as :func:`coerce` and :func:`check` read it: the YAML file, with the enum of its
    ``$defs.objective`` filled in from the objectives' registry (pipeline/objective_registry.py), where the
    names are defined once. Snakemake's ``validate`` reads the file itself afterwards, for its defaults: by
    then :func:`check` has refused an unknown objective, naming the registry's."""
    from pipeline.objective_registry import OBJECTIVES

    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    schema["$defs"]["objective"]["enum"] = list(OBJECTIVES)
    return schema


def against_schema(config: dict) -> dict:
    """``config`` checked as the workflow checks it (:func:`coerce`, :func:`check`, then Snakemake's
    ``validate``), its defaults filled in, in place; raises :class:`ConfigError`, ``ValueError`` or
    Snakemake's ``WorkflowError``."""
    from snakemake.utils import validate

    schema = load_schema()
    coerce(config, schema)
    check(config, schema)
    validate(config, str(SCHEMA), set_default=True)
    return config


def resolve_config(path: Path) -> dict:
    """The config as the workflow sees it: checked against the schema, its defaults filled in."""
    from pipeline import experiments
    from pipeline.errors import InputError

    if not path.is_file():
        raise InputError(path, "config file not found")
    try:
        check_unique_keys([path])
        config = against_schema(yaml.safe_load(path.read_text(encoding="utf-8")))
        experiments.runs(config["pretrain"])
    except (ConfigError, ValueError) as exc:
        raise InputError(path, " ".join(str(exc).split())) from None
    return config
