"""JSON schemas for structured model calls, and what a reply to one is worth. No model code.

The builders (``string``, ``array``, ``obj``, ...) produce bounded schemas: every string has a
``maxLength`` and every array a ``maxItems``, so no single field can eat the token budget, and
no bound exceeds what llama.cpp's grammar compiler accepts (``MAX_BOUND``). ``unbounded`` finds
the fields that break that rule.

A grammar compiled from a schema does not make the output *good*: small models still run out of
tokens, loop, or (when a schema keyword is outside what the grammar compiler understands) break
the schema. ``interpret`` classifies a completion into data or an error ("truncated",
"repetition", "invalid_json", "schema: ..."), using ``validate`` and ``looks_degenerate``.

Properties are generated in schema order (required first): order them as the model should think
(e.g. "reasoning" before "answer").
"""

from __future__ import annotations

import json
import re
from typing import Any

# --------------------------------------------------------------------------- schema helpers

MAX_BOUND = 1000
"""Largest ``maxLength`` / ``maxItems`` llama.cpp accepts in a grammar (measured, 0.3.36).

llama-cpp-python spells a bound of N as N nested optional groups, and llama.cpp's grammar
parser refuses more than 1000 of them (MAX_REPETITION_THRESHOLD). A refused grammar must never
reach llama-cpp-python's sampler: it adds the NULL sampler and the process segfaults.
"""


def _check_bound(what: str, value: int) -> None:
    if not 0 < value <= MAX_BOUND:
        raise ValueError(f"{what} must be in 1..{MAX_BOUND} (llama.cpp grammar limit), not {value}")


def string(max_length: int, *, min_length: int = 0) -> dict:
    """A bounded string."""
    _check_bound("maxLength", max_length)
    schema: dict[str, Any] = {"type": "string", "maxLength": max_length}
    if min_length:
        schema["minLength"] = min_length
    return schema


def enum(values: list[Any]) -> dict:
    """One of ``values`` (strings, ints, None...). The grammar emits exactly these literals."""
    if not values:
        raise ValueError("enum needs at least one value")
    types = {_json_type(v) for v in values}
    schema: dict[str, Any] = {"enum": list(values)}
    if len(types) == 1:
        schema["type"] = types.pop()
    return schema


def integer(*, minimum: int | None = None, maximum: int | None = None) -> dict:
    schema: dict[str, Any] = {"type": "integer"}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def number() -> dict:
    return {"type": "number"}


def boolean() -> dict:
    return {"type": "boolean"}


def nullable(schema: dict) -> dict:
    """``schema`` or null (as ``anyOf``, which both the grammar and ``validate`` understand)."""
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: dict, max_items: int, *, min_items: int = 0) -> dict:
    """A bounded array of ``items``."""
    _check_bound("maxItems", max_items)
    schema: dict[str, Any] = {"type": "array", "items": items, "maxItems": max_items}
    if min_items:
        schema["minItems"] = min_items
    return schema


def obj(properties: dict[str, dict], *, required: list[str] | None = None) -> dict:
    """An object with exactly these properties; all required unless ``required`` says otherwise.

    Required-by-default because the grammar lets a model skip optional keys, and small models do.
    """
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties) if required is None else list(required),
        "additionalProperties": False,
    }


def unbounded(schema: dict, path: str = "$") -> list[str]:
    """Paths of strings without ``maxLength`` (or enum/const), arrays without ``maxItems``, and
    bounds above ``MAX_BOUND``.

    Tests call this on every schema of the project: an unbounded field lets a weak model spend
    the whole token budget on one value; an oversized bound makes llama.cpp refuse the grammar.
    """
    found = [
        f"{path}: {key} {schema[key]} > {MAX_BOUND}"
        for key in ("maxLength", "maxItems")
        if schema.get(key, 0) > MAX_BOUND
    ]
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        found += unbounded(branch, path)
    types = _types_of(schema)
    literal = "enum" in schema or "const" in schema
    if "string" in types and "maxLength" not in schema and not literal and "pattern" not in schema:
        found.append(f"{path}: string without maxLength")
    if "array" in types:
        if "maxItems" not in schema:
            found.append(f"{path}: array without maxItems")
        if isinstance(schema.get("items"), dict):
            found += unbounded(schema["items"], f"{path}[]")
    if "object" in types:
        for key, sub in schema.get("properties", {}).items():
            found += unbounded(sub, f"{path}.{key}")
        if schema.get("additionalProperties") not in (None, False):
            found.append(f"{path}: object allows additional properties")
    return found


# --------------------------------------------------------------------------- validation


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _types_of(schema: dict) -> set[str]:
    declared = schema.get("type")
    if declared is None:
        return set()
    return {declared} if isinstance(declared, str) else set(declared)


def _has_type(value: Any, expected: str) -> bool:
    actual = _json_type(value)
    if expected == "number":
        return actual in ("integer", "number")
    if expected == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == expected


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` but ``True != 1``."""
    numeric = ("integer", "number")
    if _json_type(a) in numeric and _json_type(b) in numeric:
        return a == b
    return _json_type(a) == _json_type(b) and a == b


def validate(data: Any, schema: dict, path: str = "$") -> list[str]:
    """Errors of ``data`` against the subset of JSON Schema this project uses; [] when valid.

    Supported: type (incl. lists), enum, const, anyOf/oneOf (as "any branch"), string
    min/maxLength, integer/number minimum/maximum, array items/min/maxItems, object properties,
    required, additionalProperties: false. Other keywords are ignored.
    """
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        results = [validate(data, branch, path) for branch in branches]
        if all(results):
            return [f"{path}: matches no alternative ({results[0][0]})"]
    types = _types_of(schema)
    if types and not any(_has_type(data, t) for t in types):
        return [f"{path}: expected {'|'.join(sorted(types))}, got {_json_type(data)}"]
    if "enum" in schema and not any(_same(data, v) for v in schema["enum"]):
        return [f"{path}: {data!r} is not one of {schema['enum']!r}"]
    if "const" in schema and not _same(data, schema["const"]):
        return [f"{path}: {data!r} is not {schema['const']!r}"]
    if isinstance(data, str):
        return _validate_string(data, schema, path)
    if _json_type(data) in ("integer", "number"):
        return _validate_number(data, schema, path)
    if isinstance(data, list):
        return _validate_array(data, schema, path)
    if isinstance(data, dict):
        return _validate_object(data, schema, path)
    return []


def _validate_string(data: str, schema: dict, path: str) -> list[str]:
    errors = []
    if "maxLength" in schema and len(data) > schema["maxLength"]:
        errors.append(f"{path}: longer than {schema['maxLength']} characters ({len(data)})")
    if "minLength" in schema and len(data) < schema["minLength"]:
        errors.append(f"{path}: shorter than {schema['minLength']} characters ({len(data)})")
    return errors


def _validate_number(data: float, schema: dict, path: str) -> list[str]:
    errors = []
    if "minimum" in schema and data < schema["minimum"]:
        errors.append(f"{path}: {data} < minimum {schema['minimum']}")
    if "maximum" in schema and data > schema["maximum"]:
        errors.append(f"{path}: {data} > maximum {schema['maximum']}")
    return errors


def _validate_array(data: list, schema: dict, path: str) -> list[str]:
    errors = []
    if "maxItems" in schema and len(data) > schema["maxItems"]:
        errors.append(f"{path}: more than {schema['maxItems']} items ({len(data)})")
    if "minItems" in schema and len(data) < schema["minItems"]:
        errors.append(f"{path}: fewer than {schema['minItems']} items ({len(data)})")
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(data):
            errors += validate(item, items, f"{path}[{i}]")
    return errors


def _validate_object(data: dict, schema: dict, path: str) -> list[str]:
    properties = schema.get("properties", {})
    errors = [
        f"{path}: missing required {key!r}" for key in schema.get("required", []) if key not in data
    ]
    for key, value in data.items():
        if key in properties:
            errors += validate(value, properties[key], f"{path}.{key}")
        elif schema.get("additionalProperties") is False:
            errors.append(f"{path}: unexpected property {key!r}")
    return errors


# --------------------------------------------------------------------------- degeneration


_WORD_RUN = re.compile(r"\b(\w+)\b(?:\W{1,4}\1\b){9,}")  # one word 10+ times in a row
_CHAR_RUN = re.compile(r"(.)\1{31,}", re.DOTALL)  # one character 32+ times in a row
# A looping tail: this many copies of one unit of _SHORTEST_UNIT.._LONGEST_UNIT characters.
_TAIL_REPEATS, _SHORTEST_UNIT, _LONGEST_UNIT = 6, 8, 200


def looks_degenerate(text: str) -> bool:
    """True when generation looks stuck in a loop.

    Either the text *ends* in 6 or more copies of one unit of 8..200
    characters (checked as periodicity of the tail, so a unit cut mid-way still counts and
    shorter units are caught through their multiples), or one word / one character repeats
    back to back (10 words, 32 characters) anywhere.
    """
    if _WORD_RUN.search(text) or _CHAR_RUN.search(text):
        return True
    for unit in range(_SHORTEST_UNIT, min(_LONGEST_UNIT, len(text) // _TAIL_REPEATS) + 1):
        tail = text[-unit * _TAIL_REPEATS :]
        if tail[unit:] == tail[:-unit]:
            return True
    return False


def interpret(raw: str, finish_reason: str | None, schema: dict) -> tuple[dict | None, str | None]:
    """Classify a completion: ``(data, None)`` when usable, else ``(None, error)``.

    A loop is reported as "repetition" even when it also hit the token limit: the remedy
    (change the prompt or sampling) differs from that of plain truncation (more tokens).
    """
    if finish_reason == "length":
        return None, "repetition" if looks_degenerate(raw) else "truncated"
    try:
        data = json.loads(raw, strict=False)  # tolerate raw newlines inside strings
    except (json.JSONDecodeError, ValueError):
        return None, "repetition" if looks_degenerate(raw) else "invalid_json"
    errors = validate(data, schema)
    if errors:
        more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
        return None, "schema: " + "; ".join(errors[:3]) + more
    if looks_degenerate(raw):
        return None, "repetition"
    return data, None
