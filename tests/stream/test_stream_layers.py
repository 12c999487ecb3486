"""The streams and the renderer sit in layers: redpoll.render imports neither
the API nor the streams, redpoll.stream does not import the API, the modules
of redpoll.stream, redpoll.render and redpoll.api import each other without
a circle, and no module of the streams or the renderer imports inside a
function."""
from __future__ import annotations

import ast
from pathlib import Path

import redpoll

ROOT = Path(redpoll.__file__).parent
PACKAGES = ("stream", "render", "api")


def modules() -> dict[str, Path]:
    return {f"redpoll.{pkg}" + ("" if p.stem == "__init__" else f".{p.stem}"): p
            for pkg in PACKAGES for p in sorted((ROOT / pkg).glob("*.py"))}


def imported(name: str, path: Path, node: ast.AST, known: dict) -> list[str]:
    """The modules (or packages) an import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level == 0:
        base = node.module or ""
    else:
        parts = name.split(".") if path.stem == "__init__" else name.split(".")[:-1]
        parts = parts[:len(parts) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def graph() -> tuple[dict[str, set[str]], list[str]]:
    """Imports among the three packages, and what breaks the rules on the way."""
    known = modules()
    edges: dict[str, set[str]] = {}
    wrong = []
    for name, path in known.items():
        tree = ast.parse(path.read_text())
        edges[name] = set()
        below = name.startswith(("redpoll.stream", "redpoll.render"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and below:
                wrong += [f"{path.name}:{inner.lineno} imports inside {node.name}()"
                          for inner in ast.walk(node)
                          if isinstance(inner, (ast.Import, ast.ImportFrom))]
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in imported(name, path, node, known):
                if (below and target.startswith("redpoll.api")) or (
                        name.startswith("redpoll.render") and target.startswith("redpoll.stream")):
                    wrong.append(f"{name}:{node.lineno} imports {target}")
                if target in known and target != name:
                    edges[name].add(target)
    return edges, wrong


def test_stream_and_render_import_down_and_at_module_level():
    _, wrong = graph()
    assert not wrong, wrong


def test_no_circle_among_stream_render_and_api():
    edges, _ = graph()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError("circle: " + " -> ".join(path[path.index(name):] + [name]))
        if name in done:
            return
        for target in sorted(edges[name]):
            visit(target, path + [name])
        done.add(name)

    for name in sorted(edges):
        visit(name, [])
    assert "redpoll.stream.frames" in edges and "redpoll.render.entities" in edges
