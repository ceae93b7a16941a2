"""docs/usage.md's command reference ("The commands at a glance") against the click command tree.

Every command and subcommand of ``ramem`` has an entry there, every option it takes is shown
in that entry, and everything the reference shows exists: a command the CLI lacks, or an
option that is not the command's (or a global one), is a stale line.

How the reference is read: a line indented by two spaces starts an entry, deeper indented lines
continue it. ``a | b`` separates alternatives; an alternative that starts with a lower-case word
names a command (in a group's entry, ``config list | get KEY``, a subcommand of the group).
Options (``--name``, ``--[no-]name`` for both forms) belong to the command named last before
them. An upper-case ``NAME:`` entry defines a placeholder that ``[NAME]`` stands for (TUNING).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest

from ramem_local.cli import cli

USAGE = Path(__file__).resolve().parent.parent / "docs" / "usage.md"
HEADING = "## The commands at a glance"
HELP_OPTIONS = {"-h", "--help"}

OPTION = re.compile(r"--(\[no-\])?([a-z][a-z0-9-]*)")
COMMAND_WORD = re.compile(r"[a-z][a-z-]*")
ALTERNATIVES = re.compile(r"\s+\|\s+")
PLACEHOLDER_DEFINITION = re.compile(r"([A-Z][A-Z_]*):\s")


@dataclass
class Reference:
    """What the reference documents: global options and, per command path
    (``("config", "get")``), the options shown for it."""

    global_options: set[str] = field(default_factory=set)
    commands: dict[tuple[str, ...], set[str]] = field(default_factory=dict)


def reference_block(page: str) -> str:
    """The first ``text`` code block after the reference's heading."""
    assert HEADING in page, f"docs/usage.md has no {HEADING!r} section"
    section = page[page.index(HEADING):]
    match = re.search(r"```text\n(.*?)```", section, re.DOTALL)
    assert match, f"the {HEADING!r} section has no ```text block"
    return match.group(1)


def options_in(text: str) -> set[str]:
    found = set()
    for match in OPTION.finditer(text):
        found.add(f"--{match.group(2)}")
        if match.group(1):
            found.add(f"--no-{match.group(2)}")
    return found


def entries(block: str) -> tuple[str, list[str]]:
    """The usage lines before the first entry, and each entry's text (its lines joined)."""
    head: list[str] = []
    found: list[list[str]] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 2:
            found.append([line.strip()])
        elif found:
            found[-1].append(line.strip())
        else:
            head.append(line)
    return "\n".join(head), ["\n".join(lines) for lines in found]


def read_reference(block: str, groups: set[str]) -> Reference:
    head, texts = entries(block)
    reference = Reference(global_options=options_in(head))
    placeholders = {}
    for text in texts:
        definition = PLACEHOLDER_DEFINITION.match(text)
        if definition:
            placeholders[definition.group(1)] = text[definition.end():]
    for text in texts:
        if PLACEHOLDER_DEFINITION.match(text):
            continue
        for name, meaning in placeholders.items():
            text = text.replace(f"[{name}]", meaning)
        group = text.split()[0] if text.split()[0] in groups else None
        current: tuple[str, ...] | None = None
        for position, alternative in enumerate(ALTERNATIVES.split(text)):
            words = alternative.split()
            skip = 1 if group and position == 0 else 0  # the group's own name
            if len(words) > skip and COMMAND_WORD.fullmatch(words[skip]):
                current = (group, words[skip]) if group else (words[skip],)
                reference.commands.setdefault(current, set())
                words = words[skip + 1:]
            assert current is not None, f"an entry that names no command: {text!r}"
            reference.commands[current] |= options_in(" ".join(words))
    return reference


def command_tree(group: click.Group) -> dict[tuple[str, ...], click.Command]:
    """Every visible command and subcommand, by path; groups by their own path too."""
    tree: dict[tuple[str, ...], click.Command] = {}
    for name, command in group.commands.items():
        if command.hidden:
            continue
        tree[(name,)] = command
        if isinstance(command, click.Group):
            tree.update({(name, *path): sub for path, sub in command_tree(command).items()})
    return tree


def options_of(command: click.Command) -> set[str]:
    """A command's long options (a short alias such as ``-k`` is the same option)."""
    return {name for parameter in command.params if isinstance(parameter, click.Option)
            for name in (*parameter.opts, *parameter.secondary_opts)
            if name.startswith("--")} - HELP_OPTIONS


TREE = command_tree(cli)
GROUPS = {path[0] for path, command in TREE.items() if isinstance(command, click.Group)}
LEAVES = sorted(path for path, command in TREE.items() if not isinstance(command, click.Group))
GLOBAL_OPTIONS = options_of(cli)


@pytest.fixture(scope="module")
def reference() -> Reference:
    return read_reference(reference_block(USAGE.read_text(encoding="utf-8")), GROUPS)


def test_every_command_of_the_cli_has_an_entry(reference):
    missing = [" ".join(path) for path in LEAVES if path not in reference.commands]
    assert missing == [], f"commands missing from docs/usage.md's {HEADING!r}: {missing}"


def test_every_command_the_reference_shows_exists(reference):
    unknown = [" ".join(path) for path in reference.commands if path not in TREE]
    assert unknown == [], f"docs/usage.md's {HEADING!r} shows commands ramem lacks: {unknown}"


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_every_option_of_a_command_is_in_its_entry(reference, path):
    shown = reference.commands.get(path, set())
    missing = sorted(options_of(TREE[path]) - shown)
    assert missing == [], f"`ramem {' '.join(path)}` options missing from docs/usage.md: {missing}"


def test_every_option_the_reference_shows_exists(reference):
    stale = {" ".join(path): sorted(shown - options_of(TREE[path]) - GLOBAL_OPTIONS)
             for path, shown in reference.commands.items() if path in TREE}
    assert {path: options for path, options in stale.items() if options} == {}


def test_the_global_options_are_the_usage_line(reference):
    assert reference.global_options == GLOBAL_OPTIONS


# ------------------------------------------------------------------- the reader on its own


SAMPLE = """\
ramem [--db FILE] [--[no-]color] COMMAND

  add TEXT [--at WHEN]          a journal entry
  list [--limit N] | show ID [--json]
  stats                         counts
  config list [--json] | get KEY
         | unset KEY            the config file
  eval run FILE [TUNING]
                                (with --llm)
  TUNING: --depth N --[no-]multi-step
"""


def test_the_reader_attributes_options_to_the_command_named_last_before_them():
    reference = read_reference(SAMPLE, groups={"config", "eval"})
    assert reference.global_options == {"--db", "--color", "--no-color"}
    assert reference.commands == {
        ("add",): {"--at"},
        ("list",): {"--limit"},
        ("show",): {"--json"},
        ("stats",): set(),
        ("config", "list"): {"--json"},
        ("config", "get"): set(),
        ("config", "unset"): set(),
        ("eval", "run"): {"--depth", "--multi-step", "--no-multi-step", "--llm"},
    }
