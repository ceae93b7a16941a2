"""The README and docs/ stay true: the CLI reference is the click tree's, every `ramem` command
shown is one the CLI takes, every link between pages lands on a page and a heading, and the
README's tour runs on a small bank."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ramem_local.cli import cli
from ramem_local.cli_reference import reference

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINKED_PAGES = [*PAGES, *sorted((ROOT / "results").glob("*.md"))]
SHELL_BLOCK = re.compile(r"^```(?:bash|sh|shell|console)\n(.*?)^```", re.DOTALL | re.MULTILINE)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


# ------------------------------------------------------------------ the generated reference


def test_the_cli_reference_is_written_from_the_click_tree():
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == reference(), (
        "docs/cli.md differs from the click tree: run "
        "`.venv/bin/python -m ramem_local.cli_reference > docs/cli.md`")


# ------------------------------------------------------------------------------------ links


def slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    found: set[str] = set()
    for match in re.finditer(r"^#{1,6} (.+)$", text, re.MULTILINE):
        base = slug(match.group(1))
        name, number = base, 0
        while name in found:
            number += 1
            name = f"{base}-{number}"
        found.add(name)
    return found


def links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return [target for target in LINK.findall(text)
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]  # http:, mailto:


@pytest.mark.parametrize("page", LINKED_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_lands_on_a_page_and_a_heading(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        landing = (page.parent / path).resolve() if path else page
        if not landing.exists():
            broken.append(f"{target}: no such file")
        elif anchor and landing.suffix == ".md" and anchor not in anchors(landing):
            broken.append(f"{target}: no heading #{anchor} in {landing.name}")
    assert broken == []


def test_the_link_reader_finds_links_and_headings(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n## Choosing an embedder\n\n## Two words, one: `x`\n\n"
                    "See [a](other.md#x) and [b](#choosing-an-embedder), `[c](not.md)`, "
                    "[d](https://example.org).\n\n```text\n[e](inside.md)\n# no heading\n```\n")
    assert links(page) == ["other.md#x", "#choosing-an-embedder"]
    assert anchors(page) == {"top", "choosing-an-embedder", "two-words-one-x"}


# ----------------------------------------------------------------- commands shown in the docs


def shown_commands(page: Path) -> list[str]:
    """Every `ramem ...` line of the page's shell blocks (output lines are not commands)."""
    commands = []
    for block in SHELL_BLOCK.findall(page.read_text(encoding="utf-8")):
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ")
            if re.match(r"(\S*/)?ramem\s", line):
                commands.append(line)
    return commands


def unknown_parts(line: str) -> list[str]:
    """What in ``line`` the click tree does not take: a command, or an option of a command
    (a group's options may come anywhere before its subcommand)."""
    words = shlex.split(line, comments=True)[1:]
    command: click.Command = cli
    allowed = _options(cli)
    problems = []
    position = 0
    while position < len(words):
        word = words[position]
        position += 1
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            option = allowed.get(name)
            if option is None:
                problems.append(f"{name} (not an option of `{command.name}`)")
            elif not option.is_flag and not option.count and "=" not in word:
                position += 1  # its value
            continue
        if isinstance(command, click.Group):
            sub = command.commands.get(word)
            if sub is None:
                problems.append(f"{word} (not a command of `{command.name}`)")
                break
            command = sub
            allowed = {**allowed, **_options(sub)}
        # else: an argument
    return problems


def _options(command: click.Command) -> dict[str, click.Option]:
    return {name: parameter for parameter in command.params
            if isinstance(parameter, click.Option)
            for name in (*parameter.opts, *parameter.secondary_opts)}


SHOWN = [(page, line) for page in PAGES for line in shown_commands(page)]


def test_the_pages_show_commands():
    assert len(SHOWN) > 40
    assert {page.name for page, _ in SHOWN} >= {"README.md", "journaling.md", "usage.md"}


@pytest.mark.parametrize(("page", "line"), SHOWN,
                         ids=[f"{p.name}:{line[:60]}" for p, line in SHOWN])
def test_every_command_shown_is_one_the_cli_takes(page, line):
    assert unknown_parts(line) == []


def test_the_command_reader_finds_what_the_cli_does_not_take():
    assert unknown_parts("ramem --db x.db search 'q' --k 3 --json") == []
    assert unknown_parts("ramem search q --as-of 2024-05-04  # a comment --nope") == []
    assert unknown_parts("ramem serch q") == ["serch (not a command of `cli`)"]
    assert unknown_parts("ramem search q --top 3") == ["--top (not an option of `search`)"]
    assert unknown_parts("ramem models install x --int8") == []
    assert unknown_parts("ramem models instal x") == ["instal (not a command of `models`)"]


# ---------------------------------------------------------------------- the tour, run as shown


def tour_block(heading: str) -> list[str]:
    """The commands of the README's shell block right after the paragraph ``heading``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index(heading):]
    return [line for line in SHELL_BLOCK.search(section).group(1).splitlines()
            if line.startswith("ramem ")]


def run_line(line: str, bank: Path) -> str:
    words = shlex.split(line, comments=True)[1:]
    result = CliRunner().invoke(cli, ["--db", str(bank), *words], prog_name="ramem")
    assert result.exit_code == 0, f"{line}\n{result.output}"
    return result.stdout


@pytest.mark.real_model
def test_the_readme_journal_and_forget_tour_runs_as_shown(tmp_path, monkeypatch):
    """Keep a journal, then forget: on a new bank in a new models folder, with the default
    embedder the first command installs, as a new user would run them."""
    for name in list(os.environ):
        if name.startswith("RAMEM_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAMEM_CONFIG", str(tmp_path / "no-config.json"))
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(tmp_path / "models"))
    bank = tmp_path / "journal.db"
    journal = tour_block("**Keep a journal**")
    assert [line.split()[1] for line in journal] == ["add", "add", "search", "timeline"]
    outputs = [run_line(line, bank) for line in journal]
    assert "Cooked shakshuka for Leo" in outputs[2].splitlines()[1]  # the first result
    assert "Cooked shakshuka for Leo" in outputs[3]
    forget = tour_block("**Forget**")
    assert "would forget 1 memories" in run_line(forget[0], bank)
    assert "forgot 1 memories" in run_line(forget[1], bank)
    assert "shakshuka" not in run_line("ramem list", bank)
