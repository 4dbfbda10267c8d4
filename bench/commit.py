"""The commit a benchmark ran at, for the header of its results."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def commit() -> str:
    """The checkout's short commit hash, "?" outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return "?"
    return out.stdout.strip() or "?"


def run_header(title: str, command: str, load: float) -> list[str]:
    """A results file's first lines: its title, the commit and the machine it ran on (`load`:
    its load average when the run began), and the command that reproduces it."""
    return [
        f"# {title}",
        "",
        f"Commit `{commit()}`, {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), load average before {load:.1f}.",
        "",
        *reproduce(command),
    ]


def reproduce(command: str) -> list[str]:
    """A results file's lines giving the command that made it."""
    return ["Reproduce:", "", "```", command, "```", ""]


def shown_argv(argv: list[str], hidden: dict[str, str]) -> str:
    """A command line with the values of the `hidden` options (this machine's folders) as
    their placeholders."""
    return " ".join(hidden.get(argv[i - 1], a) if i else a for i, a in enumerate(argv))


def emit(lines: list[str], out: str | None) -> None:
    """A results file's lines printed, and written to `out` when given."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        Path(out).write_text(text, encoding="utf-8")
