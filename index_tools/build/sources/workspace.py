"""The public code a workspace depends on, as corpus sources: `workspace:DIR`.

    sources = open_workspace("workspace:~/src/app")   # fetches: one source a package name

The plan (`workspace_plan.py`: what the manifests and lock files name, which standard
libraries) becomes one source a package name (its locked versions, fetched, verified and
cached by packages.py), each standard library, and one record of the workspace (the plan:
what was found and what was not indexed). `add workspace:DIR` to that index again fetches
only what changed: a package at the same version is held (`held.py`), at a new version
replaced, and a package the workspace no longer names taken out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from index_tools.model import Document

from ...store.paths import workspace_key
from .base import CorpusSource, SourceError
from .packages import Fetched, PackageSource, RegistryOptions, Wanted
from .registry_http import RegistryError
from .workspace_plan import PREFIX, WorkspacePlan, plan_workspace, workspace_folder

__all__ = ["PREFIX", "PackageGroup", "WorkspaceRecord", "is_workspace_spec", "open_workspace",
           "package_groups", "plan_workspace"]  # fmt: skip


def is_workspace_spec(spec: object) -> bool:
    return isinstance(spec, str) and spec.strip().startswith(PREFIX)


class PackageGroup(CorpusSource):
    """The fetched versions of one package name, as a source of its own, so that an index
    holds, replaces and takes out each package apart (`held.identity`)."""

    def __init__(self, parent: PackageSource, fetched: list[Fetched], workspace: str) -> None:
        super().__init__(parent.spec, max_file_bytes=parent.max_file_bytes)
        self.kind = parent.kind
        self.parent = parent
        self.fetched = fetched
        self.workspace = workspace
        first = fetched[0].resolved
        self.name = parent.ecosystem.repository(first) if len(fetched) == 1 else (
            f"{parent.kind}:{first.name}@" + ",".join(f.resolved.version for f in fetched)
        )  # fmt: skip

    def describe(self) -> dict:
        return {
            "spec": self.name,
            "name": self.name,
            "kind": self.kind,
            "workspace": self.workspace,
            "packages": [f.describe() for f in self.fetched],
        }

    def indexed(self) -> list[str]:
        return [self.parent.ecosystem.repository(f.resolved) for f in self.fetched]

    def _documents(self) -> Iterator[Document]:
        self.parent.skipped, self.parent.unsupported = self.skipped, self.unsupported
        for f in self.fetched:
            yield from self.parent.package_documents(f)


class WorkspaceRecord(CorpusSource):
    """The workspace itself in an index: no documents, the plan it was built from (what
    was found, what was indexed, what was not and why), so that `stats` can say it."""

    kind = "workspace"

    def __init__(self, spec: str, plan: WorkspacePlan, left_out: list[str]) -> None:
        super().__init__(spec)
        self.plan = plan
        self.key = workspace_key(plan.folder)
        self.left_out = left_out
        self.name = f"workspace {plan.folder.name}"

    def describe(self) -> dict:
        d = self.plan.to_dict()
        d.pop("index", None)
        return {
            **super().describe(),
            "workspace": self.key,
            "plan": d,
            "unavailable": self.left_out,
            "version": self.plan.digest(),
        }

    def _documents(self) -> Iterator[Document]:
        return iter(())


def package_groups(
    ecosystem: str,
    wanted: list[Wanted],
    owner: str,
    options: RegistryOptions,
    max_file_bytes: int,
    skipped: Counter | None = None,
) -> tuple[list[PackageGroup], list[str]]:
    """The packages fetched (all at once, several at a time), as a source a package name
    owned by `owner` (a workspace's key); and the lines of what `keep_going` left out."""
    from . import npm, pypi

    registry_of = npm.Npm(options) if ecosystem == "npm" else pypi.PyPI(options)
    try:
        fetched = PackageSource(
            f"{ecosystem}:{owner}", registry_of, wanted, options=options, listed=True,
            max_file_bytes=max_file_bytes, skipped_entries=skipped,
        )  # fmt: skip
    except RegistryError as e:
        raise SourceError(str(e)) from None
    by_name: dict[str, list[Fetched]] = {}
    for f in fetched.fetched:
        by_name.setdefault(f.resolved.name.lower(), []).append(f)
    groups = [
        PackageGroup(fetched, sorted(by_name[name], key=lambda f: f.resolved.version), owner)
        for name in sorted(by_name)
    ]
    return groups, list(fetched.problems)


def open_workspace(
    spec: str, *, max_file_bytes: int = 1_000_000, registry: RegistryOptions | None = None
) -> list[CorpusSource]:
    """The sources of `workspace:DIR`: a source a package name (fetched, verified, cached),
    each standard library, and the workspace's record. A manifest that cannot be read, or
    a package that cannot be fetched, stops it (SourceError) unless `keep_going`."""
    from . import open_source

    folder = workspace_folder(spec)
    options = registry or RegistryOptions()
    plan = plan_workspace(folder)
    if plan.problems and not options.keep_going:
        raise SourceError(
            f"{spec}: cannot read {plan.problems[0]}"
            + (f" (and {len(plan.problems) - 1} more)" if len(plan.problems) > 1 else "")
            + "; --keep-going indexes the rest"
        )
    key = workspace_key(folder)
    sources: list[CorpusSource] = []
    left_out = list(plan.problems)
    for eco in plan.ecosystems:
        if eco.wanted:
            groups, problems = package_groups(
                eco.name, eco.wanted, key, options, max_file_bytes, eco.skipped
            )
            sources += groups
            left_out += problems
    for s in plan.stdlibs:
        if s.available:
            src = open_source(s.spec, max_file_bytes=max_file_bytes)
            src.workspace = key  # (recorded with it: it leaves when the workspace drops it)
            sources.append(src)
    sources.append(WorkspaceRecord(spec, plan, left_out))
    return sources
