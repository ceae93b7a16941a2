"""The CLI reference (docs/cli.md), written from the click tree: never kept by hand.

    .venv/bin/python -m ramem_local.cli_reference > docs/cli.md

``tests/test_docs.py`` fails when docs/cli.md differs from what this writes, so the
reference cannot drift from ``ramem --help``.
"""

from __future__ import annotations

import inspect

import click

from .cli import cli

HEADER = """# The ramem CLI, command by command

Written from the command tree (`python -m ramem_local.cli_reference > docs/cli.md`); a test
fails when it differs from `ramem --help`. Every command also answers `--help`.
"""


def _usage(context: click.Context, command: click.Command) -> str:
    pieces = command.collect_usage_pieces(context)
    return " ".join([context.command_path, *pieces])


def _section(context: click.Context, command: click.Command, depth: int) -> list[str]:
    lines = [f"{'#' * depth} `{context.command_path}`", ""]
    help_text = inspect.cleandoc(command.help or "")
    if help_text:
        lines += ["```text", click.unstyle(help_text).replace("\b\n", ""), "```", ""]
    lines += ["```text", _usage(context, command), "```", ""]
    options = [param for param in command.params if isinstance(param, click.Option)
               and not param.hidden]
    if options:
        lines += ["| option | what it does |", "|---|---|"]
        for option in options:
            record = option.get_help_record(context)
            if record is None:
                continue
            names, text = (part.replace("|", "\\|") for part in record)
            lines.append(f"| `{names}` | {text} |")
        lines.append("")
    if isinstance(command, click.Group):
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is None or sub.hidden:
                continue
            child = click.Context(sub, info_name=name, parent=context)
            lines += _section(child, sub, min(depth + 1, 4))
    return lines


def reference() -> str:
    """The whole reference, as docs/cli.md holds it."""
    context = click.Context(cli, info_name="ramem")
    return HEADER + "\n" + "\n".join(_section(context, cli, 2)).rstrip() + "\n"


if __name__ == "__main__":
    click.echo(reference(), nl=False)
