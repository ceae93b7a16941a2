"""The public surface: what ``Memory`` returns is importable from ``ramem_local``, and the faces
(the CLI, the MCP server, the doctor, the evaluations) import nothing else of the package.

An application embedding ``Memory`` can then do everything the faces do with the names of
``ramem_local.__all__``; a face that reached into a private module would show a need the public
surface does not meet.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from pathlib import Path

import ramem_local
from ramem_local import Memory

PACKAGE = Path(ramem_local.__file__).parent
FACES = ["cli.py", "mcp_server.py", "doctor.py",
         *sorted(f"eval/{path.name}" for path in (PACKAGE / "eval").glob("*.py"))]
# The submodules listed in ``__all__`` as public on purpose.
PUBLIC_MODULES = {"config", "models", "render", "testing", "text"}
# Faces may call each other (``ramem doctor`` runs the doctor, ``ramem eval`` the evaluations).
FACE_MODULES = {"cli", "mcp_server", "doctor", "eval"}


def imported_modules(source: str, module: str) -> list[tuple[int, str, list[str]]]:
    """``(line, absolute module, names)`` of every import of the package in ``source`` (the
    text of module ``module``): at module level, in functions and in ``TYPE_CHECKING`` blocks.
    ``import ramem_local.x`` gives the module and no names."""
    package_parts = module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "ramem_local":
                found.append((node.lineno, target, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, []) for alias in node.names
                         if alias.name.split(".")[0] == "ramem_local")
    return found


def forbidden_imports(source: str, face: str) -> list[str]:
    """The imports of ``face`` (a path under the package) that are not of the public surface."""
    module = "ramem_local." + face.removesuffix(".py").replace("/", ".")
    offenders = []
    for line, target, names in imported_modules(source, module):
        parts = target.split(".")
        if target == "ramem_local":
            allowed = bool(names) and all(name in ramem_local.__all__ for name in names)
        else:
            allowed = (parts[1] in PUBLIC_MODULES | FACE_MODULES | {"errors"})
        if not allowed:
            offenders.append(f"{face}:{line}: from {target} import {', '.join(names) or '-'}")
    return offenders


def test_the_faces_import_only_public_names_and_errors():
    offenders = [offender for face in FACES
                 for offender in forbidden_imports((PACKAGE / face).read_text("utf-8"), face)]
    assert not offenders, "faces importing private modules or names:\n" + "\n".join(offenders)


def test_the_faces_do_not_reach_into_the_bank_behind_memory():
    """``memory.store`` is the store itself: a face using it would bypass ``Memory`` (its
    checks, its defaults) as an import of a private module would."""
    uses = [f"{face}:{node.lineno}" for face in FACES
            for node in ast.walk(ast.parse((PACKAGE / face).read_text("utf-8")))
            if isinstance(node, ast.Attribute) and node.attr == "store"]
    assert not uses, "faces using Memory.store: " + ", ".join(uses)


def test_the_import_check_catches_private_modules_in_functions_and_type_checking_blocks():
    source = '''
from typing import TYPE_CHECKING
from . import Memory, models
from .errors import InputError
if TYPE_CHECKING:
    from .store import Store
def search():
    from .recall.when import parse_when
    import ramem_local.retrieve
    from . import Store
'''
    assert forbidden_imports(source, "cli.py") == [
        "cli.py:6: from ramem_local.store import Store",
        "cli.py:8: from ramem_local.recall.when import parse_when",
        "cli.py:9: from ramem_local.retrieve import -",
        "cli.py:10: from ramem_local import Store",
    ]
    assert forbidden_imports("from ..ingest.formats import read_locomo\n",
                             "eval/retrieval.py") == [
        "eval/retrieval.py:1: from ramem_local.ingest.formats import read_locomo"]
    assert forbidden_imports("from .metrics import recall_at_k\nfrom .. import Memory\n",
                             "eval/retrieval.py") == []


def test_every_name_in_all_is_importable():
    missing = [name for name in ramem_local.__all__ if not hasattr(ramem_local, name)]
    assert not missing


def returned_classes(annotation: object) -> set[type]:
    """The package's classes an annotation names, through ``list[...]``, ``X | None``, ...,
    and through the fields of the dataclasses it names (what a caller can reach)."""
    found: set[type] = set()
    pending = [annotation]
    while pending:
        current = pending.pop()
        arguments = typing.get_args(current)
        if arguments:
            pending.extend(arguments)
            continue
        if (isinstance(current, type) and current.__module__.startswith("ramem_local")
                and current not in found):
            found.add(current)
            if dataclasses.is_dataclass(current):
                pending.extend(typing.get_type_hints(current).values())
    return found


def test_everything_memory_returns_is_a_top_level_name():
    methods = [name for name, member in inspect.getmembers(Memory, inspect.isfunction)
               if not name.startswith("_")]
    methods += [name for name, member in vars(Memory).items()
                if isinstance(member, classmethod)]
    assert {"open", "search", "ask", "timeline", "extract", "forget"} <= set(methods)
    missing = {}
    for method in methods:
        hints = typing.get_type_hints(getattr(Memory, method))
        for cls in returned_classes(hints.get("return")):
            if getattr(ramem_local, cls.__name__, None) is not cls:
                missing[f"{cls.__module__}.{cls.__name__}"] = method
    assert not missing, f"returned by Memory but not in ramem_local: {missing}"


def test_public_modules_are_listed_in_all_and_reachable_as_attributes():
    assert PUBLIC_MODULES <= set(ramem_local.__all__)
    for name in PUBLIC_MODULES:
        assert getattr(ramem_local, name).__name__ == f"ramem_local.{name}"
