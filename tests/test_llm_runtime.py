"""The LLM runtime: schema validation, loop detection, outcome classification, llama.cpp.

Unit tests need no model. Tests marked ``real_model`` run SmolLM2-135M (path in
``$RAMEM_TEST_LLM``); it is far too weak for good answers, so they check plumbing only.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ramem_local.runtime.llm import (
    LLM,
    LlamaRuntime,
    LLMResult,
    array,
    boolean,
    enum,
    integer,
    interpret,
    looks_degenerate,
    nullable,
    number,
    obj,
    prepare_messages,
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


# --------------------------------------------------------------------------- messages + protocol


def test_hybrid_thinking_models_get_no_think_on_the_last_user_turn():
    messages = [
        {"role": "system", "content": "Extract."},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "{}"},
        {"role": "user", "content": "second"},
    ]
    prepared = prepare_messages(messages, "hybrid")
    assert [m["content"] for m in prepared] == ["Extract.", "first", "{}", "second /no_think"]
    assert messages[3]["content"] == "second"  # the caller's list is not modified
    assert prepare_messages(messages, "none") == messages


class ScriptedLLM:
    """The kind of fake stage tests use: replays canned results."""

    name = "scripted"

    def __init__(self, results: list[LLMResult]) -> None:
        self.results = list(results)
        self.calls: list[list[dict]] = []

    def chat_json(self, messages, schema, *, max_tokens, temperature=0.0):
        self.calls.append(messages)
        return self.results.pop(0)

    def count_tokens(self, text):
        return len(text.split())


def test_a_scripted_fake_satisfies_the_protocol():
    fake = ScriptedLLM([LLMResult({"a": "x"}, None, "stop", '{"a": "x"}', 5, 3, 1.0)])
    assert isinstance(fake, LLM)
    assert fake.chat_json([], SMALL, max_tokens=8).ok


def test_missing_model_file_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="no GGUF model"):
        LlamaRuntime(tmp_path / "absent.gguf")


def test_grammar_keeps_property_order_and_forbids_control_chars_in_strings():
    pytest.importorskip("llama_cpp")
    from ramem_local.runtime.llm import schema_grammar

    grammar = schema_grammar(obj({"reasoning": string(50), "answer": string(20)}))
    root = next(line for line in grammar.splitlines() if line.startswith("root ::="))
    assert root.index("reasoning") < root.index("answer")
    assert r'char ::= [^"\\\x7F\x00-\x1F]' in grammar


# --------------------------------------------------------------------------- real model


def _test_llm_path() -> Path:
    value = os.environ.get("RAMEM_TEST_LLM")
    if not value:
        pytest.skip("RAMEM_TEST_LLM is not set (path to SmolLM2-135M-Instruct.Q4_1.gguf)")
    path = Path(value)
    if not path.is_file():
        pytest.skip(f"RAMEM_TEST_LLM={value} does not exist")
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    return path


@pytest.fixture(scope="module")
def runtime() -> LlamaRuntime:
    # One thread: on a busy machine llama.cpp's spinning workers collapse (measured 5-10x
    # slower with 2 threads on 2 loaded cores); a 135M model needs no more.
    return LlamaRuntime(_test_llm_path(), n_ctx=2048, n_threads=1)


SENTIMENT = obj(
    {
        "sentiment": enum(["positive", "negative", "neutral"]),
        "keywords": array(string(24), 3),
    }
)
REVIEW = [
    {"role": "system", "content": "Classify the text. Reply with JSON."},
    {"role": "user", "content": "I love sunny days at the beach with my dog."},
]


@pytest.mark.real_model
def test_real_model_returns_schema_valid_json(runtime):
    result = runtime.chat_json(REVIEW, SENTIMENT, max_tokens=128)

    assert result.error is None, result.raw
    assert validate(result.data, SENTIMENT) == []
    assert result.data["sentiment"] in {"positive", "negative", "neutral"}
    assert len(result.data["keywords"]) <= 3
    assert result.finish_reason == "stop"
    assert result.tokens_in > 0 and result.tokens_out > 0 and result.ms > 0


@pytest.mark.real_model
def test_real_model_is_deterministic_at_temperature_zero(runtime):
    first = runtime.chat_json(REVIEW, SENTIMENT, max_tokens=128)
    runtime.chat_json([{"role": "user", "content": "Something else."}], SENTIMENT, max_tokens=16)
    second = runtime.chat_json(REVIEW, SENTIMENT, max_tokens=128)
    assert first.raw == second.raw  # independent of what ran before (no KV prefix reuse)


@pytest.mark.real_model
def test_tiny_token_budget_is_reported_as_truncated(runtime):
    result = runtime.chat_json(REVIEW, SENTIMENT, max_tokens=3)

    assert (result.data, result.error, result.finish_reason) == (None, "truncated", "length")
    assert result.tokens_out == 3


@pytest.mark.real_model
def test_prompt_longer_than_the_context_is_an_error_not_an_exception(runtime):
    long = [{"role": "user", "content": "word " * 3000}]
    result = runtime.chat_json(long, SENTIMENT, max_tokens=8)
    assert result.data is None and "context window" in (result.error or "")


@pytest.mark.real_model
def test_uncompilable_schema_is_an_error_not_an_exception(runtime):
    result = runtime.chat_json(REVIEW, {"type": "no-such-type"}, max_tokens=8)
    assert result.error.startswith("schema: cannot compile grammar")


@pytest.mark.real_model
def test_grammar_llama_cpp_refuses_is_an_error_not_a_crash(runtime):
    # llama-cpp-python would segfault on this one if it reached the sampler.
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 1500}}}
    result = runtime.chat_json(REVIEW, schema, max_tokens=8)
    assert result.error == "schema: cannot compile grammar: llama.cpp refused the grammar " + (
        "(a bound above 1000?)"
    )


@pytest.mark.real_model
def test_count_tokens_and_model_cache(runtime):
    assert 0 < runtime.count_tokens("hello") < runtime.count_tokens("hello there, old friend")
    again = LlamaRuntime(runtime.model_path, n_ctx=2048)
    assert again._model is runtime._model  # loaded once per process


def test_physical_cores_counts_cores_not_hyperthreads(monkeypatch, tmp_path):
    from ramem_local.runtime import llm as runtime

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("".join(
        f"processor\t: {n}\nphysical id\t: 0\ncore id\t\t: {n % 4}\n\n" for n in range(8)))
    real_path = runtime.Path
    monkeypatch.setattr(runtime, "Path", lambda p: cpuinfo if p == "/proc/cpuinfo" else
                        real_path(p))
    assert runtime.physical_cores() == 4
