"""Schemas for structured calls: the bounded builders, validation, loop detection, and the
classification of a completion (no model needed)."""

from __future__ import annotations

import pytest

from ramem_local.schemas import (
    array,
    boolean,
    enum,
    integer,
    interpret,
    looks_degenerate,
    nullable,
    number,
    obj,
    string,
    unbounded,
    validate,
)

PERSON = obj(
    {
        "name": string(20),
        "age": nullable(integer(minimum=0, maximum=150)),
        "role": enum(["friend", "family", "colleague"]),
        "tags": array(string(10), 2),
    }
)

# --------------------------------------------------------------------------- validate


@pytest.mark.parametrize(
    ("data", "schema", "errors"),
    [
        ("abc", string(3), []),
        ("abcd", string(3), ["$: longer than 3 characters (4)"]),
        ("", string(3, min_length=1), ["$: shorter than 1 characters (0)"]),
        (3, string(3), ["$: expected string, got integer"]),
        (3, integer(), []),
        (3.0, integer(), []),  # JSON does not tell 3 from 3.0
        (3.5, integer(), ["$: expected integer, got number"]),
        (True, integer(), ["$: expected integer, got boolean"]),  # bool is not int in JSON
        ("3", integer(), ["$: expected integer, got string"]),
        (-1, integer(minimum=0), ["$: -1 < minimum 0"]),
        (200, integer(maximum=150), ["$: 200 > maximum 150"]),
        (2, number(), []),
        (1, boolean(), ["$: expected boolean, got integer"]),
        (False, boolean(), []),
        (None, {"type": "null"}, []),
        ("b", enum(["a", "b"]), []),
        ("c", enum(["a", "b"]), ["$: 'c' is not one of ['a', 'b']"]),
        (True, {"enum": [1, 2]}, ["$: True is not one of [1, 2]"]),
        (1.0, {"enum": [1, 2]}, []),
        (None, nullable(string(3)), []),
        ("abc", nullable(string(3)), []),
        (5, nullable(string(3)), ["$: matches no alternative ($: expected string, got integer)"]),
        (None, {"type": ["string", "null"]}, []),
        (1, {"type": ["string", "null"]}, ["$: expected null|string, got integer"]),
        (["a", "b"], array(string(1), 2), []),
        (["a", "b", "c"], array(string(1), 2), ["$: more than 2 items (3)"]),
        ([], array(string(1), 2, min_items=1), ["$: fewer than 1 items (0)"]),
        (["a", 7], array(string(1), 2), ["$[1]: expected string, got integer"]),
        ({"x": 1}, {"type": "object"}, []),  # unconstrained object
        ({"x": 1}, obj({}), ["$: unexpected property 'x'"]),
        ({}, obj({"x": integer()}), ["$: missing required 'x'"]),
        ({}, obj({"x": integer()}, required=[]), []),
        ([], obj({}), ["$: expected object, got array"]),
        (
            {"name": "Ann", "age": None, "role": "friend", "tags": []},
            PERSON,
            [],
        ),
        (
            {"name": "Ann", "age": -2, "role": "boss", "tags": ["a" * 11]},
            PERSON,
            [
                "$.age: matches no alternative ($.age: -2 < minimum 0)",
                "$.role: 'boss' is not one of ['friend', 'family', 'colleague']",
                "$.tags[0]: longer than 10 characters (11)",
            ],
        ),
    ],
)
def test_validate(data, schema, errors):
    assert validate(data, schema) == errors


# --------------------------------------------------------------------------- schema helpers


def test_helpers_build_bounded_schemas():
    assert unbounded(PERSON) == []
    assert PERSON["required"] == ["name", "age", "role", "tags"]
    assert PERSON["additionalProperties"] is False


@pytest.mark.parametrize(
    ("schema", "found"),
    [
        ({"type": "string"}, ["$: string without maxLength"]),
        ({"type": "string", "enum": ["a"]}, []),
        ({"type": "array", "items": string(5)}, ["$: array without maxItems"]),
        (array({"type": "string"}, 3), ["$[]: string without maxLength"]),
        (obj({"a": obj({"b": {"type": "string"}})}), ["$.a.b: string without maxLength"]),
        (nullable({"type": "string"}), ["$: string without maxLength"]),
        (
            {"type": "object", "properties": {}, "additionalProperties": True},
            ["$: object allows additional properties"],
        ),
    ],
)
def test_unbounded_finds_fields_a_model_could_fill_forever(schema, found):
    assert unbounded(schema) == found


def test_unbounded_flags_bounds_llama_cpp_refuses():
    schema = {"type": "string", "maxLength": 1500}
    assert unbounded(schema) == ["$: maxLength 1500 > 1000"]


@pytest.mark.parametrize("make", [lambda n: string(n), lambda n: array(boolean(), n)])
def test_helpers_refuse_bounds_llama_cpp_cannot_compile(make):
    assert make(1000)
    with pytest.raises(ValueError, match="llama.cpp grammar limit"):
        make(1001)


def test_enum_infers_a_single_type():
    assert enum(["a", "b"]) == {"enum": ["a", "b"], "type": "string"}
    assert enum(["a", None]) == {"enum": ["a", None]}


# --------------------------------------------------------------------------- degeneration


@pytest.mark.parametrize(
    ("text", "degenerate"),
    [
        ('{"summary": "Caroline went to a support group.", "people": ["Caroline"]}', False),
        ("I went to the park, then to the lake, then home for dinner with Mel.", False),
        ("", False),
        ("the cat sat on " * 8, True),  # a unit repeated at the end
        (('{"a": "' + "abcdefghij" * 7)[:-3], True),  # cut in the middle of a unit
        ("ab" * 40, True),  # short units count through their multiples
        ("abcdefgh" * 5, False),  # five copies are not enough
        ("x: " + "very " * 12 + "good", True),  # one word, back to back
        ("x: " + "very " * 9 + "good", False),
        ('["a", "a", "a", "a", "a", "a", "a", "a", "a", "a"]', True),
        ("!" * 40, True),  # one character
        ("-" * 20 + " a heading", False),
        (
            '{"s": "' + "I went to the park. " * 6,
            True,
        ),
    ],
)
def test_looks_degenerate(text, degenerate):
    assert looks_degenerate(text) is degenerate


# --------------------------------------------------------------------------- interpret


SMALL = obj({"a": string(60)})


@pytest.mark.parametrize(
    ("raw", "finish", "data", "error"),
    [
        ('{"a": "x"}', "stop", {"a": "x"}, None),
        ('{"a": "line\nbreak"}', "stop", {"a": "line\nbreak"}, None),  # raw newline tolerated
        ('{"a": "x', "length", None, "truncated"),
        ('{"a": "' + "la la la " * 10, "length", None, "repetition"),
        ("not json", "stop", None, "invalid_json"),
        ('{"a": 1}', "stop", None, "schema: $.a: expected string, got integer"),
        ('{"a": "x", "b": 1}', "stop", None, "schema: $: unexpected property 'b'"),
        ('{"a": "no no no no no no no no no no"}', "stop", None, "repetition"),
    ],
)
def test_interpret_classifies_every_outcome(raw, finish, data, error):
    assert interpret(raw, finish, SMALL) == (data, error)


def test_interpret_caps_the_schema_message():
    schema = obj({k: integer() for k in "abcde"})
    _, error = interpret("{}", "stop", schema)
    assert error == (
        "schema: $: missing required 'a'; $: missing required 'b'; $: missing required 'c' "
        "(+2 more)"
    )
