"""The direction of imports, read from the code itself: layers with one
direction (base, storage, features, the application, the web layer, tools),
no circle anywhere, and no import hidden inside a function to dodge one.

A change that breaks one of these fails here with the import that does it.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import redpoll

ROOT = Path(redpoll.__file__).resolve().parent

#: Layers from the bottom up; a module may import its own layer and those
#: below. A module of the package root not named here is a feature module.
BASE = {"limits", "errors", "models", "validate", "keys", "settings", "metrics", "memo",
        "health"}
STORAGE = {"mux", "redispy", "server", "store"}
APPLICATION = {"engine", "worker", "auth", "admin", "idempotency", "__init__"}
LAYERS = ("base", "storage", "features", "application", "web", "tools")

#: Where an import inside a function is the point, not a dodge: the command
#: line imports what a command runs when it runs (``redpoll --help`` loads no
#: server), and the tools load their load generators the same way.
LAZY_OK = ("cli", "tools")


def _name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    head = module.split(".")[0]
    if module.endswith(".routes"):  # a feature package's HTTP endpoints (media.routes)
        return "web"
    if head in BASE:
        return "base"
    if head in STORAGE:
        return "storage"
    if head in APPLICATION:
        return "application"
    if head in ("gateway", "render", "api", "stream", "web"):
        return "web"
    if head in ("tools", "cli"):
        return "tools"
    return "features"


def _imports():
    """module -> {imported module: whether inside a function}."""
    modules = {_name(p): p for p in ROOT.rglob("*.py")}
    found: dict[str, dict[str, bool]] = defaultdict(dict)
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" and name != "__init__" else \
            name.split(".")[:-1]
        tree = ast.parse(path.read_text(), str(path))

        def visit(node, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and getattr(child.test, "id", "") == "TYPE_CHECKING":
                    continue
                if isinstance(child, ast.ImportFrom) and child.level:
                    base = package[:len(package) - child.level + 1]
                    mod = ".".join(base + (child.module.split(".") if child.module else []))
                    for alias in child.names:
                        full = f"{mod}.{alias.name}".strip(".")
                        target = full if full in modules else (mod or "__init__")
                        if target in modules and target != name:
                            found[name][target] = found[name].get(target, True) and in_function
                elif isinstance(child, (ast.Import, ast.ImportFrom)):
                    names = [a.name for a in child.names] if isinstance(child, ast.Import) \
                        else [child.module or ""]
                    for full in names:
                        if full.startswith("redpoll."):
                            target = full[len("redpoll."):]
                            if target in modules and target != name:
                                found[name][target] = found[name].get(target, True) and in_function
                visit(child, in_function or isinstance(child, (ast.FunctionDef,
                                                                 ast.AsyncFunctionDef)))
        visit(tree, False)
    return modules, found


def test_no_import_points_up_a_layer():
    _, found = _imports()
    up = sorted(f"{a} -> {b}" for a, targets in found.items() for b in targets
                if LAYERS.index(layer_of(b)) > LAYERS.index(layer_of(a)))
    assert up == [], "imports pointing up a layer:\n" + "\n".join(up)


def test_storage_knows_no_feature_and_the_stream_no_api():
    _, found = _imports()
    bad = [f"{a} -> {b}" for a, targets in found.items() for b in targets
           if (layer_of(a) == "storage" and layer_of(b) != "base" and layer_of(b) != "storage")
           or (a.startswith("stream") and b.startswith("api"))
           or (a.startswith("render") and b.split(".")[0] in ("api", "stream"))]
    assert bad == [], "\n".join(bad)


def test_no_circle():
    modules, found = _imports()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in found.get(v, {}):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                circles.append(sorted(part))

    for module in modules:
        if module not in index:
            connect(module)
    assert circles == [], f"import circles: {circles}"


def test_no_import_hides_inside_a_function():
    _, found = _imports()
    hidden = sorted(f"{a} -> {b}" for a, targets in found.items() for b, inside in targets.items()
                    if inside and a.split(".")[0] not in LAZY_OK)
    assert hidden == [], "imports inside functions:\n" + "\n".join(hidden)


def test_the_checks_see_what_they_guard():
    """The reader finds the imports it judges (a check that saw nothing
    would pass on anything)."""
    modules, found = _imports()
    assert "store" in modules and "store" in found["statuses"] and "hybrid" in found["timelines"]
    assert "stream.hub" in modules and "events" in found["stream.hub"]
    assert layer_of("store") == "storage" and layer_of("follows") == "features"
    assert layer_of("api.app") == "web" and layer_of("tools.bench") == "tools"
    assert layer_of("media.uploads") == "features" and layer_of("media.routes") == "web"
    assert "media.uploads" in found["posting"] and "api.http" in found["media.routes"]
