"""Schema-constrained JSON calls to a local LLM (llama.cpp, in process): ``LlamaRuntime``.

Stages depend on the small ``LLM`` protocol (``ramem_local.protocols``), never on this module,
so they can be tested with scripted fakes and imported without llama-cpp-python. Schemas and the
classification of replies live in ``ramem_local.schemas``; this module compiles a schema into a
grammar, runs the model, and caches loaded models.

llama-cpp-python (0.3.36) quirks handled here, each measured:
* a schema its converter can't handle silently becomes "any JSON" via ``response_format``, so
  we compile the grammar ourselves and report failures;
* bounds above 1000 (``MAX_BOUND``) make llama.cpp refuse the grammar, and llama-cpp-python
  then segfaults: we ask llama.cpp first, once per schema;
* its string rule admits raw control characters: we patch it as llama.cpp upstream does;
* reusing the previous call's KV prefix can change greedy outputs: off by default; instead the
  fixed start of each prompt is evaluated once and restored before every call
  (``prompt_prefix``), which keeps outputs independent of what ran before;
* properties are generated in schema order (required first): order them as the model should
  think (e.g. "reasoning" before "answer");
* its grammar step matches the whole vocabulary against the grammar for every token (~45 ms a
  token for Qwen here): greedy calls ask the grammar about the best token first
  (``greedy_grammar``), the same tokens in less time.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import LLMError
from ..protocols import LLMResult
from ..schemas import MAX_BOUND, interpret
from .prompt_prefix import ChatRenderer, PrefixKV, SavedPrefixes

# --------------------------------------------------------------------------- llama.cpp runtime


@dataclass
class _Loaded:
    llama: Any  # llama_cpp.Llama
    lock: threading.Lock  # a Llama context is not thread-safe
    grammar_ok: dict[str, bool] = field(default_factory=dict)  # schema JSON -> llama.cpp accepts
    prefix_kv: PrefixKV = field(default_factory=PrefixKV)  # what the KV cache starts with
    renderer: ChatRenderer | None = None  # set on first use when ``rendered`` is False
    rendered: bool = False


@dataclass(frozen=True)
class LoadSettings:
    """Everything that makes one loaded ``llama_cpp.Llama`` behave differently from another:
    exactly the arguments it is built with. The model cache is keyed by it, so two runtimes
    share a loaded model only when nothing about the loaded model would differ."""

    model_path: str  # resolved, so two spellings of one file share
    n_ctx: int
    n_threads: int  # also n_threads_batch
    seed: int
    chat_format: str | None
    verbose: bool

    def state_key(self) -> str:
        """What a saved KV state is only valid for: the model file as it is now, the llama.cpp
        build, the CPU's architecture and these settings (threads change how sums are split)."""
        import platform

        import llama_cpp

        model = Path(self.model_path).stat()
        return json.dumps([self.model_path, model.st_size, model.st_mtime_ns,
                           llama_cpp.__version__, platform.machine(), self.n_ctx,
                           self.n_threads, self.seed, self.chat_format])

    def llama_kwargs(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "n_threads_batch": self.n_threads,
            "seed": self.seed,
            "chat_format": self.chat_format,
            "verbose": self.verbose,
        }


_CACHE: dict[LoadSettings, _Loaded] = {}
_CACHE_LOCK = threading.Lock()


def _new_llama(settings: LoadSettings) -> Any:
    # imported late: loading this module needs no llama
    from .greedy_grammar import GrammarFirstLlama

    try:
        return GrammarFirstLlama(**settings.llama_kwargs())
    except ValueError as exc:  # llama-cpp-python's answer to a file it cannot load
        raise LLMError(f"cannot load the GGUF model {settings.model_path}: "
                       f"{str(exc).splitlines()[0] if str(exc) else 'unreadable file'} "
                       "(truncated or not a GGUF file? `ramem models verify` checks "
                       "installed models)") from exc


def _load(settings: LoadSettings) -> _Loaded:
    """Load a GGUF once per process and ``settings``: loading costs seconds and RAM."""
    with _CACHE_LOCK:
        if settings not in _CACHE:
            llama = _new_llama(settings)
            if not _CACHE:
                atexit.register(_close_all)
            _CACHE[settings] = _Loaded(llama, threading.Lock())
        return _CACHE[settings]


def _close_all() -> None:
    """Free models before interpreter teardown; llama's own __del__ fails that late."""
    with _CACHE_LOCK:
        for loaded in _CACHE.values():
            loaded.llama.close()
        _CACHE.clear()


# llama-cpp-python 0.3.x lets JSON strings hold raw control characters (its ``char`` rule is
# ``[^"\\]``), so a model can put a bare newline inside a string and produce invalid JSON.
# llama.cpp's own converter excludes them; we patch the rule the same way.
_LOOSE_CHAR_RULE = re.compile(r'^char ::= \[\^"\\\\\]', re.MULTILINE)
_STRICT_CHAR_RULE = r'char ::= [^"\\\x7F\x00-\x1F]'


def schema_grammar(schema: dict) -> str:
    """The GBNF grammar text that constrains output to ``schema``.

    Properties come out in the schema's order (required ones first): put "reasoning" before
    "answer" and the model writes it first.
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    text = json_schema_to_gbnf(json.dumps(schema))
    return _LOOSE_CHAR_RULE.sub(lambda _: _STRICT_CHAR_RULE, text)


@lru_cache(maxsize=64)
def _compile_grammar(schema_json: str) -> tuple[str, Any]:
    """GBNF text and LlamaGrammar for a schema, built once per distinct schema.

    We build it ourselves instead of passing ``response_format``: llama-cpp-python silently
    falls back to "any JSON" when a schema doesn't convert, which would hide the mistake.
    """
    from llama_cpp import LlamaGrammar

    text = schema_grammar(json.loads(schema_json))
    return text, LlamaGrammar.from_string(text, verbose=False)


def _llama_accepts(llama: Any, grammar_text: str) -> bool:
    """Whether llama.cpp can parse ``grammar_text``; asked once per schema and model.

    llama-cpp-python does not check: it chains the NULL sampler of a refused grammar and the
    process dies with SIGSEGV at the first token. llama.cpp prints the whole grammar to stderr
    when it refuses one, hence the silencing.
    """
    import llama_cpp

    with _stderr_silenced():
        sampler = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar_text.encode("utf-8"), b"root"
        )
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class LlamaRuntime:
    """``LLM`` backed by a GGUF model in process (llama-cpp-python)."""

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        seed: int = 0,
        thinking: str = "none",
        verbose: bool = False,
        chat_format: str | None = None,
        repeat_penalty: float = 1.1,
        reuse_prefix: bool = False,
        fixed_prefix: bool = True,
        prefix_cache_dir: Path | None = None,
    ) -> None:
        """``chat_format=None`` uses the chat template embedded in the GGUF (right for Qwen);
        ``thinking="hybrid"`` (Qwen3) appends ``/no_think`` to the last user message.

        How much of each prompt llama.cpp evaluates:

        * ``fixed_prefix=True`` (default): the prompt's fixed start (template, system message,
          header of the last message) is evaluated once per process and restored before each
          call; only the rest is evaluated. Outputs depend on the request only (see
          ``prompt_prefix``), though they may differ from ``fixed_prefix=False``'s, whose
          batches differ. Needs the GGUF's own chat template (``chat_format=None``); otherwise
          it falls back to a full evaluation.
          With ``prefix_cache_dir`` the prefixes' states are also kept there for the next
          process (``prompt_prefix.SavedPrefixes``): evaluated once per machine, not per
          process.
        * ``fixed_prefix=False``: the KV cache is cleared and the whole prompt evaluated.
        * ``reuse_prefix=True`` (wins over both): llama-cpp-python reuses whatever prefix the
          previous call left. llama.cpp's results depend on how the prompt was batched, so the
          same request can then answer differently depending on what ran before (seen with
          SmolLM2 at temperature 0 when this option was added).
        """
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise FileNotFoundError(f"no GGUF model at {self.model_path}")
        self.name = self.model_path.name
        self.n_ctx = n_ctx
        self.seed = seed
        self.thinking = thinking
        self.repeat_penalty = repeat_penalty
        self.reuse_prefix = reuse_prefix
        self.fixed_prefix = fixed_prefix
        self.settings = LoadSettings(
            model_path=str(self.model_path.resolve()),
            n_ctx=n_ctx,
            n_threads=n_threads or physical_cores(),
            seed=seed,
            chat_format=chat_format,
            verbose=verbose,
        )
        self._model = _load(self.settings)
        if prefix_cache_dir is not None and self._model.prefix_kv.disk is None:
            self._model.prefix_kv.disk = SavedPrefixes(Path(prefix_cache_dir),
                                                       self.settings.state_key())

    def count_tokens(self, text: str) -> int:
        return len(self._model.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def chat_json(
        self, messages: list[dict], schema: dict, *, max_tokens: int, temperature: float = 0.0,
        on_text: Callable[[str], None] | None = None,
    ) -> LLMResult:
        """One grammar-constrained chat call. Never raises for model or llama errors.

        ``on_text``: the reply's text as it is generated, token by token (the same tokens
        and the same result as without it)."""
        start = time.perf_counter()
        try:
            grammar = self._grammar(schema)
        except Exception as exc:  # report, don't raise
            return _failed(f"schema: cannot compile grammar: {exc}", start)
        try:
            prepared = prepare_messages(messages, self.thinking)
            with self._model.lock:
                self._prepare_context(prepared)
                response = self._model.llama.create_chat_completion(
                    messages=prepared,
                    grammar=grammar,
                    temperature=temperature,
                    seed=self.seed,
                    max_tokens=max_tokens,
                    repeat_penalty=self.repeat_penalty,
                    stream=on_text is not None,
                )
                if on_text is not None:
                    response = self._streamed(response, prepared, on_text)
        except Exception as exc:  # e.g. prompt longer than the context
            return _failed(f"{type(exc).__name__}: {exc}", start)
        return _result(response, schema, start)

    def _streamed(self, chunks: Iterator[dict], messages: list[dict],
                  on_text: Callable[[str], None]) -> dict:
        """The response a call without streaming returns, from its chunks, each chunk's text
        handed to ``on_text`` as it comes. A chunk is one token (llama-cpp-python streams
        token by token); the prompt's tokens are counted as its template renders them."""
        pieces: list[str] = []
        finish = None
        generated = 0
        for chunk in chunks:
            choice = chunk["choices"][0]
            text = (choice.get("delta") or {}).get("content") or ""
            if text:
                generated += 1
                pieces.append(text)
                on_text(text)
            finish = choice.get("finish_reason") or finish
        renderer = self._renderer()
        prompt = len(renderer.tokens(messages)) if renderer is not None else 0
        return {"choices": [{"message": {"content": "".join(pieces)}, "finish_reason": finish}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": generated}}

    def _prepare_context(self, messages: list[dict]) -> None:
        """Put the llama context in the state this call starts from (see ``__init__``)."""
        loaded = self._model
        if self.reuse_prefix:
            loaded.prefix_kv.forget()  # llama-cpp-python matches against the previous call
            return
        renderer = self._renderer() if self.fixed_prefix else None
        prefix = _fixed_prefix(renderer, messages) if renderer is not None else ()
        if prefix:
            loaded.prefix_kv.place(loaded.llama, prefix)
        else:
            loaded.prefix_kv.forget()
            loaded.llama.reset()

    def _renderer(self) -> ChatRenderer | None:
        loaded = self._model
        if not loaded.rendered:
            loaded.renderer = ChatRenderer.for_llama(loaded.llama, self.settings.chat_format)
            loaded.rendered = True
        return loaded.renderer

    def _grammar(self, schema: dict) -> Any:
        key = json.dumps(schema)
        text, grammar = _compile_grammar(key)
        accepted = self._model.grammar_ok.get(key)
        if accepted is None:
            with self._model.lock:
                accepted = _llama_accepts(self._model.llama, text)
            self._model.grammar_ok[key] = accepted
        if not accepted:
            raise LLMError(f"llama.cpp refused the grammar (a bound above {MAX_BOUND}?)")
        return grammar


def _fixed_prefix(renderer: ChatRenderer, messages: list[dict]) -> tuple[int, ...]:
    """The request's fixed prefix; none when our rendering fails (the call itself then reports
    whatever llama-cpp-python's rendering says, or succeeds without the prefix)."""
    try:
        return renderer.prefix(messages)
    except Exception:  # a template may refuse the bare messages (e.g. an empty content)
        return ()


def physical_cores() -> int:
    """Physical CPU cores (llama.cpp gains nothing from hyper-threads and slows down on them).

    Read from /proc/cpuinfo's (physical id, core id) pairs on Linux; elsewhere half the
    logical CPUs, at least one.
    """
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    cores: set[tuple[str, str]] = set()
    physical = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "physical id":
            physical = value.strip()
        elif key.strip() == "core id":
            cores.add((physical, value.strip()))
    if cores:
        return len(cores)
    return max(1, (os.cpu_count() or 2) // 2)


def prepare_messages(messages: list[dict], thinking: str) -> list[dict]:
    """Copy ``messages``; for hybrid-thinking models (Qwen3) append ``/no_think`` to the last
    user turn, Qwen3's documented switch, since structured calls must not think aloud."""
    prepared = [dict(m) for m in messages]
    if thinking == "hybrid":
        for message in reversed(prepared):
            if message.get("role") == "user":
                message["content"] = f"{message.get('content', '')} /no_think"
                break
    return prepared


def _failed(error: str, start: float) -> LLMResult:
    return LLMResult(None, error, None, "", 0, 0, (time.perf_counter() - start) * 1000)


def _result(response: dict, schema: dict, start: float) -> LLMResult:
    choice = response["choices"][0]
    raw = choice["message"].get("content") or ""
    finish = choice.get("finish_reason")
    usage = response.get("usage") or {}
    data, error = interpret(raw, finish, schema)
    return LLMResult(
        data=data,
        error=error,
        finish_reason=finish,
        raw=raw,
        tokens_in=int(usage.get("prompt_tokens", 0)),
        tokens_out=int(usage.get("completion_tokens", 0)),
        ms=(time.perf_counter() - start) * 1000,
    )
