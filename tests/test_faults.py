"""Faults of the machine, not of the input: a full disk during ingest, a read-only bank, a
damaged model file.

A full disk is simulated with the file-size limit (RLIMIT_FSIZE) of the ramem process: writes
past it fail with EFBIG (Python ignores SIGXFSZ), which SQLite reports as an I/O error — the
same path as ENOSPC, and it works for root too. Each case must end in one readable line, a
bank that passes integrity_check, and (for the disk) a re-run that completes the work. The
limits are set by ``limited_process.py``, which then becomes ``ramem``, so the MCP server (a
process the SDK's client starts) is held exactly as the CLI is.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import apsw
import pytest
from mcp import Client, StdioServerParameters

CLI_SCRIPT = Path(__file__).resolve().parents[1] / "cli.py"
LIMITED_PROCESS = Path(__file__).resolve().with_name("limited_process.py")


def limited(*command: str, fsize: int | None = None, as_user: bool = False) -> list[str]:
    """``command`` run through ``limited_process.py`` with a file-size limit, and (as root)
    held to file permissions."""
    options = [*(["--fsize", str(fsize)] if fsize is not None else []),
               *(["--as-user"] if as_user else [])]
    return [sys.executable, str(LIMITED_PROCESS), *options, *command]


def ramem(*args: str, fsize: int | None = None,
          as_user: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(CLI_SCRIPT.parent)}
    return subprocess.run(limited(sys.executable, str(CLI_SCRIPT), *args, fsize=fsize,
                                  as_user=as_user),
                          capture_output=True, text=True, env=env, timeout=300)


def write_turns(path: Path, count: int) -> Path:
    rows = [{"speaker": "me", "text": f"Line {i} about the garden and the weather, number {i}.",
             "timestamp": 1714816800 + 60 * i, "session": i // 50 + 1} for i in range(count)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def bank_rows(bank: Path) -> tuple[str, int, int, int]:
    connection = apsw.Connection(str(bank))
    try:
        integrity = connection.execute("PRAGMA integrity_check").fetchone()[0]
        turns = connection.execute("SELECT count(*) FROM turns").fetchone()[0]
        memories = connection.execute("SELECT count(*) FROM memories").fetchone()[0]
        fts = connection.execute("SELECT count(*) FROM memories_fts").fetchone()[0]
    finally:
        connection.close()
    return integrity, turns, memories, fts


def test_a_full_disk_during_ingest_is_one_line_the_bank_stays_sound_and_a_rerun_resumes(
        tmp_path):
    bank = tmp_path / "bank.db"
    source = write_turns(tmp_path / "turns.jsonl", 3000)
    assert ramem("--db", str(bank), "add", "first entry").returncode == 0

    full = ramem("--db", str(bank), "ingest", str(source), fsize=bank.stat().st_size + 65536)
    assert full.returncode == 1, full.stderr
    last = full.stderr.strip().splitlines()[-1]
    assert last == (f"error: the bank {bank} could not be read or written (disk I/O error): is "
                    "the disk full or failing, or the file larger than allowed? What was written "
                    "before is intact; free space (or check the disk) and run the same command "
                    "again to resume")
    assert "Traceback" not in full.stderr
    integrity, turns, memories, fts = bank_rows(bank)
    assert integrity == "ok" and 1 <= turns < 3001 and memories == fts == turns

    resumed = ramem("--db", str(bank), "ingest", str(source))
    assert resumed.returncode == 0, resumed.stderr
    assert bank_rows(bank) == ("ok", 3001, 3001, 3001)


def bank_content(bank: Path) -> dict[str, list[tuple]]:
    connection = apsw.Connection(str(bank), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {table: sorted(map(tuple, connection.execute(f"SELECT * FROM {table}")), key=repr)
                for table in ("conversations", "sessions", "turns", "memories", "memory_turns")}
    finally:
        connection.close()


def permissions_are_enforced(path: Path) -> bool:
    """Whether a child run with ``as_user`` is refused to write ``path`` (read-only)."""
    probe = subprocess.run(limited(sys.executable, "-c", f"open({str(path)!r}, 'ab')",
                                   as_user=True), capture_output=True, text=True)
    return probe.returncode != 0 and "PermissionError" in probe.stderr


@pytest.mark.parametrize("read_only", ["file", "file and folder"])
def test_a_read_only_bank_is_one_line_stays_intact_and_the_ingest_completes_once_writable(
        tmp_path, read_only):
    folder = tmp_path / "bank"
    folder.mkdir()
    bank = folder / "bank.db"
    source = write_turns(folder / "turns.jsonl", 300)
    (folder / "part").mkdir()
    first = write_turns(folder / "part" / "turns.jsonl", 100)  # the same conversation's start
    assert ramem("--db", str(bank), "ingest", str(first)).returncode == 0
    before = bank_content(bank)
    bank.chmod(0o444)
    if read_only == "file and folder":
        folder.chmod(0o555)
    try:
        if not permissions_are_enforced(bank):
            pytest.skip("cannot run a child held to file permissions (as root: no "
                        "CAP_SETPCAP to drop CAP_DAC_OVERRIDE)")
        refused = ramem("--db", str(bank), "ingest", str(source), as_user=True)
        if read_only == "file":  # reading needs no write: search still answers
            found = ramem("--db", str(bank), "search", "garden weather", as_user=True)
            assert found.returncode == 0 and "Line" in found.stdout, found.stderr
    finally:
        folder.chmod(0o755)
        bank.chmod(0o600)
    assert refused.returncode == 1, refused.stderr
    what = {"file": "the bank file is", "file and folder": "the bank file and its folder are"}
    assert refused.stderr.strip().splitlines()[-1] == (
        f"error: the bank {bank} is read-only ({what[read_only]} not writable for this user): "
        "nothing was written; make it writable and run the same command again")
    assert "Traceback" not in refused.stderr and "bug" not in refused.stderr
    assert bank_rows(bank) == ("ok", 100, 100, 100)
    assert bank_content(bank) == before

    resumed = ramem("--db", str(bank), "ingest", str(source), as_user=True)
    assert resumed.returncode == 0, resumed.stderr
    assert bank_rows(bank) == ("ok", 300, 300, 300)


# Room for the 32 KiB shared-memory index of the write-ahead log, not for the log of one write.
FULL_DISK_FSIZE = 40 * 1024
LONG_NOTE = "Planted tomatoes, beans and basil along the south fence of the garden. " * 400


def mcp_tool_error(bank: Path, tool: str, arguments: dict[str, Any], *,
                   fsize: int | None = None, as_user: bool = False) -> str:
    """The error text of one call of ``tool`` on a ``ramem mcp`` server over ``bank``, the
    server started by the SDK's stdio client through ``limited_process.py``."""
    command = limited(sys.executable, str(CLI_SCRIPT), "--db", str(bank), "mcp", fsize=fsize,
                      as_user=as_user)
    results: list[Any] = []

    async def session() -> None:
        server = StdioServerParameters(command=command[0], args=command[1:])
        async with Client(server, read_timeout_seconds=120) as client:
            results.append(await client.call_tool(tool, arguments))

    anyio.run(session)
    assert results[0].is_error, results[0]
    return "".join(getattr(part, "text", "") for part in results[0].content)


def test_a_full_disk_is_the_same_one_line_from_the_cli_and_an_mcp_tool(tmp_path):
    bank = tmp_path / "bank.db"
    assert ramem("--db", str(bank), "add", "first entry").returncode == 0

    cli = ramem("--db", str(bank), "add", LONG_NOTE, fsize=FULL_DISK_FSIZE)
    tool = mcp_tool_error(bank, "remember", {"text": LONG_NOTE}, fsize=FULL_DISK_FSIZE)

    assert cli.returncode == 1, cli.stderr
    assert cli.stderr.strip().splitlines()[-1] == tool
    assert tool == (f"error: the bank {bank} could not be read or written (disk I/O error): is "
                    "the disk full or failing, or the file larger than allowed? What was written "
                    "before is intact; free space (or check the disk) and run the same command "
                    "again to resume")
    assert bank_rows(bank) == ("ok", 1, 1, 1)


def test_a_read_only_bank_is_the_same_one_line_from_the_cli_and_an_mcp_tool(tmp_path):
    bank = tmp_path / "bank.db"
    assert ramem("--db", str(bank), "add", "first entry").returncode == 0
    bank.chmod(0o444)
    try:
        if not permissions_are_enforced(bank):
            pytest.skip("cannot run a child held to file permissions (as root: no "
                        "CAP_SETPCAP to drop CAP_DAC_OVERRIDE)")
        cli = ramem("--db", str(bank), "add", "second entry", as_user=True)
        tool = mcp_tool_error(bank, "remember", {"text": "second entry"}, as_user=True)
    finally:
        bank.chmod(0o600)

    assert cli.returncode == 1, cli.stderr
    assert cli.stderr.strip().splitlines()[-1] == tool
    assert tool == (f"error: the bank {bank} is read-only (the bank file is not writable for "
                    "this user): nothing was written; make it writable and run the same command "
                    "again")
    assert bank_rows(bank) == ("ok", 1, 1, 1)


@pytest.mark.real_model
def test_a_truncated_onnx_model_is_refused_before_anything_is_written(tmp_path, minilm_dir):
    folder = tmp_path / "minilm"
    shutil.copytree(minilm_dir, folder)
    model = folder / "model.onnx"
    model.chmod(0o644)
    model.write_bytes(model.read_bytes()[: 1 << 20])
    bank = tmp_path / "bank.db"
    result = ramem("--db", str(bank), "--embedder", str(folder), "add", "Planted tomatoes")
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().startswith("error: cannot load ONNX model")
    assert not bank.exists() or bank_rows(bank)[1] == 0


@pytest.mark.real_model
def test_an_embedder_whose_file_changed_is_refused_before_anything_is_written(tmp_path,
                                                                             minilm_dir):
    folder = tmp_path / "minilm"
    shutil.copytree(minilm_dir, folder)
    bank = tmp_path / "bank.db"
    assert ramem("--db", str(bank), "--embedder", str(folder), "add", "first").returncode == 0
    model = folder / "model.onnx"
    model.chmod(0o644)
    model.write_bytes(model.read_bytes() + b"\0")  # loads, but is another file
    result = ramem("--db", str(bank), "--embedder", str(folder), "add", "second")
    assert result.returncode == 1, result.stderr
    assert "error:" in result.stderr and "Traceback" not in result.stderr
    assert bank_rows(bank)[1:] == (1, 1, 1)


def test_a_truncated_gguf_is_refused_before_anything_is_written(tmp_path):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\0" * 64)
    bank = tmp_path / "bank.db"
    source = write_turns(tmp_path / "turns.jsonl", 10)
    result = ramem("--db", str(bank), "--llm", str(gguf), "ingest", str(source))
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error:") and "model.gguf" in last
    assert "this is a bug" not in result.stderr
    assert not bank.exists() or bank_rows(bank)[1] == 0
