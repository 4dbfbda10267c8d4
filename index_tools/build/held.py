"""Which sources an index already holds, so that `add` is idempotent per origin.

Every source a builder writes is recorded in the header's `sources` with its identity:
`key`, where its documents come from (a git repository by its web link, or by its work
tree when it has none; a folder or a dataset file by its real path; the standard library;
installed distributions; packages of a registry by their names), and `version`, which state
of it (the commit; the Python version; the distributions' or packages' versions; for a
folder or a dataset file, its files' paths, sizes and modification times). `add`, and
`build` given the same source twice:

- leave out a source the index holds at the same version: adding it again changes no
  count (it used to count every file again, and list each path once more);
- replace one it holds at another version (a new commit, a changed folder): the old
  version's files are taken out (each source's share of every document's occurrences is
  recorded in the generation's shares.u32: its documents lose those occurrences and the
  origins listed for them), its entry leaves `sources`, and the new version is added as any
  source is. A document left with no occurrences stays in the shards (a generation's
  shards are never rewritten) and the matcher skips it; the next `build` leaves it out, and
  so does an `add` given every source of its index once half the index's words are in such
  documents (`Sorted.whole`: it builds the index anew);
- read a source given twice in one command once; at two versions, refuse;
- for a workspace given again (`workspace:DIR`, whose sources carry its key), take out the
  sources it held and no longer names (a dependency removed from its lock file).

An index built before shares were recorded cannot take a version out: `add` of a new
version refuses it and says to rebuild. An index built before identities were recorded: a
git source is known by its link and commit; other sources are not recognised and are added
as before.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Identity:
    key: str
    version: str

    def to_dict(self) -> dict:
        return {"key": self.key, "version": self.version}


def identity(src) -> Identity | None:
    """A source's identity, None for a kind this does not know (always added)."""
    d = src.describe()
    kind = d.get("kind", "")
    if kind == "git":
        where = d.get("link") or f"file:{getattr(src, 'top', d.get('spec', ''))}"
        return Identity(f"git:{where}", str(d.get("commit") or ""))
    if kind == "folder":
        root = getattr(src, "root", "")
        return Identity(f"folder:{root}", _tree_version(root))
    if kind == "python-stdlib":
        return Identity("python:stdlib", str(d.get("version", "")))
    if kind in ("go-stdlib", "java-stdlib", "rust-stdlib"):  # one of each language an index
        only = d.get("only") or []
        version = str(d.get("version", "")) + (f" only {','.join(only)}" if only else "")
        return Identity(f"{kind.partition('-')[0]}:stdlib", version)
    if kind == "python-site-packages":
        dists = d.get("distributions") or {}
        names = ",".join(sorted(str(n).lower() for n in dists))
        versions = ",".join(f"{n}=={v}" for n, v in sorted(dists.items()))
        return Identity(f"python:site-packages={names}", versions)
    if kind == "workspace" and d.get("workspace"):  # the record of a workspace's plan
        return Identity(f"workspace:{d['workspace']}", str(d.get("version", "")))
    if kind in ("pypi", "npm") and isinstance(d.get("packages"), list):  # fetched when opened
        got = sorted((str(p.get("name", "")), str(p.get("version", ""))) for p in d["packages"])
        names = ",".join(sorted({name.lower() for name, _ in got}))
        # a shipped list's package is its own beside a workspace's at another version
        owner = str(d.get("workspace") or "")
        listed = f"{owner}/" if owner.startswith("popular:") else ""
        return Identity(f"{listed}{kind}:{names}", ",".join(f"{n}=={v}" for n, v in got))
    path = getattr(src, "path", None)
    if kind in ("jsonl", "jsonl.gz", "parquet") and path:
        real = os.path.realpath(path)
        return Identity(f"dataset:{real}", _file_version(real))
    return None


def recorded(entry: dict) -> Identity | None:
    """The identity a header's `sources` entry records (or implies, for a git source of an
    index built before identities were recorded)."""
    if entry.get("key"):
        return Identity(str(entry["key"]), str(entry.get("version", "")))
    if entry.get("kind") == "git" and entry.get("link"):
        return Identity(f"git:{entry['link']}", str(entry.get("commit") or ""))
    return None


def described(src) -> dict:
    """What the header records of a source: its description and its identity."""
    found = identity(src)
    d = {**src.describe(), **(found.to_dict() if found else {})}
    workspace = getattr(src, "workspace", None)  # a standard library a workspace uses
    if isinstance(workspace, str) and "workspace" not in d:
        d["workspace"] = workspace
    return d


@dataclass(frozen=True)
class Replacing:
    """A source the index holds at another version: its entry is replaced."""

    source: object
    entry: int  # its entry in the header's `sources`
    held: str  # the version held
    given: str  # the version given


@dataclass
class Sorted:
    add: list  # sources to read, in the order given (new versions of held ones among them)
    held: list[str]  # names of sources left out: held at the same version
    replaced: list[Replacing]  # held sources given at another version
    twice: list[str]  # names of sources given twice, at two versions
    # entries of a workspace given again that it no longer names (a dependency removed):
    # (entry, name) to take out
    left: list[tuple[int, str]] = field(default_factory=list)
    held_entries: list[int] = field(default_factory=list)  # the entries of `held`

    def whole(self, entries: int) -> bool:
        """Whether the sources given are all of an index of `entries` sources: each held,
        replaced or left (so that a build of them is the index, without what it took out)."""
        covered = set(self.held_entries) | {r.entry for r in self.replaced}
        return covered | {k for k, _ in self.left} == set(range(entries))


def sort_sources(held_entries: Iterable[dict], sources: list) -> Sorted:
    """The sources to add to an index whose header records `held_entries`."""
    held_entries_list = list(held_entries)
    held: dict[str, tuple[str, int]] = {}
    for i, entry in enumerate(held_entries_list):
        found = recorded(entry)
        if found is not None:
            held[found.key] = (found.version, i)
    given: dict[str, str] = {}
    out = Sorted([], [], [], [])
    for src in sources:
        found = identity(src)
        if found is None:
            out.add.append(src)
            continue
        if found.key in given:  # the same source twice in one command: read once
            if given[found.key] != found.version:
                out.twice.append(src.name)
            continue
        given[found.key] = found.version
        if found.key in held:
            version, entry = held[found.key]
            if version == found.version:
                out.held.append(src.name)
                out.held_entries.append(entry)
                continue
            out.replaced.append(Replacing(src, entry, version, found.version))
        out.add.append(src)
    # a workspace given again: what it held and no longer names leaves
    workspaces = {
        d["workspace"] for src in sources if (d := src.describe()).get("kind") == "workspace"
    }
    if workspaces:
        for i, entry in enumerate(held_entries_list):
            found = recorded(entry)
            if entry.get("workspace") in workspaces and found and found.key not in given:
                out.left.append((i, str(entry.get("name") or found.key)))
    return out


def _file_version(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def _tree_version(root: str) -> str:
    """A digest of the paths, sizes and modification times of the files under `root`."""
    h = hashlib.sha256()
    from .sources.folder import skip_dir  # the folders a folder source does not read

    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not skip_dir(d))
        for name in sorted(files):
            full = os.path.join(folder, name)
            h.update(os.path.relpath(full, root).encode("utf-8", "surrogateescape"))
            h.update(f"\0{_file_version(full)}\0".encode())
    return h.hexdigest()[:32]
