"""Rows of the conformance set (`matched_snippets.csv`) as corpus and as suggestions."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from lsprotocol import types
from server_helpers import SNIPPETS_CSV, diagnostics_for, insert, open_doc, start_session

from index_tools import build_index, tokenize

ROWS = 24

# the same reason as the engine's tests that read it: scripts/test.sh lists them together
pytestmark = pytest.mark.skipif(
    not SNIPPETS_CSV.exists(),
    reason=f"the seed data set is not beside the checkout ({SNIPPETS_CSV})",
)


def snippet_rows() -> list[dict]:
    csv.field_size_limit(1 << 24)
    with SNIPPETS_CSV.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter=";"))
    seen, out = set(), []
    for row in rows:
        text = row["matching_part_of_suggestion"]
        if text in seen or len(tokenize(text)) < 60:
            continue
        seen.add(text)
        out.append(row)
        if len(out) == ROWS:
            break
    return out


def link(row: dict) -> str:
    return row["link_to_example_match"].replace(" ", "%20")


@pytest.fixture(scope="module")
def snippet_index(tmp_path_factory) -> tuple[Path, list[dict]]:
    rows = snippet_rows()
    root = tmp_path_factory.mktemp("snippet-index")
    corpus = root / "snippets.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for i, row in enumerate(rows):
            doc = {"content": row["matching_part_of_suggestion"], "path": f"snippet_{i}.py"}
            doc["url"] = link(row)
            f.write(json.dumps(doc) + "\n")
    build_index([str(corpus)], root / "index")
    return root / "index", rows


async def test_check_finds_every_snippet_with_its_link(client, snippet_index, workspace):
    index, rows = snippet_index
    await start_session(client, index=index, folders=[workspace["a"]])
    for row in rows:
        text = row["matching_part_of_suggestion"]
        result = await client.protocol.send_request_async("recitation/check", {"text": text})
        matches = result.matches
        assert matches, row["example_id"]
        best = matches[0]
        assert best.length == len(tokenize(text))
        assert best.sources[0].url.startswith(link(row))


async def test_inserted_snippets_are_flagged(client, snippet_index, workspace):
    index, rows = snippet_index
    await start_session(client, index=index, folders=[workspace["a"]])
    for i, row in enumerate(rows[:6]):
        uri = (workspace["a"] / f"s{i}.py").as_uri()
        open_doc(client, uri, "")
        insert(client, uri, 2, types.Position(0, 0), row["matching_part_of_suggestion"])
        (diag,) = await diagnostics_for(client, uri)
        assert diag.code_description.href.startswith(link(row))
        assert diag.data["length"] == len(tokenize(row["matching_part_of_suggestion"]))
