"""Workspace folders (scopes) and their settings; a document belongs to the folder with
the longest URI prefix, or to the global scope outside every folder."""

from __future__ import annotations

from dataclasses import dataclass, field

from .indexes import IndexHandle, uri_to_path
from .settings import Settings
from .workspace_decisions import FolderDecisions


@dataclass
class Scope:
    uri: str | None  # workspace folder URI; None for documents outside every folder
    name: str
    settings: Settings = field(default_factory=Settings)
    problems_shown: tuple[str, ...] = ()
    index: IndexHandle | None = None
    decisions: FolderDecisions = field(init=False)

    def __post_init__(self) -> None:
        self.decisions = FolderDecisions(uri_to_path(self.uri) if self.uri else None)


def _prefix(uri: str) -> str:
    return uri if uri.endswith("/") else uri + "/"


class Scopes:
    def __init__(self) -> None:
        self.global_scope = Scope(None, "(outside workspace folders)")
        self.folders: dict[str, Scope] = {}

    def set_folders(self, folders: list[tuple[str, str]]) -> None:
        """Keep the state of folders that stay; add new ones; forget removed ones."""
        current = {uri.rstrip("/"): (uri, name) for uri, name in folders}
        self.folders = {
            key: self.folders.get(key) or Scope(uri, name) for key, (uri, name) in current.items()
        }

    def add(self, uri: str, name: str) -> None:
        self.folders.setdefault(uri.rstrip("/"), Scope(uri, name))

    def remove(self, uri: str) -> None:
        self.folders.pop(uri.rstrip("/"), None)

    def for_uri(self, uri: str | None) -> Scope:
        if uri:
            best: Scope | None = None
            for key, scope in self.folders.items():
                if (uri == key or uri.startswith(_prefix(key))) and (
                    best is None or len(key) > len(best.uri or "")
                ):
                    best = scope
            if best is not None:
                return best
        return self.global_scope

    def default(self) -> Scope:
        """The scope of a request that names no document: the first workspace folder's
        (its configured index and settings), else the global one."""
        return next(iter(self.folders.values()), self.global_scope)

    def all(self) -> list[Scope]:
        return [*self.folders.values(), self.global_scope]
