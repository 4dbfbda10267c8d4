"""A diagnostic's data and a match notification are JSON the server made itself
(`PlainJson`): the JSON-RPC layer writes them as they are, without its converter visiting
each value (a quote of vendored code carries a dozen parts with their sources), and the
JSON written is the same as the converter's."""

from __future__ import annotations

import json

from lsprotocol import types

from index_tools.judge.verdict import judge
from server.diagnostics import StoredMatch, to_diagnostic
from server.documents import TextDocument
from server.features import create_server
from server.protocol import MATCH, PlainJson, match_payload
from server.rehearsal import _made_up_match, _serialized

HOSTILE = 'a "quoted" </script> \\ \u202e\u0000 name \U0001f600 \ud800'


def _match_with_odd_metadata():
    match = _made_up_match()
    for source in [*match.sources, *(s for p in match.parts for s in p.sources)]:
        source.repository, source.path = HOSTILE, HOSTILE + "/x.py"
        source.license = "BSD-2-Clause"  # (not the rehearsal's: test_rehearsal sees it read)
    return match


def test_the_converter_hands_plain_json_over_as_it_is():
    converter = create_server().protocol._converter
    value = PlainJson(a=[1, (2, 3)], b={"c": None})
    assert converter.unstructure(value) is value
    assert converter.unstructure({"a": (1, 2)}) == {"a": [1, 2]}  # (a plain dict: visited)


def test_a_diagnostic_and_a_match_notification_are_written_as_before():
    protocol = create_server().protocol
    match = _match_with_odd_metadata()
    text = "x = 1\n" * 10
    doc = TextDocument("file:///a.py", text, 1, "python")
    stored = StoredMatch.create(match, 0, len(text), tuple(text.split()))
    verdict = judge(stored.match, stored.identity, None, lambda kind: "warn")
    diagnostic = to_diagnostic(doc, stored, verdict)
    assert type(diagnostic.data) is PlainJson
    params = types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=[diagnostic], version=1)
    written = json.loads(_serialized(protocol, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params))
    data = written["params"]["diagnostics"][0]["data"]
    expected = {**match.to_dict(parts_listed=False), "id": stored.id, "quoteId": stored.identity.id}
    assert data == json.loads(json.dumps({**expected, "verdict": verdict.to_dict()}))
    assert data["sources"][0]["repository"] == match.sources[0].repository
    # the parts' spans and counts; their kinds and sources are the hover's and the
    # notification's (made after the diagnostic)
    assert data["parts"][0]["file_count"] == match.parts[0].file_count
    assert "sources" not in data["parts"][0] and "kind" not in data["parts"][0]
    # the converter's JSON of the same data as a plain dict: identical
    diagnostic.data = dict(diagnostic.data)
    plain = _serialized(protocol, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)
    assert json.loads(plain) == written

    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}}
    payload = match_payload(doc.uri, rng, match.to_dict(), stored.id, text)
    assert type(payload) is PlainJson
    sent = json.loads(_serialized(protocol, MATCH, payload))["params"]
    assert sent == json.loads(_serialized(protocol, MATCH, dict(payload)))["params"]
    assert sent["parts"][0]["sources"][0]["path"] == HOSTILE + "/x.py"
