"""The runtime modules import one another without a circle, imports inside functions included
(a late import hides a circle from Python, not from the reader)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "ramem_local"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, prefix: str) -> dict[str, set[str]]:
    """For every module under ``root`` named with ``prefix``: the modules of that prefix it
    imports anywhere in its text (``from .x import y``, ``from . import x``, ``import a.b``)."""
    paths = {module_name(path, root): path for path in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        if not name.startswith(prefix):
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:  # relative: climb from the importing module's package
                    parts = package.split(".")
                    anchor = parts[: len(parts) - node.level + 1]
                    target = ".".join(anchor + ([node.module] if node.module else []))
                imported |= {target} | {f"{target}.{alias.name}" for alias in node.names}
            elif isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
        graph[name] = {m for m in imported if m in paths and m != name and m.startswith(prefix)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, each as the path that closes it (found by depth-first search)."""
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(module: str, trail: list[str]) -> None:
        if module in trail:
            found.append(trail[trail.index(module):] + [module])
            return
        if module in done:
            return
        for imported in sorted(graph.get(module, ())):
            visit(imported, trail + [module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return found


def test_the_runtime_modules_import_one_another_without_a_circle():
    graph = import_graph(PACKAGE_ROOT, "ramem_local.runtime")
    assert {"ramem_local.runtime.registry", "ramem_local.runtime.jsonfile"} <= graph[
        "ramem_local.runtime.install"]
    assert cycles(graph) == []


def test_no_runtime_module_imports_the_models_facade():
    """The facade is a front over the runtimes; a runtime importing it would close a circle."""
    graph = import_graph(PACKAGE_ROOT, "ramem_local")
    assert "ramem_local.runtime.registry" in graph["ramem_local.models"]
    assert [name for name, imported in graph.items()
            if name.startswith("ramem_local.runtime") and "ramem_local.models" in imported] == []


def test_a_circle_through_a_late_import_is_found(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("from .b import thing\n")
    (package / "sub" / "b.py").write_text("def thing():\n    from . import a\n")
    (package / "c.py").write_text("from .sub import a\n")

    graph = import_graph(package, "pkg")

    assert graph["pkg.c"] == {"pkg.sub", "pkg.sub.a"}
    assert cycles(graph) == [["pkg.sub.a", "pkg.sub.b", "pkg.sub.a"]]
