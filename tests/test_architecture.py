"""The invariants of ARCHITECTURE.md that code can check: the engine knows no LSP, its wings
import only downward and nothing imports in a circle, the server holds no matching logic and
uses the engine's public API only, one model of a match, one verdict."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import index_tools

ROOT = Path(__file__).resolve().parent.parent
MODEL_TYPES = {"Match", "Part", "Source", "Origin", "Span", "Run"}


def modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) for every import in a file; relative imports resolved to absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            out.append((base, [alias.name for alias in node.names]))
    return out


def test_the_engine_knows_no_lsp():
    for path in modules("index_tools"):
        for module, _ in imports(path):
            top = module.split(".")[0]
            assert top not in {"server", "pygls", "lsprotocol"}, f"{path.name} imports {module}"


def test_the_server_uses_only_the_engines_public_api():
    public = set(index_tools.__all__)
    for path in modules("server"):
        for module, names in imports(path):
            top = module.split(".")[0]
            assert top not in {"numpy", "xxhash", "lmdb", "zstandard"}, (
                f"{path.relative_to(ROOT)} imports {module}: matching belongs to the engine"
            )
            if top == "index_tools":
                assert module == "index_tools", f"{path.relative_to(ROOT)} imports {module}"
                assert set(names) <= public, f"{path.relative_to(ROOT)}: {set(names) - public}"


def test_one_model_of_a_match():
    defined: dict[str, list[str]] = {}
    for path in modules("index_tools") + modules("server"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name in MODEL_TYPES:
                defined.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    # the model is shared; Span and Run are the matcher's internal steps toward it
    for name in ("Match", "Part", "Source", "Origin"):
        assert defined.get(name) == ["index_tools/model.py"], (name, defined.get(name))
    for name in ("Span", "Run"):
        assert defined.get(name, []) in ([], ["index_tools/match/matcher.py"]), (
            name,
            defined[name],
        )
    # the server sends the engine's Match in its JSON form, made by Match.to_dict()
    server_text = "".join(p.read_text(encoding="utf-8") for p in modules("server"))
    assert ".to_dict()" in server_text


def test_one_verdict_everywhere():
    """Only verdict.py combines decisions; the CLI, the server and the proxy call `judge`
    and never look into a policy, allow list or dismissal themselves."""
    deciders = {"allowed_by", "dismissal_for", "editor_action", "completion_action"}
    for path in modules("index_tools") + modules("server"):
        rel = str(path.relative_to(ROOT))
        if rel in ("index_tools/judge/verdict.py", "index_tools/judge/decisions.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in deciders:
                raise AssertionError(f"{rel} calls {node.attr}: verdicts belong to judge()")
    for rel in ("index_tools/cli/check.py", "server/server.py", "server/proxy/relay.py"):
        assert "judge(" in (ROOT / rel).read_text(encoding="utf-8"), rel


def test_the_architecture_page_names_every_folder():
    page = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for folder in ("index_tools/", "server/", "client-vscode/", "bench/", "tests/"):
        assert f"`{folder}`" in page


# The engine's wings in the order a document travels: a wing imports its own modules and
# lower wings only. `build` and `match` are peers (neither imports the other); `model` and
# `safe_text`, shared by every wing, import only `text`.
WING_RANK = {"text": 0, "store": 1, "build": 2, "match": 2, "judge": 3, "service": 4, "cli": 5}
SHARED = {"model", "safe_text"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(paths: list[Path]) -> dict[str, set[str]]:
    """module -> the modules of ours it imports (anywhere in the file, lazily or for type
    checking too); `from package import name` counts as the submodule when there is one."""
    known = {module_name(p) for p in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        edges = set()
        for module, names in imports(path):
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in known]
            if len(targets) < len(names) or not names:
                targets.append(module)
            edges |= {t for t in targets if t in known}
        graph[module_name(path)] = edges - {module_name(path)}
    return graph


def wing_of(module: str) -> str | None:
    """`text`, `store`... for a module of a wing, the shared module's name, None for the
    package's `__init__` (the public API, which may gather from every wing)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def wing_violations(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for module, targets in sorted(graph.items()):
        wing = wing_of(module)
        if wing is None:
            continue
        for target in sorted(targets):
            other = wing_of(target)
            if other == wing or other is None and target != "index_tools":
                continue
            if other is None:  # the public API from inside the engine
                out.append(f"{module} imports the package's public API")
            elif wing in SHARED:
                if other != "text" and other not in SHARED:
                    out.append(f"{module} (shared) imports {target}")
            elif other in SHARED:
                continue
            elif other not in WING_RANK or wing not in WING_RANK:
                out.append(f"{module} -> {target}: a module outside the wings")
            elif WING_RANK[other] >= WING_RANK[wing]:
                out.append(f"{module} ({wing}) imports {target} ({other}): not a lower wing")
    return out


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_the_engine_has_only_wings_and_shared_modules_at_its_root():
    root = {p.name for p in (ROOT / "index_tools").glob("*.py")}
    assert root == {"__init__.py", "model.py", "safe_text.py"}
    wings = {p.name for p in (ROOT / "index_tools").iterdir() if (p / "__init__.py").exists()}
    assert wings == set(WING_RANK)
    for wing in wings:
        doc = ast.get_docstring(
            ast.parse((ROOT / "index_tools" / wing / "__init__.py").read_text())
        )
        assert doc, f"index_tools/{wing}/__init__.py says what the wing holds"


def test_the_wings_import_only_downward():
    assert wing_violations(import_graph(modules("index_tools"))) == []


@pytest.mark.parametrize("folder", ["index_tools", "server"])
def test_no_import_circles(folder):
    assert import_circles(import_graph(modules(folder))) == []


def test_the_checks_fail_on_a_planted_violation():
    """Each rule above fails when broken: an upward import, peers importing each other, a
    shared module importing a wing, a circle."""
    graph = import_graph(modules("index_tools"))
    graph["index_tools.text.words"] = graph["index_tools.text.words"] | {
        "index_tools.judge.verdict"
    }
    assert any("index_tools.text.words (text) imports index_tools.judge.verdict" in v
               for v in wing_violations(graph))  # fmt: skip
    assert any("index_tools.text.words" in c for c in import_circles(graph))
    peers = import_graph(modules("index_tools"))
    peers["index_tools.match.index"] = peers["index_tools.match.index"] | {
        "index_tools.build.process"
    }
    assert any("not a lower wing" in v for v in wing_violations(peers))
    shared = import_graph(modules("index_tools"))
    shared["index_tools.model"] = shared["index_tools.model"] | {"index_tools.store.generations"}
    assert any("(shared)" in v for v in wing_violations(shared))
    planted = import_graph(modules("server"))
    planted["server.detection"] = planted["server.detection"] | {"server.server"}
    assert any("server.detection" in c and "server.server" in c for c in import_circles(planted))
