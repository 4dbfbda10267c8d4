"""The server reads a folder's decisions file when it changes, and parses a text once
(issue #37: a 1.7 MB file of allowed sources cost 0.5 s a check)."""

from __future__ import annotations

import os

from index_tools.judge import decisions as decisions_module
from server.workspace_decisions import FolderDecisions


def test_the_decisions_are_parsed_once_per_text_however_often_they_are_read(tmp_path, monkeypatch):
    parsed = []
    real = decisions_module.parse_decisions
    monkeypatch.setattr(
        decisions_module, "parse_decisions", lambda *a: parsed.append(a[1:]) or real(*a)
    )
    sources = ",".join(f'"acme/r{i}"' for i in range(10_000))
    path = tmp_path / ".recitation.toml"
    path.write_text(f"version = 1\n[allow]\nsources = [{sources}]\n")
    folder = FolderDecisions(tmp_path)
    folder.refresh()
    for _ in range(5):  # checks, saves, the watcher: read again, forced
        folder.refresh(force=True)
        os.utime(path)
        folder.refresh()
    assert len(parsed) == 1
    assert folder.decisions.allowed == tuple(f"acme/r{i}" for i in range(10_000))
