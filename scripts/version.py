"""The version of Recitation lives in one place, `server/__init__.py` (`__version__`).

pyproject.toml reads it from there (a dynamic version); the extension's package.json (and
its entry in package-lock.json) carry a copy, written by `--write` and compared by `--check`.

usage: python scripts/version.py [--check | --write]   (no flag: print the version)
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "server" / "__init__.py"
PACKAGE_JSON = ROOT / "client-vscode" / "package.json"
LOCK = ROOT / "package-lock.json"


def version() -> str:
    for node in ast.parse(SOURCE.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise SystemExit(f"no __version__ in {SOURCE}")


def copies() -> dict[str, str | None]:
    """Where the version is copied, and the version found there."""
    found: dict[str, str | None] = {
        "client-vscode/package.json": json.loads(PACKAGE_JSON.read_text(encoding="utf-8")).get(
            "version"
        )
    }
    if LOCK.is_file():
        entry = (
            json.loads(LOCK.read_text(encoding="utf-8")).get("packages", {}).get("client-vscode")
        )
        found["package-lock.json (client-vscode)"] = (entry or {}).get("version")
    return found


def write(new: str) -> None:
    pkg = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    pkg["version"] = new
    PACKAGE_JSON.write_text(json.dumps(pkg, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if LOCK.is_file():
        lock = json.loads(LOCK.read_text(encoding="utf-8"))
        if "client-vscode" in lock.get("packages", {}):
            lock["packages"]["client-vscode"]["version"] = new
            LOCK.write_text(json.dumps(lock, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    current = version()
    if "--write" in argv:
        write(current)
    if "--check" in argv:
        wrong = {where: v for where, v in copies().items() if v != current}
        for where, v in wrong.items():
            print(
                f"version: {where} has {v}, server/__init__.py has {current} "
                "(run python scripts/version.py --write)",
                file=sys.stderr,
            )
        return 1 if wrong else 0
    print(current)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
