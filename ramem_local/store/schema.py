"""Schema migrations: small, named, ordered functions, each applied once and recorded.

A bank is one SQLite file. ``schema_migrations`` records which migrations ran; opening a bank
applies the missing ones in order inside one transaction. Never edit a released migration: add
a new one.

The vector tables (``float_blocks``, ``int8_blocks``: :func:`create_vector_tables`) are
created when an embedder is bound to the bank (``Store.bind_embedder``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Sequence
from typing import cast

import apsw

from .base import one_row


def m001_core_tables(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );

        CREATE TABLE conversations (
            id         INTEGER PRIMARY KEY,
            name       TEXT NOT NULL UNIQUE,
            kind       TEXT NOT NULL DEFAULT 'chat',  -- chat | journal
            source     TEXT,
            created_at INTEGER NOT NULL
        );

        CREATE TABLE participants (
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            name            TEXT NOT NULL,
            PRIMARY KEY (conversation_id, name)
        );

        -- A session's span is [start, end): end is the next session's start, or start + 1 day
        -- for the last one. The store recomputes it whenever sessions are added.
        CREATE TABLE sessions (
            id              INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            ordinal         INTEGER NOT NULL,
            start           INTEGER NOT NULL,
            "end"           INTEGER NOT NULL,
            UNIQUE (conversation_id, ordinal)
        );

        CREATE TABLE turns (
            id              INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_key        TEXT NOT NULL,   -- external id, or a hash of speaker/time/text
            external_id     TEXT,
            speaker         TEXT NOT NULL,
            text            TEXT NOT NULL,
            caption         TEXT,
            timestamp       INTEGER NOT NULL,
            UNIQUE (conversation_id, turn_key)
        );
        CREATE INDEX turns_session ON turns(session_id);

        CREATE TABLE memories (
            id              INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            kind            TEXT NOT NULL,          -- turn | extracted
            content         TEXT NOT NULL,
            keywords        TEXT NOT NULL DEFAULT '',
            persons         TEXT NOT NULL DEFAULT '',
            entities        TEXT NOT NULL DEFAULT '',
            location        TEXT,
            topic           TEXT NOT NULL DEFAULT '',
            language        TEXT,
            session_start   INTEGER NOT NULL,
            session_end     INTEGER NOT NULL,
            event_start     INTEGER,
            event_end       INTEGER,
            dedup_key       TEXT NOT NULL,
            window_id       INTEGER,
            created_at      INTEGER NOT NULL,
            UNIQUE (conversation_id, dedup_key),
            CHECK (session_end > session_start),
            CHECK (event_start IS NULL OR event_end >= event_start)
        );
        CREATE INDEX memories_session_span ON memories(session_start, session_end);
        CREATE INDEX memories_event_span ON memories(event_start, event_end);

        CREATE TABLE memory_turns (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            turn_id   INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            PRIMARY KEY (memory_id, turn_id)
        ) WITHOUT ROWID;
        CREATE INDEX memory_turns_turn ON memory_turns(turn_id);

        CREATE TABLE extraction_windows (
            id              INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            first_turn_id   INTEGER NOT NULL,
            last_turn_id    INTEGER NOT NULL,
            turn_count      INTEGER NOT NULL,
            status          TEXT NOT NULL DEFAULT 'pending'
                            CHECK (status IN ('pending', 'done', 'failed')),
            attempts        INTEGER NOT NULL DEFAULT 0,
            error           TEXT,
            model           TEXT,
            prompt_version  TEXT NOT NULL,
            updated_at      INTEGER NOT NULL,
            UNIQUE (conversation_id, first_turn_id, last_turn_id, prompt_version)
        );
        """
    )


def m002_fts(db: apsw.Connection) -> None:
    """External-content FTS5 index over the searchable text columns, kept in sync by triggers."""
    db.execute(
        """
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            content, keywords, persons, entities, topic,
            content='memories', content_rowid='id',
            tokenize='porter unicode61'
        );

        CREATE TRIGGER memories_fts_after_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, content, keywords, persons, entities, topic)
            VALUES (new.id, new.content, new.keywords, new.persons, new.entities, new.topic);
        END;

        CREATE TRIGGER memories_fts_after_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, keywords, persons, entities,
                                     topic)
            VALUES ('delete', old.id, old.content, old.keywords, old.persons, old.entities,
                    old.topic);
        END;

        CREATE TRIGGER memories_fts_after_update
        AFTER UPDATE OF content, keywords, persons, entities, topic ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, keywords, persons, entities,
                                     topic)
            VALUES ('delete', old.id, old.content, old.keywords, old.persons, old.entities,
                    old.topic);
            INSERT INTO memories_fts(rowid, content, keywords, persons, entities, topic)
            VALUES (new.id, new.content, new.keywords, new.persons, new.entities, new.topic);
        END;
        """
    )


def m003_neighbour_text(db: apsw.Connection) -> None:
    """A turn is often found only through the turns around it ("We put together a tournament"
    answered by "organizing that tournament for charity"). ``memories.neighbours`` holds the
    text of the previous and next turn of the session for turn memories (the store keeps it
    current: :meth:`Store.refresh_neighbours`); the FTS index gains it as a sixth column,
    weighed less than the memory's own text at query time."""
    db.execute(
        """
        ALTER TABLE memories ADD COLUMN neighbours TEXT NOT NULL DEFAULT '';

        DROP TRIGGER memories_fts_after_insert;
        DROP TRIGGER memories_fts_after_delete;
        DROP TRIGGER memories_fts_after_update;
        DROP TABLE memories_fts;

        CREATE VIRTUAL TABLE memories_fts USING fts5(
            content, keywords, persons, entities, topic, neighbours,
            content='memories', content_rowid='id',
            tokenize='porter unicode61'
        );

        CREATE TRIGGER memories_fts_after_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, content, keywords, persons, entities, topic,
                                     neighbours)
            VALUES (new.id, new.content, new.keywords, new.persons, new.entities, new.topic,
                    new.neighbours);
        END;

        CREATE TRIGGER memories_fts_after_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, keywords, persons, entities,
                                     topic, neighbours)
            VALUES ('delete', old.id, old.content, old.keywords, old.persons, old.entities,
                    old.topic, old.neighbours);
        END;

        CREATE TRIGGER memories_fts_after_update
        AFTER UPDATE OF content, keywords, persons, entities, topic, neighbours ON memories
        BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, keywords, persons, entities,
                                     topic, neighbours)
            VALUES ('delete', old.id, old.content, old.keywords, old.persons, old.entities,
                    old.topic, old.neighbours);
            INSERT INTO memories_fts(rowid, content, keywords, persons, entities, topic,
                                     neighbours)
            VALUES (new.id, new.content, new.keywords, new.persons, new.entities, new.topic,
                    new.neighbours);
        END;

        INSERT INTO memories_fts(memories_fts) VALUES ('rebuild');
        """
    )
    # Banks written before this migration get their neighbour text now.
    db.execute(REFRESH_NEIGHBOURS, {"conversation_id": None, "session_ids": None})


# The neighbour text of turn memories: the previous and next turn of the same session. Limited
# to one conversation and/or a JSON array of session ids when those are not NULL.
REFRESH_NEIGHBOURS = """
WITH
session_turns AS (
    SELECT t.id, t.session_id, t.timestamp, t.text
    FROM turns AS t
    WHERE (:conversation_id IS NULL OR t.conversation_id = :conversation_id)
      AND (:session_ids IS NULL OR t.session_id IN (SELECT value FROM json_each(:session_ids)))
),
around AS (
    SELECT id,
           trim(coalesce(lag(text) OVER session_order, '') || ' '
                || coalesce(lead(text) OVER session_order, '')) AS neighbours
    FROM session_turns
    WINDOW session_order AS (PARTITION BY session_id ORDER BY timestamp, id)
),
turn_memory AS (
    SELECT m.id AS memory_id, around.neighbours
    FROM around
    JOIN memory_turns AS mt ON mt.turn_id = around.id
    JOIN memories AS m ON m.id = mt.memory_id AND m.kind = 'turn'
)
UPDATE memories SET neighbours = turn_memory.neighbours
FROM turn_memory
WHERE memories.id = turn_memory.memory_id AND memories.neighbours != turn_memory.neighbours
"""


# The neighbour text of the turn memories around some turns (a JSON array of turn ids), where
# it is not what is stored: ``(memory id, text)``. The turns are those
# turns' own, and that of the turn just before and just after each of them in its session (time
# order, then id), the only ones whose neighbours change when these turns are added. With the
# index turns(session_id, timestamp) each is a few B-tree steps, however long the session and
# the bank (the statement above, run per batch, scanned the bank). A SELECT, not an UPDATE ...
# FROM: SQLite drove such an UPDATE by a scan of its target table, all memories.
NEIGHBOURS_AROUND = """
WITH
added AS (
    SELECT t.id, t.session_id, t.timestamp
    FROM json_each(:turn_ids) AS chosen CROSS JOIN turns AS t ON t.id = chosen.value
),
touched AS (
    SELECT id FROM added
    UNION
    SELECT (SELECT p.id FROM turns AS p
            WHERE p.session_id = a.session_id AND (p.timestamp, p.id) < (a.timestamp, a.id)
            ORDER BY p.timestamp DESC, p.id DESC LIMIT 1)
    FROM added AS a
    UNION
    SELECT (SELECT n.id FROM turns AS n
            WHERE n.session_id = a.session_id AND (n.timestamp, n.id) > (a.timestamp, a.id)
            ORDER BY n.timestamp, n.id LIMIT 1)
    FROM added AS a
),
around AS (
    SELECT t.id,
           trim(coalesce((SELECT p.text FROM turns AS p
                          WHERE p.session_id = t.session_id
                            AND (p.timestamp, p.id) < (t.timestamp, t.id)
                          ORDER BY p.timestamp DESC, p.id DESC LIMIT 1), '')
                || ' ' ||
                coalesce((SELECT n.text FROM turns AS n
                          WHERE n.session_id = t.session_id
                            AND (n.timestamp, n.id) > (t.timestamp, t.id)
                          ORDER BY n.timestamp, n.id LIMIT 1), '')) AS neighbours
    FROM touched AS x CROSS JOIN turns AS t ON t.id = x.id
)
SELECT m.id, around.neighbours
FROM around
CROSS JOIN memory_turns AS mt ON mt.turn_id = around.id
CROSS JOIN memories AS m ON m.id = mt.memory_id AND m.kind = 'turn'
WHERE m.neighbours != around.neighbours
"""


def m004_fts_secure_delete(db: apsw.Connection) -> None:
    """Forgetting leaves nothing: FTS5's ``secure-delete`` option (SQLite >= 3.42) removes a
    deleted row's terms from the index instead of writing delete markers that repeat them.
    The option is stored in the index; the rebuild drops the markers older deletes left."""
    db.execute(
        """
        INSERT INTO memories_fts(memories_fts, rank) VALUES ('secure-delete', 1);
        INSERT INTO memories_fts(memories_fts) VALUES ('rebuild');
        """
    )


# The vec0 metadata columns of both vector tables: the session-overlap filter runs inside KNN.
VEC_METADATA_COLUMNS = """conversation_id INTEGER,
            kind TEXT,
            session_start INTEGER,
            session_end INTEGER,
            event_start INTEGER,
            event_end INTEGER"""


def create_vector_tables(db: apsw.Connection) -> None:
    """A bank's vectors, each stored once, plus its int8 codes: ``float_blocks`` (since m011),
    the float vectors of up to ``float_blocks.FLOAT_BLOCK_SIZE`` memories a row (exact
    distances of the dense list's candidates, the exact scan), and ``int8_blocks`` (since
    m010), the int8 codes of up to ``int8_blocks.BLOCK_SIZE`` memories a row with the columns
    the in-RAM scan's filters need (read in one go by a new process)."""
    create_float_blocks(db)
    create_int8_blocks(db)


def create_float_blocks(db: apsw.Connection) -> None:
    """``float_blocks``, and ``float_block_ranges``: an R*Tree of each block's id range, kept
    by triggers, so that a search finds the blocks of its ~200 candidates with an index lookup
    each instead of reading every block's range (a new process's first search). Coordinates
    are float32 there, rounded outward: a range may hold a few ids more than the block, never
    fewer (a block read in vain finds the id absent). ``memory_ids`` precedes ``vectors``, so
    that a row's ids lie on its leaf page. The index on ``last_memory_id`` lets a write find
    the blocks that may hold its ids."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS float_blocks (
            id               INTEGER PRIMARY KEY,
            first_memory_id  INTEGER NOT NULL,
            last_memory_id   INTEGER NOT NULL,
            count            INTEGER NOT NULL,
            memory_ids       BLOB NOT NULL,  -- int64 [count], ascending
            vectors          BLOB NOT NULL   -- float32 [count, D]
        );
        CREATE INDEX IF NOT EXISTS float_blocks_last ON float_blocks(last_memory_id);
        CREATE VIRTUAL TABLE IF NOT EXISTS float_block_ranges
            USING rtree(id, first_memory_id, last_memory_id);
        CREATE TRIGGER IF NOT EXISTS float_blocks_added AFTER INSERT ON float_blocks BEGIN
            INSERT INTO float_block_ranges(id, first_memory_id, last_memory_id)
            VALUES (new.id, new.first_memory_id, new.last_memory_id);
        END;
        CREATE TRIGGER IF NOT EXISTS float_blocks_changed
        AFTER UPDATE OF first_memory_id, last_memory_id ON float_blocks BEGIN
            UPDATE float_block_ranges
            SET first_memory_id = new.first_memory_id, last_memory_id = new.last_memory_id
            WHERE id = new.id;
        END;
        CREATE TRIGGER IF NOT EXISTS float_blocks_removed AFTER DELETE ON float_blocks BEGIN
            DELETE FROM float_block_ranges WHERE id = old.id;
        END;
        """
    )


def create_int8_blocks(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS int8_blocks (
            id               INTEGER PRIMARY KEY,
            first_memory_id  INTEGER NOT NULL,
            last_memory_id   INTEGER NOT NULL,
            count            INTEGER NOT NULL,
            memory_ids       BLOB NOT NULL,  -- int64 [count], ascending
            conversation_ids BLOB NOT NULL,  -- int64 [count]
            is_turn          BLOB NOT NULL,  -- uint8 [count]
            episodes         BLOB NOT NULL,  -- int64 [count, 4]: session, event start/end
            scales           BLOB NOT NULL,  -- float32 [count]
            codes            BLOB NOT NULL   -- uint8 [count, D], offset 128
        );
        """
    )


def create_binary_index(db: apsw.Connection, dimension: int) -> None:
    """(m005; ``memories_bin`` dropped by m010) The fast dense path's two tables then:
    ``memories_bin``, a vec0 table of sign-quantised vectors (``bit[D]``, Hamming distance:
    D/8 bytes a memory) with the same metadata columns as ``memories_vec``, scanned for
    candidates; and ``memories_float``, the float vectors keyed by memory id in a plain
    table, for exact rescoring of the candidates (a vec0 point lookup costs ~0.35 ms, a
    B-tree lookup a few µs)."""
    db.execute(
        f"""
        CREATE VIRTUAL TABLE IF NOT EXISTS memories_bin USING vec0(
            memory_id INTEGER PRIMARY KEY,
            embedding bit[{int(dimension)}],
            {VEC_METADATA_COLUMNS}
        );
        CREATE TABLE IF NOT EXISTS memories_float (
            memory_id INTEGER PRIMARY KEY,
            embedding BLOB NOT NULL
        );
        """
    )


def create_int8_table(db: apsw.Connection) -> None:
    """(m007; replaced by ``int8_blocks`` in m010) ``memories_int8``: each vector as int8
    codes (uint8, offset 128) and one scale, read
    once per process into the in-RAM scan of both lists (``int8_matrix``), with the columns
    its filters need, as vec0's metadata columns hold them (a copy: the read joins nothing)."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS memories_int8 (
            memory_id INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL,
            is_turn INTEGER NOT NULL,
            session_start INTEGER NOT NULL,
            session_end INTEGER NOT NULL,
            event_start INTEGER NOT NULL,
            event_end INTEGER NOT NULL,
            scale REAL NOT NULL,
            codes BLOB NOT NULL
        )
        """
    )


def m005_binary_index(db: apsw.Connection) -> None:
    """Banks with vectors gain the binary prefilter index, backfilled from the float vectors
    (banks without an embedder get it when one is bound: ``Store.bind_embedder``)."""
    exists = db.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'memories_vec' AND type = 'table'"
    ).fetchone()
    if not exists:
        return
    row = db.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    if row is None:
        return
    create_binary_index(db, int(json.loads(row[0])["dimension"]))
    db.execute(
        """
        INSERT OR REPLACE INTO memories_float(memory_id, embedding)
        SELECT memory_id, embedding FROM memories_vec;
        INSERT OR REPLACE INTO memories_bin(memory_id, embedding, conversation_id, kind,
                                            session_start, session_end, event_start, event_end)
        SELECT memory_id, vec_quantize_binary(embedding), conversation_id, kind,
               session_start, session_end, event_start, event_end
        FROM memories_vec;
        """
    )


def m006_turns_in_session_order(db: apsw.Connection) -> None:
    """Turns indexed in session time order: the turns next to a new one are found in a few
    steps (``NEIGHBOURS_AROUND``, once per ingest batch), so ingest time no longer
    grows with the bank. It replaces ``turns_session``, its prefix."""
    db.execute(
        """
        CREATE INDEX turns_session_time ON turns(session_id, timestamp);
        DROP INDEX turns_session;
        """
    )


def m007_int8_codes(db: apsw.Connection) -> None:
    """Banks with vectors gain ``memories_int8``, quantised from the float vectors."""
    if not _table_exists(db, "memories_float"):
        return
    import numpy as np

    from .int8_matrix import quantise

    create_int8_table(db)
    cursor = db.execute(
        """SELECT f.memory_id, m.conversation_id, m.kind = 'turn', m.session_start,
                  m.session_end, coalesce(m.event_start, m.session_start),
                  coalesce(m.event_end, m.session_end), f.embedding
           FROM memories_float AS f JOIN memories AS m ON m.id = f.memory_id
           ORDER BY f.memory_id""")
    while batch := list(itertools.islice(cursor, 4096)):
        scales, codes = quantise(np.stack([np.frombuffer(row[-1], dtype=np.float32)
                                           for row in batch]))
        db.executemany(
            "INSERT INTO memories_int8(memory_id, conversation_id, is_turn, session_start, "
            "session_end, event_start, event_end, scale, codes) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*row[:-1], float(scale), code.tobytes())
             for row, scale, code in zip(batch, scales, codes, strict=True)])


def m008_vector_sum(db: apsw.Connection) -> None:
    """``vector_sum``: the count and float64 sum of the bank's unit vectors, kept in step with
    every vector write, so the mean direction the question path takes off a query is one row
    away (``MemoryTables.mean_vector``). Filled from the float vectors of existing banks."""
    db.execute(
        """
        CREATE TABLE vector_sum (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            count INTEGER NOT NULL,
            total BLOB NOT NULL
        )
        """
    )
    if not _table_exists(db, "memories_float"):
        return
    import numpy as np

    from .vectors import unit_rows

    count, total = 0, None
    cursor = db.execute("SELECT embedding FROM memories_float")
    while batch := list(itertools.islice(cursor, 4096)):
        units = unit_rows(np.stack([np.frombuffer(row[0], dtype=np.float32) for row in batch]))
        total = units.sum(axis=0) if total is None else total + units.sum(axis=0)
        count += len(batch)
    if total is not None:
        db.execute("INSERT INTO vector_sum(id, count, total) VALUES (1, ?, ?)",
                   (count, total.tobytes()))


def m009_mentioned_persons(db: apsw.Connection) -> None:
    """A turn memory's persons gain the people its text names (``names.mentioned_persons``:
    "Remind me that Lena is vegetarian" names Lena), where before they were its speaker and
    the participants it names; filled here for the turn memories of banks written before
    (the FTS index follows by its update trigger). A name at a sentence start without a sign
    counts when the conversation's memories name it elsewhere, as at ingest. What a memory
    named already stays, in its order, the names read now follow. This runs once: a later
    change to the recogniser does not reach banks already migrated."""
    from ..names import mentioned_persons, read_names

    participants: dict[int, list[str]] = {}
    for conversation_id, name in db.execute(
            "SELECT conversation_id, name FROM participants ORDER BY conversation_id, rowid"):
        participants.setdefault(conversation_id, []).append(name)
    waiting = []  # (memory id, conversation id, persons, names at a sentence start)
    for batch in _turn_memory_batches(db):
        changed = []
        for memory_id, conversation_id, stored, speaker, text in batch:
            read = read_names(text, participants.get(conversation_id, []))
            persons = _merged(stored, mentioned_persons(
                text, speaker, participants.get(conversation_id, []), read=read))
            if persons != stored:
                changed.append((persons, memory_id))
            if read.at_sentence_start:
                waiting.append((memory_id, conversation_id, persons, read))
        db.executemany("UPDATE memories SET persons = ? WHERE id = ?", changed)
    known: dict[int, set[str]] = {}
    for conversation_id, persons in db.execute(
            "SELECT DISTINCT conversation_id, persons FROM memories WHERE persons != ''"):
        known.setdefault(conversation_id, set()).update(
            p.casefold() for p in persons.split("; "))
    confirmed = []
    for memory_id, conversation_id, persons, read in waiting:
        merged = _merged(persons, read.confirmed(known.get(conversation_id, set())))
        if merged != persons:
            confirmed.append((merged, memory_id))
    db.executemany("UPDATE memories SET persons = ? WHERE id = ?", confirmed)


def m010_vectors_stored_once(db: apsw.Connection) -> None:
    """Each vector stored once, plus its int8 codes: the codes move from ``memories_int8`` (a
    row a memory) into ``int8_blocks`` (read in one go), and the copies no path reads any
    more go: ``memories_vec`` (vec0 floats: the exact path scans ``memories_float``) and
    ``memories_bin`` (sign bits: the binary path takes them from the codes). The file keeps
    its size until a ``VACUUM`` (freed pages are zeroed, by ``secure_delete``, and reused)."""
    if not _table_exists(db, "memories_float"):
        return
    import numpy as np

    from .int8_blocks import CodeRows, append_codes

    embedder = one_row(db.execute("SELECT value FROM meta WHERE key = 'embedder'"))[0]
    dimension = int(json.loads(embedder)["dimension"])
    create_int8_blocks(db)
    if _table_exists(db, "memories_int8"):
        cursor = db.execute(
            """SELECT memory_id, conversation_id, is_turn, session_start, session_end,
                      event_start, event_end, scale, codes
               FROM memories_int8 ORDER BY memory_id""")
        while batch := list(itertools.islice(cursor, 4096)):
            columns = np.array([row[:7] for row in batch], dtype=np.int64)
            append_codes(db, CodeRows(
                ids=columns[:, 0], conversation_ids=columns[:, 1],
                is_turn=columns[:, 2].astype(bool), episodes=columns[:, 3:7],
                scales=np.array([row[7] for row in batch], dtype=np.float32),
                codes=np.frombuffer(b"".join(row[8] for row in batch),
                                    dtype=np.uint8).reshape(len(batch), dimension)),
                dimension)
    db.execute(
        """
        DROP TABLE IF EXISTS memories_int8;
        DROP TABLE IF EXISTS memories_bin;
        DROP TABLE IF EXISTS memories_vec;
        """
    )


def m011_float_vectors_in_blocks(db: apsw.Connection) -> None:
    """The float vectors move from ``memories_float`` (a row a memory: 4.6 kB a memory at
    1024-d, a 4 kB page cannot hold a 4,096-byte row) into ``float_blocks`` (32 a row,
    ``float_blocks``), in id order, in batches; then ``memories_float`` goes. In the
    migration's transaction, like every step: an interrupted migration leaves the m010 bank.
    The file keeps its size until a ``VACUUM`` (freed pages are zeroed and reused)."""
    if not _table_exists(db, "memories_float"):
        return
    import numpy as np

    from .float_blocks import FloatRows, append_vectors

    embedder = one_row(db.execute("SELECT value FROM meta WHERE key = 'embedder'"))[0]
    dimension = int(json.loads(embedder)["dimension"])
    create_float_blocks(db)
    cursor = db.execute("SELECT memory_id, embedding FROM memories_float ORDER BY memory_id")
    while batch := list(itertools.islice(cursor, 4096)):
        append_vectors(db, FloatRows(
            ids=np.array([row[0] for row in batch], dtype=np.int64),
            vectors=np.frombuffer(b"".join(row[1] for row in batch),
                                  dtype=np.float32).reshape(len(batch), dimension)),
            dimension)
    db.execute("DROP TABLE memories_float")


def m012_memory_acts(db: apsw.Connection) -> None:
    """Each memory says what it is (``ingest.acts``): a report of something done, a plan, a
    question, a request to the assistant, the assistant's answer; read here from the turn
    (its text, its speaker, whether the conversation has an assistant) for the turn memories
    of banks written before, from the content for extracted ones, as ingest reads them."""
    db.execute("ALTER TABLE memories ADD COLUMN act TEXT NOT NULL DEFAULT 'report'")
    _read_acts_again(db)


def m013_acts_read_again(db: apsw.Connection) -> None:
    """The acts read again as ingest reads them now: a name then a verb's past that is
    another verb's base ("Tom saw the Velvet Tides", beside "to saw") is someone else's
    doing, which banks written before read as the writer's report; a name's capitalised words
    are no verb ("The Hollow Pines at the Old Theatre tonight" is the writer's report, which
    they read as someone else's: "Pines")."""
    _read_acts_again(db)


def m014_plans_in_other_words(db: apsw.Connection) -> None:
    """The acts read again: "Planning a trip to Rome" and "Fancy a hike on Sunday" look
    ahead (a plan), which banks written before read as the writer's report."""
    _read_acts_again(db)


def m015_relayed_news(db: apsw.Connection) -> None:
    """The acts read again: news relayed in the writer's words ("Heard Tom got a promotion",
    "Apparently Sofia moved to Bristol") is someone else's doing, which banks written before
    read as the writer's report."""
    _read_acts_again(db)


def m016_names_and_unknown_verbs(db: apsw.Connection) -> None:
    """The acts read again: a name of several words opening with a word that is also a verb
    ("Echo Valley Band announced a tour") and a verb's past the lexicon does not know ("Lena
    texted about the weekend") open someone else's doing, which banks written before read as
    the writer's report."""
    _read_acts_again(db)


def m017_done_to_the_writer(db: apsw.Connection) -> None:
    """The acts read again: what someone else did to or for the writer ("Friends threw me a
    surprise party", "Aisha keeps telling me to see Night Harbor") is read apart from the
    writer's own doing, which banks written before read it as."""
    _read_acts_again(db)


def _read_acts_again(db: apsw.Connection) -> None:
    """Every memory's act as ``ingest.acts.read_act`` reads it: a turn memory's from its
    turn (text, speaker, whether the conversation has an assistant), an extracted one's from
    its content (the assistant's answer when only the assistant's turns hold it)."""
    from ..ingest.acts import ANSWER, ASSISTANT_SPEAKER, read_act

    with_assistant = {row[0] for row in db.execute(
        "SELECT DISTINCT conversation_id FROM participants WHERE lower(name) = ?",
        (ASSISTANT_SPEAKER,))}
    for batch in _turn_memory_batches(db):
        db.executemany("UPDATE memories SET act = ? WHERE id = ? AND act != ?", [
            (act, memory_id, act) for memory_id, conversation_id, _, speaker, text in batch
            for act in [read_act(text, speaker, to_assistant=conversation_id in with_assistant)]])
    extracted = db.execute(
        """SELECT m.id, m.content,
                  coalesce(min(lower(t.speaker) = :assistant), 0) AS assistant_only
           FROM memories AS m
           LEFT JOIN memory_turns AS mt ON mt.memory_id = m.id
           LEFT JOIN turns AS t ON t.id = mt.turn_id
           WHERE m.kind != 'turn' GROUP BY m.id""", {"assistant": ASSISTANT_SPEAKER}).fetchall()
    db.executemany("UPDATE memories SET act = ? WHERE id = ? AND act != ?", [
        (act, memory_id, act) for memory_id, content, assistant_only in extracted
        for act in [ANSWER if assistant_only else read_act(str(content), "", to_assistant=False)]])


def _turn_memory_batches(db: apsw.Connection, size: int = 4096
                         ) -> Iterator[list[tuple[int, int, str, str, str]]]:
    """``(memory id, conversation id, persons, speaker, turn text)`` of every turn memory,
    in batches read one after the other (the caller may write between them)."""
    last_id = 0
    while True:
        batch = cast("list[tuple[int, int, str, str, str]]", db.execute(
            """SELECT m.id, m.conversation_id, m.persons, t.speaker, t.text
               FROM memories AS m
               JOIN memory_turns AS mt ON mt.memory_id = m.id
               JOIN turns AS t ON t.id = mt.turn_id
               WHERE m.kind = 'turn' AND m.id > ?
               ORDER BY m.id LIMIT ?""", (last_id, size)).fetchall())
        if not batch:
            return
        last_id = batch[-1][0]
        yield batch


def _merged(stored: str, names: Sequence[str]) -> str:
    """A '; '-joined persons list (as ``memories._join_list`` stores lists) with ``names``
    added after what it holds, each once (any case)."""
    persons = {p.casefold(): p for p in stored.split("; ") if p}
    for name in names:
        persons.setdefault(name.casefold(), name)
    return "; ".join(persons.values())


def _table_exists(db: apsw.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ? AND type = 'table'",
                      (name,)).fetchone() is not None


MIGRATIONS: list[Callable[[apsw.Connection], None]] = [
    m001_core_tables, m002_fts, m003_neighbour_text, m004_fts_secure_delete, m005_binary_index,
    m006_turns_in_session_order, m007_int8_codes, m008_vector_sum, m009_mentioned_persons,
    m010_vectors_stored_once, m011_float_vectors_in_blocks, m012_memory_acts,
    m013_acts_read_again, m014_plans_in_other_words, m015_relayed_news,
    m016_names_and_unknown_verbs, m017_done_to_the_writer,
]
SCHEMA_VERSION = len(MIGRATIONS)


def applied_migrations(db: apsw.Connection) -> set[str]:
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER)"
    )
    return {row[0] for row in db.execute("SELECT name FROM schema_migrations")}


def migrate(db: apsw.Connection, now: int) -> list[str]:
    """Apply every missing migration in order, atomically. Returns the names applied."""
    applied_now: list[str] = []
    with db:
        done = applied_migrations(db)
        for migration in MIGRATIONS:
            if migration.__name__ in done:
                continue
            migration(db)
            db.execute(
                "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                (migration.__name__, now),
            )
            applied_now.append(migration.__name__)
    return applied_now
