"""Small text helpers shared by retrieval, ingest and evaluation."""

from __future__ import annotations

import hashlib
import re

WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TOKENS = 32

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll
    i'm i've if in into is isn't it it's its itself just let's me more most mustn't my myself no
    nor not now of off on once only or other ought our ours ourselves out over own same shan't she
    she'd she'll she's should shouldn't so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those through to
    too under until up very was wasn't we we'd we'll we're we've were weren't what what's when
    when's where where's which while who who's whom why why's will with won't would wouldn't you
    you'd you'll you're you've your yours yourself yourselves s t d ll m re ve y did does get got
    go went kind many much one ones thing things something anything yes yeah oh hey hi
    """.split()
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, underscore; any script)."""
    return [w.lower() for w in WORD.findall(text)]


def content_words(text: str, min_length: int = 2) -> list[str]:
    """Words that carry meaning: no stopwords, no single characters; order kept, no repeats."""
    seen: dict[str, None] = {}
    for w in words(text):
        if len(w) >= min_length and w not in STOPWORDS:
            seen.setdefault(w, None)
    return list(seen)


def fts_match_query(text: str, extra_terms: list[str] | None = None) -> str | None:
    """A safe FTS5 MATCH expression: an OR of double-quoted tokens, never raw user text.

    Quoting every token turns FTS5 syntax (``"``, ``*``, ``NEAR``, ``-``, ``:``, ``AND``) into
    plain strings. A question made only of stopwords falls back to its stopwords; a question
    with no word at all gives None (no lexical list).
    """
    terms = content_words(text)
    for extra in extra_terms or []:
        terms.extend(t for t in content_words(extra) if t not in terms)
    if not terms:
        terms = list(dict.fromkeys(words(text)))
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:MAX_QUERY_TOKENS])


def normalised_hash(text: str) -> str:
    """Hash of text after case folding and whitespace collapsing (for exact de-duplication)."""
    normal = " ".join(text.casefold().split())
    return hashlib.sha256(normal.encode()).hexdigest()
