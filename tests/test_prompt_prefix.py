"""The fixed prompt prefix kept in llama.cpp's KV cache (``runtime.prompt_prefix``).

What matters: the prefix is evaluated once per process, each call evaluates only the rest, and
a request's output does not depend on what ran before (in this process or not). Unit tests
need no model; ``real_model`` tests run SmolLM2-135M (``$RAMEM_TEST_LLM``) on extraction
windows, whose prompts share ~390 tokens of instructions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from ramem_local.ingest.extract import build_messages, turn_labels, window_schema
from ramem_local.runtime.prompt_prefix import PrefixKV, common_prefix, fixed_prefix
from ramem_local.types import Turn
from tests.real_models import smollm_path

ROOT = Path(__file__).resolve().parents[1]
N_CTX = 2048  # the runtime tests' context: the loaded model is shared with them
MAX_TOKENS = 24


# --------------------------------------------------------------------------- no model


def test_the_fixed_prefix_is_the_common_start_and_leaves_a_token_to_evaluate():
    assert common_prefix([1, 2, 3, 4], [1, 2, 9]) == 2
    assert common_prefix([], [1]) == 0
    assert fixed_prefix([1, 2, 3, 4], [1, 2, 9]) == (1, 2)
    # the whole prompt is never the prefix: sampling needs the last token evaluated
    assert fixed_prefix([1, 2, 3], [1, 2, 3, 4]) == (1, 2)
    assert fixed_prefix([5], [5]) == ()


class FakeContext:
    def __init__(self, llama: FakeLlama) -> None:
        self.llama = llama

    def kv_cache_seq_rm(self, seq_id: int, p0: int, p1: int) -> bool:
        self.llama.kv = self.llama.kv[:p0]
        return True


class FakeLlama:
    """Just what PrefixKV touches: token ids, n_tokens, reset, eval and KV truncation."""

    def __init__(self) -> None:
        self.input_ids = np.zeros(64, dtype=np.intc)
        self.n_tokens = 0
        self.kv: list[int] = []
        self.evaluated: list[list[int]] = []
        self._ctx = FakeContext(self)

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, tokens: list[int]) -> None:
        self.kv = self.kv[:self.n_tokens] + list(tokens)
        self.input_ids[self.n_tokens:self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self.evaluated.append(list(tokens))


@pytest.fixture
def fake_states(monkeypatch):
    """Saved states of a FakeLlama: its KV list as bytes."""
    from ramem_local.runtime import prompt_prefix

    def save(llama: FakeLlama) -> bytes:
        return bytes(llama.kv)

    def load(llama: FakeLlama, state: bytes) -> bool:
        llama.kv = list(state)
        return True

    monkeypatch.setattr(prompt_prefix, "save_sequence", save)
    monkeypatch.setattr(prompt_prefix, "load_sequence", load)


def test_a_prefix_is_evaluated_once_and_the_cache_cut_back_to_it_before_each_call(fake_states):
    llama, kv = FakeLlama(), PrefixKV()
    kv.place(llama, (1, 2, 3))
    assert llama.evaluated == [[1, 2, 3]] and llama.n_tokens == 3
    llama.eval([7, 8, 9])  # what a call adds after the prefix
    kv.place(llama, (1, 2, 3))
    assert llama.evaluated == [[1, 2, 3], [7, 8, 9]]  # not evaluated again
    assert llama.n_tokens == 3 and llama.kv == [1, 2, 3]
    assert (kv.evaluated, kv.restored) == (1, 0)


def test_after_a_reset_or_another_prefix_the_saved_state_is_loaded(fake_states):
    llama, kv = FakeLlama(), PrefixKV()
    kv.place(llama, (1, 2, 3))
    llama.reset()  # e.g. a call without the fixed prefix
    llama.eval([4, 5])
    kv.place(llama, (1, 2, 3))
    assert llama.kv == [1, 2, 3] and list(llama.input_ids[:3]) == [1, 2, 3]
    assert llama.n_tokens == 3 and (kv.evaluated, kv.restored) == (1, 1)
    kv.place(llama, (6, 7))
    kv.place(llama, (1, 2, 3))
    kv.place(llama, (6, 7))
    assert (kv.evaluated, kv.restored) == (2, 3) and llama.kv == [6, 7]


def test_a_prefix_overwritten_by_a_call_is_noticed(fake_states):
    llama, kv = FakeLlama(), PrefixKV()
    kv.place(llama, (1, 2, 3))
    llama.n_tokens = 1
    llama.eval([5, 6])  # a call that diverged inside the prefix
    kv.place(llama, (1, 2, 3))
    assert kv.restored == 1 and llama.kv == [1, 2, 3]


def test_after_forget_a_cache_holding_the_same_tokens_is_not_trusted(fake_states):
    llama, kv = FakeLlama(), PrefixKV()
    kv.place(llama, (1, 2, 3))
    kv.forget()
    llama.reset()
    llama.eval([1, 2, 3, 4])  # a whole prompt in one piece: same tokens, other numerics
    llama.kv[0] = 99  # (what "other numerics" looks like to the fake)
    kv.place(llama, (1, 2, 3))
    assert kv.restored == 1 and llama.kv == [1, 2, 3]


def test_only_the_last_prefixes_are_kept(fake_states):
    from ramem_local.runtime.prompt_prefix import MAX_SAVED

    llama, kv = FakeLlama(), PrefixKV()
    for first in range(MAX_SAVED + 1):
        kv.place(llama, (first, 100))
    assert list(kv.saved) == [(first, 100) for first in range(1, MAX_SAVED + 1)]


def test_a_later_process_loads_the_prefix_another_process_saved(fake_states, tmp_path):
    from ramem_local.runtime.prompt_prefix import SavedPrefixes

    first, second = FakeLlama(), FakeLlama()
    first_kv = PrefixKV(disk=SavedPrefixes(tmp_path, "model A"))
    first_kv.place(first, (1, 2, 3))
    (state,) = tmp_path.glob("*.kv")
    assert state.stat().st_mode & 0o777 == 0o600
    later = PrefixKV(disk=SavedPrefixes(tmp_path, "model A"))  # a new process: nothing in RAM
    later.place(second, (1, 2, 3))
    assert second.evaluated == [] and second.kv == [1, 2, 3] and second.n_tokens == 3
    assert (later.evaluated, later.restored, later.from_disk) == (0, 1, 1)
    other_model = PrefixKV(disk=SavedPrefixes(tmp_path, "model B"))
    other_model.place(FakeLlama(), (1, 2, 3))
    assert (other_model.evaluated, other_model.from_disk) == (1, 0)


def test_a_saved_state_llama_refuses_is_deleted_and_the_prefix_evaluated(
        fake_states, tmp_path, monkeypatch):
    from ramem_local.runtime import prompt_prefix

    PrefixKV(disk=prompt_prefix.SavedPrefixes(tmp_path, "m")).place(FakeLlama(), (1, 2))
    monkeypatch.setattr(prompt_prefix, "load_sequence", lambda llama, state: False)
    llama, kv = FakeLlama(), PrefixKV(disk=prompt_prefix.SavedPrefixes(tmp_path, "m"))
    kv.place(llama, (1, 2))
    assert (kv.evaluated, kv.from_disk) == (1, 0) and llama.kv == [1, 2]
    assert len(list(tmp_path.glob("*.kv"))) == 1  # written again by the evaluation


def test_an_unwritable_cache_costs_an_evaluation_not_an_error(fake_states, tmp_path):
    from ramem_local.runtime.prompt_prefix import SavedPrefixes

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    kv = PrefixKV(disk=SavedPrefixes(blocker / "prefixes", "m"))
    llama = FakeLlama()
    kv.place(llama, (4, 5))
    assert llama.kv == [4, 5] and kv.evaluated == 1
    assert list(tmp_path.iterdir()) == [blocker]


def test_only_the_most_recently_used_states_stay_on_disk(fake_states, tmp_path):
    from ramem_local.runtime.prompt_prefix import SavedPrefixes

    disk = SavedPrefixes(tmp_path, "m", keep=2)
    for first in range(4):
        PrefixKV(disk=disk).place(FakeLlama(), (first, 100))
    kept = {path.name for path in tmp_path.glob("*.kv")}
    assert kept == {disk.path((2, 100)).name, disk.path((3, 100)).name}


def test_a_template_that_refuses_the_bare_messages_means_no_prefix_not_a_failed_call():
    from ramem_local.runtime.llama import _fixed_prefix

    class Refusing:
        def prefix(self, messages):
            raise ValueError("empty content")

    assert _fixed_prefix(Refusing(), [{"role": "user", "content": "hi"}]) == ()


# --------------------------------------------------------------------------- real model

UTC = timezone.utc
DAY = int(datetime(2023, 5, 8, 13, 0, tzinfo=UTC).timestamp())
WINDOW_A = [("Anna", "I adopted a cat named Pixel yesterday."),
            ("Ben", "Congratulations! What colour is Pixel?"),
            ("Anna", "Pixel is grey with white paws.")]
WINDOW_B = [("Ben", "I started learning the violin this month."),
            ("Anna", "Who teaches you?"),
            ("Ben", "Mrs Ortiz, she plays in the city orchestra.")]


def window(lines: list[tuple[str, str]], first: int) -> list[Turn]:
    return [Turn(speaker, text, DAY + 60 * (first + i), 1, external_id=f"D1:{first + i}")
            for i, (speaker, text) in enumerate(lines)]


def request(lines: list[tuple[str, str]], first: int) -> tuple[list[dict], dict]:
    turns = window(lines, first)
    return build_messages(turns, UTC), window_schema(list(turn_labels(turns)))


A = request(WINDOW_A, 1)
B = request(WINDOW_B, 4)


def runtime(**options):
    from ramem_local.runtime.llama import LlamaRuntime

    return LlamaRuntime(smollm_path(), n_ctx=N_CTX, n_threads=1, **options)


def raw(llm, req: tuple[list[dict], dict]) -> str:
    result = llm.chat_json(req[0], req[1], max_tokens=MAX_TOKENS)
    assert result.raw, result.error
    return result.raw


@pytest.mark.real_model
def test_the_same_window_gives_the_same_output_whatever_ran_before():
    llm = runtime()
    first_a = raw(llm, A)
    raw(llm, B)
    assert raw(llm, A) == first_a
    assert llm._model.prefix_kv.evaluated >= 1


@pytest.mark.real_model
def test_a_window_after_another_equals_the_window_in_a_fresh_process():
    llm = runtime()
    raw(llm, A)
    after_a = raw(llm, B)
    script = (
        "import json, sys\n"
        "from tests.test_prompt_prefix import B, raw, runtime\n"
        "print(json.dumps(raw(runtime(), B)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == after_a


@pytest.mark.real_model
def test_a_fresh_process_loads_the_saved_prefix_and_answers_the_same(tmp_path):
    script = (
        "import json, sys\n"
        "from tests.test_prompt_prefix import B, raw, runtime\n"
        "llm = runtime(prefix_cache_dir=sys.argv[1])\n"
        "out = raw(llm, B)\n"
        "kv = llm._model.prefix_kv\n"
        "print(json.dumps([out, kv.evaluated, kv.from_disk]))\n"
    )
    runs = []
    for _ in range(2):  # the first saves the prefix's state, the second loads it
        done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    (first, first_evaluated, first_loaded), (second, second_evaluated, second_loaded) = runs
    assert (first_evaluated, first_loaded) == (1, 0)
    assert (second_evaluated, second_loaded) == (0, 1)
    assert second == first
    assert len(list(tmp_path.glob("*.kv"))) == 1


@pytest.mark.real_model
def test_the_instructions_are_evaluated_once_and_each_call_evaluates_only_the_rest():
    llm = runtime()
    llama = llm._model.llama
    raw(llm, A)  # the prefix is in the cache now (or was already)
    before = llm._model.prefix_kv.evaluated
    prefix = llm._model.prefix_kv.current
    assert prefix is not None and len(prefix) > 300  # template + system prompt + user header
    evaluated: list[int] = []
    original = llama.eval
    llama.eval = lambda tokens: (evaluated.append(len(tokens)), original(tokens))[1]
    try:
        result = llm.chat_json(B[0], B[1], max_tokens=MAX_TOKENS)
    finally:
        del llama.eval
    assert llm._model.prefix_kv.evaluated == before
    assert evaluated[0] == result.tokens_in - len(prefix)  # the window, not the instructions


@pytest.mark.real_model
def test_two_alternating_prefixes_restore_saved_states_with_the_same_outputs():
    """Like ``ramem ask``: query analysis and answer alternate, each with its own system
    prompt. The second visit of a prefix loads its saved state instead of evaluating it."""
    llm = runtime()
    other = ([{"role": "system", "content": "Classify the text. Reply with JSON."},
              {"role": "user", "content": "I love sunny days at the beach with my dog."}],
             {"type": "object", "properties": {"mood": {"enum": ["good", "bad"]}},
              "required": ["mood"]})
    kv = llm._model.prefix_kv
    first = [raw(llm, A), raw(llm, other)]
    restored = kv.restored
    second = [raw(llm, A), raw(llm, other)]
    assert second == first
    assert kv.restored >= restored + 2


@pytest.mark.real_model
def test_a_call_without_the_fixed_prefix_leaves_no_trusted_prefix_behind():
    plain, kept = runtime(fixed_prefix=False), runtime()
    assert plain._model is kept._model  # one loaded model, two ways to use it
    with_prefix = raw(kept, B)
    restored = kept._model.prefix_kv.restored
    raw(plain, B)  # the whole prompt in one piece: the same tokens, other batches
    assert raw(kept, B) == with_prefix
    assert kept._model.prefix_kv.restored == restored + 1  # from the saved state



@pytest.mark.real_model
def test_what_is_kept_on_disk_holds_no_request_content():
    """The saved prefixes are fixed instructions: none of the question, the evidence, the
    participants or the turns of the requests ramem makes (the user cache is not encrypted)."""
    from datetime import timezone as tz

    from ramem_local.answer import answer_messages
    from ramem_local.recall.analyzer import analysis_messages

    secret = "Zebulon hid the walnut ledger"
    turns = [Turn("Zebulon", secret, DAY, 1, external_id="D1:1")]
    requests = [answer_messages(f"Where did {secret}?", f"[M1] {secret}", "Monday 8 May 2023"),
                analysis_messages(f"Where did {secret}?", DAY, tz.utc, ["Zebulon"]),
                build_messages(turns, UTC)]
    llm = runtime()
    renderer = llm._renderer()
    for messages in requests:
        prefix = renderer.prefix(messages)
        assert len(prefix) > 50  # instructions: worth keeping
        text = llm._model.llama.detokenize(list(prefix)).decode("utf-8", "replace")
        assert "Zebulon" not in text and "walnut" not in text
