"""A folder's decisions file, followed live: read when it changes on disk (polled once a
second, and at once when the client reports a save or a change), its errors reported while
the decisions read before stay in force. Folders without a path (documents outside every
folder) keep their dismissals for the session only."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from index_tools import (
    DECISIONS_FILE,
    Decisions,
    DecisionsError,
    DecisionsFile,
    Dismissal,
    QuoteIdentity,
    load_decisions,
)

log = logging.getLogger(__name__)


class FolderDecisions:
    def __init__(self, folder: Path | None):
        self.folder = folder
        self.decisions = Decisions()
        self.problem = ""  # why the file on disk is not in force ("" when it is)
        self._signature: tuple[int, int] | None = None
        self._read = False

    @property
    def path(self) -> Path | None:
        return self.folder / DECISIONS_FILE if self.folder is not None else None

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def refresh(self, force: bool = False) -> bool:
        """Read the file again when it changed; True when the decisions in force or the
        problem to report changed."""
        if self.folder is None:
            return False
        signature = self._stat()
        if self._read and signature == self._signature and not force:
            return False
        self._read, self._signature = True, signature
        before = (self.decisions, self.problem)
        try:
            found = load_decisions(self.folder)
        except DecisionsError as e:
            self.problem = str(e)
        else:
            self.decisions = found if found is not None else Decisions()
            self.problem = ""
        return (self.decisions, self.problem) != before

    def _edited(self, decisions: Decisions) -> None:
        self.decisions, self.problem = decisions, ""
        self._signature, self._read = self._stat(), True

    def dismiss(self, identity: QuoteIdentity, quote: str, source: str, license: str) -> str:
        """Record a dismissal; returns where it was recorded. Raises DecisionsError or
        OSError when the file cannot take it."""
        if self.folder is None:
            kept = Dismissal(identity, quote, source, license)
            self.decisions = Decisions(
                (*self.decisions.dismissed, kept), self.decisions.allowed, self.decisions.policy
            )
            return "for this session (the file is outside every workspace folder)"
        self._edited(DecisionsFile(self.folder).dismiss(identity, quote, source, license))
        return f"in {DECISIONS_FILE}"

    def undismiss(self, quote_id: str) -> bool:
        if self.folder is None:
            kept = tuple(d for d in self.decisions.dismissed if d.id != quote_id)
            found = len(kept) != len(self.decisions.dismissed)
            self.decisions = Decisions(kept, self.decisions.allowed, self.decisions.policy)
            return found
        decisions, found = DecisionsFile(self.folder).undismiss(quote_id)
        self._edited(decisions)
        return found

    def allow(self, pattern: str) -> None:
        if self.folder is None:
            raise DecisionsError("allowed sources are kept in a workspace folder's file")
        self._edited(DecisionsFile(self.folder).allow(pattern))

    def disallow(self, pattern: str) -> bool:
        if self.folder is None:
            return False
        decisions, found = DecisionsFile(self.folder).disallow(pattern)
        self._edited(decisions)
        return found

    def to_dict(self) -> dict:
        return {
            "file": self.path.as_uri() if self.path is not None else None,
            "exists": self.path is not None and _exists(self.path),
            "problem": self.problem or None,
            **self.decisions.to_dict(),
        }


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False
