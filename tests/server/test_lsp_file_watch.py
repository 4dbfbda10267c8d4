"""Code written outside the editor: a process writes the workspace's files while the server
runs, with no document opened, through a client that watches files (VS Code's
capabilities: the test reports what it writes, as the client's watcher would) and one that
does not (Neovim's: the server polls)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities
from server_helpers import (
    block,
    corpus_text,
    open_doc,
    start_session,
    utf16_position,
    wait_for,
)

HULL = block(corpus_text("geo.py"), "def convex_hull", "\n\ndef rotate_about")
ROTATE = block(corpus_text("geo.py"), "def rotate_about")
GREET = corpus_text("greet.js")
SHAPES = "import math\n\n\n" + ROTATE + "\n\ndef mine(x):\n    return x * 2\n"
BRANCH_FILES = 500

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="git and file times as on POSIX")


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=folder, check=True, capture_output=True, env={**os.environ, **GIT_ENV}
    )


def repository(folder: Path) -> None:
    """A repository on `main` holding shapes.py (a function quoted before the session, and
    the user's own), and a branch `other` that adds BRANCH_FILES files each holding a
    quoted function."""
    git(folder, "init", "-q", "-b", "main")
    (folder / ".gitignore").write_text("build/\n*.gen.py\n", encoding="utf-8")
    (folder / "shapes.py").write_text(SHAPES, encoding="utf-8")
    (folder / "own.py").write_text("def own():\n    return 'mine'\n", encoding="utf-8")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "start")
    git(folder, "checkout", "-q", "-b", "other")
    gen = folder / "gen"
    gen.mkdir()
    for i in range(BRANCH_FILES):
        (gen / f"mod_{i:03}.py").write_text(f"# module {i}\n\n" + HULL, encoding="utf-8")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "generated")
    git(folder, "checkout", "-q", "main")


def capabilities(watching: str) -> types.ClientCapabilities:
    """VS Code's (it watches files for the server) or Neovim's (it does not)."""
    return client_capabilities("visual_studio_code" if watching == "client" else "neovim")


def reported(client, watching: str, paths: list[Path], kind: types.FileChangeType) -> None:
    """What the client's watcher says of files a process wrote (nothing without one)."""
    if watching == "client":
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=p.as_uri(), type=kind) for p in paths]
            )
        )


def write(client, watching: str, path: Path, text: str) -> None:
    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    kind = types.FileChangeType.Created if created else types.FileChangeType.Changed
    reported(client, watching, [path], kind)


def watch_status(client, folder: Path) -> dict | None:
    for s in reversed(client.statuses):
        if s["scopeUri"] == folder.as_uri() and s.get("watchFiles"):
            return s["watchFiles"]
    return None


async def watching_started(client, folder: Path, watching: str) -> dict:
    status = await wait_for(
        lambda: (w := watch_status(client, folder)) and w["state"] == "on" and w,
        what="the files watched",
    )
    assert status["how"] == watching
    return status


async def logged(client, path: Path) -> list[dict]:
    """The file's entries in the references log (`recitation/match`, sent after the
    diagnostics)."""
    return await wait_for(
        lambda: [n for n in client.match_notes if n["uri"] == path.as_uri()],
        what=f"the references log's entry for {path.name}",
    )


def cpu_seconds(client) -> float:
    """The server process's CPU time so far (Linux)."""
    fields = Path(f"/proc/{client._server.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("watching", ["client", "polling"])
async def test_code_written_outside_the_editor_is_checked(
    client, fixture_index, workspace, watching
):
    a = workspace["a"]
    repository(a)
    await start_session(
        client, index=fixture_index, folders=[a], capabilities=capabilities(watching)
    )
    await watching_started(client, a, watching)
    # the quote in shapes.py was there before: not checked
    await asyncio.sleep(1.5)
    assert not client.diagnostics.get((a / "shapes.py").as_uri())

    # a process writes a new file holding a quoted function: one warning, nothing opened
    agent = a / "src" / "agent.py"
    write(client, watching, agent, "import math\n\n\n" + HULL)
    (diag,) = await wait_for(
        lambda: client.diagnostics.get(agent.as_uri()), what="the new file's warning"
    )
    assert diag.message.startswith("Quoted: acme/widgets src/geo.py"), diag.message
    assert diag.range.start == types.Position(3, 0)
    (note,) = await logged(client, agent)
    assert note["outsideEditor"] is True
    assert note["sources"][0]["repository"] == "acme/widgets"

    # it appends a quoted function to a file that held one already: the appended lines only
    shapes = a / "shapes.py"
    appended = SHAPES + "\n\n" + HULL
    write(client, watching, shapes, appended)
    (diag,) = await wait_for(
        lambda: client.diagnostics.get(shapes.as_uri()), what="the appended function's warning"
    )
    assert diag.range.start == utf16_position(appended, appended.index("def convex_hull"))
    await logged(client, shapes)
    assert [n["uri"] for n in client.match_notes].count(shapes.as_uri()) == 1

    # opened, the file keeps its warning, with the hover and the quick fixes
    open_doc(client, shapes.as_uri(), appended)
    await wait_for(
        lambda: [p for p in client.published if p.uri == shapes.as_uri() and p.version == 1],
        what="the warning published for the open document",
    )
    assert len(client.diagnostics[shapes.as_uri()]) == 1
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=shapes.as_uri()),
            position=diag.range.start,
        )
    )
    assert hover is not None and "acme/widgets" in hover.contents.value
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=shapes.as_uri()),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    assert any(a.title.startswith("Dismiss this quote") for a in actions)
    # closed again, its text the file's: the warning stays in the Problems panel
    published = len(client.published)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=shapes.as_uri())
        )
    )
    (after_close,) = await wait_for(
        lambda: [p for p in client.published[published:] if p.uri == shapes.as_uri()],
        what="the warning published for the closed file",
    )
    assert len(after_close.diagnostics) == 1 and after_close.version is None

    # a branch switch that rewrites 500 files: taken as known, nothing checked
    notes, cpu = len(client.match_notes), cpu_seconds(client)
    git(a, "checkout", "-q", "other")
    branch = sorted((a / "gen").glob("*.py"))
    assert len(branch) == BRANCH_FILES
    reported(client, watching, branch, types.FileChangeType.Created)
    after = await wait_for(
        lambda: (w := watch_status(client, a)) and w["takenAsKnown"] >= BRANCH_FILES and w,
        what="the branch's files taken as known",
    )
    assert after["lastTakenAsKnown"]["why"].startswith("git checkout: moving from main to other")
    # the next file written is checked at once: nothing of the branch waits before it
    later = a / "web" / "later.js"
    write(client, watching, later, "'use strict';\n\n" + GREET)
    await wait_for(lambda: client.diagnostics.get(later.as_uri()), what="the next file's warning")
    await logged(client, later)
    assert not [u for u in client.diagnostics if "/gen/" in u]
    assert len(client.match_notes) == notes + 1
    # three lookups in all: the new file, the appended function, the next file
    final = await wait_for(
        lambda: (w := watch_status(client, a)) and w["lookups"] >= 3 and w, what="the count"
    )
    assert final["lookups"] == 3 and final["checked"] == 3
    assert cpu_seconds(client) - cpu < 2.0


@pytest.mark.parametrize("watching", ["client", "polling"])
async def test_ignored_large_and_dependency_files_are_left_alone(
    client, fixture_index, workspace, watching
):
    a = workspace["a"]
    repository(a)
    await start_session(
        client, index=fixture_index, folders=[a], capabilities=capabilities(watching)
    )
    await watching_started(client, a, watching)
    quoted = "import math\n\n\n" + HULL
    left_alone = [
        a / "build" / "out.py",  # .gitignore: build/
        a / "tables.gen.py",  # .gitignore: *.gen.py
        a / "node_modules" / "geo" / "index.py",
        a / ".venv" / "lib" / "geo.py",
        a / "big.py",  # over the size limit
    ]
    for path in left_alone:
        text = quoted + ("\n# padding" * 100_000 if path.name == "big.py" else "")
        write(client, watching, path, text)
    # a file written after them is checked: they were looked at first, and left alone
    last = a / "last.py"
    write(client, watching, last, quoted)
    await wait_for(lambda: client.diagnostics.get(last.as_uri()), what="the last file's warning")
    await logged(client, last)
    assert [n["uri"] for n in client.match_notes] == [last.as_uri()]
    final = await wait_for(
        lambda: (w := watch_status(client, a)) and w["lookups"] >= 1 and w, what="the count"
    )
    assert final["lookups"] == 1


async def test_off_for_a_folder(client, fixture_index, workspace):
    """`watchFiles: false`: the folder's files are not watched, and its status says so."""
    a, b = workspace["a"], workspace["b"]
    client.set_configuration({"watchFiles": False}, section="recitation", scope_uri=b.as_uri())
    await start_session(client, index=fixture_index, folders=[a, b])
    await watching_started(client, a, "client")
    status = await wait_for(
        lambda: [s for s in client.statuses if s["scopeUri"] == b.as_uri()], what="b's status"
    )
    assert status[-1]["state"] == "ready" and status[-1]["watchFiles"] is None
    for folder in (b, a):
        write(client, "client", folder / "agent.py", "import math\n\n\n" + HULL)
    await wait_for(lambda: client.diagnostics.get((a / "agent.py").as_uri()), what="a's warning")
    assert not client.diagnostics.get((b / "agent.py").as_uri())


async def test_a_file_not_open_keeps_its_warnings_current(client, fixture_index, workspace):
    """Its quote removed on disk, the warning goes; another added, it comes; the file
    deleted, its diagnostics are withdrawn."""
    a = workspace["a"]
    repository(a)
    await start_session(
        client, index=fixture_index, folders=[a], capabilities=capabilities("client")
    )
    await watching_started(client, a, "client")
    path = a / "agent.py"
    first = "import math\n\n\n" + HULL + "\n\ndef mine():\n    return 1\n"
    write(client, "client", path, first)
    (diag,) = await wait_for(lambda: client.diagnostics.get(path.as_uri()), what="the warning")
    assert diag.range.start == types.Position(3, 0)
    # the quote rewritten by the writer's own code: its warning goes
    write(
        client,
        "client",
        path,
        "import math\n\n\ndef hull(p):\n    return p\n\ndef mine():\n    return 1\n",
    )
    await wait_for(
        lambda: len(client.diagnostics.get(path.as_uri(), [1])) == 0, what="the warning gone"
    )
    # another quote, put first: one warning, where it is
    text = (
        "import math\n\n\n"
        + ROTATE
        + "\n\ndef hull(p):\n    return p\n\ndef mine():\n    return 1\n"
    )
    write(client, "client", path, text)
    (diag,) = await wait_for(lambda: client.diagnostics.get(path.as_uri()), what="a new warning")
    assert diag.range.start == types.Position(3, 0)
    assert "rotate" in text.splitlines()[3]
    path.unlink()
    reported(client, "client", [path], types.FileChangeType.Deleted)
    await wait_for(lambda: len(client.diagnostics.get(path.as_uri(), [1])) == 0, what="withdrawn")


async def test_a_folder_that_leaves_takes_its_warnings_with_it(client, fixture_index, workspace):
    a, b = workspace["a"], workspace["b"]
    await start_session(client, index=fixture_index, folders=[a, b])
    await watching_started(client, a, "client")
    path = a / "agent.py"
    write(client, "client", path, "import math\n\n\n" + HULL)
    await wait_for(lambda: client.diagnostics.get(path.as_uri()), what="the warning")
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=a.as_uri(), name=a.name)]
            )
        )
    )
    await wait_for(
        lambda: len(client.diagnostics.get(path.as_uri(), [1])) == 0, what="the warning withdrawn"
    )
