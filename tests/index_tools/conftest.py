"""Fixtures of the engine's tests."""

from __future__ import annotations

import pytest

from index_tools.match import kernel


@pytest.fixture(params=["native", "python"])
def search_path(request):
    """Runs a test once with the compiled search and once with the Python one (the
    reference). The native run fails, never skips, where the library did not load: the
    project builds it on every platform it installs on."""
    if request.param == "native" and not kernel.available():
        pytest.fail(f"the native search did not load: {kernel.status()}")
    with kernel.using(request.param):
        yield request.param
