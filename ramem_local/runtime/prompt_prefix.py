"""The fixed start of a chat prompt, evaluated once per process and kept in llama.cpp's KV cache.

Calls that share instructions render to prompts that begin with the same tokens: the template's
opening, the system message and the header of the last message. Every extraction window, for
one, starts with the same ~390 tokens of rules. :class:`PrefixKV` evaluates that prefix once,
keeps its KV, and puts the context back to exactly that state before each call, so llama.cpp
evaluates only the rest of the prompt.

Why not llama-cpp-python's own prefix match against the previous call: llama.cpp's numerics
depend on how tokens are batched, so reusing whatever the previous call left made the same
request answer differently depending on what ran before. Here the prefix's KV is always the one
computed by evaluating the prefix alone from an empty cache, and the rest of the prompt is always
evaluated after it, from the same position, in the same batches: a request's output depends on
the request only. It can differ from the output of evaluating the whole prompt in one piece (the
batches differ); both are deterministic.

Between processes (``ramem ask`` is one process per question) the states are kept on disk
(:class:`SavedPrefixes`, in the user cache folder): a later process loads the prefix's KV, the
same bytes the first process computed, instead of evaluating it again (about 390 tokens of rules
for an answer: 6 s with the 1.5B Qwen on two cores). A prefix holds the template, a system
prompt and a message header, never a request's content.

The prefix of a request is the longest common token prefix of its rendered prompt and the same
prompt with the last message's content left empty (a deterministic function of the request).
Restoring a prefix that does not match the prompt would only cost speed, never correctness:
``Llama.generate`` re-evaluates from the first token that differs.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

MAX_SAVED = 4  # prefixes kept as saved states (extraction, query analysis, answer, ...)
MAX_ON_DISK = 12  # prefix states kept in the cache folder, the most recently used
STATE_SUFFIX = ".kv"


def common_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    """How many leading tokens the two sequences share."""
    count = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        count += 1
    return count


def fixed_prefix(full: Sequence[int], bare: Sequence[int]) -> tuple[int, ...]:
    """The tokens ``full`` shares with ``bare`` (the prompt without the last message's content),
    always leaving at least one token of ``full`` to evaluate (sampling needs fresh logits)."""
    return tuple(full[: min(common_prefix(full, bare), len(full) - 1)])


class ChatRenderer:
    """Renders messages to prompt tokens as llama-cpp-python does for a GGUF chat template."""

    def __init__(self, llama: Any, template: str):
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        def token_text(token: int) -> str:
            return llama._model.token_get_text(token) if token != -1 else ""

        self._llama = llama
        self._formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=token_text(llama.token_eos()),
            bos_token=token_text(llama.token_bos()),
        )

    @classmethod
    def for_llama(cls, llama: Any, chat_format: str | None) -> ChatRenderer | None:
        """A renderer when llama uses the GGUF's own template (``chat_format=None``), else None:
        a named chat format renders in code this module cannot call."""
        template = (llama.metadata or {}).get("tokenizer.chat_template")
        if chat_format is not None or not template:
            return None
        return cls(llama, template)

    def tokens(self, messages: list[dict]) -> list[int]:
        # llama_cpp types messages as its TypedDicts; ours are the same plain dicts.
        result = self._formatter(messages=cast(Any, messages))
        return self._llama.tokenize(result.prompt.encode("utf-8"),
                                    add_bos=not result.added_special, special=True)

    def prefix(self, messages: list[dict]) -> tuple[int, ...]:
        """The request's fixed prefix (see the module docstring); empty when it has none."""
        if not messages:
            return ()
        bare = [dict(m) for m in messages]
        bare[-1]["content"] = ""
        return fixed_prefix(self.tokens(messages), self.tokens(bare))


class SavedPrefixes:
    """Prefix states on disk, for one loaded model: ``folder/<digest>.kv``, the digest of
    ``model_key`` (everything that changes what llama.cpp computes: the model file, the
    llama.cpp build, the context and thread settings) and the prefix's tokens.

    A cache: a file that cannot be read or written costs an evaluation, never an error; a
    state llama.cpp refuses is deleted. Written whole (a temporary file renamed), readable by
    the user only; the least recently used beyond ``keep`` are removed."""

    def __init__(self, folder: Path, model_key: str, keep: int = MAX_ON_DISK) -> None:
        self.folder = folder
        self.model_key = model_key
        self.keep = keep

    def path(self, prefix: tuple[int, ...]) -> Path:
        digest = hashlib.sha256(self.model_key.encode("utf-8"))
        digest.update(b"\0" + ",".join(map(str, prefix)).encode("ascii"))
        return self.folder / (digest.hexdigest()[:40] + STATE_SUFFIX)

    def read(self, prefix: tuple[int, ...]) -> bytes | None:
        path = self.path(prefix)
        try:
            state = path.read_bytes()
        except OSError:
            return None
        try:
            os.utime(path)  # recently used: kept longest
        except OSError:  # a read-only cache still serves
            pass
        return state or None

    def write(self, prefix: tuple[int, ...], state: bytes) -> None:
        path = self.path(prefix)
        scratch = path.with_name(f"{path.name}.{os.getpid()}.partial")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(state)
            os.replace(scratch, path)
        except OSError:
            _unlink(scratch)
            return
        self._prune()

    def remove(self, prefix: tuple[int, ...]) -> None:
        _unlink(self.path(prefix))

    def _prune(self) -> None:
        try:
            states = sorted(self.folder.glob("*" + STATE_SUFFIX),
                            key=lambda path: path.stat().st_mtime_ns, reverse=True)
            for old in states[self.keep:]:
                _unlink(old)
        except OSError:  # another process pruned first
            pass


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:  # gone already, or its folder never was
        pass


@dataclass
class PrefixKV:
    """Which prefix's KV (evaluated alone, from an empty cache) sits at the start of a llama
    context, and saved states of the last few prefixes evaluated.

    The owner calls :meth:`place` before a call that wants a prefix and :meth:`forget` before
    any other use of the context (a reset, a call with llama-cpp-python's own prefix reuse).
    A call placed this way never writes below the prefix, so the prefix is still in the cache
    for the next call; after other uses of the context it is loaded from its saved state (the
    KV of the prefix's tokens: ~9 MB for SmolLM2-135M's 390 extraction tokens, ~60 MB for a
    4B model's), so each prefix is evaluated once per process.
    """

    current: tuple[int, ...] | None = None
    saved: OrderedDict[tuple[int, ...], bytes] = field(default_factory=OrderedDict)
    evaluated: int = 0  # prefixes evaluated from scratch
    restored: int = 0  # prefixes loaded from a saved state (in memory or on disk)
    disk: SavedPrefixes | None = None  # states kept between processes
    from_disk: int = 0  # prefixes loaded from a state another process saved

    def forget(self) -> None:
        """The cache no longer holds a known prefix (the saved states stay valid)."""
        self.current = None

    def place(self, llama: Any, prefix: tuple[int, ...]) -> None:
        """Leave ``llama`` holding exactly ``prefix``'s KV, evaluated alone from position 0."""
        if self.current != prefix or not _holds(llama, prefix):
            self.current = None
            if not (prefix in self.saved and self._load(llama, prefix)
                    or self._load_from_disk(llama, prefix)):
                self._evaluate(llama, prefix)
            self.current = prefix
        _truncate(llama, len(prefix))

    def _evaluate(self, llama: Any, prefix: tuple[int, ...]) -> None:
        llama.reset()
        llama.eval(list(prefix))
        self.evaluated += 1
        self._keep(prefix, save_sequence(llama))
        if self.disk is not None:
            self.disk.write(prefix, self.saved[prefix])

    def _keep(self, prefix: tuple[int, ...], state: bytes) -> None:
        self.saved[prefix] = state
        while len(self.saved) > MAX_SAVED:
            self.saved.popitem(last=False)

    def _load_from_disk(self, llama: Any, prefix: tuple[int, ...]) -> bool:
        state = self.disk.read(prefix) if self.disk is not None else None
        if state is None:
            return False
        self._keep(prefix, state)
        if not self._load(llama, prefix):  # refused (a state of another build?): drop it
            cast(SavedPrefixes, self.disk).remove(prefix)
            return False
        self.from_disk += 1
        return True

    def _load(self, llama: Any, prefix: tuple[int, ...]) -> bool:
        self.saved.move_to_end(prefix)
        llama.reset()
        if not load_sequence(llama, self.saved[prefix]):
            del self.saved[prefix]  # evaluate it again rather than trust a partial load
            return False
        llama.input_ids[: len(prefix)] = prefix
        llama.n_tokens = len(prefix)
        self.restored += 1
        return True


def _holds(llama: Any, prefix: tuple[int, ...]) -> bool:
    """Whether the context still starts with ``prefix`` (a reset sets n_tokens to 0)."""
    count = len(prefix)
    return llama.n_tokens >= count and tuple(llama.input_ids[:count].tolist()) == prefix


def _truncate(llama: Any, count: int) -> None:
    llama._ctx.kv_cache_seq_rm(-1, count, -1)
    llama.n_tokens = count


def save_sequence(llama: Any) -> bytes:
    """The KV of sequence 0 (the only one llama-cpp-python uses), without logits."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(llama._ctx.ctx, 0)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(llama._ctx.ctx, buffer, size, 0)
    return bytes(buffer[:written])


def load_sequence(llama: Any, state: bytes) -> bool:
    """Replace sequence 0's KV with a saved one; False when llama.cpp refuses it."""
    import llama_cpp

    llama._ctx.kv_cache_seq_rm(0, 0, -1)
    buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    return bool(llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, buffer, len(state), 0))
