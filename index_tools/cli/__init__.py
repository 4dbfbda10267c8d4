"""`recitation-index`: the commands, `check` for CI, SARIF and JSON output."""

from .commands import main

__all__ = ["main"]
