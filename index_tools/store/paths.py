"""Where the embedded default index lives."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_INDEX = "RECITATION_INDEX"
DEFAULT_SOURCES = ["python:stdlib"]


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("recitation", appauthor=False))


def default_index_path() -> Path:
    """`$RECITATION_INDEX` if set, else the default index in the user cache directory."""
    env = os.environ.get(ENV_INDEX)
    if env:
        return Path(env).expanduser()
    return cache_dir() / "default-index"
