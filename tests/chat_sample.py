"""The chat the extraction tests share (tests of extract.py, anchor.py and llm_pipeline.py):
ten turns in three sessions, and model entries and replies about it.

The ``bank`` fixture, a bank holding the chat, is in chat_fixtures.py: a test module gets it
with ``pytest_plugins = ("chat_fixtures",)``.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ramem_local.api import Memory
from ramem_local.types import ParsedConversation, Session, Turn

UTC = timezone.utc


def ts(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


S1 = ts("2023-05-08 13:56")  # a Monday
S2 = ts("2023-05-25 09:00")
S3 = ts("2023-06-09 18:00")

LINES = [  # (session, speaker, text)
    (1, "Caroline", "Hey Mel! Good to see you."),
    (1, "Melanie", "Hi Caroline! I painted a sunrise over the lake last weekend."),
    (1, "Caroline", "Lovely. I went to an LGBTQ support group yesterday, it was so powerful."),
    (1, "Melanie", "That sounds inspiring, I am proud of you."),
    (2, "Caroline", "I am researching adoption agencies now."),
    (2, "Melanie", "I ran a charity race for mental health last Saturday."),
    (2, "Caroline", "Wow, how far was it?"),
    (2, "Melanie", "Five kilometres, with my kids cheering."),
    (3, "Caroline", "I signed up for a pottery class in Boston."),
    (3, "Melanie", "My dog Luna learned to fetch the newspaper."),
]


def conversation(lines=LINES, *, ids: bool = True, name: str = "chat") -> ParsedConversation:
    starts = {1: S1, 2: S2, 3: S3}
    counters: dict[int, int] = {}
    turns = []
    for session, speaker, text in lines:
        counters[session] = counters.get(session, 0) + 1
        turns.append(Turn(
            speaker=speaker, text=text,
            timestamp=starts[session] + 60 * counters[session],
            session_ordinal=session,
            external_id=f"D{session}:{counters[session]}" if ids else None,
        ))
    used = sorted({s for s, _, _ in lines})
    return ParsedConversation(
        name=name,
        sessions=[Session(ordinal=s, start=starts[s]) for s in used],
        turns=turns,
        participants=["Caroline", "Melanie"],
    )


def entry(content: str, *turns: str, persons=(), event_date=None, **extra) -> dict:
    return {
        "content": content,
        "source_turns": list(turns),
        "persons": list(persons),
        "entities": extra.get("entities", []),
        "keywords": extra.get("keywords", []),
        "location": extra.get("location"),
        "topic": extra.get("topic", "life"),
        "event_date": event_date,
    }


def labels_of(schema: dict) -> list[str]:
    return schema["properties"]["entries"]["items"]["properties"]["source_turns"]["items"]["enum"]


def facts_for_window(messages, schema, max_tokens):
    """A well-behaved model: one entry per window, citing the window's first turn."""
    first = labels_of(schema)[0]
    return {"entries": [entry(f"Fact told in turn {first} of the chat.", first)]}


def stored_turns(memory: Memory) -> list[Turn]:
    cid = memory.store.conversation_id("chat")
    return memory.store.conversation_turns(cid)
