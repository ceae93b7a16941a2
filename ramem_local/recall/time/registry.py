"""The rule type and the tables the rules register into.

``_rule`` registers a rule that matches on its own (its grounder is the decorated function);
``_composite`` registers one whose match continues with one or two anchors ("the week
before X"). The order of registration is the order of ``_RULES``: on overlapping matches of
the same length and start, the rule registered first wins (``engine._without_overlaps``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from .calendar_math import Days, _Context
from .reading import _normal_rel
from .vocabulary import _FLAGS

Grounder = Callable[[re.Match[str], "_Context"], "Days | None"]
Combiner = Callable[[re.Match[str], list[Days], "_Context"], "Days | None"]
Acceptor = Callable[[re.Match[str]], bool]
# An acceptor that also reads the date order of the bank's country ("mdy", "dmy" or None).
OrderAcceptor = Callable[[re.Match[str], "str | None"], bool]


@dataclass(frozen=True)
class _Rule:
    name: str
    # The regex as written (compiled with ``_FLAGS`` at its first use), or compiled. Compiling
    # every rule's regex at import took about a quarter of the time engine's import; a question
    # runs only the rules its words gate in (``engine._find``), so a one-off search compiles few.
    source: str | re.Pattern[str]
    needs: frozenset[str]
    ground: Grounder | None
    accept: Acceptor | None = None
    combine: Combiner | None = None
    joiner: re.Pattern[str] | None = None
    refuses: frozenset[str] = frozenset()  # anchor rules a composite does not take
    accept_in: OrderAcceptor | None = None  # an acceptor that reads the date order
    anchor_for: frozenset[str] = frozenset()  # the composites it anchors (empty: all)
    # The names a template rule ("nth_{unit}") produces, written out ("nth_week", ...) so that
    # a search for one finds the rule; empty for a rule with a plain name.
    expands_to: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if ("{" in self.name) != bool(self.expands_to):
            raise ValueError(f"rule {self.name!r}: list expands_to for a template name, only then")
        shape = re.sub(r"\{\w+\}", "[a-z]+", self.name)  # "nth_{unit}": nth_[a-z]+
        for expanded in self.expands_to:
            if not re.fullmatch(shape, expanded):
                raise ValueError(f"rule {self.name!r}: {expanded!r} in expands_to is not its name")

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source, _FLAGS) if isinstance(self.source, str) else self.source

    def accepts(self, match: re.Match[str], order: str | None = None) -> bool:
        if self.accept_in is not None:
            return self.accept_in(match, order)
        return self.accept is None or self.accept(match)

    def name_for(self, match: re.Match[str]) -> str:
        groups = match.groupdict()
        return self.name_with(groups.get("rel") or "", groups.get("unit") or "")

    def name_with(self, rel: str, unit: str) -> str:
        """The name of a match whose ``rel`` and ``unit`` groups read ``rel`` and ``unit``: a
        template name filled in ("nth_{unit}" with "Week" is "nth_week"), else the name."""
        return self.name.format(rel=_normal_rel(rel), unit=unit.lower())


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    priority: int
    rule: _Rule
    match: re.Match[str]
    anchors: tuple[tuple[_Rule, re.Match[str]], ...] = ()


# An anchor of a composite rule: the rule that matched it, and its match.
Anchor = tuple[_Rule, "re.Match[str]"]


_RULES: list[_Rule] = []
_ANCHOR_RULES: list[_Rule] = []


def _rule(
    name: str,
    pattern: str,
    needs: str,
    *,
    accept: Acceptor | None = None,
    accept_in: OrderAcceptor | None = None,
    anchor: bool = False,
    anchor_for: str = "",
    detect: bool = True,
    vague: bool = False,
    expands_to: tuple[str, ...] = (),
) -> Callable[[Grounder], Grounder]:
    """Register a rule; its grounder is the decorated function (vague rules ground to None).
    ``accept_in`` is an acceptor that also reads the date order of the bank's country;
    ``anchor_for`` names the only composites an anchor completes (default: all);
    ``expands_to`` lists the names a template name produces (``_Rule.expands_to``)."""

    def register(ground: Grounder) -> Grounder:
        rule = _Rule(
            name,
            pattern,
            frozenset(needs.split()),
            None if vague else ground,
            accept,
            accept_in=accept_in,
            anchor_for=frozenset(anchor_for.split()),
            expands_to=expands_to,
        )
        if detect:
            _RULES.append(rule)
        if anchor:
            _ANCHOR_RULES.append(rule)
        return ground

    return register


def _composite(
    name: str,
    prefix: str,
    needs: str,
    *,
    joiner: str | None = None,
    refuses: str = "",
    expands_to: tuple[str, ...] = (),
) -> Callable[[Combiner], Combiner]:
    """Register a rule whose match continues with an anchor (two when ``joiner`` is given);
    ``refuses`` names anchor rules that cannot complete it; ``expands_to`` lists the names a
    template name produces (``_Rule.expands_to``)."""

    def register(combine: Combiner) -> Combiner:
        _RULES.append(
            _Rule(
                name,
                prefix,
                frozenset(needs.split()),
                None,
                combine=combine,
                joiner=None if joiner is None else re.compile(joiner, _FLAGS),
                refuses=frozenset(refuses.split()),
                expands_to=expands_to,
            )
        )
        return combine

    return register

