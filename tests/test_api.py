"""The Python API (``ramem_local.Memory``): open, add, ingest, search, forget, stats, resume,
and two connections on one bank. Embeddings come from the deterministic ``hashing_embedder``."""

from __future__ import annotations

import json
import re
import threading
from datetime import datetime, timezone
from pathlib import Path

import apsw
import pytest
from samples import GARDEN_TURNS, JSONL_TURNS

from ramem_local import InputError, Memory, ModelError, RetrievalSettings, SearchDefaults
from ramem_local.config import ConfigError, set_config_value
from ramem_local.store import StoreError
from ramem_local.testing import ScriptedLLM


def write_jsonl(path: Path, turns: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(t) for t in turns) + "\n", encoding="utf-8")
    return path


def many_turns(count: int, conversation: str = "long-chat") -> list[dict]:
    """``count`` distinct turns, one minute apart, in sessions of 50 turns (one per day)."""
    turns = []
    for i in range(count):
        day, minute = divmod(i, 50)
        turns.append({
            "speaker": ("Ann", "Ben")[i % 2],
            "text": f"Message number {i}: today we talked about topic {i % 17} and item {i}.",
            "timestamp": f"2024-01-{day + 1:02d}T10:{minute:02d}:00",
            "session": day + 1,
            "id": f"t-{i}",
            "conversation": conversation,
        })
    return turns


@pytest.fixture
def chat_file(tmp_path) -> Path:
    return write_jsonl(tmp_path / "chat.jsonl", JSONL_TURNS)


def duplicated_turn_ids(memory: Memory) -> list:
    return memory.store.db.execute(
        "SELECT conversation_id, turn_key, count(*) FROM turns "
        "GROUP BY conversation_id, turn_key HAVING count(*) > 1"
    ).fetchall()


# ------------------------------------------------------------------------------- basic API


def test_open_is_a_context_manager_and_data_persists(tmp_path, hashing_embedder):
    path = tmp_path / "bank.db"
    with Memory.open(path, embedder=hashing_embedder) as memory:
        assert isinstance(memory, Memory)
        memory_id = memory.add("Planted tomatoes on the balcony", at="2024-05-04 09:00")
    assert path.exists()
    with pytest.raises(apsw.ConnectionClosedError):
        memory.stats()
    with Memory.open(path, embedder=hashing_embedder, create=False) as reopened:
        record = reopened.get(memory_id)
        assert record is not None and "tomatoes" in record.content


def test_add_returns_an_id_that_get_finds(tmp_path, hashing_embedder):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        first = memory.add("Ran a 10k in the park with Ana", at="2024-05-04 09:00")
        second = memory.add("Baked bread for the first time", at="2024-05-06")
        assert isinstance(first, int) and isinstance(second, int) and first != second
        record = memory.get(first)
        assert record is not None
        assert record.id == first
        assert "Ran a 10k in the park with Ana" in record.content
        start = datetime.fromtimestamp(record.session_start, tz=timezone.utc)
        assert start.date().isoformat() == "2024-05-04"
        assert record.session_start < record.session_end
        assert "Baked bread" in memory.get(second).content
        assert memory.get(999_999) is None


def test_search_returns_memories_with_their_episode(tmp_path, hashing_embedder, chat_file):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        response = memory.search("Pixel the grey cat", k=3)
        assert 0 < len(response.results) <= 3
        for candidate in response.results:
            record = candidate.memory
            assert record.content
            assert isinstance(candidate.score, float)
            assert record.session_start < record.session_end
            # the speaker, then whom the text names ("a grey cat called Pixel")
            assert record.persons[0] in {"Ann", "Ben"}
            assert set(record.persons) <= {"Ann", "Ben", "Pixel"}
            assert len(record.source_turns) == 1
            assert record.source_turns[0] in {t["id"] for t in JSONL_TURNS}
            assert candidate.list_name in {"content", "context"}
        top = response.results[0].memory
        assert top.source_turns == ["m-1"]
        assert "grey cat called Pixel" in top.content
        assert datetime.fromtimestamp(top.session_start, tz=timezone.utc).date().isoformat() \
            == "2024-03-01"
        assert response.trace.frame is not None


def test_search_with_blank_question_raises_value_error(tmp_path, hashing_embedder):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.add("Something to find", at="2024-05-04")
        with pytest.raises(ValueError):
            memory.search("   ")
        with pytest.raises(ValueError):
            memory.search("")


# -------------------------------------------------------------------------- search defaults

GARDEN_QUESTION = "What did I do in the garden?"


@pytest.fixture
def garden_bank(tmp_path, hashing_embedder) -> Path:
    """Twelve garden days: a garden question matches every one, so k is how many come back."""
    path = tmp_path / "garden.db"
    with Memory.open(path, embedder=hashing_embedder) as memory:
        memory.ingest(write_jsonl(tmp_path / "garden.jsonl", GARDEN_TURNS))
    return path


def test_open_takes_the_search_defaults_from_the_config_file_then_the_environment(
        garden_bank, hashing_embedder, monkeypatch):
    set_config_value("k", 3)  # what `ramem config set k 3` does
    set_config_value("mode", "baseline")
    with Memory.open(garden_bank, embedder=hashing_embedder) as memory:
        response = memory.search(GARDEN_QUESTION)
        evidence = memory.ask(GARDEN_QUESTION).evidence
    assert memory.defaults == SearchDefaults(k=3, mode="baseline")
    assert (len(response.results), response.trace.mode) == (3, "baseline")
    assert len(evidence) == 3
    monkeypatch.setenv("RAMEM_K", "4")
    with Memory.open(garden_bank, embedder=hashing_embedder) as memory:
        assert len(memory.search(GARDEN_QUESTION).results) == 4


def test_library_defaults_ignore_the_user_config(garden_bank, hashing_embedder):
    set_config_value("k", 3)
    with Memory.open(garden_bank, embedder=hashing_embedder,
                     defaults=SearchDefaults()) as memory:
        assert len(memory.search(GARDEN_QUESTION).results) == SearchDefaults.k == 10


def test_a_broken_config_file_is_refused_before_a_bank_is_created(tmp_path, monkeypatch):
    config = tmp_path / "config.json"
    config.write_text('{"k": "ten"}', encoding="utf-8")
    monkeypatch.setenv("RAMEM_CONFIG", str(config))
    with pytest.raises(ConfigError, match="k must be a whole number"):
        Memory.open(tmp_path / "new.db")
    assert not (tmp_path / "new.db").exists()


def test_per_call_arguments_win_over_the_defaults(garden_bank, hashing_embedder):
    defaults = SearchDefaults(k=3, buffer_days=1.0, dense_index="binary")
    with Memory.open(garden_bank, embedder=hashing_embedder, defaults=defaults) as memory:
        response = memory.search(GARDEN_QUESTION, k=5, mode="baseline", dense_index="exact")
        assert len(response.results) == 5
        assert (response.trace.mode, response.trace.dense_index) == ("baseline", "exact")
        assert len(memory.ask(GARDEN_QUESTION, k=4).evidence) == 4
        assert memory.frame(GARDEN_QUESTION).buffer_days == 1.0
        assert memory.frame(GARDEN_QUESTION, buffer_days=2).buffer_days == 2


def test_an_argument_that_contradicts_the_settings_or_frame_raises(garden_bank,
                                                                   hashing_embedder):
    with Memory.open(garden_bank, embedder=hashing_embedder,
                     defaults=SearchDefaults()) as memory:
        settings = RetrievalSettings(k=4)
        with pytest.raises(InputError, match=r"k=3 but settings\.k=4"):
            memory.search(GARDEN_QUESTION, k=3, settings=settings)
        with pytest.raises(InputError, match=r"mode='baseline' but settings\.mode='ramem'"):
            memory.search(GARDEN_QUESTION, mode="baseline", settings=settings)
        with pytest.raises(InputError, match=r"dense_index='exact' but settings\.dense_index"):
            memory.search(GARDEN_QUESTION, dense_index="exact", settings=settings)
        with pytest.raises(InputError, match=r"exclude_turns=True but settings\.exclude_turns"):
            memory.search(GARDEN_QUESTION, exclude_turns=True, settings=settings)
        frame = memory.frame(GARDEN_QUESTION, as_of="2024-05-01", buffer_days=2)
        with pytest.raises(InputError, match=r"buffer_days=5 but frame\.buffer_days=2"):
            memory.search(GARDEN_QUESTION, buffer_days=5, frame=frame)
        with pytest.raises(InputError, match=r"as_of='2024-04-20T00:00:00\+00:00' but "
                                             r"frame\.as_of='2024-05-01T00:00:00\+00:00'"):
            memory.search(GARDEN_QUESTION, as_of="2024-04-20", frame=frame)
        agreeing = memory.search(GARDEN_QUESTION, k=4, as_of="2024-05-01", buffer_days=2,
                                 settings=settings, frame=frame)
        assert len(agreeing.results) == 4


def test_forget_removes_a_memory_from_search(tmp_path, hashing_embedder, chat_file):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        top = memory.search("Pixel the grey cat", k=10).results[0].memory
        assert top.source_turns == ["m-1"]
        report = memory.forget(top.id)
        assert report.memory_ids == [top.id] and len(report.turn_ids) == 1
        assert memory.get(top.id) is None
        remaining = memory.search("Pixel the grey cat", k=10).results
        assert top.id not in {c.memory.id for c in remaining}
        assert remaining, "the other memories are still found"
        with pytest.raises(ValueError, match=f"no memory with id {top.id}"):
            memory.forget(top.id)
        stats = memory.stats()
        assert stats["memories"] == len(JSONL_TURNS) - 1
        assert stats["vectors"] == stats["memories"]
        assert stats["turns"] == len(JSONL_TURNS) - 1, "its source turn went with it"


def test_forget_keep_turns_keeps_the_source_turn(tmp_path, hashing_embedder, chat_file):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        report = memory.forget(1, keep_turns=True)
        assert report.memory_ids == [1] and report.turn_ids == []
        stats = memory.stats()
        assert stats["memories"] == len(JSONL_TURNS) - 1
        assert stats["turns"] == len(JSONL_TURNS)


def test_stats_counts(tmp_path, hashing_embedder, chat_file):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        empty = memory.stats()
        assert (empty["conversations"], empty["turns"], empty["memories"]) == (0, 0, 0)
        memory.ingest(chat_file)
        memory.add("A journal line", at="2024-03-10")
        stats = memory.stats()
        assert stats["conversations"] == 2  # the chat and the journal
        assert stats["sessions"] == 3  # the chat pauses for days: two sittings; one journal day
        assert stats["turns"] == len(JSONL_TURNS) + 1
        assert stats["memories"] == len(JSONL_TURNS) + 1
        assert stats["vectors"] == stats["memories"]
        assert stats["embedder"]["dimension"] == hashing_embedder.dimension


def test_a_different_embedder_dimension_is_refused(tmp_path, hashing_embedder):
    embedder_class = type(hashing_embedder)
    path = tmp_path / "bank.db"
    with Memory.open(path, embedder=embedder_class(dimension=32)) as memory:
        memory.add("Stored with 32-d vectors", at="2024-05-04")
    with pytest.raises(StoreError, match="reindex"):
        Memory.open(path, embedder=embedder_class(dimension=16))
    with Memory.open(path, embedder=embedder_class(dimension=32)) as memory:
        assert memory.stats()["vectors"] == 1  # the refusal changed nothing


# --------------------------------------------------------------------- LoCoMo and resuming


def test_locomo_dev_ingest_stores_every_turn_once(tmp_path, hashing_embedder, locomo_dev):
    with Memory.open(tmp_path / "locomo.db", embedder=hashing_embedder) as memory:
        first = memory.ingest(locomo_dev)
        assert first.conversations == 5
        assert first.turns_new == 2760
        stats = memory.stats()
        assert stats["conversations"] == 5
        assert stats["turns"] == 2760
        assert stats["memories"] == 2760
        assert stats["vectors"] == 2760

        second = memory.ingest(locomo_dev)
        assert second.turns_seen == 2760
        assert (second.turns_new, second.memories_new, second.vectors_new) == (0, 0, 0)
        assert memory.stats()["turns"] == 2760
        assert not duplicated_turn_ids(memory)


def test_ingest_stores_only_the_conversations_named(tmp_path, hashing_embedder):
    """One conversation of a file per bank, as the LoCoMo evaluation builds its banks; a name
    the file lacks is refused before anything is written."""
    source = write_jsonl(tmp_path / "two.jsonl",
                         many_turns(4, "first") + many_turns(3, "second"))
    counted = []
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as memory:
        with pytest.raises(InputError, match="no conversation named 'third'"):
            memory.ingest(source, conversations=["second", "third"])
        assert memory.stats()["turns"] == 0
        report = memory.ingest(source, conversations=["second"], on_counted=counted.append)
        assert (report.conversations, report.turns_new, counted) == (1, 3, [3])
        assert [(c["name"], c["turns"]) for c in memory.stats()["conversations_detail"]] == [
            ("second", 3)]
        assert {m.conversation for m in memory.list(limit=10)} == {"second"}


def test_interrupted_ingest_resumes_without_duplicates(tmp_path, hashing_embedder):
    embedder_class = type(hashing_embedder)

    class Interrupted(RuntimeError):
        pass

    class FailingEmbedder(embedder_class):
        """Embeds ``allowed`` documents, then fails (a crash in the middle of an ingest)."""

        def __init__(self, allowed: int):
            super().__init__()
            self.allowed = allowed
            self.embedded = 0

        def embed_documents(self, texts):
            if self.embedded + len(texts) > self.allowed:
                raise Interrupted("simulated crash")
            self.embedded += len(texts)
            return super().embed_documents(texts)

    from ramem_local.ingest.pipeline import DEFAULT_BATCH

    total = 2 * DEFAULT_BATCH + 100
    allowed = DEFAULT_BATCH + DEFAULT_BATCH // 2  # the second batch fails
    source = write_jsonl(tmp_path / "long.jsonl", many_turns(total))
    path = tmp_path / "bank.db"
    failing = FailingEmbedder(allowed=allowed)
    with Memory.open(path, embedder=failing) as memory:
        with pytest.raises(Interrupted):
            memory.ingest(source)
        stored_before = memory.stats()["turns"]
    assert 0 < stored_before < total, "the crash happened in the middle of the ingest"
    assert failing.embedded <= allowed

    with Memory.open(path, embedder=embedder_class()) as memory:
        report = memory.ingest(source)
        assert report.turns_new == total - stored_before
        store = memory.store
        assert store.turn_count() == total
        assert store.memory_count() == total
        assert store.vector_count() == store.memory_count()
        assert not duplicated_turn_ids(memory)
        stored_ids = {
            turn for record in memory.list(limit=10_000) for turn in record.source_turns
        }
        assert stored_ids == {f"t-{i}" for i in range(total)}


# ------------------------------------------------------------------ two connections, one bank


def test_two_connections_one_ingests_while_the_other_searches(tmp_path, hashing_embedder):
    embedder_class = type(hashing_embedder)
    path = tmp_path / "bank.db"
    total = 1500
    source = write_jsonl(tmp_path / "long.jsonl", many_turns(total))
    with Memory.open(path, embedder=embedder_class()) as setup:
        setup.add("A first entry so the bank exists", at="2023-12-01")

    writer = Memory.open(path, embedder=embedder_class())
    reader = Memory.open(path, embedder=embedder_class())
    errors: list[BaseException] = []

    def run_ingest() -> None:
        try:
            writer.ingest(source)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    seen_counts: list[int] = []
    searches = 0
    try:
        thread = threading.Thread(target=run_ingest)
        thread.start()
        while thread.is_alive() or searches < 3:
            response = reader.search("topic 5 item", k=5)
            assert response.results
            searches += 1
            with reader.store.db:  # one read snapshot for both counts
                memories = reader.store.memory_count()
                vectors = reader.store.vector_count()
            assert vectors == memories, "a reader never sees a memory without its vector"
            seen_counts.append(memories)
        thread.join(timeout=300)
        assert not errors, errors
        assert seen_counts == sorted(seen_counts), "counts never go backwards"

        writer_stats = writer.stats()
        reader_stats = reader.stats()
        for key in ("conversations", "sessions", "turns", "memories", "vectors"):
            assert reader_stats[key] == writer_stats[key], key
        assert reader_stats["turns"] == total + 1
        found = reader.search("Message number 1499", k=10).results
        assert any(c.memory.source_turns == ["t-1499"] for c in found)
    finally:
        writer.close()
        reader.close()


def test_ask_analyses_retrieves_and_answers_with_citations(tmp_path, hashing_embedder, chat_file):
    def analysis(messages, schema, max_tokens):
        return {"need": "the name of Ann's cat", "time_start": None, "time_end": None,
                "event": None, "order": None, "persons": ["Ann"], "locations": [],
                "entities": ["Pixel"], "topic": "pets", "keywords": ["cat"]}

    def answer(messages, schema, max_tokens):
        # Ann's own turn that names the cat: an answer about Ann cites what Ann said
        said = re.search(r"\[M(\d+)\] Ann: I adopted a grey cat called Pixel",
                         messages[-1]["content"])
        assert said is not None
        assert int(said.group(1)) in schema["properties"]["citations"]["items"]["enum"]
        return {"reasoning": "Ann's memory names the cat", "answer": "Pixel",
                "citations": [int(said.group(1))]}

    llm = ScriptedLLM([analysis, answer])
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder, llm=llm) as memory:
        memory.ingest(chat_file)
        result = memory.ask("What is the name of Ann's cat?", k=3, analyze="always")
    assert (result.answer, result.abstained) == ("Pixel", False)
    assert result.citations and set(result.citations) <= {c.memory.id for c in result.evidence}
    assert [call.stage for call in result.trace.llm_calls] == ["analyze", "answer"]
    assert {"analyze", "answer", "sql"} <= set(result.trace.timings_ms)
    assert result.trace.frame.keywords == ["cat"]


def test_ask_can_skip_the_analyzer_where_the_question_was_read_already(
        tmp_path, hashing_embedder, chat_file):
    """analyze="auto": a grounded time (or an order, a count, an event) is the
    deterministic reading's, so the analyzer, which could add only its need and keywords, is
    not asked; a question with nothing read asks it. "always" asks it; "never" (the default)
    does not."""
    def analysis(messages, schema, max_tokens):
        assert "Question:" in messages[-1]["content"], "the analyzer's call, not the answer's"
        return {"need": "what Ben paints", "time_start": None, "time_end": None,
                "event": None, "order": None, "persons": ["Ben"], "locations": [],
                "entities": [], "topic": None, "keywords": ["paint"]}

    def answer(messages, schema, max_tokens):
        assert "citations" in schema["properties"], "the answer's call"
        return {"reasoning": "", "answer": "", "citations": []}

    question = "What did Ben start learning in March 2024?"
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        memory.llm = ScriptedLLM([answer])
        skipped = memory.ask(question, analyze="auto")
        assert [call.stage for call in skipped.trace.llm_calls] == ["answer"]
        assert "analyze" not in skipped.trace.timings_ms
        assert ("the question was read without the LLM: its time, order, count or event was "
                "read") in skipped.trace.notes
        memory.llm = ScriptedLLM([answer])
        default = memory.ask(question)
        assert [call.stage for call in default.trace.llm_calls] == ["answer"]
        memory.llm = ScriptedLLM([analysis, answer])
        always = memory.ask(question, analyze="always")
        assert [call.stage for call in always.trace.llm_calls] == ["analyze", "answer"]
        memory.llm = ScriptedLLM([analysis, answer])
        open_question = memory.ask("What is Ben painting?", analyze="auto")
        assert [call.stage for call in open_question.trace.llm_calls] == ["analyze", "answer"]
        memory.llm = ScriptedLLM([answer])
        never = memory.ask("What is Ben painting?", analyze="never")
        assert [call.stage for call in never.trace.llm_calls] == ["answer"]
        assert "the question was read without the LLM (analyze: never)" in never.trace.notes
        memory.llm = ScriptedLLM([answer])
        by_default = memory.ask("What is Ben painting?")
        assert [call.stage for call in by_default.trace.llm_calls] == ["answer"]
        with pytest.raises(InputError, match="analyze must be one of always, auto, never"):
            memory.ask(question, analyze="sometimes")


def test_ask_shows_the_search_before_the_answer_and_the_answer_as_it_is_written(
        tmp_path, hashing_embedder, chat_file):
    events: list[str] = []

    def answer(messages, schema, max_tokens):
        events.append("answer call")
        said = re.search(r"\[M(\d+)\] Ann: I adopted a grey cat called Pixel",
                         messages[-1]["content"])
        assert said is not None
        return {"reasoning": "Ann says so", "answer": "Pixel, a grey cat",
                "citations": [int(said.group(1))]}

    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder,
                     llm=ScriptedLLM([answer])) as memory:
        memory.ingest(chat_file)
        result = memory.ask(
            "What is the name of Ann's cat?", k=3, analyze="never",
            on_search=lambda response: events.append(f"search: {len(response.results)}"),
            on_answer_text=lambda text: events.append(f"words: {text}"))
    assert events[:2] == ["search: 3", "answer call"]
    words = [event.removeprefix("words: ") for event in events[2:]]
    assert len(words) > 1 and "".join(words) == result.answer == "Pixel, a grey cat"


def test_ask_without_llm_returns_the_evidence(tmp_path, hashing_embedder, chat_file):
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        result = memory.ask("What is the name of Ann's cat?", k=3)
    assert result.answer == "" and not result.citations
    assert any("Pixel" in c.memory.content for c in result.evidence)


def test_export_writes_turns_that_ingest_reads_back(tmp_path, hashing_embedder):
    sample = {
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "Look at my new bike!",
                 "blip_caption": "a photo of a red bicycle"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Wow, so shiny."},
            ],
            "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Rode it to work."}],
        },
    }
    source = tmp_path / "chat.json"
    source.write_text(json.dumps([sample]))
    exported = tmp_path / "export.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=hashing_embedder) as first:
        first.ingest(source)
        first.add("Journal: bought a helmet", at="2023-05-21 08:00")
        assert first.export(exported) == 4
        original = sorted(first.store.all_turns(), key=lambda pair: pair[1].timestamp)
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as second:
        second.ingest(exported)
        copied = sorted(second.store.all_turns(), key=lambda pair: pair[1].timestamp)
        assert second.stats()["sessions"] == 3
    strip = [(name, t.speaker, t.text, t.timestamp, t.external_id, t.caption)
             for name, t in original]
    assert strip == [(name, t.speaker, t.text, t.timestamp, t.external_id, t.caption)
                     for name, t in copied]


def test_reindex_moves_a_bank_to_another_embedder(tmp_path, hashing_embedder):
    embedder_class = type(hashing_embedder)
    path = tmp_path / "bank.db"
    with Memory.open(path, embedder=embedder_class(dimension=32)) as memory:
        memory.add("Ran a 10k in the park", at="2024-05-04")
        memory.add("Baked bread", at="2024-05-05")
        assert memory.reindex(embedder_class(dimension=16)) == 2
        assert memory.embedder.dimension == 16
        assert memory.stats()["vectors"] == 2
        assert memory.search("park run", k=1).results[0].memory.content.endswith("park")
    with Memory.open(path, embedder=embedder_class(dimension=16)) as memory:
        assert memory.stats()["embedder"]["dimension"] == 16


def test_reindex_without_any_embedder_is_a_model_error_that_changes_nothing(tmp_path):
    with Memory.open(tmp_path / "bank.db") as memory:
        memory.add("Ran a 10k in the park", at="2024-05-04")
        with pytest.raises(ModelError, match="records none; pass one with --embedder"):
            memory.reindex()
        assert memory.stats()["memories"] == 1


def test_reindex_when_the_recorded_embedder_is_not_loaded_names_it_and_keeps_the_vectors(
        tmp_path, hashing_embedder):
    path = tmp_path / "bank.db"
    with Memory.open(path, embedder=hashing_embedder) as memory:
        memory.add("Ran a 10k in the park", at="2024-05-04")
    with Memory.open(path, models_dir=tmp_path / "models") as memory:
        assert memory.embedder is None  # "hashing" is no model the bank can load
        with pytest.raises(ModelError, match="hashing.*is not loaded.*--embedder"):
            memory.reindex()
        stats = memory.stats()
        assert stats["vectors"] == 1 and stats["embedder"]["name"] == "hashing"


# ------------------------------------------------------------------------------ the country


def test_the_bank_records_its_country_and_reads_dates_for_it(tmp_path, hashing_embedder):
    path = tmp_path / "bank.db"
    with Memory.open(path, embedder=hashing_embedder, country="gb") as memory:
        assert memory.country == "GB"
        memory_id = memory.add("The rent was due on 3/4/2024", at="2024-05-10 12:00")
        event = memory.get(memory_id).event_range
        assert event is not None
        assert datetime.fromtimestamp(event.start, tz=timezone.utc).date().isoformat() == \
            "2024-04-03"
        frame = memory.frame("What did I pay on 3/4/2024?", as_of="2024-05-10")
        assert datetime.fromtimestamp(frame.time_range.start, tz=timezone.utc).month == 4
        assert memory.stats()["country"] == "GB"
    with Memory.open(path, embedder=hashing_embedder) as reopened:
        assert reopened.country == "GB"


def test_a_new_bank_takes_the_system_locale_country_else_us(tmp_path, monkeypatch):
    monkeypatch.setattr("locale.getlocale", lambda: ("de_DE", "UTF-8"))
    with Memory.open(tmp_path / "de.db") as memory:
        assert memory.country == "DE"
    monkeypatch.setattr("locale.getlocale", lambda: (None, None))
    with Memory.open(tmp_path / "plain.db") as memory:
        assert memory.country == "US"


def test_the_country_changes_only_while_the_bank_is_empty(tmp_path, hashing_embedder):
    path = tmp_path / "bank.db"
    with Memory.open(path, embedder=hashing_embedder, country="US") as memory:
        assert memory.country == "US"
    with Memory.open(path, embedder=hashing_embedder, country="AU") as memory:
        assert memory.country == "AU"  # still empty: the new country is taken
        memory.add("Went to the beach in the summer", at="2024-05-10")
    with pytest.raises(ValueError, match="country"):
        Memory.open(path, embedder=hashing_embedder, country="US")
    with Memory.open(path, embedder=hashing_embedder, country="au") as memory:
        assert memory.country == "AU"


def test_an_unknown_country_code_creates_no_bank(tmp_path):
    with pytest.raises(ValueError, match="two-letter"):
        Memory.open(tmp_path / "bank.db", country="Britain")
    assert not (tmp_path / "bank.db").exists()


# ---------------------------------------------------------------- the bank's own embedder


@pytest.mark.real_model
def test_a_bank_reloads_the_folder_its_embedder_object_came_from(tmp_path, minilm_dir):
    """An embedder passed as an object was recorded by its registry-like name, which the next
    open looked up in the (empty) models folder and fell back to BM25; the folder it was read
    from is recorded now and tried first."""
    import shutil

    from ramem_local.runtime.embedder import OnnxEmbedder, spec_from_folder

    folder = shutil.copytree(minilm_dir, tmp_path / "all-minilm-l6-v2")
    bank = tmp_path / "bank.db"
    embedder = OnnxEmbedder(spec_from_folder(folder, name="all-minilm-l6-v2"))
    with Memory.open(bank, embedder=embedder, models_dir=tmp_path / "models") as memory:
        memory.add("Planted tomatoes on the balcony", at="2024-05-04 09:00")
        assert memory.store.get_meta("embedder_folder") == str(folder.resolve())
    with Memory.open(bank, models_dir=tmp_path / "models") as memory:
        assert memory.embedder is not None, memory.notes
        assert memory.warnings == [] and memory.notes == []
        memory.add("Repotted the basil", at="2024-05-05 09:00")
        assert memory.stats()["vectors"] == 2
    shutil.rmtree(folder)
    with Memory.open(bank, models_dir=tmp_path / "models") as memory:
        assert memory.embedder is None
        assert len(memory.warnings) == 1
        assert "could not be loaded" in memory.warnings[0]
        assert str(folder) in memory.warnings[0] and "BM25 only" in memory.warnings[0]


@pytest.mark.real_model
def test_reindex_with_an_embedder_object_forgets_the_previous_embedder_folder(
        tmp_path, minilm_dir, hashing_embedder):
    """The next open must not try the folder of an embedder the bank no longer uses."""
    bank = tmp_path / "bank.db"
    with Memory.open(bank, embedder=minilm_dir, models_dir=tmp_path / "models") as memory:
        memory.add("Planted tomatoes on the balcony", at="2024-05-04 09:00")
        assert memory.store.get_meta("embedder_folder") is not None
        assert memory.reindex(hashing_embedder) == 1
        assert memory.store.get_meta("embedder_folder") is None
        assert memory.store.get_meta("embedder_source") == hashing_embedder.name


def test_an_embedder_that_cannot_be_reloaded_is_a_warning(tmp_path, hashing_embedder):
    bank = tmp_path / "bank.db"
    with Memory.open(bank, embedder=hashing_embedder) as memory:
        memory.add("Planted tomatoes on the balcony", at="2024-05-04 09:00")
    with Memory.open(bank, models_dir=tmp_path / "models") as memory:
        assert memory.embedder is None
        assert memory.warnings and "hashing (32-d" in memory.warnings[0]
        assert memory.warnings[0] in memory.notes
