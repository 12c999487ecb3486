"""The import graph of the redpoll package, read from its code: layers from
the bottom up, each package's imports and floor (tests/test_layers.py checks
them)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import redpoll

ROOT = Path(redpoll.__file__).resolve().parent


#: Layers from the bottom up; a module may import its own layer and those
#: below. A package of the root not named here is a feature package.
BASE = {"core"}


STORAGE = {"storage"}


APPLICATION = {"engine", "__init__"}


WEB = {"gateway", "render", "api", "stream", "web"}


TOOLS = {"tools"}


LAYERS = ("base", "storage", "features", "application", "web", "tools")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    head = module.split(".")[0]
    if head in BASE:
        return "base"
    if head in STORAGE:
        return "storage"
    if head in APPLICATION:
        return "application"
    if head in WEB:
        return "web"
    if head in TOOLS:
        return "tools"
    return "features"


_PARSED: dict[tuple[Path, int, int], ast.Module] = {}


def _parsed(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once per content: kept by its path,
    modification time and size (a check that changes a file sees it anew)."""
    st = path.stat()
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _PARSED:
        _PARSED[key] = ast.parse(path.read_text(), str(path))
    return _PARSED[key]


def module_imports():
    """module -> {imported module: whether inside a function}."""
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    found: dict[str, dict[str, bool]] = defaultdict(dict)
    for name, path in modules.items():
        package = (
            name.split(".")
            if path.name == "__init__.py" and name != "__init__"
            else name.split(".")[:-1]
        )
        tree = _parsed(path)

        def visit(node, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ImportFrom) and child.level:
                    base = package[: len(package) - child.level + 1]
                    mod = ".".join(base + (child.module.split(".") if child.module else []))
                    for alias in child.names:
                        full = f"{mod}.{alias.name}".strip(".")
                        target = full if full in modules else (mod or "__init__")
                        if target in modules and target != name:
                            found[name][target] = found[name].get(target, True) and in_function
                elif isinstance(child, (ast.Import, ast.ImportFrom)):
                    names = (
                        [a.name for a in child.names]
                        if isinstance(child, ast.Import)
                        else [child.module or ""]
                    )
                    for full in names:
                        if full.startswith("redpoll."):
                            target = full[len("redpoll.") :]
                            if target in modules and target != name:
                                found[name][target] = found[name].get(target, True) and in_function
                visit(
                    child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                )

        visit(tree, False)
    return modules, found


def packages_imported() -> dict[str, set[str]]:
    """Each package of the root (or root module) -> the others it imports."""
    _, found = module_imports()
    out: dict[str, set[str]] = defaultdict(set)
    for a, targets in found.items():
        for b in targets:
            if a.split(".")[0] != b.split(".")[0]:
                out[a.split(".")[0]].add(b.split(".")[0])
    return out


def floors() -> dict[str, int]:
    """Each package's floor: one above the highest it imports."""
    graph = packages_imported()
    memo: dict[str, int] = {}

    def floor(p: str) -> int:
        if p not in memo:
            memo[p] = 1 + max((floor(q) for q in graph.get(p, ())), default=0)
        return memo[p]

    return {p: floor(p) for p in {*graph, *(q for qs in graph.values() for q in qs)}}
