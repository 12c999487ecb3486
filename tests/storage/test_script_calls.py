"""Every script's header (its KEYS and ARGV, redpoll/*/lua/*.lua) and every
call that names it (``store.run("name", [keys], [args])``) agree: where a
call writes its lists out, their lengths are the ones the header declares
(``KEYS[n..]`` / ``ARGV[n..]`` or ``KEYS:`` for a list of any length; an
``ARGV[n]`` marked optional may be left off). A call that passes one key
or argument too few or too many fails here, not in a rarely run branch."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import redpoll

ROOT = Path(redpoll.__file__).parent


def declared(text: str) -> dict[str, tuple[int, int, bool]]:
    """From a script's leading comments: for KEYS and ARGV, the fewest a
    call must pass, the most it may, and whether a list of any length
    follows."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        lines.append(line)
    out = {}
    for name in ("KEYS", "ARGV"):
        required, most, variadic = 0, 0, False
        for line in lines:
            for n in re.findall(rf"{name}\[(\d+)\](?!\.\.)", line):
                most = max(most, int(n))
                if "optional" not in line[line.index(f"{name}[{n}]") :]:
                    required = max(required, int(n))
            if re.search(rf"{name}\[\d+\.\.|{name}:|{name}\s*\(", line):
                variadic = True
        out[name] = (required, most, variadic)
    return out


def disagreements(root: Path) -> list[str]:
    heads = {p.stem: declared(p.read_text()) for p in root.glob("*/lua/*.lua")}
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run"
                and len(node.args) >= 3
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value in heads
            ):
                continue
            script = node.args[0].value
            for label, given in (("KEYS", node.args[1]), ("ARGV", node.args[2])):
                if not isinstance(given, ast.List) or any(
                    isinstance(e, ast.Starred) for e in given.elts
                ):
                    continue  # built at run time: checked where it runs
                required, most, variadic = heads[script][label]
                n = len(given.elts)
                if n < required or (not variadic and n > most):
                    found.append(
                        f"{path.relative_to(root)}:{node.lineno} {script} {label}: "
                        f"{n} passed, the header says {required}"
                        + ("" if variadic else f"..{most}")
                    )
    return found


def test_every_written_out_call_passes_what_its_script_declares():
    assert disagreements(ROOT) == []


def test_the_check_finds_a_call_that_disagrees(tmp_path):
    (tmp_path / "feature" / "lua").mkdir(parents=True)
    (tmp_path / "feature" / "lua" / "two.lua").write_text(
        "-- two: a sample\n-- KEYS[1]: a   KEYS[2]: b\n-- ARGV[1]: x\n"
        "-- ARGV[2]: (optional) y\nreturn 1\n"
    )
    (tmp_path / "feature" / "use.py").write_text(
        "async def f(store):\n"
        "    await store.run('two', ['a', 'b'], ['x'])\n"  # fine: ARGV[2] optional
        "    await store.run('two', ['a'], ['x', 'y'])\n"  # one key short
        "    await store.run('two', ['a', 'b'], ['x', 'y', 'z'])\n"  # one argument over
    )
    assert [line.split(" ", 1)[0] for line in disagreements(tmp_path)] == [
        "feature/use.py:3",
        "feature/use.py:4",
    ]
