"""What the CLI prints reaches any output: a terminal, a file, a pipe, a Windows console in
cp1252. A character the output's encoding cannot hold is written as a backslash escape
(`\\u6570`), never an error (`reconfigure_output`); JSON is valid in whatever encoding
stdout has: plain ASCII with `\\uXXXX` escapes when stdout is not UTF-8 (`json_text`).
File names are escaped before they get here (`safe_text.escape_name`)."""

from __future__ import annotations

import codecs
import contextlib
import json
import sys


def reconfigure_output() -> None:
    """stdout and stderr escape what their encoding cannot hold (`backslashreplace`)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a closed or detached stream
                reconfigure(errors="backslashreplace")


def _stdout_is_utf8() -> bool:
    try:
        return codecs.lookup(sys.stdout.encoding or "ascii").name == "utf-8"
    except (LookupError, AttributeError):
        return False


def json_text(value: object, indent: int | None = 2) -> str:
    """`value` as JSON for stdout: non-ASCII characters as they are when stdout is UTF-8,
    `\\uXXXX` escapes otherwise (valid JSON either way, never an encoding error)."""
    return json.dumps(value, indent=indent, ensure_ascii=not _stdout_is_utf8())
