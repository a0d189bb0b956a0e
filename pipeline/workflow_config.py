"""The workflow's config before Snakemake validates it: typed overrides and short errors.

``snakemake --config ngrams='{top_k: 100}'`` parses a nested value with YAML's base loader,
so every scalar inside it arrives as a string ("100") and fails the schema's ``integer``.
:func:`coerce` walks the config along the schema (``properties``, ``additionalProperties``,
``items``, ``$ref``) and turns such strings into the integer, number, boolean or null the
schema asks for, in place. :func:`check` then reports what is still wrong in one line per
problem (the key's dotted path and what is expected; for an unknown key, the allowed ones)
instead of jsonschema's dump of the whole schema.
"""

from __future__ import annotations

import re

_INTEGER = re.compile(r"^[+-]?[0-9]+$")
_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off"}
_NULL = {"null", "~", ""}


class ConfigError(ValueError):
    """What is wrong with the config, one line per problem."""


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
    """Convert, in place where it can, the strings that the schema types otherwise; returns the value."""
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
        return f"{where}: {error.instance!r} is not one of {', '.join(map(str, error.validator_value))}"
    if error.validator == "pattern":
        return (
            f"{where}: {error.instance!r} does not match {error.validator_value} (characters that a shell "
            "or a path would misread are not allowed, and a name that becomes a folder may not start with "
            "'.', so that '.' and '..' cannot leave results/)"
        )
    message = error.message if len(error.message) < 200 else error.message[:200] + " ..."
    return f"{where}: {message}"


def check(config: dict, schema: dict) -> None:
    """Raise :class:`ConfigError` listing every problem, one line each (after :func:`coerce`)."""
    import jsonschema

    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(config), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        raise ConfigError("invalid config:\n" + "\n".join(f"  {_message(error)}" for error in errors))


def check_unique_keys(paths) -> None:
    """Raise :class:`ConfigError` where a config file gives one key twice in the same mapping.

    YAML keeps the last of duplicate keys without a word, so ``lr: 5e-5`` written twice in a
    config would silently run with the second. Snakemake reads the files itself; this reads
    them again with a loader that refuses a repeated key, naming the file and the line.
    """
    import yaml

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
                loader.get_single_data()
            except yaml.YAMLError as exc:
                raise ConfigError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
            finally:
                loader.dispose()
