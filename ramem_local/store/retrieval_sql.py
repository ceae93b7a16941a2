"""The retrieval SQL: reciprocal-rank fusion of dense KNN and BM25, and the session-overlap filter.

Three statements, each assembled from named CTE fragments so that one statement does the job:

- the **content list** (:func:`content_statement`): RRF over the whole bank;
- the **context list** (:func:`session_overlap_statement`): *filter first* — both source lists
  are drawn from inside the session-overlap filter (memories whose session span or grounded
  event range overlaps the widened query range), fused there, and ordered by proximity tier;
- the **time-ordered context list** (:func:`session_overlap_by_time_statement`): the memories
  inside the filter in proximity-tier order, then in the order they were said — for a question
  whose only need is its time cue ("What did I do yesterday?").

The fragments:

- ``dense``   : cosine-distance ranks of the float vectors (all of them inside the filters, or
  the candidates the int8 scan drew; distances computed in RAM and handed in as JSON),
  restricted by the same filters as ``lexical``;
- ``lexical`` : FTS5 BM25 ranks of a sanitised OR-query (the neighbours column, the text of the
  turns around a turn memory, weighs less than the memory's own columns);
- ``fused``   : RRF ``Σ 1 / (κ + rank)`` over both lists; at equal score a memory both lists
  found comes first (filled ranks make dense 1 alone tie with dense 2 + BM25 1), then the
  better of its two ranks, then its id;
- ``placed``  : each memory's place relative to the query's raw time range. Proximity tiers:
  0 — said inside the raw range (session start within it) or its event range overlaps it, or
  said in one of the sessions of ``:said_in``;
  1 — only its session's first day reaches into the raw range (``SAID_UNTIL``: a session's
  span, which runs until the next session, lets the memory through the filter but does not
  bring it closer); 2 + d — d whole days of gap. With
  ``:event_time_first`` a memory with a grounded event range is inside the raw range only by
  that range (the time-only list: what *happened* then, not what was told then).

Ranges are half-open ``[start, end)`` Unix seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..types import DAY, DENSE_INDEXES, OTHER, RECEIVED, REPORT

EMPTY_RANKS = "SELECT 0 AS id, 0.0 AS score WHERE 0"

# The dense list: the exact cosine distance (sqlite-vec) of each memory of :dense_candidates, a
# JSON array of [memory id, row], to :qvec; a candidate's float vector is row ``row`` of
# :dense_vectors (float32 [n, :dimension], read from ``float_blocks``). The candidates are what
# the in-RAM scan let through the same filters (``MemoryTables._dense_list_params``: the whole
# pool when it holds at most ``candidates`` memories, exact search; else the int8 scan's nearest,
# an approximation, docs/performance.md, "Search at scale"), filtered again here (the scan's
# as-of test is looser than ``WRITTEN_BY``); the :depth closest are the list.
DENSE_SCORED = """
    SELECT * FROM (
        SELECT c.value ->> 0 AS id,
               vec_distance_cosine(
                   vec_slice(:dense_vectors, (c.value ->> 1) * :dimension,
                             ((c.value ->> 1) + 1) * :dimension),
                   :qvec) AS score
        FROM json_each(:dense_candidates) AS c
        JOIN memories AS m ON m.id = c.value ->> 0
        WHERE 1 {filters}
        ORDER BY score, id
        LIMIT :depth
    )"""

# bm25() weight of the neighbours column against 1.0 for each of the memory's own columns
# (content, keywords, persons, entities, topic); chosen by measurement (docs/evaluation.md).
NEIGHBOUR_WEIGHT = 0.5

# With the neighbours column weighed 0, a match in it alone must not make a memory a candidate.
OWN_COLUMNS_ONLY = "{{content keywords persons entities topic}} : ({query})"

# Column weights of bm25(): content, keywords, persons, entities, topic, neighbours.
LEXICAL_BM25 = """
    SELECT memories_fts.rowid AS id,
           bm25(memories_fts, 1.0, 1.0, 1.0, 1.0, 1.0, :neighbour_weight) AS score
    FROM memories_fts
    JOIN memories AS m ON m.id = memories_fts.rowid
    WHERE memories_fts MATCH :fts {filters}
    ORDER BY score
    LIMIT :depth"""

# The session-overlap filter; also the sessions of :said_in (a JSON array of session starts:
# where the question's relative time words were said, ``retrieve.sessions_saying_the_cue``).
SESSION_OR_EVENT_OVERLAPS = """AND ((m.session_start < :wide_end AND m.session_end > :wide_start)
         OR (m.event_start < :wide_end AND m.event_end > :wide_start)
         OR m.session_start IN (SELECT value FROM json_each(:said_in)))"""

# "What did I know then" (``--as-of``): nothing written after :written_by. A memory is written
# when its last source turn is; its session cannot start after that, which the int8 scan can
# test before the exact check.
WRITTEN_AFTER = """EXISTS (SELECT 1 FROM memory_turns AS wmt JOIN turns AS wt ON wt.id = wmt.turn_id
                 WHERE wmt.memory_id = {memory} AND wt.timestamp > :written_by)"""
WRITTEN_BY = ("AND m.session_start <= :written_by AND NOT "
              + WRITTEN_AFTER.format(memory="m.id"))

FUSION_CTES = """
dense_hits AS MATERIALIZED ({dense}),
dense AS (
    SELECT id, min(score) AS score, row_number() OVER (ORDER BY min(score), id) AS rank
    FROM dense_hits {dense_written} GROUP BY id
),
lexical_hits AS MATERIALIZED ({lexical}),
lexical AS (
    SELECT id, score, row_number() OVER (ORDER BY score, id) AS rank FROM lexical_hits
),
ranked AS (
    SELECT id, rank, 'dense' AS source FROM dense
    UNION ALL
    SELECT id, rank, 'lexical' AS source FROM lexical
),
fused AS (
    SELECT id,
           sum(1.0 / (:kappa + rank)) AS rrf,
           max(CASE WHEN source = 'dense' THEN rank END) AS dense_rank,
           max(CASE WHEN source = 'lexical' THEN rank END) AS bm25_rank
    FROM ranked GROUP BY id
),{filled}
ordered AS (
    SELECT {fused}.*,
           row_number() OVER (
               ORDER BY rrf DESC,
                        (dense_rank IS NOT NULL) + (bm25_rank IS NOT NULL) DESC,
                        min(coalesce(dense_rank, 1 << 40), coalesce(bm25_rank, 1 << 40)),
                        id
           ) AS fused_rank
    FROM {fused}
)"""

# A memory one list missed gets the rank after that list's last hit instead of no share at
# all. Inside the session-overlap filter the dense list usually holds the whole pool, so a
# memory missing from the BM25 list is one that shares no word with the question, not one
# ranked beyond the cut. In the content list (the whole bank, each list cut at :depth) it is
# the best rank the memory can have in the list that missed it: without it, a memory one list
# ranks high loses to every memory both lists found at middling ranks (1/63 < 1/70 + 1/75;
# "They love learning about animals", dense third for "What do Melanie's kids like?", shares
# no word with it that BM25 ranks by).
FILLED_RANKS = """
filled AS (
    SELECT id,
           1.0 / (:kappa + coalesce(dense_rank, (SELECT count(*) FROM dense) + 1))
           + 1.0 / (:kappa + coalesce(bm25_rank, (SELECT count(*) FROM lexical) + 1)) AS rrf,
           dense_rank, bm25_rank
    FROM fused
),"""

# When a memory was said, for its proximity: its session's first day at most. A session's span
# runs until the next session starts, and the filter reaches every memory whose span overlaps
# the range; but a conversation's sessions are days or weeks apart, and what was said on 3 April
# is not near 23 May because the next session came on 27 May, four days after it (the session
# that tells of 23 May).
SAID_UNTIL = f"min(m.session_end, m.session_start + {DAY})"

# Whether a memory's event time is when something happened: a report (the writer's or someone
# else's). A plan, a wish, a question or a request names a time nothing happened in yet ("Maybe
# I'll go see the Hollow Pines in the spring", said in December): it is placed by when it was said.
HAPPENED = f"m.act IN ('{REPORT}', '{OTHER}', '{RECEIVED}')"

PLACEMENT_COLUMNS = f"""
           m.session_start IN (SELECT value FROM json_each(:said_in)) OR
           CASE WHEN m.event_start IS NOT NULL AND :event_time_first
                     AND m.act IN ('{REPORT}', '{RECEIVED}')
                THEN m.event_start < :raw_end AND m.event_end > :raw_start
                WHEN m.event_start IS NOT NULL AND :event_time_first
                THEN m.session_start >= :raw_start AND m.session_start < :raw_end
                ELSE m.session_start >= :raw_start AND m.session_start < :raw_end
                     OR coalesce({HAPPENED} AND m.event_start < :raw_end
                                 AND m.event_end > :raw_start, 0)
           END AS said_or_happened_inside,
           m.session_start < :raw_end AND {SAID_UNTIL} > :raw_start
             AS said_day_reaches_range,
           min(
               max(0, :raw_start - {SAID_UNTIL}, m.session_start - :raw_end),
               coalesce(CASE WHEN {HAPPENED}
                             THEN max(0, :raw_start - m.event_end, m.event_start - :raw_end)
                        END, 1 << 40)
           ) AS gap_seconds"""

TIER = """CASE WHEN said_or_happened_inside THEN 0
                 WHEN said_day_reaches_range THEN 1
                 ELSE 2 + gap_seconds / 86400 END"""

CONTENT = """
WITH {fusion}
SELECT id, rrf, dense_rank, bm25_rank, fused_rank, NULL AS tier, NULL AS gap_days
FROM ordered
ORDER BY fused_rank
LIMIT :limit
"""

# Proximity as a prior (:proximity_prior): the list is the reciprocal-rank fusion of the
# candidates' relevance (fused rank) and their proximity (their place in tier order, then
# relevance), so that the range's best match told a few days off it outranks weaker memories
# said inside it; off, tier order then relevance (a wall).
SESSION_OVERLAP = """
WITH {fusion},
placed AS (
    SELECT ordered.*, {placement}
    FROM ordered JOIN memories AS m ON m.id = ordered.id
),
tiered AS (
    SELECT placed.*, {tier} AS tier,
           row_number() OVER (ORDER BY {tier}, fused_rank) AS proximity_rank
    FROM placed
)
SELECT id, rrf, dense_rank, bm25_rank, fused_rank, tier, gap_seconds / 86400.0 AS gap_days
FROM tiered
ORDER BY CASE WHEN :proximity_prior
              THEN -(1.0 / (:kappa + fused_rank) + 1.0 / (:kappa + proximity_rank))
              ELSE tier END,
         tier, fused_rank
LIMIT :limit
"""

SESSION_OVERLAP_BY_TIME = """
WITH
inside AS (
    SELECT m.id FROM memories AS m
    WHERE 1 {filters}
),
said AS (
    SELECT inside.id, min(t.timestamp) AS said_at
    FROM inside
    LEFT JOIN memory_turns AS mt ON mt.memory_id = inside.id
    LEFT JOIN turns AS t ON t.id = mt.turn_id
    GROUP BY inside.id
),
placed AS (
    SELECT said.id, coalesce(said.said_at, m.session_start) AS said_at, {placement}
    FROM said JOIN memories AS m ON m.id = said.id
)
SELECT id, NULL AS rrf, NULL AS dense_rank, NULL AS bm25_rank,
       row_number() OVER (ORDER BY {tier}, said_at, id) AS fused_rank,
       {tier} AS tier, gap_seconds / 86400.0 AS gap_days
FROM placed
ORDER BY fused_rank
LIMIT :limit
"""


@dataclass(frozen=True)
class RankedRow:
    id: int
    rrf: float | None
    dense_rank: int | None
    bm25_rank: int | None
    fused_rank: int
    tier: int | None = None  # proximity tier; None in the content list
    gap_days: float | None = None


def lexical_query(fts_query: str | None, neighbour_weight: float) -> str | None:
    """The MATCH expression: over every column, or the memory's own columns only."""
    if not fts_query or neighbour_weight > 0:
        return fts_query
    return OWN_COLUMNS_ONLY.format(query=fts_query)


def _scope_filters(
    *, conversation_scoped: bool, exclude_turns: bool, written_by: bool = False
) -> list[str]:
    """Memories-table filters for a conversation scope, the turn exclusion and the as-of cut
    (nothing written after :written_by)."""
    memory_filters: list[str] = []
    if conversation_scoped:
        memory_filters.append("AND m.conversation_id = :conversation_id")
    if exclude_turns:
        memory_filters.append("AND m.kind != 'turn'")
    if written_by:
        memory_filters.append(WRITTEN_BY)
    return memory_filters


def _fusion(
    *, with_dense: bool, with_lexical: bool, conversation_scoped: bool, exclude_turns: bool,
    session_overlap: bool, fill_missing_ranks: bool = False, dense_index: str = "exact",
    written_by: bool = False,
) -> str:
    if dense_index not in DENSE_INDEXES:
        raise ValueError(f"unknown dense index {dense_index!r}; one of {', '.join(DENSE_INDEXES)}")
    memory_filters = _scope_filters(
        conversation_scoped=conversation_scoped, exclude_turns=exclude_turns,
        written_by=written_by,
    )
    if session_overlap:
        memory_filters.append(SESSION_OR_EVENT_OVERLAPS)
    if not with_dense:
        dense = EMPTY_RANKS
    else:
        dense = DENSE_SCORED.format(filters=" ".join(memory_filters))
    lexical = LEXICAL_BM25.format(filters=" ".join(memory_filters)) if with_lexical else EMPTY_RANKS
    fill = fill_missing_ranks
    # The dense list's exact as-of check (the int8 scan tests only the session start).
    dense_written = ("WHERE NOT " + WRITTEN_AFTER.format(memory="dense_hits.id")
                     if written_by else "")
    return FUSION_CTES.format(dense=dense, lexical=lexical, filled=FILLED_RANKS if fill else "",
                              fused="filled" if fill else "fused", dense_written=dense_written)


def content_statement(
    *, with_dense: bool, with_lexical: bool, conversation_scoped: bool, exclude_turns: bool,
    fill_missing_ranks: bool = False, dense_index: str = "exact", written_by: bool = False,
) -> str:
    """RRF of dense KNN and BM25 over the whole bank (or one conversation)."""
    fusion = _fusion(with_dense=with_dense, with_lexical=with_lexical,
                     conversation_scoped=conversation_scoped, exclude_turns=exclude_turns,
                     session_overlap=False, fill_missing_ranks=fill_missing_ranks,
                     dense_index=dense_index, written_by=written_by)
    return CONTENT.format(fusion=fusion)


def session_overlap_statement(
    *, with_dense: bool, with_lexical: bool, conversation_scoped: bool, exclude_turns: bool,
    fill_missing_ranks: bool = False, dense_index: str = "exact", written_by: bool = False,
) -> str:
    """Filter first: RRF of dense KNN and BM25 drawn from inside the session-overlap filter,
    ordered by proximity tier, then fused rank."""
    fusion = _fusion(with_dense=with_dense, with_lexical=with_lexical,
                     conversation_scoped=conversation_scoped, exclude_turns=exclude_turns,
                     session_overlap=True, fill_missing_ranks=fill_missing_ranks,
                     dense_index=dense_index, written_by=written_by)
    return SESSION_OVERLAP.format(fusion=fusion, placement=PLACEMENT_COLUMNS, tier=TIER)


def session_overlap_by_time_statement(*, conversation_scoped: bool, exclude_turns: bool,
                                      written_by: bool = False) -> str:
    """Every memory inside the session-overlap filter, by proximity tier, then time said."""
    memory_filters = _scope_filters(
        conversation_scoped=conversation_scoped, exclude_turns=exclude_turns,
        written_by=written_by,
    )
    filters = " ".join([*memory_filters, SESSION_OR_EVENT_OVERLAPS])
    return SESSION_OVERLAP_BY_TIME.format(filters=filters, placement=PLACEMENT_COLUMNS, tier=TIER)


# Where a phrase was said: the start of each session holding a memory whose own text
# (:phrase, an FTS5 phrase over the content column) says it, oldest first.
SESSIONS_SAYING = """
SELECT DISTINCT m.session_start
FROM memories_fts
JOIN memories AS m ON m.id = memories_fts.rowid
WHERE memories_fts MATCH :phrase {filters}
ORDER BY m.session_start
"""


def sessions_saying_statement(*, conversation_scoped: bool, written_by: bool) -> str:
    """The sessions where a memory says :phrase, in a conversation (``conversation_scoped``)
    and written by :written_by (``written_by``)."""
    filters = _scope_filters(conversation_scoped=conversation_scoped, exclude_turns=False,
                             written_by=written_by)
    return SESSIONS_SAYING.format(filters=" ".join(filters))


# Occurrences: the memories that report something happening and match the need, placed by
# when it happened (the event time, else when the memory was said), for "when did I last /
# first ..." and "how many times ...". A report is a memory whose act (``ingest.acts``) is one
# of :acts (a JSON array: "report" for what was done), said by somebody other than the
# assistant and not only a question ("Can you suggest a recipe for shakshuka?" is no occurrence of
# cooking it): a memory ending in "?" with no sentence ended by ". " or "! " before it. What
# tells something and then asks back ("... called Cyberpunk 2077. Have you played anything
# good lately?", as people write in chat) is a report.
OCCURRENCES = """
WITH
candidates AS ({candidates}),
reports AS MATERIALIZED (
    SELECT m.id, m.event_start, m.session_start
    FROM candidates JOIN memories AS m ON m.id = candidates.id
    WHERE NOT {only_a_question} AND m.act IN (SELECT value FROM json_each(:acts))
          {filters} {persons}
      AND NOT EXISTS (SELECT 1 FROM memory_turns AS rmt JOIN turns AS rt ON rt.id = rmt.turn_id
                      WHERE rmt.memory_id = m.id AND lower(rt.speaker) = lower(:assistant))
),
placed AS (
    SELECT reports.id,
           coalesce(reports.event_start,
                    (SELECT min(pt.timestamp) FROM memory_turns AS pmt
                     JOIN turns AS pt ON pt.id = pmt.turn_id WHERE pmt.memory_id = reports.id),
                    reports.session_start) AS happened_at
    FROM reports
)
SELECT id, happened_at FROM placed
WHERE happened_at >= :happened_from AND happened_at < :happened_until
ORDER BY happened_at {direction}, id {direction}
LIMIT :limit
"""
# A text that is only a question: it ends in "?" with no sentence ended by ". " or "! " before it.
ONLY_A_QUESTION = ("(rtrim({text}) LIKE '%?' AND {text} NOT LIKE '%. %' "
                   "AND {text} NOT LIKE '%! %')")
# Who reports what a memory says: the speakers of its source turns (json_each(:ids)) whose turn
# is not only a question ("What made you pick it?" reports nothing of the one who asks).
REPORTERS = f"""
WITH wanted AS (SELECT value AS id FROM json_each(:ids))
SELECT DISTINCT mt.memory_id, t.speaker
FROM wanted
JOIN memory_turns AS mt ON mt.memory_id = wanted.id
JOIN turns AS t ON t.id = mt.turn_id
WHERE NOT {ONLY_A_QUESTION.format(text="t.text")}
"""
# The question's people (:persons, a JSON array): a report said by one of them or naming one.
BY_OR_NAMING_PERSONS = """AND EXISTS (
        SELECT 1 FROM json_each(:persons) AS p
        WHERE instr(';' || lower(replace(m.persons, '; ', ';')) || ';',
                    ';' || lower(p.value) || ';') > 0
           OR EXISTS (SELECT 1 FROM memory_turns AS pmt JOIN turns AS pt ON pt.id = pmt.turn_id
                      WHERE pmt.memory_id = m.id AND lower(pt.speaker) = lower(p.value)))"""
MATCHING_MEMORIES = "SELECT rowid AS id FROM memories_fts WHERE memories_fts MATCH :fts"
LISTED_MEMORIES = "SELECT value AS id FROM json_each(:among)"
# Every memory that may have happened in [:happened_from, :happened_until), a superset that the
# indexes find (``OCCURRENCES``'s ``placed`` then decides): its event time there, else one of its
# source turns said there, else (neither) its session begun there. Not every memory of the bank,
# each placed by a subquery: a count's range of a month in a journal of years.
HAPPENED_IN_THE_RANGE = """
SELECT id FROM memories WHERE event_start >= :happened_from AND event_start < :happened_until
UNION
SELECT mt.memory_id FROM turns AS t JOIN memory_turns AS mt ON mt.turn_id = t.id
WHERE t.timestamp >= :happened_from AND t.timestamp < :happened_until
UNION
SELECT id FROM memories
WHERE event_start IS NULL AND session_start >= :happened_from
  AND session_start < :happened_until
"""


def occurrences_statement(*, lexical: bool, conversation_scoped: bool, exclude_turns: bool,
                          written_by: bool, newest_first: bool, listed: bool = False,
                          of_persons: bool = False) -> str:
    """The reports among the memories that match :fts (``lexical``), or the ids of :among
    (``listed``), or all memories, that happened in ``[:happened_from, :happened_until)``,
    newest or oldest first; with ``of_persons``, only those said by or naming :persons."""
    memory_filters = _scope_filters(
        conversation_scoped=conversation_scoped, exclude_turns=exclude_turns,
        written_by=written_by,
    )
    return OCCURRENCES.format(
        candidates=(MATCHING_MEMORIES if lexical else LISTED_MEMORIES if listed
                    else HAPPENED_IN_THE_RANGE),
        filters=" ".join(memory_filters), direction="DESC" if newest_first else "ASC",
        persons=BY_OR_NAMING_PERSONS if of_persons else "",
        only_a_question=ONLY_A_QUESTION.format(text="m.content"),
    )
