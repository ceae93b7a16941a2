"""Where an encrypted bank's key comes from: a key file (``--key-file``, config ``key_file``,
``RAMEM_KEY_FILE``), then ``RAMEM_KEY``; the CLI asks at a terminal when neither is given.

A key file holds the passphrase (one trailing newline is not part of it) and must be readable
by its owner alone: a key anyone on the machine can read protects nothing, so it is refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .config import KEY_VARIABLE
from .errors import BankKeyError
from .store.encryption import check_passphrase
from .types import BankKey


def read_key_file(path: str | Path, source: str | None = None) -> BankKey:
    file = Path(path).expanduser()
    source = source or f"the key file {file}"
    try:
        status = file.stat()
    except FileNotFoundError:
        raise BankKeyError(f"no key file at {file}", "give the path of the file that holds "
                           "the bank's passphrase") from None
    if not stat.S_ISREG(status.st_mode):
        raise BankKeyError(f"{file} is not a file", "a key file holds the passphrase")
    if os.name == "posix" and status.st_mode & 0o077:
        raise BankKeyError(
            f"the key file {file} can be read by others (mode {stat.S_IMODE(status.st_mode):o})",
            f"make it yours alone: chmod 600 {file}",
        )
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise BankKeyError(f"the key file {file} is not UTF-8 text",
                           "write the passphrase into it as text") from None
    return check_passphrase(BankKey(text.removesuffix("\n").removesuffix("\r"), source))


def key_from_sources(key_file: str | None, variable: str = KEY_VARIABLE) -> BankKey | None:
    """The key a key file or the environment gives, in that order; None when neither does."""
    if key_file:
        return read_key_file(key_file)
    passphrase = os.environ.get(variable)
    if passphrase:
        return check_passphrase(BankKey(passphrase, variable))
    return None
