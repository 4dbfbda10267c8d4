"""Recitation's language server: attribution diagnostics, hovers and quick fixes for code that
quotes indexed public code."""

__version__ = "0.1.0"
