"""Where the embedded default index and the indexes of workspaces live."""

from __future__ import annotations

import hashlib
import os
import re
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


def workspace_key(folder: str | os.PathLike) -> str:
    """What identifies a workspace in an index and in the cache: its real path."""
    return os.path.normcase(os.path.realpath(folder))


def workspace_index_path(folder: str | os.PathLike) -> Path:
    """Where the index of a workspace (`workspace:DIR`) lives: in the user cache folder,
    keyed by the workspace's real path, never inside the workspace."""
    key = workspace_key(folder)
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(key))[:40] or "workspace"
    return cache_dir() / "workspaces" / f"{name}-{digest}"
