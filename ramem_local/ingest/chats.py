"""Chat exports → :class:`~ramem_local.types.ParsedConversation`, one conversation at a time.

**ChatGPT** (Settings → Data controls → Export; the zip holds ``conversations.json``, newer ones
``conversations-000.json``, ``-001.json``, …): an array of conversations with ``title``,
``create_time``/``update_time`` (Unix seconds), ``id``/``conversation_id``, ``current_node``
and ``mapping``, a tree of nodes ``{id, parent, children, message}``. Only the *visible thread*
is kept: the path from ``current_node`` back to the root (an edited message or a regenerated
answer leaves an abandoned branch, which is not a memory). Without ``current_node`` the thread
follows the last child from the root. A message is kept when its ``author.role`` is ``user``
(speaker ``me``) or ``assistant`` (speaker ``assistant``), it is addressed to everyone
(``recipient`` "all": not a tool call), it is not hidden, and its ``content`` is text:
``text``/``multimodal_text`` (string ``parts``, and the ``text`` of transcribed audio parts;
images and other parts are skipped) or ``code``. System and tool messages, reasoning
(``thoughts``), browsing output and other content types are noise, counted but not stored.
A message without ``create_time`` takes the conversation's, or the time of the message before
it when that is later (so it keeps its place in the thread; the same for Claude's ``created_at``).

**Claude** (Settings → Privacy → Export data; the zip holds ``conversations.json``): an array
of ``{uuid, name, created_at, chat_messages: [{uuid, sender, text, content, created_at}]}``.
``sender`` ``human`` → ``me``, ``assistant`` → ``assistant``; the text is ``text``, or, when that
is empty, the ``text`` items of ``content`` (newer exports). Messages keep list order.

Both: every chat is its own bank conversation, named ``chatgpt: <title> [<id prefix>]`` /
``claude: <name> [<uuid prefix>]`` and recorded with the source ``chatgpt:<id>`` /
``claude:<uuid>`` (a chat renamed later keeps its first name). The message id is the turn's
external id, so importing a newer export adds only what is new. A chat's sessions split where
two messages are more than 6 hours apart (:data:`~.formats.SESSION_GAP_SECONDS`), as in JSONL.

A conversation that cannot be read raises :class:`RecordError` (it is skipped whole); a message
that cannot be read is listed in :attr:`ChatRecord.problems` and skipped, the rest is kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from ..errors import RecordError
from ..types import ParsedConversation, Session, Turn
from .formats import SESSION_GAP_SECONDS, _short, parse_timestamp

ME = "me"
ASSISTANT = "assistant"
_TEXT_PARTS = {"text", "audio_transcription"}


@dataclass
class ChatRecord:
    """One chat of an export, converted."""

    label: str  # how an error names it: id prefix and title
    source: str  # "chatgpt:<id>" — the stable identity of the chat
    conversation: ParsedConversation | None  # None: no visible message
    problems: list[str] = field(default_factory=list)  # messages skipped as unreadable
    noise: int = 0  # system/tool/hidden/non-text messages left out


Converter = Callable[[Any, tzinfo], ChatRecord]


# ---------------------------------------------------------------------------------------------
# ChatGPT
# ---------------------------------------------------------------------------------------------


def chatgpt_record(obj: Any, tz: tzinfo) -> ChatRecord:
    if not isinstance(obj, dict):
        raise RecordError(f"expected a conversation object, got {type(obj).__name__}")
    chat_id = _label_value(obj.get("conversation_id") or obj.get("id"), "id")
    title = _title(obj.get("title"))
    label = f"[{chat_id[:8]} {title!r}]"
    mapping = obj.get("mapping")
    if not isinstance(mapping, dict):
        raise RecordError(f"{label}: 'mapping' must be an object, got {_short(mapping)}")
    chat_time = _first_time(obj, ("create_time", "update_time"), tz, label)
    thread = _visible_thread(mapping, obj.get("current_node"), label)
    messages = []
    for node_id, node in thread:
        message = node.get("message")
        if message is None:  # the root node of the tree holds no message
            continue
        message_id = str(message.get("id") or node_id) if isinstance(message, dict) else node_id
        messages.append((f"message {message_id}", message_id, message))
    record = ChatRecord(label=label, source=f"chatgpt:{chat_id}", conversation=None)
    turns = _collect_turns(record, messages, _chatgpt_turn, chat_time, tz)
    record.conversation = _conversation(f"chatgpt: {title} [{chat_id[:8]}]", turns)
    return record


def _collect_turns(
    record: ChatRecord,
    messages: list[tuple[str, str, Any]],
    to_turn: Callable[[Any, str, int, tzinfo], Turn | None],
    chat_time: int,
    tz: tzinfo,
) -> list[Turn]:
    """The turns of ``(position, message id, message)`` in thread order. A message without a
    time of its own takes the latest time so far (never earlier than the chat's); an unreadable
    one is a problem of the record, noise (system, tool, images) is counted."""
    turns: list[Turn] = []
    for position, message_id, message in messages:
        fallback = max(chat_time, turns[-1].timestamp) if turns else chat_time
        try:
            turn = to_turn(message, message_id, fallback, tz)
        except RecordError as exc:
            record.problems.append(f"{position}: {exc}")
            continue
        if turn is None:
            record.noise += 1
        else:
            turns.append(turn)
    return turns


def _visible_thread(mapping: dict, current: Any, label: str) -> list[tuple[str, dict]]:
    """Root-to-leaf nodes of the thread that ends at ``current_node``."""
    for key, node in mapping.items():
        if not isinstance(node, dict):
            raise RecordError(f"{label}: mapping node {_short(key)} is not an object")
    if current is None:
        current = _last_leaf(mapping, label)
    if not isinstance(current, str) or current not in mapping:
        raise RecordError(f"{label}: current_node {_short(current)} is not in 'mapping'")
    path: list[tuple[str, dict]] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        if node_id in seen:
            raise RecordError(f"{label}: the parents of {_short(current)} form a cycle")
        if node_id not in mapping:
            raise RecordError(f"{label}: parent {_short(node_id)} is not in 'mapping'")
        seen.add(node_id)
        node = mapping[node_id]
        path.append((node_id, node))
        node_id = node.get("parent")
    path.reverse()
    return path


def _last_leaf(mapping: dict, label: str) -> str:
    """Without ``current_node``: from the root, always the last (newest) child."""
    roots = [key for key, node in mapping.items() if node.get("parent") not in mapping]
    if not roots:
        raise RecordError(f"{label}: no current_node and no root in 'mapping'")
    node_id, seen = roots[0], set()
    while True:
        seen.add(node_id)
        children = [c for c in mapping[node_id].get("children") or [] if c in mapping]
        if not children or children[-1] in seen:
            return node_id
        node_id = children[-1]


def _chatgpt_turn(message: Any, message_id: str, chat_time: int, tz: tzinfo) -> Turn | None:
    if not isinstance(message, dict):
        raise RecordError(f"expected a message object, got {_short(message)}")
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if role not in ("user", "assistant"):
        return None
    if message.get("recipient", "all") not in ("all", None):
        return None  # a call to a tool (code interpreter, browser, …)
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    content = message.get("content")
    if not isinstance(content, dict):
        raise RecordError(f"'content' must be an object, got {_short(content)}")
    kind = content.get("content_type")
    if kind in ("text", "multimodal_text"):
        parts = content.get("parts")
        if parts is None:
            return None
        if not isinstance(parts, list):
            raise RecordError(f"'parts' must be a list, got {_short(parts)}")
        texts = [_part_text(part) for part in parts]
        text = "\n".join(t for t in texts if t and t.strip())
    elif kind == "code":
        text = content["text"] if isinstance(content.get("text"), str) else ""
    else:
        return None
    if not text.strip():
        return None
    timestamp = _message_time(message.get("create_time"), chat_time, tz)
    return Turn(speaker=ME if role == "user" else ASSISTANT, text=text, timestamp=timestamp,
                session_ordinal=0, external_id=message_id)


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("content_type") in _TEXT_PARTS:
        text = part.get("text")
        return text if isinstance(text, str) else None
    return None  # an image, a file, audio without transcript


# ---------------------------------------------------------------------------------------------
# Claude
# ---------------------------------------------------------------------------------------------


def claude_record(obj: Any, tz: tzinfo) -> ChatRecord:
    if not isinstance(obj, dict):
        raise RecordError(f"expected a conversation object, got {type(obj).__name__}")
    chat_id = _label_value(obj.get("uuid"), "uuid")
    title = _title(obj.get("name"))
    label = f"[{chat_id[:8]} {title!r}]"
    messages = obj.get("chat_messages")
    if not isinstance(messages, list):
        raise RecordError(f"{label}: 'chat_messages' must be a list, got {_short(messages)}")
    chat_time = _first_time(obj, ("created_at", "updated_at"), tz, label)
    numbered = []
    for index, message in enumerate(messages):
        message_id = (str(message.get("uuid")) if isinstance(message, dict)
                      and message.get("uuid") else f"{chat_id}:{index}")
        numbered.append((f"message {index} ({message_id})", message_id, message))
    record = ChatRecord(label=label, source=f"claude:{chat_id}", conversation=None)
    turns = _collect_turns(record, numbered, _claude_turn, chat_time, tz)
    record.conversation = _conversation(f"claude: {title} [{chat_id[:8]}]", turns)
    return record


def _claude_turn(message: Any, message_id: str, chat_time: int, tz: tzinfo) -> Turn | None:
    if not isinstance(message, dict):
        raise RecordError(f"expected a message object, got {_short(message)}")
    sender = message.get("sender")
    if sender not in ("human", "assistant"):
        return None
    text = message.get("text")
    if text is not None and not isinstance(text, str):
        raise RecordError(f"'text' must be a string, got {_short(text)}")
    if not text or not text.strip():
        content = message.get("content")
        if content is not None and not isinstance(content, list):
            raise RecordError(f"'content' must be a list, got {_short(content)}")
        items = [item.get("text") for item in content or []
                 if isinstance(item, dict) and item.get("type") == "text"]
        text = "\n".join(t for t in items if isinstance(t, str) and t.strip())
    if not text.strip():
        return None
    timestamp = _message_time(message.get("created_at"), chat_time, tz)
    return Turn(speaker=ME if sender == "human" else ASSISTANT, text=text, timestamp=timestamp,
                session_ordinal=0, external_id=message_id)


# ---------------------------------------------------------------------------------------------
# shared
# ---------------------------------------------------------------------------------------------


def _label_value(value: Any, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise RecordError(f"missing {key!r}: expected a non-empty string, got {_short(value)}")
    return str(value)


def _title(value: Any) -> str:
    text = " ".join(value.split()) if isinstance(value, str) else ""
    text = text or "untitled"
    return text if len(text) <= 80 else text[:79] + "…"


def _first_time(obj: dict, keys: tuple[str, ...], tz: tzinfo, label: str) -> int:
    for key in keys:
        value = obj.get(key)
        if value is None:
            continue
        try:
            return parse_timestamp(value, tz)
        except ValueError as exc:
            raise RecordError(f"{label}: {key!r}: {exc}") from None
    raise RecordError(f"{label}: no {' or '.join(repr(k) for k in keys)}")


def _message_time(value: Any, chat_time: int, tz: tzinfo) -> int:
    if value is None:
        return chat_time
    if isinstance(value, float) and not math.isfinite(value):
        raise RecordError("bad create_time: not a finite number")
    try:
        return parse_timestamp(value, tz)
    except ValueError as exc:
        raise RecordError(str(exc)) from None


def _conversation(name: str, turns: list[Turn]) -> ParsedConversation | None:
    """Sessions split at gaps over 6 hours; starts ascend even when clocks do not."""
    if not turns:
        return None
    sessions: list[Session] = []
    latest: int | None = None
    for turn in turns:
        if latest is None or turn.timestamp - latest > SESSION_GAP_SECONDS:
            start = turn.timestamp if latest is None else max(turn.timestamp, sessions[-1].start)
            sessions.append(Session(ordinal=len(sessions) + 1, start=start))
        turn.session_ordinal = len(sessions)
        latest = turn.timestamp if latest is None else max(latest, turn.timestamp)
    participants = list(dict.fromkeys(turn.speaker for turn in turns))
    return ParsedConversation(name=name, sessions=sessions, turns=turns,
                              participants=participants)
