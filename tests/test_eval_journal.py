"""The synthetic journal benchmark: the generator's guarantees, then small end-to-end runs.

The generator tests are the specification of what the benchmark measures: each question's
evidence is exactly the entry (or entries) its time cue picks, and late entries say truthfully
how late they are. End-to-end runs use short journals, without an embedder or with MiniLM.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date, datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from ramem_local.cli import cli
from ramem_local.eval.journal import (
    FILLER,
    KINDS,
    MONTHS,
    SINGLE_ENTRY_STYLES,
    STYLES,
    WEEKDAYS,
    JournalSpec,
    format_journal_table,
    generate_journal,
    run_journal_eval,
    write_journal_jsonl,
)
from ramem_local.ingest.formats import read_conversations
from ramem_local.recall.timecues import detect_cues, has_temporal_cue

SPEC = JournalSpec(years=1, seed=11, questions_per_style=12)


@pytest.fixture(scope="module")
def journal():
    return generate_journal(SPEC)


def as_of_day(question) -> date:
    return datetime.fromisoformat(question.as_of).date()


# ------------------------------------------------------------------------------- the journal


def test_the_same_seed_writes_the_same_journal_and_another_seed_another():
    first, again = generate_journal(SPEC), generate_journal(SPEC)
    assert first == again
    other = generate_journal(JournalSpec(years=1, seed=12, questions_per_style=12))
    assert [e.text for e in other.entries] != [e.text for e in first.entries]


def test_entries_span_the_journal_one_to_three_events_a_day_in_writing_order(journal):
    entries = journal.entries
    assert entries[0].event_day == SPEC.start == date(2025, 11, 18)
    assert entries[-1].written_day == SPEC.end == date(2026, 11, 17)
    assert len({e.id for e in entries}) == len(entries)
    assert [e.written_at for e in entries] == sorted(e.written_at for e in entries)
    events_per_day = Counter(e.event_day for e in entries)
    days = (SPEC.end - SPEC.start).days + 1
    assert len(events_per_day) == days
    assert set(events_per_day.values()) <= {1, 2, 3}
    assert all(e.id.startswith(f"e{e.written_day.isoformat()}-") for e in entries)


def test_activities_recur_with_varied_details_and_filler_is_common(journal):
    by_kind = Counter(e.kind for e in journal.entries)
    assert set(by_kind) == {*KINDS, FILLER}
    assert all(by_kind[kind] >= 6 for kind in KINDS)  # every few weeks over a year
    assert by_kind[FILLER] > sum(by_kind[kind] for kind in KINDS)
    for kind in KINDS:
        days = sorted(e.event_day for e in journal.entries if e.kind == kind)
        assert min((b - a).days for a, b in zip(days, days[1:], strict=False)) >= 7
        answers = {e.answer for e in journal.entries if e.kind == kind}
        assert len(answers) >= 4  # look-alikes: the same kind, different details


def test_about_fifteen_percent_of_entries_are_written_one_to_three_days_late(journal):
    late = [e for e in journal.entries if e.late_days]
    assert 0.10 <= len(late) / len(journal.entries) <= 0.20
    assert {e.late_days for e in late} == {1, 2, 3}
    for entry in journal.entries:
        assert (entry.written_day - entry.event_day).days == entry.late_days


CUES = {
    "Yesterday": 1,
    "The day before yesterday": 2,
    "Two days ago": 2,
    "Three days ago": 3,
}


def test_a_late_entry_names_its_event_day_with_a_cue_that_matches_its_offset(journal):
    seen = set()
    for entry in journal.entries:
        if not entry.late_days:
            continue
        cue, rest = entry.text.split(" I ", 1)
        assert rest[0].islower()
        weekday = re.fullmatch(r"On (\w+)", cue)
        if weekday:
            assert weekday.group(1) == WEEKDAYS[entry.event_day.weekday()]
            seen.add("weekday")
        else:
            assert CUES[cue] == entry.late_days, entry.text
            seen.add(cue)
    assert seen == {"weekday", *CUES}


def test_only_late_entries_carry_a_time_cue_and_it_grounds_to_their_event_day(journal):
    """The product's cue detector must read the journal as the generator meant it."""
    for entry in journal.entries:
        if not entry.late_days:
            assert not has_temporal_cue(entry.text), entry.text
            continue
        cues = detect_cues(entry.text, entry.written_at)
        assert len(cues) == 1, entry.text
        grounded = datetime.fromtimestamp(cues[0].range.start, tz=timezone.utc).date()
        assert grounded == entry.event_day, entry.text


def test_the_jsonl_is_read_by_the_product_with_one_session_per_writing_day(journal, tmp_path):
    path = journal.write_jsonl(tmp_path / "journal.jsonl")
    [conversation] = read_conversations(path)
    assert conversation.name == "journal"
    assert conversation.participants == ["me"]
    assert [t.external_id for t in conversation.turns] == [e.id for e in journal.entries]
    assert len(conversation.sessions) == len({e.written_day for e in journal.entries})


def test_short_journals_by_days_and_bad_specs():
    short = generate_journal(JournalSpec(days=30, seed=3, questions_per_style=5))
    assert short.entries[0].event_day == date(2026, 10, 19)
    assert short.spec.label == "30d"
    with pytest.raises(ValueError):
        generate_journal(JournalSpec(days=3))


# ------------------------------------------------------------------------------ the questions


def test_each_style_gets_its_share_of_questions(journal):
    counts = Counter(q.style for q in journal.questions)
    assert counts == {style: SPEC.questions_per_style for style in STYLES}
    assert len({q.id for q in journal.questions}) == len(journal.questions)
    assert len({(q.style, q.question, q.as_of) for q in journal.questions}) == len(
        journal.questions)


WORDING = {
    "hike": ("Where did I go hiking", "Which trail did I hike"),
    "meal": ("What did I cook", "What dish did I make"),
    "book": ("Which book did I start", "What book did I begin reading"),
    "film": ("Which film did I watch", "What movie did I see"),
    "repair": ("What did I repair", "What did I fix"),
    "concert": ("Which band did I see live", "Which concert did I go to"),
    "visit": ("Who did I visit", "Who did I go to see"),
}


def test_single_entry_questions_are_worded_for_their_kind():
    many = generate_journal(JournalSpec(years=1, seed=11, questions_per_style=40))
    kinds = set()
    for question in many.questions:
        if question.kind is not None:
            kinds.add(question.kind)
            assert question.question.startswith(WORDING[question.kind]), question.question
    assert kinds == set(KINDS)


def asked_range(question) -> tuple[date, date]:
    """The range a question's cue picks, read back from its text and as_of."""
    text, reference = question.question, as_of_day(question)
    if question.style == "date" or "did I do on" in text:
        match = re.search(r"on (\d+) (\w+) (\d{4})\?$", text)
        day = date(int(match[3]), MONTHS.index(match[2]) + 1, int(match[1]))
        return day, day
    if text.endswith("yesterday?"):
        return (reference - timedelta(days=1),) * 2
    if text.endswith("days ago?"):
        ago = int(re.search(r"(\d) days ago\?$", text)[1])
        assert 2 <= ago <= 6
        return (reference - timedelta(days=ago),) * 2
    if question.style == "month_part":
        part, month, year = re.search(r"in (early|mid|late) (\w+) (\d{4})\?$", text).groups()
        first = {"early": 1, "mid": 11, "late": 21}[part]
        start = date(int(year), MONTHS.index(month) + 1, first)
        last = start.replace(day=10) if part == "early" else start.replace(day=20)
        if part == "late":
            last = (start.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
        return start, last
    assert text.endswith("last weekend?")
    assert reference.weekday() < 5  # asked on a weekday of the following week
    saturday = reference - timedelta(days=reference.weekday() + 2)
    return saturday, saturday + timedelta(days=1)


@pytest.mark.parametrize("style", SINGLE_ENTRY_STYLES)
def test_single_entry_evidence_is_the_one_entry_of_that_kind_in_the_asked_range(journal, style):
    entries = {e.id: e for e in journal.entries}
    questions = [q for q in journal.questions if q.style == style]
    assert questions
    for question in questions:
        first, last = asked_range(question)
        assert (first, last) == (question.first_day, question.last_day)
        assert as_of_day(question) <= SPEC.end
        [evidence] = question.evidence
        assert entries[evidence].kind == question.kind
        assert entries[evidence].answer == question.answer
        of_kind_in_range = [e.id for e in journal.entries
                            if e.kind == question.kind and first <= e.event_day <= last]
        assert of_kind_in_range == [evidence], question.question


def test_as_of_follows_the_style_and_the_evidence_is_written_by_then(journal):
    written = {e.id: e.written_day for e in journal.entries}
    for question in journal.questions:
        reference = as_of_day(question)
        assert all(written[e] <= reference for e in question.evidence), question
        if question.style in ("date", "month_part"):
            assert reference == SPEC.end
        elif question.style == "yesterday":
            assert reference == question.first_day + timedelta(days=1)
        elif question.style == "days_ago":
            assert 2 <= (reference - question.first_day).days <= 6


def test_time_only_evidence_is_every_entry_of_the_day_late_ones_included(journal):
    questions = [q for q in journal.questions if q.style == "time_only"]
    variants = set()
    for question in questions:
        first, last = asked_range(question)
        assert first == last == question.first_day
        expected = {e.id for e in journal.entries if e.event_day == first}
        assert set(question.evidence) == expected
        variants.add(re.sub(r"\d+", "N", question.question.split(" ", 3)[-1]))
    assert len(variants) >= 2
    many = generate_journal(JournalSpec(years=1, seed=11, questions_per_style=40))
    late_in_evidence = [
        q for q in many.questions if q.style == "time_only"
        and any(e.late_days for e in many.entries if e.id in q.evidence)]
    assert late_in_evidence


# ------------------------------------------------------------------------------ the evaluation


def check_summary(result, label: str) -> None:
    summary = result.summary()
    assert list(summary) == [label]
    block = summary[label]
    assert block["entries"] > 0 and block["ingest_seconds"] >= 0
    assert set(block["modes"]) == set(result.modes)
    for mode, groups in block["modes"].items():
        assert list(groups) == [*STYLES, "overall"]
        assert groups["overall"]["n"] == sum(groups[s]["n"] for s in STYLES)
        assert block["median_search_ms"][mode] > 0
        for style in STYLES:
            assert groups[style]["n"] > 0
            for metric in result.metric_names:
                value = groups[style][metric]
                assert 0.0 <= value <= 1.0
            # every evidence entry in the top K implies a hit in the top K implies nothing less
            assert groups[style]["AllR@10"] <= groups[style]["R@10"]
            assert groups[style]["R@1"] <= groups[style]["R@10"]


def test_a_short_journal_end_to_end_without_an_embedder(tmp_path):
    spec = JournalSpec(days=60, seed=5, questions_per_style=4)
    result = run_journal_eval([spec], None, modes=("ramem", "baseline"), k=10)
    assert result.embedder == "none (BM25 only)"
    journal = generate_journal(spec)
    assert len(result.results) == 2 * len(journal.questions)
    check_summary(result, "60d")
    row = result.results[0]
    assert len(row.retrieved) <= 10
    assert row.first_hit_rank is None or row.metrics["R@10"] == 1.0

    table = format_journal_table(result)
    for word in (*STYLES, "overall", "R@1 ramem", "AllR@10 baseline", "60d: "):
        assert word in table
    out = tmp_path / "rows.jsonl"
    write_journal_jsonl(result, out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == len(result.results)
    assert {"question", "as_of", "evidence", "retrieved", "metrics", "mode"} <= set(rows[0])


@pytest.mark.real_model
def test_a_short_journal_end_to_end_with_minilm(minilm_dir, tmp_path):
    spec = JournalSpec(days=45, seed=9, questions_per_style=3)
    result = run_journal_eval([spec], minilm_dir, modes=("ramem",), k=10, bank_dir=tmp_path)
    assert "MiniLM" in result.embedder or "minilm" in result.embedder.lower()
    check_summary(result, "45d")
    assert (tmp_path / "journal-45d-seed9.jsonl").is_file()
    assert (tmp_path / "journal-45d-seed9-dense.db").is_file()


def test_the_cli_prints_the_header_and_the_table(tmp_path):
    out = tmp_path / "rows.jsonl"
    result = CliRunner().invoke(
        cli, ["eval", "journal", "--days", "40", "--per-style", "2", "--seed", "3",
              "--out", str(out)], prog_name="ramem")
    assert result.exit_code == 0, result.output
    assert "journal retrieval · synthetic, seed 3" in result.output
    assert "embedder none (BM25 only) · K=10 · modes ramem, baseline" in result.output
    assert "40d: 2026-10-09 to 2026-11-17" in result.output
    assert "last_weekend" in result.output and "overall" in result.output
    assert out.read_text().count("\n") == 2 * 2 * len(STYLES)


def test_the_cli_prints_json_and_rejects_bad_years():
    runner = CliRunner()
    result = runner.invoke(cli, ["eval", "journal", "--days", "30", "--per-style", "1",
                                 "--mode", "ramem", "--k", "5", "--json"], prog_name="ramem")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["modes"] == ["ramem"] and data["k"] == 5
    assert set(data["summary"]["30d"]["modes"]["ramem"]["overall"]) == {
        "n", "R@1", "R@5", "AllR@5"}
    bad = runner.invoke(cli, ["eval", "journal", "--years", "1,x"], prog_name="ramem")
    assert bad.exit_code == 2 and "comma-separated years" in bad.output
