"""The retrieval SQL: reciprocal-rank fusion of dense KNN and BM25, and the episode filter.

Every statement is assembled from named CTE fragments so that one statement does the whole job:

- ``dense``   : vec0 KNN (cosine) ranks, optionally restricted by vec0 metadata filters;
- ``lexical`` : FTS5 BM25 ranks of a sanitised OR-query;
- ``fused``   : RRF ``Σ 1 / (κ + rank)`` over both lists;
- ``placed``  : each fused candidate's place relative to the query's time range, from the memory's
  session span and (when grounded) its event range. Proximity tiers: 0 — said inside the raw
  range (session start within it) or its event range overlaps it; 1 — only its session span
  reaches into the raw range; 2 + d — d whole days of gap. Compatible = overlaps the widened
  range.

Ranges are half-open ``[start, end)`` Unix seconds. A memory without a grounded event range
carries its session span in the vec0 event columns, so "session OR event overlaps" can be
pushed into two metadata-filtered KNN scans whose union is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

EMPTY_RANKS = "SELECT 0 AS id, 0.0 AS score WHERE 0"

DENSE_KNN = """
    SELECT memory_id AS id, distance AS score
    FROM memories_vec
    WHERE embedding MATCH :qvec AND k = :depth {filters}"""

LEXICAL_BM25 = """
    SELECT memories_fts.rowid AS id, memories_fts.rank AS score
    FROM memories_fts
    JOIN memories AS m ON m.id = memories_fts.rowid
    WHERE memories_fts MATCH :fts {filters}
    ORDER BY memories_fts.rank
    LIMIT :depth"""

SESSION_OVERLAPS_WIDENED = "AND session_start < :wide_end AND session_end > :wide_start"
EVENT_OVERLAPS_WIDENED = "AND event_start < :wide_end AND event_end > :wide_start"
COMPATIBLE_MEMORY = """AND ((m.session_start < :wide_end AND m.session_end > :wide_start)
         OR (m.event_start < :wide_end AND m.event_end > :wide_start))"""

FUSE_AND_PLACE = """
WITH
dense_hits AS MATERIALIZED ({dense}),
dense AS (
    SELECT id, min(score) AS score, row_number() OVER (ORDER BY min(score), id) AS rank
    FROM dense_hits GROUP BY id
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
),
ordered AS (
    SELECT fused.*,
           row_number() OVER (
               ORDER BY rrf DESC,
                        min(coalesce(dense_rank, 1 << 40), coalesce(bm25_rank, 1 << 40)),
                        id
           ) AS fused_rank
    FROM fused
),
placed AS (
    SELECT ordered.*,
           m.session_start >= :raw_start AND m.session_start < :raw_end
             OR coalesce(m.event_start < :raw_end AND m.event_end > :raw_start, 0)
             AS inside_raw,
           m.session_start < :raw_end AND m.session_end > :raw_start
             AS span_overlaps_raw,
           m.session_start < :wide_end AND m.session_end > :wide_start
             OR coalesce(m.event_start < :wide_end AND m.event_end > :wide_start, 0)
             AS compatible,
           min(
               max(0, :raw_start - m.session_end, m.session_start - :raw_end),
               coalesce(max(0, :raw_start - m.event_end, m.event_start - :raw_end), 1 << 40)
           ) AS gap_seconds
    FROM ordered JOIN memories AS m ON m.id = ordered.id
)
SELECT id, rrf, dense_rank, bm25_rank, fused_rank, compatible,
       CASE WHEN inside_raw THEN 0
            WHEN span_overlaps_raw THEN 1
            ELSE 2 + gap_seconds / 86400 END AS tier,
       gap_seconds / 86400.0 AS gap_days
FROM placed
{where}
ORDER BY {order}
LIMIT :limit
"""

ORDER_BY_FUSION = "fused_rank"
ORDER_BY_PROXIMITY = "tier, fused_rank"


@dataclass(frozen=True)
class RankedRow:
    id: int
    rrf: float
    dense_rank: int | None
    bm25_rank: int | None
    fused_rank: int
    compatible: bool
    tier: int
    gap_days: float


def fuse_statement(
    *,
    with_dense: bool,
    with_lexical: bool,
    conversation_scoped: bool,
    exclude_turns: bool,
    within_compatible: bool,
    compatible_only: bool,
    order: str,
) -> str:
    """Assemble one RRF statement.

    ``within_compatible`` restricts both source lists to episode-compatible memories *before*
    ranking (the "re-fuse" reading); ``compatible_only`` keeps only compatible rows of the fused
    list (the "promote" reading, and the context list of the re-fuse reading).
    """
    vec_filters: list[str] = []
    fts_filters: list[str] = []
    if conversation_scoped:
        vec_filters.append("AND conversation_id = :conversation_id")
        fts_filters.append("AND m.conversation_id = :conversation_id")
    if exclude_turns:
        vec_filters.append("AND kind != 'turn'")
        fts_filters.append("AND m.kind != 'turn'")
    if within_compatible:
        fts_filters.append(COMPATIBLE_MEMORY)

    if with_dense:
        if within_compatible:
            dense = "\n    UNION ALL\n".join(
                DENSE_KNN.format(filters=" ".join([*vec_filters, overlap]))
                for overlap in (SESSION_OVERLAPS_WIDENED, EVENT_OVERLAPS_WIDENED)
            )
        else:
            dense = DENSE_KNN.format(filters=" ".join(vec_filters))
    else:
        dense = EMPTY_RANKS
    lexical = LEXICAL_BM25.format(filters=" ".join(fts_filters)) if with_lexical else EMPTY_RANKS
    where = "WHERE compatible" if compatible_only else ""
    return FUSE_AND_PLACE.format(dense=dense, lexical=lexical, where=where, order=order)
