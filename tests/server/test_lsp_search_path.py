"""Which search the server runs is said once: a server on the Python search (chosen, or where
the compiled one did not load) warns in the client's log, and still finds the same quote with
the same range and message as one on the compiled search."""

from __future__ import annotations

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from server_helpers import (
    SERVER_COMMAND,
    block,
    corpus_text,
    diagnostics_for,
    end_position,
    insert,
    make_client,
    open_doc,
    server_env,
    start_session,
    wait_for,
)

from index_tools.match import kernel

GEO = corpus_text("geo.py")
HULL = block(GEO, "def convex_hull", "\n\ndef rotate_about")


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
        await lsp_client.shutdown_session()

    return fixture


python_client = search_client("python")
native_client = search_client("auto")


async def quote_found(client, index, workspace) -> str:
    await start_session(client, index=index, folders=[workspace["a"]])
    uri = (workspace["a"] / "app.py").as_uri()
    open_doc(client, uri, "import math\n\n\n")
    insert(client, uri, 2, end_position("import math\n\n\n"), HULL)
    (diag,) = await diagnostics_for(client, uri)
    return diag.message


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
