"""Schema-constrained JSON calls to a local LLM (llama.cpp, in process).

Stages depend on the small ``LLM`` protocol, never on llama-cpp-python, so they can be tested
with scripted fakes. ``LlamaRuntime`` is the real implementation.

Every structured call is constrained by a grammar compiled from its JSON schema, but a grammar
does not make the output *good*: small models still run out of tokens, loop, or (when a schema
keyword is outside what the grammar compiler understands) break the schema. ``chat_json``
therefore classifies every outcome into ``LLMResult.error`` instead of raising, so callers can
retry, fall back, and count failures.

The schema helpers (``string``, ``array``, ``obj``, ...) produce bounded schemas: every string
has a ``maxLength`` and every array a ``maxItems``, so no single field can eat the token budget.

llama-cpp-python (0.3.36) quirks handled here, each measured:
* a schema its converter can't handle silently becomes "any JSON" via ``response_format``, so
  we compile the grammar ourselves and report failures;
* bounds above 1000 (``MAX_BOUND``) make llama.cpp refuse the grammar, and llama-cpp-python
  then segfaults: we ask llama.cpp first, once per schema;
* its string rule admits raw control characters: we patch it as llama.cpp upstream does;
* reusing the previous call's KV prefix changes greedy outputs: off by default;
* properties are generated in schema order (required first): order them as the model should
  think (e.g. "reasoning" before "answer").
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

# --------------------------------------------------------------------------- results + protocol


@dataclass
class LLMResult:
    """The outcome of one structured call. ``data`` is set iff ``error`` is None."""

    data: dict | None
    error: str | None  # "truncated" | "repetition" | "invalid_json" | "schema: ..." | exception
    finish_reason: str | None
    raw: str
    tokens_in: int
    tokens_out: int
    ms: float

    @property
    def ok(self) -> bool:
        return self.error is None

    def accounting(self, stage: str) -> dict:
        """The per-call record kept in ``Trace.llm_calls`` and extraction reports."""
        return {
            "stage": stage,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "ms": round(self.ms, 2),
            "error": self.error,
        }


@runtime_checkable
class LLM(Protocol):
    """What the stages need from a language model."""

    name: str

    def chat_json(
        self, messages: list[dict], schema: dict, *, max_tokens: int, temperature: float = 0.0
    ) -> LLMResult: ...

    def count_tokens(self, text: str) -> int: ...


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


def looks_degenerate(
    text: str, *, min_unit: int = 8, repeats: int = 6, max_unit: int = 200
) -> bool:
    """True when generation looks stuck in a loop.

    Either the text *ends* in ``repeats`` or more copies of one unit of ``min_unit``..``max_unit``
    characters (checked as periodicity of the tail, so a unit cut mid-way still counts and
    shorter units are caught through their multiples), or one word / one character repeats
    back to back (10 words, 32 characters) anywhere.
    """
    if _WORD_RUN.search(text) or _CHAR_RUN.search(text):
        return True
    for unit in range(min_unit, min(max_unit, len(text) // repeats) + 1):
        tail = text[-unit * repeats :]
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


# --------------------------------------------------------------------------- llama.cpp runtime


@dataclass
class _Loaded:
    llama: Any  # llama_cpp.Llama
    lock: threading.Lock  # a Llama context is not thread-safe
    grammar_ok: dict[str, bool] = field(default_factory=dict)  # schema JSON -> llama.cpp accepts


_CACHE: dict[tuple[str, int], _Loaded] = {}
_CACHE_LOCK = threading.Lock()


def _load(
    path: Path, n_ctx: int, n_threads: int, seed: int, chat_format: str | None, verbose: bool
) -> _Loaded:
    """Load a GGUF once per process and context size: loading costs seconds and RAM."""
    key = (str(path.resolve()), n_ctx)
    with _CACHE_LOCK:
        if key not in _CACHE:
            from llama_cpp import Llama  # imported late: stages and tests need no llama

            llama = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                seed=seed,
                chat_format=chat_format,
                verbose=verbose,
            )
            if not _CACHE:
                atexit.register(_close_all)
            _CACHE[key] = _Loaded(llama, threading.Lock())
        return _CACHE[key]


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
    ) -> None:
        """``chat_format=None`` uses the chat template embedded in the GGUF (right for Qwen);
        ``thinking="hybrid"`` (Qwen3) appends ``/no_think`` to the last user message.

        ``reuse_prefix=False`` clears the KV cache before every call. llama.cpp's results depend
        on how the prompt was batched, so reusing the previous call's prefix makes the same
        request answer differently depending on what ran before (measured with SmolLM2 at
        temperature 0). Reproducible extraction is worth re-reading the prompt; pass True to
        trade it for speed when many calls share a long system prompt.
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
        threads = n_threads or physical_cores()
        self._model = _load(self.model_path, n_ctx, threads, seed, chat_format, verbose)

    def count_tokens(self, text: str) -> int:
        return len(self._model.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def chat_json(
        self, messages: list[dict], schema: dict, *, max_tokens: int, temperature: float = 0.0
    ) -> LLMResult:
        """One grammar-constrained chat call. Never raises for model or llama errors."""
        start = time.perf_counter()
        try:
            grammar = self._grammar(schema)
        except Exception as exc:  # report, don't raise
            return _failed(f"schema: cannot compile grammar: {exc}", start)
        try:
            with self._model.lock:
                if not self.reuse_prefix:
                    self._model.llama.reset()
                response = self._model.llama.create_chat_completion(
                    messages=prepare_messages(messages, self.thinking),
                    grammar=grammar,
                    temperature=temperature,
                    seed=self.seed,
                    max_tokens=max_tokens,
                    repeat_penalty=self.repeat_penalty,
                )
        except Exception as exc:  # e.g. prompt longer than the context
            return _failed(f"{type(exc).__name__}: {exc}", start)
        return _result(response, schema, start)

    def _grammar(self, schema: dict) -> Any:
        key = json.dumps(schema)
        text, grammar = _compile_grammar(key)
        accepted = self._model.grammar_ok.get(key)
        if accepted is None:
            with self._model.lock:
                accepted = _llama_accepts(self._model.llama, text)
            self._model.grammar_ok[key] = accepted
        if not accepted:
            raise ValueError(f"llama.cpp refused the grammar (a bound above {MAX_BOUND}?)")
        return grammar


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
