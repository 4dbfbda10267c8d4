"""A server maps its index ahead when it opens it (the page tables of the index's files in
memory filled on a thread of its own) and says so once in its log, while it answers; with
RECITATION_MAP_AHEAD=0 it does not, and says that. Real servers over stdio."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

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

LOGS = Path(tempfile.mkdtemp(prefix="recitation-map-ahead-"))


def logged_client(name: str, env: dict[str, str]):
    log = LOGS / f"{name}.log"

    @pytest_lsp.fixture(
        config=ClientServerConfig(
            server_command=[*SERVER_COMMAND, "--log-file", str(log), "--log-level", "INFO"],
            client_factory=make_client,
            server_env={**server_env(), **env},
        )
    )
    async def fixture(lsp_client: LanguageClient):
        yield  # (the fixture is the client; its log is LOGS / f"{name}.log")
        await end_session(lsp_client)

    return fixture


default_client = logged_client("default", {})
off_client = logged_client("off", {"RECITATION_MAP_AHEAD": "0"})


def said(log: Path, words: str) -> list[str]:
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return [line for line in text.splitlines() if words in line]


async def quoted_then_said(client, name: str, fixture_index, workspace) -> list[str]:
    """The quote found through a server (it answers whatever mapping ahead does), then its
    log's lines on mapping ahead, once there are some."""
    message = await quote_found(client, fixture_index, workspace)
    assert message.startswith("Quoted: acme/widgets src/geo.py")
    log = LOGS / f"{name}.log"
    return await wait_for(lambda: said(log, "mapped ahead"), what="the map-ahead log line")


async def test_the_server_maps_its_index_ahead_and_says_so_once(
    default_client, fixture_index, workspace
):
    lines = await quoted_then_said(default_client, "default", fixture_index, workspace)
    if sys.platform.startswith("linux"):
        assert re.search(
            r"[\d.]+ (MiB|GiB) in memory mapped ahead in [\d.]+ s \(the page cache's pages",
            lines[0],
        ), lines
    else:
        assert "not mapped ahead (the system has no MADV_POPULATE_READ" in lines[0], lines
    # then a lookup rehearsed on the lookup thread: the first suggestion's costs no more
    assert re.search(r"; a lookup rehearsed in [\d.]+ ms$", lines[0]), lines
    assert len(lines) == 1


async def test_with_map_ahead_off_it_says_so_and_still_finds_the_quote(
    off_client, fixture_index, workspace
):
    lines = await quoted_then_said(off_client, "off", fixture_index, workspace)
    assert lines and all("not mapped ahead (RECITATION_MAP_AHEAD=0)" in x for x in lines)
