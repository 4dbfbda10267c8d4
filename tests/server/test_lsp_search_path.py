"""Which search the server runs is said once: a server on the Python search (chosen, or where
the compiled one did not load) warns in the client's log, and still finds the same quote with
the same range and message as one on the compiled search."""

from __future__ import annotations

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from server_helpers import (
    SERVER_COMMAND,
    end_session,
    make_client,
    quote_found,
    server_env,
    wait_for,
)

from index_tools.match import kernel


def search_client(path: str):
    @pytest_lsp.fixture(
        config=ClientServerConfig(
            server_command=SERVER_COMMAND,
            client_factory=make_client,
            server_env={**server_env(), "RECITATION_SEARCH": path},
        )
    )
    async def fixture(lsp_client: LanguageClient):
        yield
        await end_session(lsp_client)

    return fixture


python_client = search_client("python")
native_client = search_client("auto")


def search_warnings(client) -> list[str]:
    return [m.message for m in client.log_messages if "search runs" in m.message]


async def test_the_python_search_is_said_once_and_finds_the_quote(
    python_client, native_client, fixture_index, workspace
):
    if not kernel.available():
        pytest.fail(f"the native search did not load: {kernel.status()}")
    on_python = await quote_found(python_client, fixture_index, workspace)
    on_native = await quote_found(native_client, fixture_index, workspace)
    assert on_python == on_native and on_python.startswith("Quoted: acme/widgets src/geo.py")
    warned = await wait_for(lambda: search_warnings(python_client), what="the search warning")
    assert warned == ["Recitation: the Python search runs: chosen by RECITATION_SEARCH=python"]
    assert search_warnings(native_client) == []  # the compiled search: nothing to warn of
