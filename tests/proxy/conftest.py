from __future__ import annotations

from pathlib import Path

import pytest
from proxy_helpers import WIDGETS

from index_tools import build_index


@pytest.fixture(scope="session")
def widgets_index(tmp_path_factory) -> Path:
    """An index of the fixture folder `widgets` (MIT, repository "widgets")."""
    out = tmp_path_factory.mktemp("proxy-index") / "index"
    build_index([str(WIDGETS)], out)
    return out
