"""Answering from retrieved memories (DESIGN.md §4 step 5).

Each memory is shown to the model together with its episode (session span, event time, place,
people, entities, topic), packed in rank order under a character budget. The model must reply
``{reasoning, answer, citations}`` where citations are an enum of the ids it was shown, so it
cannot cite a memory it never saw. An answer that cites nothing is not trusted: it becomes an
explicit abstention ("not in memory"), as does every failure, so a caller never receives a
guess dressed as a memory.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime, tzinfo

from .names import participants_named
from .protocols import LLM, LLMResult
from .render import span_text, spoken_date, spoken_day
from .schemas import array, enum, obj, string
from .text import NOT_IN_MEMORY, is_abstention
from .types import Answer, Candidate, LLMCall, MemoryRecord, RecallFrame, Trace

MAX_CITATIONS = 5
TRUNCATION_MARK = "…"

SYSTEM_PROMPT = f"""\
You answer questions about a person's past conversations, using only the memories shown.
Each memory starts with [M<id>] and its content, followed by its episode:
- session: when the conversation took place;
- event: when the thing described happened (if known);
- location, persons, entities, topic.

Rules:
1. Use only the memories shown. Never use outside knowledge and never guess.
2. For time questions, work from the memories' event and session dates. Words such as
   "yesterday" or "last week" inside a memory are relative to that memory's session date.
   Give concrete dates (e.g. "7 May 2023") rather than relative words.
3. Words such as "recently" or "last month" in the question are relative to the date the
   question is asked, given with the question.
4. In "citations" put the numbers of the memories your answer uses (12 for [M12]).
5. If the memories do not contain the answer, set "answer" to exactly "{NOT_IN_MEMORY}" and
   cite nothing.
6. Keep "answer" short (a name, a phrase, a date) and "reasoning" to one or two sentences.

Reply with JSON: {{"reasoning": "...", "answer": "...", "citations": [ids]}}."""


def memory_block(memory: MemoryRecord, tz: tzinfo) -> str:
    """One memory with its episode; empty fields are left out so they cost no budget.

    The session is shown as the day it took place, its span's first day: the span runs on to
    the next session's start so that the search's date filter covers what was said between
    sessions, but to the answerer "8 May 2023 → 25 May 2023" reads as two dates where the
    rules ask it to count from one (and costs a third of the evidence's tokens). Persons that
    only repeat the speaker already naming the content ("Tim: ...") are left out too.
    """
    content = memory.content.strip()
    lines = [f"[M{memory.id}] {content}", f"  session: {spoken_day(memory.session_start, tz)}"]
    if memory.event_start is not None:
        lines.append(f"  event: {_event_text(memory, tz)}")
    if memory.location:
        lines.append(f"  location: {memory.location}")
    if memory.persons and not _names_only_the_speaker(content, memory.persons):
        lines.append(f"  persons: {', '.join(memory.persons)}")
    if memory.entities:
        lines.append(f"  entities: {', '.join(memory.entities)}")
    if memory.topic:
        lines.append(f"  topic: {memory.topic}")
    return "\n".join(lines)


def _names_only_the_speaker(content: str, persons: Sequence[str]) -> bool:
    """``persons`` is one name and the content opens with it as its speaker ("Tim: ...")."""
    return len(persons) == 1 and content.startswith(f"{persons[0]}:")


def _event_text(memory: MemoryRecord, tz: tzinfo) -> str:
    """An event range as days; a zero-length range (a point in time) is its own day."""
    start, end = memory.event_start, memory.event_end
    if start is None:
        return ""
    if end is None or end <= start:
        return spoken_day(start, tz)
    return span_text(start, end, tz, spoken=True)


def format_evidence(
    candidates: Sequence[Candidate], tz: tzinfo, *, char_budget: int = 6000
) -> tuple[str, list[int]]:
    """The evidence text and the ids of the memories in it, in rank order.

    Packing stops at the first block that does not fit: skipping it to squeeze in a smaller,
    lower-ranked one would show the model a ranking that retrieval never produced. The first
    block is always shown, cut to the budget if needed, so a long top memory never empties the
    evidence. Memories without a store id are left out: the model could not cite them.
    """
    separator = "\n\n"
    blocks: list[str] = []
    shown: list[int] = []
    used = 0
    for candidate in candidates:
        memory = candidate.memory
        if memory.id is None or memory.id in shown:
            continue
        block = memory_block(memory, tz)
        cost = len(block) + (len(separator) if blocks else 0)
        if used + cost > char_budget:
            if blocks:
                break
            block = _cut(block, char_budget)
            cost = len(block)
        blocks.append(block)
        shown.append(memory.id)
        used += cost
    return separator.join(blocks), shown


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(TRUNCATION_MARK))] + TRUNCATION_MARK


def answer_schema(shown_ids: Sequence[int]) -> dict:
    """``{reasoning, answer, citations}``; citations can only name the ids shown.

    ``reasoning`` comes first so the model writes it before committing to an answer.
    """
    if not shown_ids:
        raise ValueError("an answer schema needs at least one shown memory id")
    return obj(
        {
            "reasoning": string(600),
            "answer": string(300),
            "citations": array(enum(list(dict.fromkeys(int(i) for i in shown_ids))), MAX_CITATIONS),
        }
    )


def answer_messages(question: str, evidence: str, reference_text: str) -> list[dict]:
    """The chat for one answer: fixed rules, then memories before the question they serve."""
    user = f"Memories:\n\n{evidence}\n\nQuestion (asked on {reference_text}): {question.strip()}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def reference_day_text(reference_time: int, tz: tzinfo) -> str:
    """The question's reference time as the model should read it: weekday and date."""
    moment = datetime.fromtimestamp(reference_time, tz=tz)
    return f"{moment.strftime('%A')} {spoken_date(moment.date())}"


class AnswerText:
    """The ``answer`` field of a reply, read as the reply streams in: :meth:`feed` takes the
    next piece of the reply's JSON and returns what the answer gained, decoded (escapes
    included, one cut between two pieces waiting for its end).

    The schema puts ``reasoning`` first, so the answer starts after it; a ``"answer"`` inside
    the reasoning's string is text, not the key."""

    KEY = '"answer"'

    def __init__(self) -> None:
        self.reply = ""
        self.shown = ""  # what feed has returned so far, decoded

    def feed(self, piece: str) -> str:
        self.reply += piece
        raw = self._raw_answer()
        if raw is None:
            return ""
        decoded = _decoded_prefix(raw)
        new = decoded[len(self.shown):]
        self.shown = decoded
        return new

    def _raw_answer(self) -> str | None:
        """The answer's string as written so far, without its quotes; None before it."""
        start = _value_start(self.reply, self.KEY)
        if start is None:
            return None
        return self.reply[start:_string_end(self.reply, start - 1)]  # to the end while open


def _value_start(reply: str, key: str) -> int | None:
    """Where the string value of top-level ``key`` starts (after its opening quote), skipping
    strings: the reasoning may say anything."""
    position, depth = 0, 0
    while position < len(reply):
        char = reply[position]
        if char == '"':
            end = _string_end(reply, position)
            if end is None:
                return None
            if depth == 1 and reply[position:end + 1] == key:
                rest = reply[end + 1:]
                stripped = rest.lstrip()
                if stripped.startswith(":"):
                    value = stripped[1:].lstrip()
                    if value.startswith('"'):
                        return len(reply) - len(value) + 1
                return None
            position = end + 1
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        position += 1
    return None


def _string_end(text: str, start: int) -> int | None:
    """The index of the quote closing the string that opens at ``start``; None if open."""
    position = start + 1
    while position < len(text):
        if text[position] == "\\":
            position += 2
            continue
        if text[position] == '"':
            return position
        position += 1
    return None


def _decoded_prefix(raw: str) -> str:
    """The longest decodable start of a JSON string's inside: an escape cut at the end
    (``\\``, ``\\u00``) waits for its next piece."""
    for cut in range(len(raw), max(len(raw) - 6, -1), -1):
        try:
            return json.loads('"' + raw[:cut] + '"')
        except ValueError:
            continue
    return ""


def call_record(stage: str, result: LLMResult) -> LLMCall:
    """The per-call accounting kept in ``Trace.llm_calls``."""
    return result.accounting(stage)


def generate_answer(
    llm: LLM,
    question: str,
    frame: RecallFrame,
    candidates: Sequence[Candidate],
    tz: tzinfo,
    *,
    char_budget: int = 6000,
    max_tokens: int = 512,
    reference_text: str | None = None,
    trace: Trace | None = None,
    participants: Sequence[str] = (),
    reporters: Callable[[Sequence[int]], Mapping[int, Collection[str]]] | None = None,
    on_answer_text: Callable[[str], None] | None = None,
) -> Answer:
    """Answer ``question`` from ``candidates`` (best first), or abstain with a reason.

    ``reference_text`` overrides how the question's date is shown to the model (default: the
    frame's reference time as "Monday 8 May 2023"). ``trace`` (e.g. the retrieval trace) is
    extended in place with the call, the ids shown and the time taken; without it a fresh trace
    holding ``frame`` is used. No memories to show means no model call at all. With the
    conversation's ``participants`` and ``reporters`` (``Store.reporters``), an answer about
    one participant must cite something that participant said (``person_not_cited``).
    ``on_answer_text`` receives the answer's words as the model writes them (``AnswerText``),
    before the checks: the returned ``Answer`` says whether they stand.
    """
    trace = trace if trace is not None else Trace(frame=frame)
    evidence_text, shown = format_evidence(candidates, tz, char_budget=char_budget)
    by_id = {c.memory.id: c for c in reversed(candidates)}
    evidence = [by_id[i] for i in shown]
    trace.shown_memory_ids = list(shown)
    if not shown:
        reason = (
            "no memories were retrieved for this question"
            if not candidates
            else "none of the retrieved memories has a store id the model could cite"
        )
        return _abstain(question, reason, [], trace)

    reference = reference_text or reference_day_text(frame.reference_time, tz)
    started = time.perf_counter()
    streaming: dict[str, Callable[[str], None]] = {}
    if on_answer_text is not None:  # (an LLM is asked to stream only when someone reads it)
        streamed, show = AnswerText(), on_answer_text

        def on_text(piece: str) -> None:
            if words := streamed.feed(piece):
                show(words)

        streaming["on_text"] = on_text
    result = llm.chat_json(
        answer_messages(question, evidence_text, reference),
        answer_schema(shown),
        max_tokens=max_tokens,
        temperature=0.0,
        **streaming,
    )
    trace.timings_ms["answer"] = round((time.perf_counter() - started) * 1000, 2)
    trace.llm_calls.append(call_record("answer", result))
    if result.error is not None or result.data is None:
        reason = f"the model failed to produce an answer ({result.error})"
        return _abstain(question, reason, evidence, trace)
    answer = _judge(question, result.data, shown, evidence, trace)
    if answer.abstained or reporters is None:
        return answer
    unsupported = person_not_cited(question, answer.citations, participants, reporters)
    if unsupported is None:
        return answer
    person, said_by = unsupported
    why = (f"the model's answer {answer.answer!r} cites nothing {person} said "
           f"({' and '.join(sorted(said_by)) or 'only questions'} said what it cites), and "
           f"the question asks about {person}")
    trace.notes.append(f"answer withheld: {why}")
    return _abstain(question, f"{why}. {answer.reasoning}".strip(), evidence, trace)


def person_not_cited(question: str, citations: Sequence[int], participants: Sequence[str],
                     reporters: Callable[[Sequence[int]], Mapping[int, Collection[str]]]
                     ) -> tuple[str, set[str]] | None:
    """The one participant the question names (``names.participants_named``), with who did
    say what is cited, when no cited memory rests on that participant's own report
    (``Store.reporters``: a source turn of theirs that is not only a question); None when the
    question names none or several, or a cited memory is theirs.

    A question about one speaker is answered by what that speaker said. LoCoMo's adversarial
    questions swap the speaker ("What country is Melanie's grandma from?": Caroline's
    grandma), and a small model answers them from the other speaker's turns ("Sweden",
    citing Caroline's "a gift from my grandma in my home country, Sweden"); measured on the
    Qwen runs of results/llm-subset-qwen.txt."""
    named = participants_named(question, participants)
    if len(named) != 1:
        return None
    said_by = {speaker for speakers in reporters(citations).values() for speaker in speakers}
    if named[0].casefold() in {speaker.casefold() for speaker in said_by}:
        return None
    return named[0], said_by


def _judge(
    question: str, data: dict, shown: list[int], evidence: list[Candidate], trace: Trace
) -> Answer:
    """Accept a cited answer; turn "not in memory" or an uncited answer into an abstention."""
    reasoning = str(data.get("reasoning", "")).strip()
    text = str(data.get("answer", "")).strip()
    citations = _valid_citations(data.get("citations", []), shown)
    if is_abstention(text):
        return _abstain(
            question, reasoning or "the memories do not contain the answer", evidence, trace
        )
    if not citations:
        trace.notes.append(f"answer withheld: the model cited no memory shown for {text!r}")
        why = f"the model's answer {text!r} cited no memory shown"
        return _abstain(question, f"{why}. {reasoning}".strip(), evidence, trace)
    return Answer(question, text, False, reasoning, citations, evidence, trace)


def _valid_citations(raw: object, shown: Sequence[int]) -> list[int]:
    """Cited ids that were shown, in the model's order, once each (the schema should already
    guarantee this; a runtime without grammar support might not)."""
    if not isinstance(raw, list):
        return []
    allowed = set(shown)
    valid = [
        int(item)
        for item in raw
        if isinstance(item, (int, float)) and not isinstance(item, bool) and item in allowed
    ]
    return list(dict.fromkeys(valid))


def _abstain(question: str, reason: str, evidence: list[Candidate], trace: Trace) -> Answer:
    return Answer(question, NOT_IN_MEMORY, True, reason, [], evidence, trace)
