"""Turning results into JSON-ready dicts and terminal text (no SQL, no model calls)."""

from __future__ import annotations

from datetime import date, datetime, tzinfo
from typing import Any

from .text import NOT_IN_MEMORY, is_abstention
from .types import (
    Answer,
    Candidate,
    EventAnchor,
    ForgetReport,
    LLMCall,
    MemoryRecord,
    RecallFrame,
    SearchResponse,
    TimeCue,
    TimelineDay,
    TimeRange,
    Trace,
)


def iso_time(ts: int | None, tz: tzinfo) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=tz).isoformat()


MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")  # not the locale's


def day(ts: int | None, tz: tzinfo) -> str:
    return "" if ts is None else datetime.fromtimestamp(ts, tz=tz).strftime("%Y-%m-%d")


def spoken_date(value: date) -> str:
    """'7 May 2023': how people (and LoCoMo's answers) write a day."""
    return f"{value.day} {MONTH_NAMES[value.month - 1]} {value.year}"


def spoken_day(ts: int | None, tz: tzinfo) -> str:
    return "" if ts is None else spoken_date(datetime.fromtimestamp(ts, tz=tz).date())


def span_text(start: int, end: int, tz: tzinfo, *, spoken: bool = False) -> str:
    """Human span of a half-open range: '2023-05-08' or '2023-05-08 → 2023-05-24' (with
    ``spoken``: '8 May 2023 → 24 May 2023')."""
    day_text = spoken_day if spoken else day
    last_day = day_text(end - 1, tz)
    first_day = day_text(start, tz)
    return first_day if first_day == last_day else f"{first_day} → {last_day}"


def range_dict(value: TimeRange | None, tz: tzinfo) -> dict | None:
    if value is None:
        return None
    return {"start": iso_time(value.start, tz), "end": iso_time(value.end, tz)}


def memory_dict(memory: MemoryRecord, tz: tzinfo) -> dict:
    return {
        "id": memory.id,
        "content": memory.content,
        "kind": memory.kind,
        "conversation": memory.conversation,
        "session_start": iso_time(memory.session_start, tz),
        "session_end": iso_time(memory.session_end, tz),
        "event_start": iso_time(memory.event_start, tz),
        "event_end": iso_time(memory.event_end, tz),
        "persons": memory.persons,
        "keywords": memory.keywords,
        "entities": memory.entities,
        "location": memory.location,
        "topic": memory.topic,
        "source_turns": memory.source_turns,
    }


def candidate_dict(candidate: Candidate, rank: int, tz: tzinfo) -> dict:
    return {
        **memory_dict(candidate.memory, tz),
        "rank": rank,
        "score": round(candidate.score, 6),
        "list": candidate.list_name,
        "dense_rank": candidate.dense_rank,
        "bm25_rank": candidate.bm25_rank,
        "fused_rank": candidate.fused_rank,
        "tier": candidate.tier,
        "gap_days": None if candidate.gap_days is None else round(candidate.gap_days, 2),
    }


def frame_dict(frame: RecallFrame, tz: tzinfo) -> dict:
    return {
        "question": frame.question,
        "need": frame.need,
        "reference_time": iso_time(frame.reference_time, tz),
        "cues": [cue_dict(c, tz) for c in frame.cues],
        "time_range": range_dict(frame.time_range, tz),
        "widened_range": range_dict(frame.widened_range, tz),
        "buffer_days": frame.buffer_days,
        "persons": frame.persons,
        "guard": frame.guard,
        "guard_reason": frame.guard_reason,
        "source": frame.source,
        "keywords": frame.keywords,
        "entities": frame.entities,
        "locations": frame.locations,
        "topic": frame.topic,
        "llm_proposal": frame.llm_proposal,
        "order": frame.order,
        "counting": frame.counting,
        "anchor": anchor_dict(frame.anchor, tz),
        "other_end": (cue_dict(frame.other_end, tz) if isinstance(frame.other_end, TimeCue)
                      else anchor_dict(frame.other_end, tz)),
        "as_of": iso_time(frame.as_of, tz),
        "not_dates": frame.not_dates,
    }


def cue_dict(cue: TimeCue, tz: tzinfo) -> dict:
    return {"text": cue.text, "rule": cue.rule, "range": range_dict(cue.range, tz)}


def anchor_dict(anchor: EventAnchor | None, tz: tzinfo) -> dict | None:
    if anchor is None:
        return None
    return {"text": anchor.text, "phrase": anchor.phrase, "relation": anchor.relation,
            "memory_id": anchor.memory_id, "time": iso_time(anchor.time, tz),
            "last_time": iso_time(anchor.last_time, tz), "confident": anchor.confident}


def reading_lines(response: SearchResponse, tz: tzinfo) -> list[str]:
    """How the question was read, one line each, before the results: the time range, an
    order, a count, the as-of cut."""
    frame = response.trace.frame
    if frame is None:
        return []
    lines = []
    if frame.guard == "filter" and frame.time_range is not None:
        lines.append(f"time: {span_text(frame.time_range.start, frame.time_range.end, tz)} "
                     f"({frame.guard_reason}; ±{frame.buffer_days:g} days)")
    elif frame.guard in ("prefer_recent", "no_filter") and frame.anchor is not None:
        lines.append(f"time: {frame.guard_reason}")
    elif frame.guard == "prefer_recent":
        lines.append(f"time: {frame.guard_reason}")
    lines.extend(f"time: {text!r} is no date: not read as one" for text in frame.not_dates)
    if frame.order is not None:
        how = next((n.removeprefix("order: ") for n in response.trace.notes
                    if n.startswith("order: ")), "")
        lines.append(f"order: {frame.order} first" + (f" ({how})" if how else ""))
    if response.count is not None:
        more = f", the first {len([c for c in response.results if c.list_name == 'counted'])}"\
            " listed" if response.capped else ""
        noun = "memory matches" if response.count == 1 else "memories match"
        how = next((n.split(" (", 1)[1].removesuffix(")") for n in response.trace.notes
                    if n.startswith("count: ") and " (" in n), "")
        lines.append(f"count: {response.count} {noun}{more}" + (f" ({how})" if how else ""))
    if frame.as_of is not None:
        lines.append(f"as of: {iso_time(frame.as_of, tz)} (nothing written later)")
    return lines


def answer_reading_lines(answer: Answer, tz: tzinfo) -> list[str]:
    """``reading_lines`` of the retrieval an answer was drawn from."""
    return reading_lines(SearchResponse(results=answer.evidence, trace=answer.trace,
                                        count=answer.count, capped=answer.capped), tz)


def after_streamed_answer(streamed: str, answer: Answer) -> list[str]:
    """What ``ask`` prints once the model is done, after the answer's words it streamed
    (``streamed``, possibly nothing): the whole answer when nothing streamed, and where the
    checks turned the words shown into "not in memory", a line saying so."""
    if not answer.abstained:
        return [] if streamed else [answer.answer]
    if not streamed:
        return [NOT_IN_MEMORY]
    if is_abstention(streamed):  # the model said so itself
        return []
    return [f"→ {NOT_IN_MEMORY} (the answer above was withheld)"]


def trace_dict(trace: Trace, results: list[Candidate], tz: tzinfo) -> dict:
    total = LLMCall.total(trace.llm_calls)
    return {
        "mode": trace.mode,
        "dense_index": trace.dense_index,
        "frame": frame_dict(trace.frame, tz) if trace.frame else None,
        "guard": trace.frame.guard if trace.frame else None,
        "guard_reason": trace.frame.guard_reason if trace.frame else None,
        "candidates": [
            {
                "memory_id": c.memory.id,
                "list": c.list_name,
                "dense_rank": c.dense_rank,
                "bm25_rank": c.bm25_rank,
                "fused_rank": c.fused_rank,
                "tier": c.tier,
            }
            for c in results
        ],
        "notes": trace.notes,
        "timings_ms": trace.timings_ms,
        "llm_calls": [call.as_dict() for call in trace.llm_calls],
        "tokens_in": total.tokens_in,
        "tokens_out": total.tokens_out,
        "shown_memory_ids": trace.shown_memory_ids,
    }


def answer_dict(answer: Answer, tz: tzinfo) -> dict:
    return {
        "question": answer.question,
        "answer": answer.answer,
        "abstained": answer.abstained,
        "reasoning": answer.reasoning,
        "citations": answer.citations,
        "count": answer.count,
        "capped": answer.capped,
        "evidence": [candidate_dict(c, i, tz) for i, c in enumerate(answer.evidence, 1)],
        "trace": trace_dict(answer.trace, answer.evidence, tz),
    }


def hanging(prefix: str, text: str) -> str:
    """``prefix`` then ``text``, its later lines indented under its first: a memory of
    several lines (a journal day's paragraph) stays inside its entry of a listing."""
    indent = "\n" + " " * len(prefix)
    return prefix + indent.join(text.splitlines() or [""])


def candidate_lines(candidate: Candidate, rank: int, tz: tzinfo) -> list[str]:
    memory = candidate.memory
    where = f"session {span_text(memory.session_start, memory.session_end, tz)}"
    if memory.event_start is not None and memory.event_end is not None:
        where += f" · event {span_text(memory.event_start, memory.event_end, tz)}"
    turns = ", ".join(memory.source_turns[:6])
    origin = candidate.list_name
    if candidate.tier is not None:
        origin += f", tier {candidate.tier}"
    return [
        hanging(f"{rank:>2}. [{memory.id}] ", memory.content),
        f"    {where} · {memory.conversation} · turns {turns} · {origin} · "
        f"{placement_text(candidate)}",
    ]


def placement_text(candidate: Candidate) -> str:
    """The fused score, or "by time" for a memory that neither list matched and that is
    listed for when it happened (a time-only question, or BM25 alone finding no shared word)."""
    if candidate.list_name == "ordered":
        return "by when it happened"
    if candidate.list_name == "counted":
        return "one of the count"
    if candidate.list_name == "closest":
        return "next closest in the range"
    if candidate.dense_rank is None and candidate.bm25_rank is None:
        return "by time"
    return f"score {candidate.score:.4f}"


def window_line(window: Any, eta_seconds: float | None = None) -> str:
    """One extraction window's outcome, for progress on stderr (with the ETA of the rest)."""
    outcome = window.status + (f" ({window.error})" if window.error else "")
    if window.repaired and window.status != "failed":
        outcome += " (after a second request: every entry of the first reply was refused)"
    if window.cut_short:
        outcome += " (a reply was cut short: the entries it finished are kept)"
    left = window.total - window.index
    eta = f", {left} left, ETA {duration_text(eta_seconds)}" if left else ""
    return (f"  window {window.index}/{window.total} of {window.conversation}: {outcome}, "
            f"{window.memories_new} new memories{eta}")


def extraction_summary(report: Any) -> dict:
    return {
        "windows_total": report.windows_total, "done": report.done, "failed": report.failed,
        "skipped_done": report.skipped_done, "skipped_failed": report.skipped_failed,
        "memories_new": report.memories_new, "not_processed": report.not_processed,
        "stopped_by_budget": report.stopped_by_budget, "llm_calls": report.llm_calls,
        "tokens_in": report.tokens_in,
        "tokens_out": report.tokens_out, "seconds": round(report.seconds, 2),
        "failures": [{"window": w, "error": e} for w, e in report.failures],
    }


def extraction_lines(report: Any) -> tuple[str, list[str]]:
    """The extraction report: one summary line (stdout) and its notes (stderr)."""
    summary = (
        f"extraction: {report.done} window(s) done, {report.failed} failed, "
        f"{report.skipped_done} already done; {report.memories_new} new memories; "
        f"{report.llm_calls} LLM calls, {report.tokens_in} tokens in / {report.tokens_out} out "
        f"in {report.seconds:.1f}s"
    )
    notes = [f"  window {window_id} failed: {error}" for window_id, error in report.failures[:10]]
    if report.skipped_failed:
        notes.append(f"  {report.skipped_failed} window(s) failed in an earlier run and were not "
                     "retried (--retry-failed)")
    if report.failed:
        notes.append("  failed windows keep their turns searchable; retry with --retry-failed")
    if report.not_processed:
        why = "the budget is spent" if report.stopped_by_budget else "--limit reached"
        notes.append(f"  {report.not_processed} window(s) left pending ({why}); "
                     "`ramem --llm M extract` goes on")
    return summary, notes


def stats_lines(data: dict, tz: tzinfo) -> list[str]:
    """``Memory.stats()`` as terminal lines."""
    embedder = data["embedder"]
    lines = [
        f"bank: {data['path']} (schema {data['schema_version']}, timezone {data['timezone']}, "
        f"country {data['country']})",
        f"conversations {data['conversations']} · sessions {data['sessions']} · "
        f"turns {data['turns']} · memories {data['memories']} "
        f"({data['memories_with_event_time']} with event time) · vectors {data['vectors']}",
        "embedder: " + (f"{embedder['name']} ({embedder['dimension']}-d)" if embedder
                        else "none (BM25 only)"),
        "encryption: " + (data["encryption"] or "none"),
    ]
    if data["timeline"]:
        timeline = data["timeline"]
        lines.append(f"timeline: {span_text(timeline['start'], timeline['end'], tz)}")
    lines += queue_lines(data.get("extraction_queue"))
    return lines


def duration_text(seconds: float | None) -> str:
    """"2h05m", "4m10s", "40s" — or "unknown" before any window was measured."""
    if seconds is None:
        return "unknown"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def queue_lines(queue: dict | None) -> list[str]:
    """The extraction queue per conversation, with the ETA of what is pending."""
    if not queue or not queue["conversations"]:
        return []
    lines = [f"extraction windows: pending {queue['pending']}, done {queue['done']}, "
             f"failed {queue['failed']}"]
    for row in queue["conversations"]:
        lines.append(f"  {row['conversation']}: pending {row['pending']}, done {row['done']}, "
                     f"failed {row['failed']}")
    if queue["pending"]:
        rate = queue["seconds_per_window"]
        measured = (f" at {rate:.1f} s/window measured for {queue['rate_model']}"
                    if rate is not None else " (no window measured yet)")
        lines.append(f"pending extraction: ETA {duration_text(queue['eta_seconds'])}{measured}; "
                     "run `ramem --llm M extract [--budget 20m]`")
    if queue["failed"]:
        lines.append("failed windows: retry with `ramem --llm M extract --retry-failed`")
    return lines


def forget_dict(report: ForgetReport, tz: tzinfo) -> dict:
    return {
        "dry_run": report.dry_run,
        "memories": len(report.memory_ids),
        "turns": len(report.turn_ids),
        "conversations_removed": report.conversations,
        "memory_ids": report.memory_ids,
        "listed": [memory_dict(m, tz) for m in report.shown],
        "wal_checkpointed": report.checkpointed,
    }


def forget_lines(report: ForgetReport, tz: tzinfo) -> list[str]:
    """'would forget' / 'forgot' with the counts, then (dry run) the memories that go."""
    if not report:
        return ["nothing to forget"]
    verb = "would forget" if report.dry_run else "forgot"
    lines = [f"{verb} {len(report.memory_ids)} memories and {len(report.turn_ids)} turns"
             + (f"; conversation(s) removed: {', '.join(report.conversations)}"
                if report.conversations else "")]
    if report.dry_run:
        for record in report.shown:
            span = span_text(record.session_start, record.session_end, tz)
            lines.append(hanging(f"  [{record.id}] {span} ", record.content))
        hidden = len(report.memory_ids) - len(report.shown)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more")
    return lines


def timeline_dict(days: list[TimelineDay], tz: tzinfo) -> list[dict]:
    return [
        {"day": day.day, "sessions": [
            {"conversation": session.conversation, "session": session.session_ordinal,
             "session_start": iso_time(session.session_start, tz),
             "memories": [{**memory_dict(entry.memory, tz),
                           "said_at": iso_time(entry.said_at, tz)}
                          for entry in session.entries]}
            for session in day.sessions]}
        for day in days
    ]


def timeline_lines(days: list[TimelineDay], tz: tzinfo) -> list[str]:
    """A day heading, a line per session, a line per memory with the time it was said."""
    lines: list[str] = []
    for day in days:
        weekday = datetime.strptime(day.day, "%Y-%m-%d").strftime("%A")
        lines.append(f"{day.day} {weekday}")
        for session in day.sessions:
            started = datetime.fromtimestamp(session.session_start, tz=tz)
            lines.append(f"  {session.conversation} · session of "
                         f"{started.strftime('%Y-%m-%d %H:%M')}")
            for entry in session.entries:
                said = datetime.fromtimestamp(entry.said_at, tz=tz).strftime("%H:%M")
                lines.append(hanging(f"    {said} [{entry.memory.id}] ", entry.memory.content))
    return lines
