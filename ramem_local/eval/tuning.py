"""Retrieval choices an evaluation can vary, so that each default is measured on against off
with the same command. The defaults are exactly what ``Memory.search`` uses with the library's
``SearchDefaults`` (``ramem search`` without a config file)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import RecallFrame, RetrievalSettings, SearchDefaults, SearchResponse, When

if TYPE_CHECKING:  # the api loads numpy and dateparser: not for `ramem --help`
    from .. import Memory


@dataclass(frozen=True)
class SearchTuning:
    depth: int = RetrievalSettings.depth  # candidates per source list before fusion
    buffer_days: float = SearchDefaults.buffer_days
    buffer_after_days: float | None = None  # None: the same as buffer_days
    recent_days: int = 0  # "recently" first: off, as in ``Memory.frame`` (tested)
    neighbour_weight: float = RetrievalSettings.neighbour_weight
    event_time_first: bool = RetrievalSettings.event_time_first
    fill_missing_ranks: bool = RetrievalSettings.fill_missing_ranks
    fill_content_ranks: bool = RetrievalSettings.fill_content_ranks
    drop_repeated_turns: bool = RetrievalSettings.drop_repeated_turns
    dense_index: str = RetrievalSettings.dense_index
    candidates: int = RetrievalSettings.candidates
    centre_query: bool = RetrievalSettings.centre_query
    speaker_name_weight: float = RetrievalSettings.speaker_name_weight
    multi_step: bool = RetrievalSettings.multi_step
    count_expansion: bool = RetrievalSettings.count_expansion
    count_by_verbs: bool = RetrievalSettings.count_by_verbs
    range_feedback: bool = RetrievalSettings.range_feedback
    kind_neighbourhood: float = RetrievalSettings.kind_neighbourhood
    anchor_by_meaning: bool = RetrievalSettings.anchor_by_meaning
    kind_walk: bool = RetrievalSettings.kind_walk
    kind_in_range: str = RetrievalSettings.kind_in_range
    proximity_prior: bool = RetrievalSettings.proximity_prior
    time_words_in_range: bool = RetrievalSettings.time_words_in_range
    cue_sessions: bool = RetrievalSettings.cue_sessions

    def describe(self) -> str:
        after = self.buffer_after_days
        if after is None or after == self.buffer_days:
            buffer = f"buffer ±{self.buffer_days:g} d"
        else:
            buffer = f"buffer -{self.buffer_days:g}/+{after:g} d"
        parts = [buffer, f"neighbour weight {self.neighbour_weight:g}", f"depth {self.depth}"]
        if self.event_time_first:
            parts.append("event time first")
        if self.fill_missing_ranks:
            parts.append("missing ranks filled")
        if self.fill_content_ranks:
            parts.append("missing content ranks filled")
        if not self.drop_repeated_turns:
            parts.append("turns beside their extracted memory kept")
        if self.dense_index == "exact":
            dense = "dense exact"
        elif self.dense_index == "int8":  # what the store scores exactly (docs/performance.md)
            dense = (f"dense int8 (pools up to {self.candidates} whole, else the "
                     "max(2 x depth, 50) nearest rescored)")
        else:
            dense = f"dense {self.dense_index} ({self.candidates} rescored)"
        parts.append(dense + (", centred query" if self.centre_query else ", raw query"))
        parts.append(f"speaker names weigh {self.speaker_name_weight:g} in the dense query")
        if not self.range_feedback:
            parts.append("the question alone inside a range (no range feedback)")
        if self.recent_days:
            parts.append(f"'recently' = last {self.recent_days} d first")
        if not self.anchor_by_meaning:
            parts.append("event anchors by fused rank")
        if not self.kind_walk:
            parts.append("no kind walk (orders by the rarest word)")
        if self.time_words_in_range != RetrievalSettings.time_words_in_range:
            parts.append("time words in the range's lexical list "
                         + ("on" if self.time_words_in_range else "off"))
        if self.proximity_prior != RetrievalSettings.proximity_prior:
            parts.append("proximity " + ("a prior" if self.proximity_prior else "a wall"))
        if self.cue_sessions != RetrievalSettings.cue_sessions:
            parts.append("relative cues read against the sessions that said them "
                         + ("on" if self.cue_sessions else "off"))
        if self.kind_in_range != RetrievalSettings.kind_in_range:
            parts.append(f"kind in range {self.kind_in_range}")
        if not self.multi_step:
            parts.append("no multi-step (order, counts, event anchors off)")
        elif not self.count_expansion:
            parts.append("counts without expansion")
        elif not self.count_by_verbs:
            parts.append("counts without the counted reports' verbs")
        elif self.kind_neighbourhood != RetrievalSettings.kind_neighbourhood:
            parts.append(f"count kind read from the closest {self.kind_neighbourhood:g} of pairs"
                         if self.kind_neighbourhood else "count kind read from each report alone")
        return " · ".join(parts)

    def retrieval_settings(self, *, k: int, mode: str) -> RetrievalSettings:
        """The settings ``Memory.search`` runs with under this tuning (the defaults: those it
        builds itself for ``k`` and ``mode``)."""
        return RetrievalSettings(
            k=k, depth=max(self.depth, k), mode=mode, neighbour_weight=self.neighbour_weight,
            event_time_first=self.event_time_first,
            fill_missing_ranks=self.fill_missing_ranks,
            fill_content_ranks=self.fill_content_ranks,
            drop_repeated_turns=self.drop_repeated_turns, dense_index=self.dense_index,
            candidates=max(self.candidates, self.depth, k), centre_query=self.centre_query,
            speaker_name_weight=self.speaker_name_weight,
            multi_step=self.multi_step, count_expansion=self.count_expansion,
            count_by_verbs=self.count_by_verbs, range_feedback=self.range_feedback,
            kind_neighbourhood=self.kind_neighbourhood,
            anchor_by_meaning=self.anchor_by_meaning, kind_walk=self.kind_walk,
            kind_in_range=self.kind_in_range, proximity_prior=self.proximity_prior,
            time_words_in_range=self.time_words_in_range, cue_sessions=self.cue_sessions,
        )

    def frame(self, memory: Memory, question: str, *, mode: str,
              as_of: When | None = None) -> RecallFrame:
        """``Memory.frame`` with this tuning's buffer, 'recently' and multi-step choices."""
        return memory.frame(question, as_of=as_of, buffer_days=self.buffer_days,
                            buffer_after_days=self.buffer_after_days,
                            recent_days=self.recent_days,
                            multi_step=self.multi_step and mode == "ramem")


def tuned_search(memory: Memory, question: str, *, k: int, mode: str, tuning: SearchTuning,
                 as_of: When | None = None) -> SearchResponse:
    """``Memory.search`` with the tuning's frame and settings; with the defaults it returns
    what ``memory.search(question, k=k, mode=mode, as_of=as_of)`` returns (tested)."""
    return memory.search(question, settings=tuning.retrieval_settings(k=k, mode=mode),
                         frame=tuning.frame(memory, question, mode=mode, as_of=as_of))


DEFAULT_TUNING = SearchTuning()
