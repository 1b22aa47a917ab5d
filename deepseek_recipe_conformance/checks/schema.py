"""A small JSON Schema validator for tool arguments (the keywords of DeepSeek's strict mode)."""

from __future__ import annotations

from typing import Any, cast

TYPE_TESTS = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(value: Any, schema: Any, path: str = "$") -> list[str]:
    """Errors of `value` against `schema` (empty when valid); unknown keywords are ignored."""
    if schema is True or not isinstance(schema, dict):
        return []
    errors: list[str] = []
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(TYPE_TESTS.get(str(n), lambda _v: True)(value) for n in names):
            return [f"{path}: expected type {kinds}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in enum {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected const {schema['const']!r}")
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if isinstance(options, list) and options and all(validate(value, o, path) for o in options):
            errors.append(f"{path}: matches none of {keyword}")
    if isinstance(value, dict):
        errors += _object(value, schema, path)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors += validate(item, schema["items"], f"{path}[{i}]")
    return errors


def _object(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    errors = []
    raw_properties = schema.get("properties")
    properties: dict[str, Any] = (
        cast(dict[str, Any], raw_properties) if isinstance(raw_properties, dict) else {}
    )
    for name in schema.get("required", []) if isinstance(schema.get("required"), list) else []:
        if name not in value:
            errors.append(f"{path}: missing required property {name!r}")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            errors += validate(item, properties[name], f"{path}.{name}")
        elif extra is False:
            errors.append(f"{path}: unexpected property {name!r}")
        elif isinstance(extra, dict):
            errors += validate(item, extra, f"{path}.{name}")
    return errors
