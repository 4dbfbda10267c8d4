"""The server follows its index: a generation published by `build` or `add` while it runs is
picked up without a restart (and the old one released), a broken one becomes an error
status, and requests queued while the index is swapped or closed are all answered."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from server_helpers import diagnostics_for, insert, open_doc, plain, start_session, wait_for

from index_tools import BuildOptions, build_index


def snippet(name: str) -> str:
    """A function of 100+ words of its own; its literals differ per name, so no other
    snippet is even a renamed copy of it."""
    digits = str(int(hashlib.sha256(name.encode()).hexdigest(), 16))
    body = "".join(
        f"    total_{name}_{i} = compute(values[{digits[i]}], {digits[i : i + 6]}, '{name}')\n"
        for i in range(10)
    )
    return f"def function_{name}(values, factor):\n{body}    return total_{name}_0\n"


def corpus(root: Path, name: str) -> str:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.py").write_text(snippet(name))
    return str(root)


def cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "index_tools.cli", *args, "-q"], check=True, timeout=120)


async def check(client, uri: str, text: str) -> dict:
    result = await client.protocol.send_request_async(
        "recitation/check", {"text": text, "uri": uri}
    )
    return plain(result)


async def session_on_old_index(client, tmp_path, workspace) -> tuple[Path, str]:
    """A session on an index of the corpus "old", a document open whose check finds it."""
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(jobs=1, progress=False))
    a = workspace["a"]
    await start_session(client, index=idx, folders=[a])
    uri = (a / "x.py").as_uri()
    open_doc(client, uri, "")
    assert len((await check(client, uri, snippet("old")))["matches"]) == 1
    return idx, uri


async def test_a_rebuilt_index_is_used_without_a_restart(client, tmp_path, workspace):
    idx, uri = await session_on_old_index(client, tmp_path, workspace)
    assert (await check(client, uri, snippet("new")))["matches"] == []

    cli("build", corpus(tmp_path / "new", "new"), "--out", str(idx))
    # within a poll interval the new generation answers, the old one is gone
    await wait_for_async(lambda: check(client, uri, snippet("new")), lambda r: r["matches"])
    assert (await check(client, uri, snippet("old")))["matches"] == []
    # and the editor's warnings come from it too
    insert(client, uri, 2, types.Position(0, 0), snippet("new"))
    (diag,) = await diagnostics_for(client, uri)
    assert "new.py" in diag.message

    cli("add", str(idx), corpus(tmp_path / "more", "more"))
    await wait_for_async(lambda: check(client, uri, snippet("more")), lambda r: r["matches"])
    # the old generations are released: nothing of them is left on disk
    assert len([p for p in idx.iterdir() if p.name.startswith("gen-")]) == 1


async def test_a_broken_new_generation_is_an_error_status(client, tmp_path, workspace):
    idx, uri = await session_on_old_index(client, tmp_path, workspace)
    # a new generation whose header is damaged
    cli("build", corpus(tmp_path / "new", "new"), "--out", str(idx))
    gen = idx / (idx / "CURRENT").read_text().strip()
    (gen / "HEADER.json").write_text("{")
    await asyncio.sleep(1.1)
    with pytest.raises(Exception, match="not checked: .*damaged"):  # never "nothing found"
        await check(client, uri, snippet("new"))
    status = await wait_for(
        lambda: [s for s in client.statuses if s.get("state") == "error"], what="error status"
    )
    assert "damaged" in status[-1]["message"]


async def test_requests_queued_while_settings_change_are_all_answered(
    client, fixture_index, tmp_path, workspace
):
    other = tmp_path / "other"
    build_index([corpus(tmp_path / "o", "o")], other, BuildOptions(jobs=1, progress=False))
    a = workspace["a"]
    # a client that pushes its settings: each push switches the folder's index at once
    await start_session(
        client, index=fixture_index, folders=[a], capabilities=types.ClientCapabilities()
    )
    uri = (a / "x.py").as_uri()
    open_doc(client, uri, "")
    await check(client, uri, snippet("o"))  # the index is open
    big = snippet("o") * 40
    pending = [asyncio.ensure_future(check(client, uri, big)) for _ in range(12)]
    for i in range(4):  # the folder's index changes back and forth meanwhile
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"recitation": {"indexPath": str(other if i % 2 == 0 else fixture_index)}}
            )
        )
        await asyncio.sleep(0.05)
    answers = await asyncio.wait_for(asyncio.gather(*pending), timeout=60)
    assert all("matches" in r for r in answers)


async def wait_for_async(request, accept, timeout: float = 20.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        result = await request()
        if accept(result):
            return result
        if loop.time() > end:
            raise AssertionError(f"still {result}")
        await asyncio.sleep(0.2)


async def test_the_first_lookup_that_meets_damage_is_a_failed_lookup(client, tmp_path, workspace):
    """Damage the open of an index could not see (its suffix array overwritten in place,
    the size and the header unchanged) met by a lookup: that very lookup fails and says so,
    never an empty answer; the status turns to the error."""
    idx, uri = await session_on_old_index(client, tmp_path, workspace)
    gen = idx / (idx / "CURRENT").read_text().strip()
    for sa in gen.glob("shard-*.sa"):
        with open(sa, "r+b") as f:  # every place past the words: no probe can be read
            f.write(b"\xff" * sa.stat().st_size)
    for attempt in range(3):  # the first lookup after the damage, and the ones after it
        try:
            answer = await check(client, uri, snippet("old"))
        except Exception as exc:  # noqa: BLE001 - the request's error is what is tested
            assert "damaged" in str(exc), (attempt, exc)
            assert attempt or "not checked" in str(exc), exc  # later: the index's error
        else:
            raise AssertionError(f"lookup {attempt + 1} after the damage answered {answer}")
    status = await wait_for(
        lambda: [s for s in client.statuses if s.get("state") == "error"], what="error status"
    )
    assert "damaged" in status[-1]["message"]
