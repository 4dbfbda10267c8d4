"""The pieces of watching files that need no server: what changed in a file, how a file is
read, and when git wrote the work tree."""

from __future__ import annotations

import codecs
import os
import subprocess
import sys
from pathlib import Path

import pytest

from server.file_watch import (
    MAX_FILE_BYTES,
    GitState,
    changed_runs,
    code_globs,
    line_hashes,
    line_pieces,
    outside_code,
    read_code,
    words_span,
)


def runs(old: str, new: str) -> list[tuple[int, int, int, int]]:
    return changed_runs(line_hashes(line_pieces(old)), line_hashes(line_pieces(new)))


def test_only_the_lines_that_changed():
    old = "a = 1\nb = 2\nc = 3\n"
    assert runs(old, old) == []
    assert runs(old, old + "d = 4\ne = 5\n") == [(3, 3, 3, 5)]  # appended
    assert runs(old, "z = 0\n" + old) == [(0, 0, 0, 1)]  # put first
    assert runs(old, "a = 1\nB = 2\nc = 3\n") == [(1, 2, 1, 2)]  # one line rewritten
    assert runs(old, "a = 1\nc = 3\n") == [(1, 2, 1, 1)]  # one removed
    # two places at once, the lines between them the same
    assert runs(old + "x\n" * 5, "A = 1\nb = 2\nc = 3\n" + "x\n" * 5 + "end\n") == [
        (0, 1, 0, 1),
        (8, 8, 8, 9),
    ]


def test_line_breaks_alone_change_nothing():
    assert runs("a = 1\nb = 2", "a = 1\r\nb = 2\r\n") == []


def test_a_span_starts_and_ends_at_words():
    text = "x = 1\n\n\ndef f():\n    return 2\n\n"
    start, end = words_span(text, 6, len(text))
    assert text[start:end] == "def f():\n    return 2"
    assert words_span("   \n", 0, 4) == (4, 4)  # nothing but whitespace: empty


def test_files_are_read_as_check_reads_them(tmp_path):
    utf16 = tmp_path / "wide.py"
    utf16.write_bytes(codecs.BOM_UTF16_LE + "def é():\n    pass\n".encode("utf-16-le"))
    assert read_code(str(utf16)).text == "def é():\n    pass\n"
    binary = tmp_path / "blob.py"
    binary.write_bytes(bytes(range(256)) * 64)
    assert read_code(str(binary)).why == "binary"
    large = tmp_path / "large.py"
    large.write_text("x = 1\n" * (MAX_FILE_BYTES // 6 + 1), encoding="utf-8")
    assert read_code(str(large)).why == "large"
    assert read_code(str(tmp_path / "gone.py")).why == "gone"


def test_dependencies_environments_builds_and_hidden_folders_are_not_the_workspaces():
    assert outside_code(("node_modules", "x", "index.js"))
    assert outside_code(("src", ".venv", "lib", "a.py"))
    assert outside_code(("build", "out.py"))
    assert not outside_code(("src", "app.py"))
    assert not outside_code((".hidden.py",))  # a hidden file is not a hidden folder


def test_the_clients_watchers_cover_code_files():
    ext, names = code_globs()
    assert ext.startswith("**/*.{") and ",py," in ext and ",ts," in ext and ",go," in ext
    assert "Makefile" in names


@pytest.mark.skipif(sys.platform == "win32", reason="git as on POSIX")
def test_git_writing_the_work_tree_is_told_from_a_commit(tmp_path):
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, env=env)

    git("init", "-q", "-b", "main")
    (tmp_path / "a.py").write_text("a = 1\n", encoding="utf-8")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    state = GitState(tmp_path / ".git", tmp_path / ".git")
    (tmp_path / "a.py").write_text("a = 2\n", encoding="utf-8")
    git("commit", "-q", "-am", "two")  # an agent's own commit: not git writing files
    state.look()
    assert state.wrote() == ""
    git("checkout", "-q", "-b", "topic")
    git("checkout", "-q", "main")
    state.look()
    assert state.wrote() == "git checkout: moving from topic to main"
    state = GitState(tmp_path / ".git", tmp_path / ".git")
    (tmp_path / "a.py").write_text("a = 3\n", encoding="utf-8")
    git("stash", "-q")
    state.look()
    assert state.wrote().startswith("git ")
    assert Path(tmp_path / "a.py").read_text(encoding="utf-8") == "a = 2\n"
