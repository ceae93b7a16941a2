"""LoCoMo questions and their evidence.

LoCoMo's ``evidence`` lists are dirty: several ids in one string ("D8:6; D9:17", "D9:1 D4:4"),
mistyped ids ("D:11:26", "D30:05"), and ids that name no turn of the sample. Retrieval hits are
defined by evidence (DESIGN.md §7), so a dirty id would silently count a question as missed;
:func:`normalise_evidence` repairs what can be repaired, drops the rest, and *counts* each kind of
repair so reports can state how much the data was touched. The raw list is kept on every question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ramem_local import load_locomo_samples, locomo_sample_name, locomo_session_turns
from ramem_local.errors import FormatError

CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
HEADLINE_CATEGORIES = frozenset({1, 2, 3, 4})  # category 5 (adversarial) is reported apart

_SEPARATORS = re.compile(r"[;,\s]+")
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)


@dataclass
class LocomoQuestion:
    sample_id: str
    question_index: int  # 0-based position in the sample's ``qa`` list (all categories)
    question: str
    answer: str | None
    adversarial_answer: str | None
    category: int
    evidence: list[str]  # normalised: canonical ids of turns of this sample, deduplicated
    raw_evidence: list  # as found in the file


@dataclass
class RepairCounts:
    """How many evidence entries/ids needed each kind of repair.

    ``split``: raw entries holding several ids; ``reformatted``: ids rewritten to canonical
    ``D<session>:<turn>``; ``dropped``: ids that are not turns of the sample; ``duplicates``: ids
    repeated within one question.
    """

    split: int = 0
    reformatted: int = 0
    dropped: int = 0
    duplicates: int = 0

    def __add__(self, other: RepairCounts) -> RepairCounts:
        return RepairCounts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def canonical_dia_id(text: str) -> str:
    """``"D:11:26"`` → ``"D11:26"``, ``"D30:05"`` → ``"D30:5"``; anything else is returned as is."""
    match = _DIA_ID.fullmatch(text)
    if match is None:
        return text
    return f"D{int(match.group(1))}:{int(match.group(2))}"


def normalise_evidence(raw: list, known_ids: set[str]) -> tuple[list[str], RepairCounts]:
    """Split, reformat, filter to ``known_ids`` and deduplicate (keeping order) LoCoMo evidence."""
    counts = RepairCounts()
    kept: list[str] = []
    for entry in raw:
        pieces = [piece for piece in _SEPARATORS.split(str(entry)) if piece]
        if len(pieces) > 1:
            counts.split += 1
        for piece in pieces:
            dia_id = canonical_dia_id(piece)
            if dia_id != piece:
                counts.reformatted += 1
            if dia_id not in known_ids:
                counts.dropped += 1
            elif dia_id in kept:
                counts.duplicates += 1
            else:
                kept.append(dia_id)
    return kept, counts


def load_questions(path: Path) -> dict[str, list[LocomoQuestion]]:
    """All questions of a LoCoMo file, by sample id, with normalised evidence."""
    questions, _ = load_questions_with_repairs(path)
    return questions


def load_questions_with_repairs(
    path: Path,
) -> tuple[dict[str, list[LocomoQuestion]], RepairCounts]:
    """:func:`load_questions` plus the evidence repairs summed over the file."""
    path = Path(path)
    questions: dict[str, list[LocomoQuestion]] = {}
    total = RepairCounts()
    for index, sample in enumerate(load_locomo_samples(path)):
        name = locomo_sample_name(sample, index, path)
        known_ids = _dia_ids(sample["conversation"])
        qa = sample.get("qa") or []
        if not isinstance(qa, list):
            raise FormatError(f"{name}: 'qa' must be a list", path=path)
        questions[name] = []
        for position, item in enumerate(qa):
            question, counts = _question(item, name, position, known_ids, path)
            questions[name].append(question)
            total += counts
    return questions, total


def _dia_ids(conversation: dict[str, Any]) -> set[str]:
    return {
        turn["dia_id"]
        for _, turns in locomo_session_turns(conversation)
        if isinstance(turns, list)
        for turn in turns
        if isinstance(turn, dict) and isinstance(turn.get("dia_id"), str)
    }


def _question(
    item: Any, name: str, position: int, known_ids: set[str], path: Path
) -> tuple[LocomoQuestion, RepairCounts]:
    where = f"{name} qa[{position}]"
    if not isinstance(item, dict) or not isinstance(item.get("question"), str):
        raise FormatError(f"{where}: expected an object with a 'question' string", path=path)
    category = item.get("category")
    if isinstance(category, bool) or not isinstance(category, int):
        raise FormatError(f"{where}: 'category' must be an integer", path=path)
    raw_evidence = item.get("evidence") or []
    if not isinstance(raw_evidence, list):
        raise FormatError(f"{where}: 'evidence' must be a list", path=path)
    evidence, counts = normalise_evidence(raw_evidence, known_ids)
    question = LocomoQuestion(
        sample_id=name,
        question_index=position,
        question=item["question"],
        answer=_text_or_none(item.get("answer")),
        adversarial_answer=_text_or_none(item.get("adversarial_answer")),
        category=category,
        evidence=evidence,
        raw_evidence=list(raw_evidence),
    )
    return question, counts


def _text_or_none(value: Any) -> str | None:
    """Answers are sometimes numbers in the file (``2022``); metrics compare text."""
    return None if value is None else str(value)
