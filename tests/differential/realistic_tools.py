"""Function-calling tools and call arguments in the style of public benchmark data (BFCL, glaive,
xLAM): several tools per request, each with a rich parameter schema (nested objects, enums,
arrays of objects, `required`, optional parameters with defaults, descriptions with unicode,
quotes and newlines), and arguments that follow the schema.

Pure functions of the `random.Random` passed in; `odd` is the chance of each irregularity a
converted benchmark carries (BFCL type names, xLAM's flat parameter maps, dotted names).
"""

from __future__ import annotations

import json
import random
from typing import Any

__all__ = ["STYLES", "benchmark_arguments", "benchmark_tool"]

R = random.Random
Json = Any

STYLES = ("bfcl", "glaive", "xlam")

DOMAINS = [
    "weather",
    "hotel",
    "flight",
    "mortgage",
    "currency",
    "stock",
    "calendar",
    "restaurant",
    "translation",
    "news",
    "music",
    "ride",
    "recipe",
    "email",
    "geometry",
    "statistics",
    "order",
    "ticket",
]
VERBS = ["get", "search", "book", "calculate", "convert", "create", "list", "update", "find"]
DOTTED_PREFIXES = ["math", "finance", "geometry", "spotify", "uber", "sports.nba", "api.v1"]
TOOL_DESCRIPTIONS = [
    "",
    "Get the current weather in a given location.",
    "Search for hotels.\n\nReturns a JSON list of offers sorted by price.",
    "Calculate the monthly mortgage payment \u2013 principal, rate (%) and term in years.",
    'Convert an amount between currencies, e.g. "EUR" -> "USD".',
    "Books a flight.\n- origin: IATA code\n- destination: IATA code\n- date: YYYY-MM-DD",
    "Berechnet die Fläche eines Kreises. Ergebnis in m².",
    "指定した都市の天気を取得します。",
    "Note that the provided function is in Python 3 syntax.",
    "Creates an event; times are in UTC (ISO 8601).\tAll-day events omit `time`.",
    "Looks up a path like C:\\Users\\name\\file.txt and returns its size 📁",
    "A " + "very long description of the tool's behaviour, " * 12,
]
PROPERTY_NAMES = [
    "location",
    "city",
    "unit",
    "date",
    "start_date",
    "end_date",
    "query",
    "amount",
    "from_currency",
    "to_currency",
    "guests",
    "rooms",
    "filters",
    "tags",
    "limit",
    "offset",
    "sort_by",
    "include_details",
    "price_range",
    "passengers",
    "radius",
    "language",
    "coordinates",
    "items",
    "metadata",
    "user_id",
]
PROPERTY_DESCRIPTIONS = [
    "The city and state, e.g. San Francisco, CA",
    "Temperature unit. Defaults to celsius.",
    "Date in the format YYYY-MM-DD",
    "Optional. Maximum number of results (1-100).",
    'A search query such as "cheap flights"',
    "Liste der Filter\n(optional)",
    "価格帯",
    "Whether to include details; default: false",
    "Amount in the source currency, e.g. 12.5",
    "Line one\nLine two\n\nLine four",
    "",
]
STRING_ENUMS = [
    ["celsius", "fahrenheit"],
    ["asc", "desc"],
    ["economy", "premium_economy", "business", "first"],
    ["EUR", "USD", "GBP", "JPY", "CHF"],
    ["en", "de", "fr", "ja", "zh-CN"],
    ["low", "medium", "high"],
]
FORMATS = ["date", "date-time", "email", "uri", "uuid"]
BFCL_TYPES = {"object": "dict", "number": "float", "array": "array", "string": "string"}
BFCL_ODD_TYPES = ["tuple", "any", "float", "dict", "HashMap", "String", "long"]
XLAM_TYPES = ["str", "int", "float", "bool", "str, optional", "int, optional", "List[str]"]


def pick(rng: R, items: list[Any]) -> Any:
    return items[rng.randrange(len(items))]


def chance(rng: R, p: float) -> bool:
    return rng.random() < p


def tool_name(rng: R, style: str, odd: float) -> str:
    """A benchmark-like function name; BFCL's dotted names come with `odd`."""
    base = f"{pick(rng, VERBS)}_{pick(rng, DOMAINS)}"
    if chance(rng, 0.3):
        base += pick(rng, ["_info", "_details", "_by_id", "_v2", "s"])
    if style == "bfcl" and chance(rng, odd):
        return f"{pick(rng, DOTTED_PREFIXES)}.{base}"
    if style == "xlam" and chance(rng, 0.2):
        return base.replace("_", "") if chance(rng, 0.5) else f"{base}_for_{pick(rng, DOMAINS)}"
    return base


def type_name(rng: R, json_type: str, style: str, odd: float) -> Any:
    """The spelling of a JSON type in the given style."""
    if style == "bfcl":
        if chance(rng, odd):
            return pick(rng, BFCL_ODD_TYPES)
        return BFCL_TYPES.get(json_type, json_type) if chance(rng, 0.7) else json_type
    if chance(rng, odd * 0.3):
        return [json_type, "null"]
    return json_type


def property_schema(rng: R, style: str, odd: float, depth: int) -> Json:
    """One parameter: a scalar, an enum, an array (of scalars or objects) or a nested object."""
    kinds = ["string", "enum", "integer", "number", "boolean", "array", "object_array"]
    if depth < 3:
        kinds += ["object", "object"]
    if chance(rng, odd * 0.5):
        kinds += ["any_of", "nullable"]
    kind = pick(rng, kinds)
    node: dict[str, Any]
    if kind == "string":
        node = {"type": type_name(rng, "string", style, odd)}
        if chance(rng, 0.2):
            node["format"] = pick(rng, FORMATS)
        if chance(rng, 0.1):
            node["pattern"] = pick(rng, ["^[A-Z]{3}$", "^\\d{4}-\\d{2}-\\d{2}$"])
        if chance(rng, 0.1):
            node["minLength"] = 1
    elif kind == "enum":
        values: list[Any] = list(pick(rng, STRING_ENUMS))
        if chance(rng, 0.15):
            values = [1, 2, 3, 5, 10]
        node = {"type": "integer" if isinstance(values[0], int) else "string", "enum": values}
        if chance(rng, odd):
            node["enum"] = [*values, None]
    elif kind in ("integer", "number"):
        node = {"type": type_name(rng, kind, style, odd)}
        if chance(rng, 0.3):
            node["minimum"] = 0
        if chance(rng, 0.2):
            node["maximum"] = pick(rng, [100, 1000, 2.5])
    elif kind == "boolean":
        node = {"type": type_name(rng, "boolean", style, odd)}
    elif kind == "array":
        item_type = pick(rng, ["string", "integer", "number"])
        node = {
            "type": type_name(rng, "array", style, odd),
            "items": {"type": type_name(rng, item_type, style, odd)},
        }
        if chance(rng, 0.2):
            node["minItems"] = 1
        if chance(rng, 0.1):
            node["uniqueItems"] = True
    elif kind == "object_array":
        node = {
            "type": type_name(rng, "array", style, odd),
            "items": object_schema(rng, style, odd, depth + 1),
        }
    elif kind == "object":
        node = object_schema(rng, style, odd, depth + 1)
    elif kind == "any_of":
        node = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    else:
        node = {"type": ["string", "null"]}
    if chance(rng, 0.7):
        node["description"] = pick(rng, PROPERTY_DESCRIPTIONS)
    return node


def object_schema(rng: R, style: str, odd: float, depth: int) -> Json:
    """An object schema with 0..6 properties, a `required` subset and optional defaults."""
    props: dict[str, Any] = {}
    for _ in range(rng.randint(0 if depth else 1, 6 if depth < 2 else 3)):
        name = pick(rng, PROPERTY_NAMES)
        if name not in props:
            props[name] = property_schema(rng, style, odd, depth)
    node: dict[str, Any] = {"type": type_name(rng, "object", style, odd), "properties": props}
    if props and chance(rng, 0.8):
        if chance(rng, 0.3):
            node["required"] = list(props)
        else:
            node["required"] = [name for name in props if chance(rng, 0.5)]
        if chance(rng, odd * 0.5):
            node["required"].append("not_a_property")
    for name, sub in props.items():
        if name not in node.get("required", []) and chance(rng, 0.3):
            sub["default"] = default_for(rng, sub)
    if chance(rng, 0.15):
        node["additionalProperties"] = False
    return node


def default_for(rng: R, node: Json) -> Any:
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        return pick(rng, enum)
    return sample_value(rng, node, 2)


def xlam_parameters(rng: R) -> Json:
    """xLAM's own parameter map: name -> {description, type, default}, no JSON Schema wrapper."""
    out: dict[str, Any] = {}
    for _ in range(rng.randint(1, 4)):
        entry: dict[str, Any] = {
            "description": pick(rng, PROPERTY_DESCRIPTIONS),
            "type": pick(rng, XLAM_TYPES),
        }
        if chance(rng, 0.5):
            entry["default"] = pick(rng, ["", "en", 10, 0.5, True])
        out[pick(rng, PROPERTY_NAMES)] = entry
    return out


def benchmark_tool(rng: R, style: str, odd: float) -> dict[str, Any]:
    """An abstract function tool (name, description, parameters, sometimes strict)."""
    tool: dict[str, Any] = {"name": tool_name(rng, style, odd)}
    if chance(rng, 0.9):
        tool["description"] = pick(rng, TOOL_DESCRIPTIONS)
    if style == "xlam" and chance(rng, odd):
        tool["parameters"] = xlam_parameters(rng)
    elif chance(rng, 0.95):
        tool["parameters"] = object_schema(rng, style, odd, 0)
    if chance(rng, 0.05):
        tool["strict"] = True
    return tool


def sample_value(rng: R, node: Json, depth: int) -> Any:
    """A value that follows `node` (any spelling of the type names above)."""
    if not isinstance(node, dict):
        return None
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        return pick(rng, enum)
    if "anyOf" in node:
        return pick(rng, ["text", 7])
    kind = node.get("type")
    if isinstance(kind, list):
        kind = kind[0] if chance(rng, 0.8) else "null"
    if kind in ("object", "dict", "HashMap") or "properties" in node:
        if depth > 3:
            return {}
        props = node.get("properties")
        if not isinstance(props, dict):
            return {}
        return {
            name: sample_value(rng, sub, depth + 1)
            for name, sub in props.items()
            if chance(rng, 0.75)
        }
    if kind in ("array", "tuple") or "items" in node:
        if depth > 3:
            return []
        return [sample_value(rng, node.get("items"), depth + 1) for _ in range(rng.randint(0, 3))]
    if kind in ("integer", "int", "long"):
        return rng.randint(0, 500)
    if kind in ("number", "float"):
        return pick(rng, [0.5, 12.75, 3, 1e-3, 250000])
    if kind in ("boolean", "bool"):
        return chance(rng, 0.5)
    if kind == "null":
        return None
    return pick(rng, ["San Francisco, CA", "2024-05-01", "München", "東京", 'say "hi"', "a\nb"])


def benchmark_arguments(rng: R, tool: dict[str, Any]) -> str:
    """Call arguments (JSON text) that follow the tool's parameter schema."""
    params = tool.get("parameters")
    if isinstance(params, dict) and "properties" not in params:
        args = {name: sample_value(rng, entry, 1) for name, entry in params.items()}
    else:
        value = sample_value(rng, params, 0)
        args = value if isinstance(value, dict) else {}
    return json.dumps(
        args, ensure_ascii=chance(rng, 0.3), indent=pick(rng, [None, None, None, 2, 4])
    )
