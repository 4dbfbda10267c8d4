"""Check Folder (`recitation.checkFolder`): every code file of a workspace folder checked by
`recitation-index check` on every core in a child process; each file that quotes indexed
code gets the editor's own warnings, open or not, and the user is told what was checked.
A folder that cannot be checked says why. A real server over stdio, the fixture corpus's
index, a real folder (and a git repository: untracked files are left out and counted)."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from lsprotocol import types
from server_helpers import block, corpus_text, open_doc, start_session, utf16_position, wait_for

HULL = block(corpus_text("geo.py"), "def convex_hull", "\n\ndef rotate_about")
ROTATE = block(corpus_text("geo.py"), "def rotate_about")
OWN = "def own(values):\n    return [v * 2 for v in values if v]\n"


def write(folder, name: str, text: str):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def check_folder(client, folder=None) -> dict:
    args = [folder.as_uri()] if folder is not None else []
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.checkFolder", arguments=args)
    )


async def test_every_file_quoting_the_index_gets_its_warning_open_or_not(
    client, fixture_index, workspace
):
    a = workspace["a"]
    hull = write(a, "pkg/hull.py", "import math\n\n\n" + HULL)
    rotate = write(a, "pkg/deep/rotate.py", "# rotation\n" + ROTATE + "\n")
    write(a, "own.py", OWN)
    opened = write(a, "open.py", OWN + "\n\n" + HULL)
    await start_session(client, index=fixture_index, folders=[a])
    open_doc(client, opened.as_uri(), opened.read_text(encoding="utf-8"))
    result = await check_folder(client, a)
    assert result["files"] == 4 and result["quoting"] == 3 and result["shown"] == 3
    assert result["jobs"] == (os.cpu_count() or 1) and result["notChecked"] == 0
    # each quoting file's warning, on the quoted lines: the two files not open too
    for path, quote in ((hull, HULL), (rotate, ROTATE), (opened, HULL)):
        (diag,) = await wait_for(lambda p=path: client.diagnostics.get(p.as_uri()), what=path.name)
        text = path.read_text(encoding="utf-8")
        assert diag.range.start == utf16_position(text, text.index(quote))
        assert diag.message.startswith("Quoted: acme/widgets src/geo.py"), diag.message
    assert not client.diagnostics.get((a / "own.py").as_uri())
    (said,) = [m.message for m in client.messages if "checked 4 files" in m.message]
    assert re.fullmatch(
        rf"Recitation: checked 4 files of {a.name} in [\d.]+ s on \d+ cores?: 3 quote indexed code",
        said,
    ), said


async def test_untracked_files_are_left_out_and_counted(client, fixture_index, workspace):
    a = workspace["a"]
    write(a, "tracked.py", "import math\n\n\n" + HULL)
    untracked = write(a, "scratch.py", "import math\n\n\n" + HULL)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    for args in (["init", "-q"], ["add", "tracked.py"]):
        subprocess.run(["git", *args], cwd=a, check=True, capture_output=True, env=env)
    await start_session(client, index=fixture_index, folders=[a])
    result = await check_folder(client)  # (no argument: the first folder)
    assert result["files"] == 1 and result["shown"] == 1
    await wait_for(lambda: client.diagnostics.get((a / "tracked.py").as_uri()), what="tracked")
    assert not client.diagnostics.get(untracked.as_uri())
    assert any("1 untracked files left out (git)" in m.message for m in client.messages)


async def test_a_folder_without_an_index_says_why(client, workspace, tmp_path):
    a = workspace["a"]
    write(a, "hull.py", HULL)
    await start_session(client, index=tmp_path / "no-index", folders=[a])
    result = await check_folder(client, a)
    assert "No index at" in result["failed"]
    assert any(
        m.type == types.MessageType.Error and "checking alpha failed: No index at" in m.message
        for m in client.messages
    ), [m.message for m in client.messages]


async def test_a_damaged_index_is_a_failure_said_not_nothing_found(
    client, fixture_index, workspace, tmp_path
):
    """The child's check meets a damaged index: the command fails and says the check's
    own words, and no file is called clean."""
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(fixture_index, broken)
    a = workspace["a"]
    write(a, "hull.py", HULL)
    await start_session(client, index=broken, folders=[a])
    await wait_for(lambda: client.statuses and client.statuses[-1].get("state") == "ready")
    for f in broken.rglob("shard-000.sa"):
        with open(f, "r+b") as out:  # in place: a file cut short under a map is a bus error
            out.write(b"\0" * f.stat().st_size)
    result = await check_folder(client, a)
    assert "damaged" in result.get("failed", ""), result
    assert not client.diagnostics.get((a / "hull.py").as_uri())


@pytest.mark.parametrize("args", [["not a uri", 1], [7]])
async def test_bad_arguments_are_refused(client, fixture_index, workspace, args):
    from pygls.exceptions import JsonRpcException

    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    with pytest.raises(JsonRpcException):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="recitation.checkFolder", arguments=args)
        )
