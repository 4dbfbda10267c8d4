"""Random edit sequences never crash the server; every published range lies inside the
document version it was published for, and covers words that the match really quotes."""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from server_helpers import (
    SERVER_COMMAND,
    block,
    corpus_text,
    end_session,
    make_client,
    server_env,
    start_session,
    utf16_position,
    wait_for,
)

from index_tools import tokenize

GEO = corpus_text("geo.py")
GREET = corpus_text("greet.js")
SNIPPETS = [
    block(GEO, "def convex_hull", "\n\ndef rotate_about"),
    block(GEO, "def rotate_about"),
    block(GREET, "function greetingFor", "\nmodule.exports"),
    GREET,
    block(corpus_text("parse_tables.py"), "def read_rows"),
]
ALPHABET = st.sampled_from(list("abc xyz_(){}[]:;,.=+-*/\"'#\n\t  éß中🎉🚀𝔘"))


class ThreadedSession:
    """One server and client for the whole module, on an event loop in a thread, so that
    hypothesis can drive it from a plain (synchronous) test."""

    def __init__(self, index, folder):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.folder = folder
        self.checked = 0  # diagnostics whose ranges were checked
        self.client = self.run(self._start(index))

    def run(self, coro, timeout: float = 60.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start(self, index):
        client = make_client()
        await client.start_io(*SERVER_COMMAND, env=server_env())
        await start_session(client, index=index, folders=[self.folder])
        await wait_for(lambda: client.statuses, what="index status")
        return client

    def close(self):
        async def stop():
            await end_session(self.client)
            await self.client.stop()

        try:
            self.run(stop(), timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def session(fixture_index, tmp_path_factory):
    folder = tmp_path_factory.mktemp("property-ws")
    s = ThreadedSession(fixture_index, folder)
    yield s
    s.close()


edit_strategy = st.one_of(
    st.tuples(st.just("snippet"), st.floats(0, 1), st.integers(0, len(SNIPPETS) - 1)),
    st.tuples(st.just("type"), st.floats(0, 1), st.text(ALPHABET, max_size=30)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.floats(0, 1)),
    st.tuples(
        st.just("replace"), st.floats(0, 1), st.floats(0, 0.2), st.text(ALPHABET, max_size=8)
    ),
)


def plan(text: str, edit: tuple) -> tuple[int, int, str]:
    """The (start, end, new text) an edit stands for on `text`."""
    n = len(text)
    kind = edit[0]
    at = round(edit[1] * n)
    if kind == "snippet":
        return at, at, SNIPPETS[edit[2]]
    if kind == "type":
        return at, at, edit[2]
    if kind == "delete":
        a, b = sorted((at, round(edit[2] * n)))
        return a, b, ""
    return at, min(n, at + round(edit[2] * n)), edit[3]


def inside(text: str, rng: types.Range) -> bool:
    lines = text.split("\n")
    for pos in (rng.start, rng.end):
        if pos.line >= len(lines):
            return False
        if pos.character > len(lines[pos.line].encode("utf-16-le")) // 2:
            return False
    return (rng.start.line, rng.start.character) <= (rng.end.line, rng.end.character)


def offset_of(text: str, pos: types.Position) -> int:
    line_start = 0
    for _ in range(pos.line):
        line_start = text.index("\n", line_start) + 1
    units = 0
    i = line_start
    while units < pos.character:
        units += 2 if ord(text[i]) > 0xFFFF else 1
        i += 1
    return i


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    initial=st.sampled_from(["", "import os\n", "# Grüße 🎉\nx = '👋'; ", GEO[:200]]),
    batches=st.lists(st.lists(edit_strategy, min_size=1, max_size=3), min_size=1, max_size=6),
)
def test_random_edits_keep_ranges_inside_the_document(session, initial, batches):
    client = session.client
    uri = (session.folder / f"doc-{uuid.uuid4().hex[:8]}.py").as_uri()
    texts = {1: initial}
    text = initial
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text
            )
        )
    )
    version = 1
    for batch in batches:
        changes = []
        for edit in batch:
            start, end, new = plan(text, edit)
            rng = types.Range(utf16_position(text, start), utf16_position(text, end))
            changes.append(types.TextDocumentContentChangePartial(range=rng, text=new))
            text = text[:start] + new + text[end:]
        version += 1
        texts[version] = text
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=changes,
            )
        )
    # one more lookup on the final text (a rescan), then close: pending checks are dropped
    session.run(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="recitation.rescan", arguments=[uri])
        )
    )
    mark = len(client.published)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    session.run(
        wait_for(
            lambda: any(p.uri == uri and p.version is None for p in client.published[mark:]),
            what="the closing publish",
        )
    )

    for published in [p for p in client.published if p.uri == uri and p.version is not None]:
        doc = texts[published.version]
        for diag in published.diagnostics:
            assert inside(doc, diag.range), (published.version, diag.range)
            quoted = doc[offset_of(doc, diag.range.start) : offset_of(doc, diag.range.end)]
            words = [w.text for w in tokenize(quoted)]
            match_words = [w.text for w in tokenize(diag.data["text"])]
            assert words and match_words[-len(words) :] == words
            session.checked += 1


def test_the_random_edits_did_produce_diagnostics(session):
    assert session.checked > 0
