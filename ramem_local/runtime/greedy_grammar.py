"""Greedy decoding under a grammar that asks the grammar about the best token first.

llama-cpp-python samples a grammar-constrained call through the chain penalties → grammar →
greedy, and llama.cpp's grammar sampler matches *every* token of the vocabulary against the
grammar at every step: with Qwen's 151,936 tokens that is ~45 ms a generated token on this
project's 2-core machine, a third of each token's time (results/ask-speed.txt). Greedy
decoding only needs the best token the grammar allows, so this sampler takes the best token
first and asks the grammar about that one; only when the grammar refuses it does it mask the
whole vocabulary, as before. This is the check llama.cpp's own ``common_sampler`` makes before
it applies a grammar to all candidates.

The tokens chosen are the same: if the grammar allows the best token, it is also the best of
the tokens the grammar allows (ties go to the first, as llama.cpp's greedy sampler breaks
them); if it refuses it, the whole vocabulary is masked and greedy picks as it always did.
``tests/test_greedy_grammar.py`` checks this against llama-cpp-python's own chain on a real
model. Sampling at a temperature, with logits processors or mirostat keeps llama-cpp-python's
chain unchanged (``GrammarFirstLlama._init_sampler``).
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import Llama
from llama_cpp import _internals as internals

_TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)


class BestTokenGrammar:
    """A llama.cpp sampler (for a sampler chain, before greedy) that applies ``grammar`` to the
    best candidate alone, and to all of them only when the grammar refuses the best.

    It owns the llama.cpp grammar sampler it asks, and forwards ``accept`` and ``reset`` to it
    so that the grammar's state follows the tokens the chain chooses."""

    def __init__(self, vocab: Any, grammar: Any) -> None:
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        if not self._grammar:
            raise ValueError("llama.cpp refused the grammar")
        self.full_masks = 0  # steps where the best token was refused (for tests and curiosity)
        self.steps = 0
        self._best = llama_cpp.llama_token_data()
        self._one = llama_cpp.llama_token_data_array(
            data=ctypes.pointer(self._best), size=1, selected=-1, sorted=False)
        # The callbacks must stay referenced as long as llama.cpp may call them.
        self._callbacks = (
            llama_cpp.llama_sampler_i_apply(self._apply),
            llama_cpp.llama_sampler_i_accept(self._accept),
            llama_cpp.llama_sampler_i_reset(self._reset),
        )
        interface = llama_cpp.llama_sampler_i()
        interface.name = llama_cpp.llama_sampler_i_name(0)
        interface.apply, interface.accept, interface.reset = self._callbacks
        interface.clone = llama_cpp.llama_sampler_i_clone(0)
        interface.free = llama_cpp.llama_sampler_i_free(0)  # the chain must not free us
        self._interface = interface
        self.sampler = llama_cpp.llama_sampler()
        self.sampler.iface = ctypes.pointer(interface)
        self.sampler.ctx = None

    def _apply(self, _sampler: Any, candidates: Any) -> None:
        array = candidates.contents
        data = np.frombuffer(
            (llama_cpp.llama_token_data * array.size).from_address(
                ctypes.addressof(array.data.contents)), dtype=_TOKEN_DATA)
        best = int(np.argmax(data["logit"]))
        best_token: Any = self._best  # ctypes fields take Python numbers
        best_token.id, best_token.logit, best_token.p = (
            int(data["id"][best]), float(data["logit"][best]), float(data["p"][best]))
        self._one.selected, self._one.sorted = -1, False
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(self._one))
        self.steps += 1
        if self._best.logit == -math.inf:
            self.full_masks += 1
            llama_cpp.llama_sampler_apply(self._grammar, candidates)

    def _accept(self, _sampler: Any, token: int) -> None:
        llama_cpp.llama_sampler_accept(self._grammar, token)

    def _reset(self, _sampler: Any) -> None:
        llama_cpp.llama_sampler_reset(self._grammar)

    def close(self) -> None:
        if self._grammar:
            llama_cpp.llama_sampler_free(self._grammar)
            self._grammar = None


class GrammarFirstLlama(Llama):
    """``llama_cpp.Llama`` whose greedy grammar-constrained calls use ``BestTokenGrammar``.

    Overrides llama-cpp-python's private ``_init_sampler`` (0.3.x): the chain it builds for
    ``temp == 0`` with a grammar is penalties → grammar → greedy; this one is the same with the
    grammar step replaced. ``last_sampler`` is the grammar step of the latest such call."""

    last_sampler: BestTokenGrammar | None = None

    def _init_sampler(self, *args: Any, **kwargs: Any) -> Any:
        grammar = kwargs.get("grammar")
        plain_greedy = (
            not args
            and grammar is not None
            and kwargs.get("temp") == 0.0
            and kwargs.get("logits_processor") is None
            and not kwargs.get("mirostat_mode")
        )
        if not plain_greedy:
            return super()._init_sampler(*args, **kwargs)
        sampler = internals.LlamaSampler()
        sampler.add_penalties(
            n_vocab=self._n_vocab,
            penalty_last_n=self.last_n_tokens_size,
            penalty_repeat=kwargs.get("repeat_penalty", 1.0),
            penalty_freq=kwargs.get("frequency_penalty", 0.0),
            penalty_present=kwargs.get("presence_penalty", 0.0),
        )
        step = BestTokenGrammar(self._model.vocab, grammar)
        llama_cpp.llama_sampler_chain_add(sampler.sampler, ctypes.pointer(step.sampler))
        # llama-cpp-python removes its custom samplers from the chain before freeing it.
        custom: list[Any] = sampler.custom_samplers
        custom.append((llama_cpp.llama_sampler_chain_n(sampler.sampler) - 1, step))
        sampler._exit_stack.callback(step.close)
        sampler.add_greedy()
        self.last_sampler = step
        return sampler
