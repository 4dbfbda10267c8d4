"""Start-up pieces that differ on Windows, checked on any machine by naming the platform."""

from __future__ import annotations

import os

from server.proxy import _stdin_is_async_pipe
from server.proxy.child import resolve_command


def test_windows_reads_stdin_on_a_thread():
    assert _stdin_is_async_pipe("win32") is False


def test_posix_reads_a_piped_stdin_in_the_event_loop(monkeypatch):
    read, write = os.pipe()
    try:
        monkeypatch.setattr("sys.stdin", os.fdopen(read, "rb", buffering=0))
        assert _stdin_is_async_pipe("linux") is True
    finally:
        os.close(write)


def test_windows_resolves_a_bare_upstream_name_with_pathext():
    seen = []

    def which(name):
        seen.append(name)
        return {"copilot-language-server": r"C:\npm\copilot-language-server.CMD"}.get(name)

    assert resolve_command(["copilot-language-server", "--stdio"], "win32", which) == [
        r"C:\npm\copilot-language-server.CMD",
        "--stdio",
    ]
    assert resolve_command(["pylsp"], "win32", which) == ["pylsp"], "left as it is when not found"
    assert resolve_command([r"C:\tools\pylsp.exe"], "win32", which) == [r"C:\tools\pylsp.exe"]
    assert seen == ["copilot-language-server", "pylsp"]


def test_posix_runs_the_command_as_given():
    assert resolve_command(["pylsp", "-v"], "linux", lambda _: "/elsewhere/pylsp") == [
        "pylsp",
        "-v",
    ]
