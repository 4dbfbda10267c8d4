from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from server_helpers import SERVER_COMMAND, end_session, make_client, server_env, write_corpus_jsonl

from index_tools import build_index


@pytest.fixture(scope="session")
def fixture_index(tmp_path_factory) -> Path:
    """An index of the fixture corpus, built once per test session."""
    root = tmp_path_factory.mktemp("fixture-index")
    corpus = write_corpus_jsonl(root / "corpus.jsonl")
    out = root / "index"
    build_index([str(corpus)], out)
    return out


@pytest.fixture
def workspace(tmp_path) -> dict[str, Path]:
    a = tmp_path / "alpha"
    b = tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    return {"a": a, "b": b}


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=make_client, server_env=server_env()
    )
)
async def client(lsp_client: LanguageClient):
    """A server over stdio, not yet initialized: each test starts its own session."""
    yield
    await end_session(lsp_client)
