"""The llama.cpp runtime: messages, the protocol, grammars, the model cache, a real model.

Schemas, validation and reply classification are tested in test_schemas.py. Unit tests need no
model. Tests marked ``real_model`` run SmolLM2-135M (path in ``$RAMEM_TEST_LLM``); it is far
too weak for good answers, so they check plumbing only.
"""

from __future__ import annotations

import pytest

from ramem_local.protocols import LLM, LLMResult
from ramem_local.runtime.llama import LlamaRuntime, prepare_messages
from ramem_local.schemas import array, enum, obj, string, validate
from tests.real_models import smollm_path

SMALL = obj({"a": string(60)})


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
    from ramem_local.runtime.llama import schema_grammar

    grammar = schema_grammar(obj({"reasoning": string(50), "answer": string(20)}))
    root = next(line for line in grammar.splitlines() if line.startswith("root ::="))
    assert root.index("reasoning") < root.index("answer")
    assert r'char ::= [^"\\\x7F\x00-\x1F]' in grammar


# --------------------------------------------------------------------------- real model


@pytest.fixture(scope="module")
def runtime() -> LlamaRuntime:
    # One thread: on a busy machine llama.cpp's spinning workers collapse (measured 5-10x
    # slower with 2 threads on 2 loaded cores); a 135M model needs no more.
    return LlamaRuntime(smollm_path(), n_ctx=2048, n_threads=1)


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
def test_a_streamed_call_hands_out_its_tokens_and_returns_what_a_quiet_one_returns(runtime):
    quiet = runtime.chat_json(REVIEW, SENTIMENT, max_tokens=128)
    pieces: list[str] = []
    streamed = runtime.chat_json(REVIEW, SENTIMENT, max_tokens=128, on_text=pieces.append)
    assert "".join(pieces) == streamed.raw == quiet.raw
    assert (streamed.data, streamed.error, streamed.finish_reason) == (
        quiet.data, quiet.error, quiet.finish_reason)
    assert (streamed.tokens_in, streamed.tokens_out) == (quiet.tokens_in, quiet.tokens_out)
    assert len(pieces) == quiet.tokens_out  # a piece per token
    cut: list[str] = []
    truncated = runtime.chat_json(REVIEW, SENTIMENT, max_tokens=3, on_text=cut.append)
    assert (truncated.error, truncated.finish_reason, truncated.tokens_out) == (
        "truncated", "length", 3)


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
    again = LlamaRuntime(runtime.model_path, n_ctx=2048, n_threads=1)
    assert again._model is runtime._model  # loaded once per process and settings
    more_threads = LlamaRuntime(runtime.model_path, n_ctx=2048, n_threads=2)
    assert more_threads._model is not runtime._model  # not silently the 1-thread model
    assert more_threads._model.llama.n_threads == 2 and runtime._model.llama.n_threads == 1
    assert more_threads.count_tokens("hello there") == runtime.count_tokens("hello there")


def test_the_model_cache_shares_a_model_only_between_equal_load_settings(monkeypatch, tmp_path):
    from ramem_local.runtime import llama as runtime

    built = []

    def fake_llama(settings):
        built.append(settings)
        return object()

    monkeypatch.setattr(runtime, "_new_llama", fake_llama)
    monkeypatch.setattr(runtime, "_CACHE", {})
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"")
    base = {"n_ctx": 2048, "n_threads": 1}
    first = LlamaRuntime(gguf, **base)

    # Per-call settings and another spelling of the same file share the loaded model.
    assert LlamaRuntime(gguf, **base, thinking="hybrid", repeat_penalty=1.3,
                        reuse_prefix=True)._model is first._model
    assert LlamaRuntime(tmp_path / "." / "model.gguf", **base)._model is first._model
    # Everything the Llama object is built with gets its own model.
    changes = [{"n_ctx": 4096}, {"n_threads": 2}, {"seed": 7}, {"chat_format": "chatml"},
               {"verbose": True}]
    for change in changes:
        assert LlamaRuntime(gguf, **{**base, **change})._model is not first._model, change
    assert len(built) == 1 + len(changes)
    assert built[0].llama_kwargs() == {
        "model_path": str(gguf.resolve()), "n_ctx": 2048, "n_threads": 1,
        "n_threads_batch": 1, "seed": 0, "chat_format": None, "verbose": False,
    }


def test_physical_cores_counts_cores_not_hyperthreads(monkeypatch, tmp_path):
    from ramem_local.runtime import llama as runtime

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("".join(
        f"processor\t: {n}\nphysical id\t: 0\ncore id\t\t: {n % 4}\n\n" for n in range(8)))
    real_path = runtime.Path
    monkeypatch.setattr(runtime, "Path", lambda p: cpuinfo if p == "/proc/cpuinfo" else
                        real_path(p))
    assert runtime.physical_cores() == 4
