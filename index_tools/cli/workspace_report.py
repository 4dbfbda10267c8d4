"""What an index holds of each workspace it was built from, per ecosystem: the packages at
their versions and licenses, the standard libraries, and what was not indexed and why
(`stats`, and the summary of `build`/`add` of a `workspace:DIR`)."""

from __future__ import annotations

from ..safe_text import printable

SHOWN = 12  # packages named a line; `stats --json` lists them all
_ECOSYSTEMS = {"npm": "npm", "pypi": "PyPI"}
_STDLIBS = {"python-stdlib": "Python", "go-stdlib": "Go", "java-stdlib": "Java",
            "rust-stdlib": "Rust"}  # fmt: skip


def _dicts(value) -> list[dict]:
    """The objects of a list read from an index or a service (anything else: none)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _list(value) -> list:
    return value if isinstance(value, list) else []


def workspace_lines(sources: list[dict]) -> list[str]:
    """Lines describing each workspace among an index's `sources` entries ([] for none)."""
    out: list[str] = []
    sources = _dicts(sources)
    for record in sources:
        if record.get("kind") != "workspace" or not isinstance(record.get("plan"), dict):
            continue
        key = record.get("workspace")
        mine = [s for s in sources if s.get("workspace") == key and s is not record]
        plan = record["plan"]
        title = "" if str(key).startswith("popular:") else "workspace: "  # (a shipped list)
        out.append(f"{title}{printable(plan.get('workspace') or key, 300)}")
        files_of = {
            str(e.get("ecosystem")): ", ".join(printable(f, 120) for f in _list(e.get("files")))
            for e in _dicts(plan.get("ecosystems"))
        }
        for kind, label in _ECOSYSTEMS.items():
            packages = [p for s in mine if s.get("kind") == kind for p in _dicts(s.get("packages"))]
            if not packages and kind not in files_of:
                continue
            named = ", ".join(
                f"{printable(p.get('name'), 100)} {printable(p.get('version'), 40)} "
                f"({printable(p.get('license'), 60)})"
                for p in sorted(packages, key=lambda p: str(p.get("name", "")).lower())[:SHOWN]
            )
            more = f" and {len(packages) - SHOWN:,} more" if len(packages) > SHOWN else ""
            where = f" ({files_of[kind]})" if files_of.get(kind) else ""
            count = f"{len(packages):,} package{'s' if len(packages) != 1 else ''}"
            out.append(f"  {label}{where}: {count}" + (f": {named}{more}" if named else ""))
        stdlibs = [
            f"{_STDLIBS[s['kind']]} {printable(s.get('version'), 40)} "
            f"({printable(s.get('license'), 60)})"
            for s in mine
            if isinstance(s.get("kind"), str) and s["kind"] in _STDLIBS
        ]
        if stdlibs:
            out.append(f"  standard libraries: {', '.join(stdlibs)}")
        for n in _dicts(plan.get("not_indexed")):
            what = printable(n.get("file") or n.get("ecosystem"), 200)
            out.append(f"  not indexed: {what}: {printable(n.get('reason'), 300)}")
        for line in _list(record.get("unavailable")):
            out.append(f"  left out: {printable(line, 300)}")
    return out
