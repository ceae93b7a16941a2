"""Encrypted banks: SQLite3 Multiple Ciphers (the ``apsw-sqlite3mc`` build of apsw) encrypts
every page of the bank file and of its write-ahead log with a key derived from a passphrase.

Two ciphers are offered (docs/privacy.md says why, with the measurements):

- ``chacha20`` (the default): ChaCha20-Poly1305, each page authenticated; its key derivation
  takes ~0.04 s, so a one-off ``ramem search`` stays fast.
- ``sqlcipher``: AES-256 with SQLCipher 4's settings, so DB Browser for SQLCipher and the
  ``sqlcipher`` shell open the bank; its key derivation (PBKDF2, 256,000 rounds) costs
  ~0.25 s on every open.

Turning a bank from one key to another (``encrypt``, ``rekey``) never rewrites it in place:
a consistent copy is written beside it under the new key (``VACUUM INTO``), checked, and
renamed over it, so a process killed at any moment leaves the old bank or the new one whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import apsw

from ..errors import BankKeyError, BankLockedError, InputError
from ..types import BankKey

CIPHERS = ("chacha20", "sqlcipher")
DEFAULT_CIPHER = "chacha20"
# What SQLite3 Multiple Ciphers needs beside the cipher's name: sqlcipher with SQLCipher 4's
# settings (other tools open it); chacha20 with the library's own.
_CIPHER_SETTINGS: dict[str, dict[str, int]] = {"chacha20": {}, "sqlcipher": {"legacy": 4}}

SQLITE_HEADER = b"SQLite format 3\x00"
# The copy written beside a bank that is being encrypted or rekeyed (renamed over it at the end).
REWRITE_SUFFIX = ".ramem-rewrite"
# The plain copy `ramem decrypt --to FILE` writes before renaming it to FILE.
PARTIAL_SUFFIX = ".ramem-partial"

NEW, PLAIN, ENCRYPTED = "new", "plain", "encrypted"
BANK_FILE_MODE = 0o600


def file_state(path: Path) -> str:
    """NEW (no file, or an empty one), PLAIN (a SQLite header) or ENCRYPTED (anything else:
    an encrypted bank's first page is ciphertext — or a file that is no database at all)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return NEW
    if not head:
        return NEW
    return PLAIN if head == SQLITE_HEADER else ENCRYPTED


def bank_is_encrypted(path: str | Path) -> bool:
    """Whether the file at ``path`` is an encrypted bank (or no SQLite database at all)."""
    return file_state(Path(path)) == ENCRYPTED


def check_passphrase(key: BankKey) -> BankKey:
    if not key.passphrase:
        raise BankKeyError(f"the key from {key.source} is empty", "give a passphrase")
    if "\x00" in key.passphrase:
        raise BankKeyError(f"the key from {key.source} holds a NUL character",
                           "give a passphrase of text")
    return key


def check_cipher(cipher: str) -> str:
    if cipher not in CIPHERS:
        raise InputError(f"unknown cipher {cipher!r} (ramem offers: {', '.join(CIPHERS)})")
    return cipher


def apply_key(db: apsw.Connection, key: BankKey, cipher: str) -> None:
    """Key a connection before its first read: the cipher, its settings, then the passphrase."""
    db.pragma("cipher", cipher)
    for name, value in _CIPHER_SETTINGS[cipher].items():
        db.pragma(name, value)
    db.pragma("key", key.passphrase)


def cipher_order(preferred: str | None) -> list[str]:
    """The ciphers to try on an encrypted bank: the one asked for (or the default) first."""
    first = preferred or DEFAULT_CIPHER
    return [first] + [c for c in CIPHERS if c != first]


def wrong_key_error(path: str, key: BankKey) -> BankKeyError:
    return BankKeyError(
        f"the key from {key.source} does not open {path}",
        f"check the passphrase (ramem reads banks encrypted with {' or '.join(CIPHERS)}; a bank "
        f"encrypted by another tool with other settings cannot be opened)",
    )


def missing_key_error(path: str) -> BankKeyError:
    return BankKeyError(
        f"{path} is encrypted (or is not a SQLite database)",
        "give its key: --key-file FILE (a file only you can read), RAMEM_KEY, or run the "
        "command in a terminal to be asked for it",
    )


def key_for_plain_error(path: str, key: BankKey) -> BankKeyError:
    return BankKeyError(
        f"{path} is not encrypted, but a key was given ({key.source})",
        f"to encrypt it run `ramem --db {path} encrypt`; to open it as it is, give no key",
    )


# ---------------------------------------------------------------------- turning a bank over
def copy_uri(target: Path, key: BankKey | None, cipher: str) -> str:
    """The ``VACUUM INTO`` target: a URI naming the cipher and key, or an empty key for a
    clear copy (without one, the copy of an encrypted bank takes the bank's own key)."""
    name = quote(str(target.resolve()))
    if key is None:
        return f"file:{name}?key="
    settings = "".join(f"&{k}={v}" for k, v in _CIPHER_SETTINGS[cipher].items())
    return f"file:{name}?cipher={cipher}{settings}&key={quote(key.passphrase, safe='')}"


def create_owner_only(file: Path, *, exist_ok: bool = False) -> None:
    """An empty file with mode 0600 (an empty file is an empty SQLite database), created so
    that no moment exists in which another user could open it."""
    try:
        fd = os.open(file, os.O_CREAT | os.O_EXCL | os.O_WRONLY, BANK_FILE_MODE)
    except FileExistsError:
        if exist_ok:
            return
        raise
    os.close(fd)
    os.chmod(file, BANK_FILE_MODE)  # whatever the umask let through


def connect(path: str) -> apsw.Connection:
    """A connection that reads URI file names (``VACUUM INTO`` a keyed copy needs them); a
    bank file whose name itself starts with "file:" is given as "./file:...", not a URI."""
    if path.startswith("file:"):
        path = "./" + path
    return apsw.Connection(path, flags=OPEN_FLAGS)


OPEN_FLAGS = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE | apsw.SQLITE_OPEN_URI


def write_copy(db: apsw.Connection, target: Path, key: BankKey | None, cipher: str) -> None:
    """A consistent copy of the open bank as a new file (mode 0600), encrypted under ``key``
    or clear when it is None, on disk (fsync) when this returns."""
    create_owner_only(target)
    uri = copy_uri(target, key, cipher)
    try:
        db.execute("VACUUM INTO ?", (uri,))
    except apsw.Error as exc:
        # SQLite's message quotes the URI, and the URI holds the key: say it without.
        message = str(exc).replace(uri, str(target))
        raise type(exc)(message) from None
    sync_file(target)


def check_copy(target: Path, key: BankKey | None, cipher: str, memories: int) -> None:
    """The copy opens with its key, is whole, and holds every memory."""
    copy = connect(str(target))
    try:
        if key is not None:
            apply_key(copy, key, cipher)
        verdict = [row[0] for row in copy.execute("PRAGMA quick_check")]
        count = next(copy.execute("SELECT count(*) FROM memories"))[0]
    finally:
        copy.close()
    if verdict != ["ok"] or count != memories:
        raise RuntimeError(f"the copy at {target} is not whole ({verdict[:1]}, {count} of "
                           f"{memories} memories); the bank itself is untouched")


def take_sole_use(db: apsw.Connection, path: str) -> None:
    """Leave WAL mode and hold the bank's exclusive lock until the connection closes: no
    other process reads or writes the old file while it is copied and replaced. SQLite
    refuses to leave WAL mode while another connection has the bank open."""
    db.setbusytimeout(1000)
    try:
        alone = db.pragma("journal_mode", "delete") == "delete"
        if alone:
            db.pragma("locking_mode", "exclusive")
            db.execute("BEGIN EXCLUSIVE")
            db.execute("COMMIT")
    except apsw.BusyError:
        alone = False
    if not alone:
        raise BankLockedError(
            f"another process has {path} open",
            "stop it (a `ramem mcp` server, another command) and run this again; "
            "nothing was changed",
        )


def sync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the platform lets a folder be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def overwrite_with_zeros(fd: int) -> None:
    """Zero an open file in place and sync it: the old bank's pages do not stay readable in
    the unlinked file, and a process still holding it finds no database there."""
    size = os.fstat(fd).st_size
    block = bytes(1 << 20)
    os.lseek(fd, 0, os.SEEK_SET)
    written = 0
    while written < size:
        written += os.write(fd, block[: min(len(block), size - written)])
    os.fsync(fd)


def remove_stale(file: Path) -> None:
    """A copy left by a run that was killed (never the bank itself)."""
    try:
        file.unlink()
    except FileNotFoundError:
        pass
