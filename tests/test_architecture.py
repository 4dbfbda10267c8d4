"""The invariants of ARCHITECTURE.md that code can check: the engine knows no LSP, the server
holds no matching logic and uses the engine's public API only, one model of a match."""

from __future__ import annotations

import ast
from pathlib import Path

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
        assert defined.get(name, []) in ([], ["index_tools/matcher.py"]), (name, defined[name])
    # the server sends the engine's Match in its JSON form, made by Match.to_dict()
    server_text = "".join(p.read_text(encoding="utf-8") for p in modules("server"))
    assert ".to_dict()" in server_text


def test_one_verdict_everywhere():
    """Only verdict.py combines decisions; the CLI, the server and the proxy call `judge`
    and never look into a policy, allow list or dismissal themselves."""
    deciders = {"allowed_by", "dismissal_for", "editor_action", "completion_action"}
    for path in modules("index_tools") + modules("server"):
        rel = str(path.relative_to(ROOT))
        if rel in ("index_tools/verdict.py", "index_tools/decisions.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in deciders:
                raise AssertionError(f"{rel} calls {node.attr}: verdicts belong to judge()")
    for rel in ("index_tools/check.py", "server/server.py", "server/proxy/relay.py"):
        assert "judge(" in (ROOT / rel).read_text(encoding="utf-8"), rel


def test_the_architecture_page_names_every_folder():
    page = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for folder in ("index_tools/", "server/", "client-vscode/", "bench/", "tests/"):
        assert f"`{folder}`" in page
