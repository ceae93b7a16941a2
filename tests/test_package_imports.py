"""No import cycle among the modules of ``ramem_local``, read from the source with ``ast``.

Two readings: the imports Python runs when a module is loaded (module level, outside
``if TYPE_CHECKING:``), and those plus the imports deferred into functions (kept out of the
module level so that ``ramem --help`` starts without numpy and the runtimes). A deferred import
does not fail at load time, but a cycle through it is still two modules that need each other:
the shared piece belongs in a third module both can import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ramem_local"

# Cycles through deferred imports that another change is removing. Each entry is a set of
# modules that import each other; when a cycle is gone, take it out of this list.
KNOWN_DEFERRED_CYCLES: set[frozenset[str]] = set()


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name → file, for every module of the package (``__init__`` as the
    package itself)."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = [package.name, *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking_block(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_statements(body: list[ast.stmt], *, deferred: bool
                      ) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of a module body: those run at load time (inside ``try``,
    ``if`` and class bodies too), and with ``deferred`` also those inside functions; never
    those under ``if TYPE_CHECKING:``."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if deferred:
                yield from import_statements(node.body, deferred=deferred)
        elif isinstance(node, ast.If) and _is_type_checking_block(node):
            yield from import_statements(node.orelse, deferred=deferred)
        else:  # try, with, for, while, if, class: the statements inside run at load time
            for field in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, field, []):
                    nested = child.body if isinstance(child, ast.ExceptHandler) else [child]
                    yield from import_statements(nested, deferred=deferred)


def imported_modules(module: str, path: Path, modules: dict[str, Path], *, deferred: bool
                     ) -> set[str]:
    """The package's modules that ``module`` imports (``from .x import y`` names ``.x``, or
    ``.x.y`` when that is a module)."""
    found: set[str] = set()
    package_parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for statement in import_statements(ast.parse(path.read_text()).body, deferred=deferred):
        if isinstance(statement, ast.Import):
            found.update(alias.name for alias in statement.names if alias.name in modules)
            continue
        if statement.level:
            base = package_parts[:len(package_parts) - (statement.level - 1)]
            target = ".".join([*base, *([statement.module] if statement.module else [])])
        else:
            target = statement.module or ""
        if target not in modules:
            continue
        for alias in statement.names:
            submodule = f"{target}.{alias.name}"
            found.add(submodule if submodule in modules else target)
    found.discard(module)
    return found


def import_graph(package: Path, *, deferred: bool) -> dict[str, set[str]]:
    modules = module_files(package)
    return {module: imported_modules(module, path, modules, deferred=deferred)
            for module, path in modules.items()}


def import_cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan): each is a set of
    modules that all reach each other through imports."""
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    cycles: set[frozenset[str]] = set()

    def visit(module: str) -> None:
        index[module] = lowest[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                lowest[module] = min(lowest[module], lowest[imported])
            elif imported in stack:
                lowest[module] = min(lowest[module], index[imported])
        if lowest[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                cycles.add(frozenset(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


def describe(cycles: set[frozenset[str]]) -> list[str]:
    return sorted(" <-> ".join(sorted(cycle)) for cycle in cycles)


# ----------------------------------------------------------------------------- the package


def test_no_module_imports_another_that_imports_it_back_at_load_time():
    cycles = import_cycles(import_graph(PACKAGE, deferred=False))
    assert not cycles, f"import cycles at module level: {describe(cycles)}"


def test_no_import_cycle_through_deferred_imports_but_the_known_ones():
    cycles = import_cycles(import_graph(PACKAGE, deferred=True))
    assert describe(cycles - KNOWN_DEFERRED_CYCLES) == [], "new import cycles"
    assert describe(KNOWN_DEFERRED_CYCLES - cycles) == [], (
        "these cycles are gone: take them out of KNOWN_DEFERRED_CYCLES")


def test_the_int8_matrix_and_the_schema_do_not_import_each_other():
    graph = import_graph(PACKAGE, deferred=True)
    assert "ramem_local.store.schema" not in graph["ramem_local.store.int8_matrix"]
    assert "ramem_local.store.vectors" in graph["ramem_local.store.int8_matrix"]
    assert "ramem_local.store.vectors" in graph["ramem_local.store.schema"]


def test_download_and_packaged_do_not_import_each_other():
    """What both needed (import_model, the reference-vector check) lives in runtime/install.py."""
    graph = import_graph(PACKAGE, deferred=True)
    assert "ramem_local.runtime.packaged" not in graph["ramem_local.runtime.download"]
    assert "ramem_local.runtime.download" not in graph["ramem_local.runtime.packaged"]
    assert "ramem_local.runtime.install" in graph["ramem_local.runtime.packaged"]


def test_no_runtime_module_imports_the_models_facade():
    """The facade is a front over the runtimes; a runtime importing it would close a cycle."""
    graph = import_graph(PACKAGE, deferred=True)
    assert "ramem_local.runtime.registry" in graph["ramem_local.models"]
    assert [module for module, imported in graph.items()
            if module.startswith("ramem_local.runtime") and "ramem_local.models" in imported] == []

# ------------------------------------------------------------------- the reader on its own


def write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for name, source in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return package


def test_a_cycle_through_a_function_level_import_is_found_only_when_deferred(tmp_path):
    package = write_package(tmp_path, {
        "__init__.py": "",
        "a.py": "from .b import helper\n",
        "b.py": "def helper():\n    from .a import thing\n    return thing\n",
        "c.py": "from . import a\n",
    })
    assert import_cycles(import_graph(package, deferred=False)) == set()
    assert import_cycles(import_graph(package, deferred=True)) == {frozenset({"pkg.a", "pkg.b"})}
    assert import_graph(package, deferred=False)["pkg.c"] == {"pkg.a"}


def test_type_checking_imports_and_names_of_the_package_resolve_as_python_does(tmp_path):
    package = write_package(tmp_path, {
        "__init__.py": "from .sub.x import X\n",
        "sub/__init__.py": "from .. import X\n",
        "sub/x.py": ("from typing import TYPE_CHECKING\n"
                     "if TYPE_CHECKING:\n    from ..sub import y\n"
                     "try:\n    import pkg.sub.y\nexcept ImportError:\n    pass\n"
                     "class X:\n    pass\n"),
        "sub/y.py": "import json\n",
    })
    graph = import_graph(package, deferred=True)
    assert graph["pkg"] == {"pkg.sub.x"}
    assert graph["pkg.sub"] == {"pkg"}  # X is a name of the package, not a module
    assert graph["pkg.sub.x"] == {"pkg.sub.y"}  # the try block counts, TYPE_CHECKING does not
    assert import_cycles(graph) == set()
