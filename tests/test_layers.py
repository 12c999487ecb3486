"""The direction of imports, read from the code itself: layers with one
direction (base, storage, features, the application, the web layer, tools),
no circle anywhere, and no import hidden inside a function to dodge one.

A change that breaks one of these fails here with the import that does it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support.imports import (  # noqa: F401
    LAYERS,
    ROOT,
    floors,
    layer_of,
    module_imports,
    module_name,
    packages_imported,
)

#: Where an import inside a function is the point, not a dodge: the command
#: line (tools.cli) imports what a command runs when it runs (``redpoll
#: --help`` loads no server), and the tools load their load generators the
#: same way.
LAZY_OK = ("tools",)


def test_no_import_points_up_a_layer():
    _, found = module_imports()
    up = sorted(
        f"{a} -> {b}"
        for a, targets in found.items()
        for b in targets
        if LAYERS.index(layer_of(b)) > LAYERS.index(layer_of(a))
    )
    assert up == [], "imports pointing up a layer:\n" + "\n".join(up)


def test_storage_knows_no_feature_and_the_stream_no_api():
    _, found = module_imports()
    bad = [
        f"{a} -> {b}"
        for a, targets in found.items()
        for b in targets
        if (layer_of(a) == "storage" and layer_of(b) != "base" and layer_of(b) != "storage")
        or (a.startswith("stream") and b.startswith("api"))
        or (a.startswith("render") and b.split(".")[0] in ("api", "stream"))
    ]
    assert bad == [], "\n".join(bad)


def test_no_circle():
    modules, found = module_imports()
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


def test_no_circle_between_packages():
    """Packages are the rooms a reader walks through: no two of them import
    each other, through any chain."""
    graph = packages_imported()

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    circles = sorted(p for p in list(graph) if p in reach(p))
    assert circles == [], f"packages in a circle: {circles}"


def test_at_most_twelve_floors():
    """A request's way down stays short: at most 12 floors of packages, from
    core at the bottom to the tools at the top."""
    assert max(floors().values()) <= 12, sorted(floors().items(), key=lambda kv: kv[1])


def test_no_import_hides_inside_a_function():
    _, found = module_imports()
    hidden = sorted(
        f"{a} -> {b}"
        for a, targets in found.items()
        for b, inside in targets.items()
        if inside and a.split(".")[0] not in LAZY_OK
    )
    assert hidden == [], "imports inside functions:\n" + "\n".join(hidden)


def test_the_checks_see_what_they_guard():
    """The reader finds the imports it judges (a check that saw nothing
    would pass on anything)."""
    modules, found = module_imports()
    assert "storage.store" in modules and "storage.store" in found["records.statuses"]
    assert "timelines.hybrid" in found["timelines.timelines"]
    assert "stream.hub" in modules and "bus.events" in found["stream.hub"]
    assert layer_of("storage.store") == "storage" and layer_of("relations.follows") == "features"
    assert layer_of("api.app") == "web" and layer_of("tools.bench") == "tools"
    assert floors()["core"] == 1 and floors()["tools"] > floors()["api"]
    assert layer_of("media.uploads") == "features" and "media.uploads" in found["posting.posting"]


def test_the_design_document_names_each_package_imports():
    """docs/design.md's table of packages says what each imports (besides
    core and storage): it stays true, or this fails with the difference."""
    doc = (ROOT.parent / "docs" / "design.md").read_text()
    graph = packages_imported()
    table = doc[doc.index("| package | what it holds |") :].split("\n\n")[0]
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) >= 10, "the table of packages is missing from docs/design.md"
    wrong = []
    for row in rows:
        package = row[1].strip().strip("`")
        said = {p.strip() for p in row[3].split(",") if p.strip() not in ("", "-")}
        real = graph.get(package, set()) - {"core", "storage"}
        if said != real:
            wrong.append(f"{package}: the document says {sorted(said)}, the code {sorted(real)}")
    assert wrong == [], "\n".join(wrong)


# --- what docs/design.md says of the storage ---------------------------------------------------
def _strings(tree: ast.AST):
    """(line, text) of every string literal, and of every f-string's literal head."""
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            if node.values and isinstance(node.values[0], ast.Constant):
                yield node.lineno, node.values[0].value
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


#: Strings outside the keys modules that begin as a key name does and are
#: not one: a job's subject, a rate limit's identifier for an app.
NOT_KEYS = {("media/jobs.py", "media:sweep"), ("gateway/auth.py", "app:")}


def test_key_names_are_spelled_only_in_keys_modules():
    """Every key name (and key pattern) is built in a module named keys.py:
    core/keys.py, or the keys.py of the package whose keys they are. No
    other module spells out a string that begins with one of their prefixes."""
    import re

    head = re.compile(r"([a-z][a-z0-9_]*)[:{]")
    keys_modules = sorted(ROOT.rglob("keys.py"))
    assert {p.parent.name for p in keys_modules} >= {"core", "media", "polls", "scheduling"}
    prefixes = {
        m.group(1)
        for p in keys_modules
        for _, text in _strings(ast.parse(p.read_text()))
        if (m := head.match(text))
    }
    assert {"u", "st", "home", "med", "poll", "sched"} <= prefixes  # the check sees them
    spelled = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "keys.py":
            continue
        rel = str(path.relative_to(ROOT))
        for line, text in _strings(ast.parse(path.read_text())):
            m = head.match(text)
            if (
                m
                and m.group(1) in prefixes
                and not any(c.isspace() for c in text)
                and (rel, text) not in NOT_KEYS
            ):  # (prose has spaces; a key name none)
                spelled.append(f"{rel}:{line}: {text[:40]!r}")
    assert spelled == [], "key names spelled outside a keys module:\n" + "\n".join(spelled)


#: Scripts run by name from a package other than the one whose lua/ holds
#: them, each with its reason; anything else is a feature reaching into
#: another's storage.
SCRIPTS_RUN_ELSEWHERE = {
    # a boost's flag on the booster: the same per-user flag set as a favourite's
    ("posting/deleting.py", "favourite_user"),
    # a purged account out of the account search index
    ("moderation/moderation.py", "index_account"),
}


def test_storage_holds_no_script_and_each_script_is_run_by_its_own_package():
    """storage/ is only storage: no Lua of its own, and its topology knows
    no feature (the features' variants are in their packages:
    timelines/placement.py, records/writes.py). A script is run by name
    only from the package that keeps it (SCRIPTS_RUN_ELSEWHERE says why
    for the rest; tools excepted)."""
    import re

    assert not list((ROOT / "storage").rglob("*.lua"))
    topology = (ROOT / "storage" / "topology.py").read_text()
    # it names no key and runs no script
    assert "keys." not in topology and ".run(" not in topology
    owner = {p.stem: p.parent.parent.name for p in ROOT.glob("*/lua/*.lua")}
    assert {"deliver", "read_page", "read_page_listed", "unmerge"} <= {
        n for n, pkg in owner.items() if pkg == "timelines"
    }
    call = re.compile(r"""\(\s*["']([a-z_0-9]+)["']\s*,\s*\[""")
    elsewhere = {
        (str(p.relative_to(ROOT)), m.group(1))
        for p in sorted(ROOT.rglob("*.py"))
        if p.relative_to(ROOT).parts[0] != "tools"
        for m in call.finditer(p.read_text())
        if m.group(1) in owner and owner[m.group(1)] != p.relative_to(ROOT).parts[0]
    }
    assert elsewhere == SCRIPTS_RUN_ELSEWHERE


def test_database_connections_are_opened_by_the_store_and_few_others():
    """The storage layer opens every connection: the Store's (storage/store.py),
    which every read and write goes through, and the one a blocking reader
    holds (``own_client`` there: the stream hub's read of the event log);
    besides them only the embedded server's own checks and shutdown
    (storage/server.py) open one. The tools open their own."""
    opened = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel.startswith("tools/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                owner = f.value if isinstance(f, ast.Attribute) else None
                owner_name = (
                    owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                )
                if name in ("Redis", "RedisCluster", "StrictRedis") or (
                    name == "from_url"
                    and owner_name
                    in ("Redis", "RedisCluster", "BlockingConnectionPool", "ConnectionPool")
                ):
                    opened.setdefault(rel, []).append(node.lineno)
    assert set(opened) == {"storage/store.py", "storage/server.py"}, opened


#: Where a home or list timeline is named outside the timelines package,
#: each for a reason that is no write of a status into it.
TIMELINES_NAMED_ELSEWHERE = {
    # a delete takes the status out of its author's own home
    ("posting/deleting.py", "home"),
    # an edge names the timeline its backfill merges into, through the rule
    ("relations/edges.py", "home"),
    ("relations/edges.py", "list_timeline"),
    # a list dropped with its timeline
    ("lists/lists.py", "list_timeline"),
    # the integrity check reads them for statuses that are gone (and has
    # timelines.fanout.take_out take those out)
    ("engine/check.py", "home"),
    ("engine/check.py", "list_timeline"),
}


def test_statuses_enter_homes_and_lists_only_through_the_timelines_package():
    """Every write of a status into a home or a list goes through the home
    rule (redpoll.timelines.home_rule) in the timelines package: push,
    catch-up, refills, backfills, and the mentions and hashtags a status's
    conversation offers (timelines.fanout.offer). Outside it, a home or
    list timeline is named only where TIMELINES_NAMED_ELSEWHERE says why."""
    import re

    named = re.compile(r"keys\.(home|list_timeline)\(")
    found = {
        (str(p.relative_to(ROOT)), m.group(1))
        for p in sorted(ROOT.rglob("*.py"))
        if p.relative_to(ROOT).parts[0] not in ("timelines", "tools")
        for m in named.finditer(p.read_text())
    }
    assert found == TIMELINES_NAMED_ELSEWHERE


def test_no_two_key_builders_make_the_same_key():
    """Each builder of core/keys.py names keys of its own: two that give the
    same key for the same arguments would hold two kinds of value in one
    key (a WRONGTYPE at run time, or worse, one feature reading another's)."""
    import inspect

    from redpoll.core import keys

    made: dict[str, str] = {}
    clashes = []
    for name, build in vars(keys).items():
        if not inspect.isfunction(build) or build.__module__ != keys.__name__:
            continue
        params = inspect.signature(build).parameters
        if not params or any(p.default is not p.empty for p in params.values()):
            continue
        key = None
        for sample in (7, "x7"):
            try:
                key = build(*[sample] * len(params))
                break
            except Exception:  # noqa: BLE001 - a builder of other arguments
                continue
        if not isinstance(key, str):
            continue
        if key in made and {made[key], name} != {"token_rate", "rate"}:
            # (those two share a form; a bucket is "ip:...", a token's digest hex)
            clashes.append(f"{made[key]} and {name} both make {key!r}")
        made[key] = name
    assert clashes == []


def test_no_test_module_imports_another():
    """Shared helpers live in tests/support/ (importable as ``support``): a
    test module imported by another would run its tests' module-level setup
    twice and tie two unrelated files together."""
    tests = Path(__file__).resolve().parent
    names = {p.stem for p in tests.rglob("test_*.py")}
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                hit = [node.module] if node.module.split(".")[0] in names else []
            elif isinstance(node, ast.Import):
                hit = [a.name for a in node.names if a.name.split(".")[0] in names]
            else:
                continue
            found += [f"{path.relative_to(tests)}:{node.lineno} imports {m}" for m in hit]
    assert found == []
