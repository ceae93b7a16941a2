"""Run a program held to the limits a fault test needs:
``python limited_process.py [--fsize BYTES] [--as-user] PROGRAM [ARG...]``.

``--fsize``: the file-size limit (RLIMIT_FSIZE). A write past it fails with EFBIG (Python
ignores SIGXFSZ), which SQLite reports as an I/O error, the same path as ENOSPC; it holds for
root too. ``--as-user``: run as root, give up root's right to ignore file permissions, so the
kernel checks the mode bits of the bank and its folder as for any user (see
:func:`held_to_permissions`).

A launcher that sets the limits and then becomes the program (``exec``), rather than a
``preexec_fn``, so that a process someone else's code starts — the MCP SDK's stdio client
starting ``ramem mcp`` — is held exactly as the CLI is.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource

# Linux capabilities that let root write, read and chmod any file whatever its mode bits
# (capabilities(7)): CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER.
PERMISSION_OVERRIDES = (1, 2, 3)
PR_CAPBSET_DROP = 24  # prctl(2)


def held_to_permissions() -> None:
    """As root, drop the capabilities above from the bounding set: the program exec'd next
    never gets them. Root cannot become ``nobody`` instead: the interpreter lives under /root
    (mode 0700). A user is held to the mode bits already."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in PERMISSION_OVERRIDES:
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fsize", type=int, help="file-size limit in bytes")
    parser.add_argument("--as-user", action="store_true", help="held to file permissions")
    parser.add_argument("program")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    if options.fsize is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (options.fsize, options.fsize))
        # Python would write a .pyc cut short at the limit (it ignores a short write), and
        # every later import of that module would fail.
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    if options.as_user:
        held_to_permissions()
    os.execv(options.program, [options.program, *options.args])


if __name__ == "__main__":
    main()
