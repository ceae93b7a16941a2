"""Greedy grammar calls that ask the grammar about the best token first (``greedy_grammar``):
the same tokens as llama-cpp-python's own chain, on real models.

Each comparison runs one request twice on one loaded model, once as llama-cpp-python's
``Llama`` (penalties → grammar over the whole vocabulary → greedy) and once as
``GrammarFirstLlama``: the loaded model's class is switched between the calls, so both read
the same weights and the same saved prompt prefix.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from ramem_local.schemas import array, enum, integer, obj, string, validate

REQUESTS = [
    ([{"role": "user", "content": "Lena: I finally climbed Ben Nevis with my brother on Sunday."}],
     obj({"who": array(string(40), 4), "where": string(60), "when": string(40)})),
    ([{"role": "system", "content": "Answer in JSON."},
      {"role": "user", "content": "How many legs do three spiders have in all?"}],
     obj({"reasoning": string(200), "answer": integer(minimum=0, maximum=100)})),
    ([{"role": "user", "content": "Name a colour of the sky at sunset."}],
     obj({"colour": string(30), "sure": enum(["yes", "no"])})),
]

# The model would rather write something else at almost every step: the grammar refuses its
# best token and the whole vocabulary is masked, as llama-cpp-python's chain always does.
REFUSING = ([{"role": "user", "content": "Say hello in French, as plain text."}],
            obj({"zq": enum(["xylophone", "quokka"])}))


@contextlib.contextmanager
def as_class(runtime, cls) -> Iterator[None]:
    llama = runtime._model.llama
    before = llama.__class__
    llama.__class__ = cls
    try:
        yield
    finally:
        llama.__class__ = before


def both_ways(runtime, messages, schema, **kwargs):
    from llama_cpp import Llama

    from ramem_local.runtime.greedy_grammar import GrammarFirstLlama

    with as_class(runtime, Llama):
        stock = runtime.chat_json(messages, schema, **kwargs)
    with as_class(runtime, GrammarFirstLlama):
        runtime._model.llama.last_sampler = None
        first = runtime.chat_json(messages, schema, **kwargs)
        step = runtime._model.llama.last_sampler
    return stock, first, step


@pytest.mark.real_model
def test_the_product_loads_models_as_grammar_first_llamas(smollm):
    from ramem_local.runtime.greedy_grammar import GrammarFirstLlama

    assert isinstance(smollm._model.llama, GrammarFirstLlama)


@pytest.mark.real_model
@pytest.mark.parametrize("request_index", range(len(REQUESTS)))
def test_greedy_calls_choose_the_tokens_llama_cpp_python_chooses_qwen(qwen, request_index):
    messages, schema = REQUESTS[request_index]
    stock, first, step = both_ways(qwen, messages, schema, max_tokens=96)
    assert stock.error is None, stock.raw
    assert validate(first.data, schema) == []
    assert (first.raw, first.finish_reason, first.tokens_out) == (
        stock.raw, stock.finish_reason, stock.tokens_out)
    assert step is not None and step.steps == first.tokens_out + 1  # + the end of the reply


@pytest.mark.real_model
def test_greedy_calls_choose_the_tokens_llama_cpp_python_chooses_smollm(smollm):
    for messages, schema in REQUESTS:
        stock, first, _ = both_ways(smollm, messages, schema, max_tokens=64)
        assert first.raw == stock.raw and first.tokens_out == stock.tokens_out


@pytest.mark.real_model
def test_a_refused_best_token_masks_the_whole_vocabulary_and_decodes_the_same(qwen):
    messages, schema = REFUSING
    stock, first, step = both_ways(qwen, messages, schema, max_tokens=16)
    assert first.raw == stock.raw
    assert first.data["zq"] in {"xylophone", "quokka"}
    assert step is not None and step.full_masks >= 2  # at least the opening brace and the key


@pytest.mark.real_model
def test_a_streamed_call_decodes_the_same_tokens(qwen):
    messages, schema = REQUESTS[0]
    pieces: list[str] = []
    stock, _, _ = both_ways(qwen, messages, schema, max_tokens=64)
    streamed = qwen.chat_json(messages, schema, max_tokens=64, on_text=pieces.append)
    assert "".join(pieces) == streamed.raw == stock.raw


@pytest.mark.real_model
def test_sampling_at_a_temperature_keeps_llama_cpp_pythons_chain(qwen):
    messages, schema = REQUESTS[2]
    qwen._model.llama.last_sampler = None
    result = qwen.chat_json(messages, schema, max_tokens=32, temperature=0.7)
    assert validate(result.data, schema) == []
    assert qwen._model.llama.last_sampler is None
