"""A workspace folder's own index, over stdio with the real server: which index each folder
uses, the offer at first run (`window/showMessageRequest` for a client without its own
interface, `recitation/status` for one with it), a build with progress and cancel, code
pasted meanwhile checked once the index is ready, a lock file's change updating the index
with no restart (the client's watcher, or the server's polling), "Not now" remembered.

The packages are real (ms 2.1.2 and 2.1.3, served by verdaccio on loopback, the lock file
written by npm itself); each test has a cache folder of its own (XDG_CACHE_HOME), where the
folders' indexes live."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities
from server_helpers import (
    SERVER_COMMAND,
    RecordingClient,
    block,
    corpus_text,
    end_position,
    end_session,
    folder,
    insert,
    make_client,
    manifest,
    open_doc,
    plain,
    server_env,
    wait_for,
    write_corpus_jsonl,
)

from index_tools import build_index

REGISTRY_TESTS = Path(__file__).resolve().parents[1] / "index_tools" / "build" / "sources"
PACKAGES = Path(
    os.environ.get("RECITATION_TEST_PACKAGES")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "recitation-test-packages"
)
MS = ("2.1.2", "2.1.3")


sys.path.insert(0, str(REGISTRY_TESTS))
from registry_helpers import Verdaccio, have_verdaccio, served  # noqa: E402


def needs_registry(test):
    """verdaccio, npm and the real packages (scripts/registry-servers.sh)."""
    for mark in (
        pytest.mark.skipif(not have_verdaccio(), reason="verdaccio is not installed"),
        pytest.mark.skipif(
            not all((PACKAGES / "npm" / f"ms-{v}.tgz").exists() for v in MS),
            reason="the real test packages are not fetched (scripts/registry-servers.sh)",
        ),
        pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
    ):
        test = mark(test)
    return test


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    root = tmp_path_factory.mktemp("verdaccio")
    with served(Verdaccio(root)) as npm:
        for version in MS:
            tgz = PACKAGES / "npm" / f"ms-{version}.tgz"
            with tarfile.open(tgz) as tar:
                meta = json.load(tar.extractfile("package/package.json"))
            npm.publish(
                "ms", version, tgz.read_bytes(), {k: v for k, v in meta.items() if k[0] != "_"}
            )
        yield npm


def ms_parse(version: str = "2.1.3") -> str:
    """ms's `parse`, as a user pastes it."""
    with tarfile.open(PACKAGES / "npm" / f"ms-{version}.tgz") as tar:
        code = tar.extractfile("package/index.js").read().decode()
    return block(code, "function parse(str)", "/**\n * Short format")


class WorkspaceClient(RecordingClient):
    """Answers `window/showMessageRequest` with what the test puts in `answers` (waiting
    for it), and keeps the requests."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.message_requests: list[types.ShowMessageRequestParams] = []
        self.answers: asyncio.Queue[str | None] = asyncio.Queue()


def make_workspace_client() -> WorkspaceClient:
    client = make_client(WorkspaceClient)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_request(client: WorkspaceClient, params: types.ShowMessageRequestParams):
        client.message_requests.append(params)
        title = await client.answers.get()
        return types.MessageActionItem(title=title) if title else None

    return client


class Session:
    """A server started with its own environment (its cache folder, the registry)."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        self.clients: list[WorkspaceClient] = []

    async def start(self) -> WorkspaceClient:
        config = ClientServerConfig(
            server_command=SERVER_COMMAND, client_factory=make_workspace_client, server_env=self.env
        )
        client = await config.start()
        self.clients.append(client)
        return client

    async def close(self) -> None:
        for client in self.clients:
            client.answers.put_nowait(None)  # (an offer left unanswered by a failed test)
            try:
                if not client.stopped:
                    await end_session(client)
            finally:
                await client.stop()


@pytest_asyncio.fixture
async def session(tmp_path, request):
    env = server_env()
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    if "registry" in request.fixturenames:
        npm = request.getfixturevalue("registry")
        env.update(
            RECITATION_NPM_REGISTRY=npm.url,
            npm_config_registry=npm.url,
            npm_config_cache=str(tmp_path / "npm-cache"),
        )
    s = Session(env)
    yield s
    await s.close()


def npm_lock(folder_path: Path, env: dict, spec: str) -> None:
    """package.json and package-lock.json written by npm itself, against verdaccio."""
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--no-audit", "--no-fund", "--save-exact",
         "--ignore-scripts", spec],
        cwd=folder_path, env=env, check=True, capture_output=True, timeout=300,
    )  # fmt: skip


def js_workspace(root: Path, env: dict, version: str = "2.1.3") -> Path:
    app = root / "app"
    app.mkdir()
    (app / "package.json").write_text('{"name": "clock-app", "version": "1.0.0"}\n')
    npm_lock(app, env, f"ms@{version}")
    (app / "index.js").write_text("const ms = require('ms');\n")
    return app


def in_cache(session: Session, code: str, *args: str) -> Path:
    """What the engine says of a path for this session's server (its cache folder)."""
    done = subprocess.run(
        [sys.executable, "-c", f"import sys; import index_tools as t; print({code})", *args],
        env=session.env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(done.stdout.strip())


def own_index(session: Session, path: Path) -> Path:
    """Where the folder's own index lives for this session's server."""
    return in_cache(session, "t.workspace_index_path(sys.argv[1])", str(path))


def default_index(session: Session) -> Path:
    return in_cache(session, "t.default_index_path()")


async def initialize(
    client: WorkspaceClient,
    folders: list[Path],
    settings: dict | None = None,
    per_folder: dict[Path, dict] | None = None,
    capabilities: types.ClientCapabilities | None = None,
    client_ui: bool = False,
) -> None:
    options: dict[str, Any] = {"recitation": dict(settings or {})}
    if per_folder:
        options["folders"] = [
            {"uri": f.as_uri(), "name": f.name, "settings": s} for f, s in per_folder.items()
        ]
    if client_ui:
        options["clientFeatures"] = ["workspaceIndex"]
    for f, s in (per_folder or {}).items():  # what the client's configuration says too
        client.set_configuration({"recitation": s}, scope_uri=f.as_uri())
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or client_capabilities("visual_studio_code"),
            initialization_options=options,
            workspace_folders=[folder(f) for f in folders],
            root_uri=folders[0].as_uri(),
        )
    )


def status_of(client: RecordingClient, path: Path, accept=lambda s: True) -> dict | None:
    uri = path.as_uri().rstrip("/")
    found = [s for s in client.statuses if (s.get("scopeUri") or "").rstrip("/") == uri]
    return found[-1] if found and accept(found[-1]) else None


async def wait_status(client, path: Path, accept, what: str, timeout: float = 60) -> dict:
    return await wait_for(
        lambda: status_of(client, path, accept), timeout=timeout, what=f"{what} ({path.name})"
    )


def own(state: str):
    return lambda s: (s.get("workspaceIndex") or {}).get("state") == state


async def paste(client, uri: str, text: str, head: str = "// helpers\n\n") -> None:
    open_doc(client, uri, head, language="javascript")
    insert(client, uri, 2, end_position(head), text)


async def execute(client, command: str, *args) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(args))
    )


# -------------------------------------------------------------------- which index


async def test_each_folder_uses_its_own_index_unless_another_is_set(session, tmp_path):
    """Three folders, each with an index of its own in the cache: the first uses it, the
    second has `workspaceIndex: "off"` (the default index: none here), the third names
    another index in `indexPath`, which wins."""
    corpus = write_corpus_jsonl(tmp_path / "corpus.jsonl")
    a, b, c = (tmp_path / n for n in ("alpha", "beta", "gamma"))
    for f in (a, b, c):
        f.mkdir()
        build_index([str(corpus)], own_index(session, f))
    other = tmp_path / "other-index"
    build_index([str(corpus)], other)
    client = await session.start()
    await initialize(
        client,
        [a, b, c],
        per_folder={b: {"workspaceIndex": "off"}, c: {"indexPath": str(other)}},
    )
    alpha = await wait_status(client, a, lambda s: s["state"] == "ready", "a ready status")
    assert alpha["message"] == "Workspace index: 1 other source"
    assert alpha["workspaceIndex"]["inUse"] is True
    assert alpha["workspaceIndex"]["path"] == str(own_index(session, a))
    assert str(tmp_path / "cache") in alpha["index"]["path"]  # in the cache, not the folder
    beta = await wait_status(client, b, lambda s: s["state"] == "no-index", "the default index")
    assert beta["workspaceIndex"] is None
    gamma = await wait_status(client, c, lambda s: s["state"] == "ready", "indexPath's index")
    assert gamma["index"]["path"] == str(other) and gamma["workspaceIndex"] is None
    # a quote from the corpus is found through alpha's own index
    uri = (a / "hull.py").as_uri()
    hull = block(corpus_text("geo.py"), "def convex_hull", "\n\ndef rotate_about")
    open_doc(client, uri, "import math\n\n\n")
    insert(client, uri, 2, end_position("import math\n\n\n"), hull)
    (diag,) = await wait_for(lambda: client.diagnostics.get(uri), what="the hull's warning")
    repo = manifest()["geo.py"]["repository"]
    assert repo in diag.message
    assert not client.message_requests  # nothing offered: every folder has an index
    # settings apply live: alpha's own index turned off, then on again, no restart
    for mode, state in (("off", "no-index"), ("offer", "ready")):
        client.set_configuration({"recitation": {"workspaceIndex": mode}}, scope_uri=a.as_uri())
        client.statuses.clear()
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        now = await wait_status(client, a, lambda s, state=state: s["state"] == state, state)
        assert (now["workspaceIndex"] is None) == (mode == "off")


# -------------------------------------------------------------------- the offer and a build


@needs_registry
async def test_first_run_offers_builds_with_progress_and_checks_what_came_meanwhile(
    session, registry, tmp_path
):
    app = js_workspace(tmp_path, session.env)
    before = sorted(p.name for p in app.iterdir())
    # a default index the folder uses meanwhile (the fixture corpus: nothing of ms in it)
    build_index([str(write_corpus_jsonl(tmp_path / "corpus.jsonl"))], default_index(session))
    client = await session.start()
    await initialize(client, [app])
    # the offer says what was found and what it costs
    (offer,) = await wait_for(lambda: client.message_requests, what="the offer", timeout=60)
    assert [a.title for a in offer.actions] == ["Index this workspace", "Not now"]
    assert "app depends on" in offer.message
    assert "Found 1 npm package (package-lock.json) — about " in offer.message
    offered = await wait_status(client, app, own("offered"), "an offered status")
    assert offered["state"] == "ready"  # on the default index
    assert not offered["workspaceIndex"]["inUse"]
    assert offered["workspaceIndex"]["plan"]["summary"].startswith("1 npm package")
    # code pasted while the offer waits: checked on the default index, which has none of it
    uri = (app / "duration.js").as_uri()
    await paste(client, uri, ms_parse())
    found = await client.protocol.send_request_async(
        "recitation/check", {"text": ms_parse(), "uri": uri}
    )
    assert plain(found)["matches"] == []
    await asyncio.sleep(0.5)
    assert not client.diagnostics.get(uri)
    await client.answers.put("Index this workspace")
    # once built, the index is used and the paste is checked on it: no restart
    (diag,) = await wait_for(lambda: client.diagnostics.get(uri), what="the warning", timeout=180)
    assert diag.message.startswith("Quoted: npm:ms@2.1.3 index.js"), diag.message
    assert "MIT" in diag.message
    ready = await wait_status(client, app, lambda s: s["state"] == "ready", "ready")
    assert ready["message"] == "Workspace index: 1 npm"
    assert ready["workspaceIndex"]["inUse"] and ready["workspaceIndex"]["state"] == "ready"
    # progress with a cancel button, in the status too
    (reports,) = [r for t, r in client.progress_reports.items() if "workspace" in str(t)]
    begin, end = reports[0], reports[-1]
    assert begin.kind == "begin" and begin.cancellable is True
    assert begin.title == "Recitation: indexing app"
    assert end.kind == "end" and end.message == "done"
    seen = [s.get("workspaceIndex") or {} for s in client.statuses]
    assert any(w.get("state") == "building" and w.get("progress") for w in seen)
    assert any("indexed" in m.message or "ready" in m.message for m in client.messages)
    # the index is in the cache folder: nothing was written in the workspace
    assert sorted(p.name for p in app.iterdir()) == before
    assert own_index(session, app).is_dir()


@needs_registry
async def test_not_now_is_remembered_and_a_build_can_be_cancelled(session, registry, tmp_path):
    app = js_workspace(tmp_path, session.env)
    client = await session.start()
    await initialize(client, [app])
    await wait_for(lambda: client.message_requests, what="the offer", timeout=60)
    await client.answers.put("Not now")
    await wait_status(client, app, own("declined"), "declined")
    await end_session(client)
    await client.stop()
    # the next session does not ask again
    again = await session.start()
    await initialize(again, [app])
    declined = await wait_status(again, app, own("declined"), "declined, remembered")
    assert declined["state"] == "no-index"
    await asyncio.sleep(1.0)
    assert again.message_requests == []
    # the user asks for it after all, and stops it at once (the progress' cancel button)
    result = await execute(again, "recitation.buildWorkspaceIndex", app.as_uri())
    assert plain(result)["started"] is True
    token = await wait_for(
        lambda: next((t for t in again.progress_reports if "workspace" in str(t)), None),
        what="the build's progress",
    )
    await wait_for(lambda: again.progress_reports[token], what="its begin")
    again.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    cancelled = await wait_status(again, app, own("cancelled"), "cancelled", timeout=60)
    assert cancelled["state"] == "no-index"
    end = await wait_for(
        lambda: next((r for r in again.progress_reports[token] if r.kind == "end"), None),
        what="the progress' end",
    )
    assert end.message == "cancelled"
    assert not (own_index(session, app) / "CURRENT").exists()


# -------------------------------------------------------------------- kept current


@needs_registry
async def test_a_lock_file_change_updates_the_index_with_no_restart(session, registry, tmp_path):
    """A client with its own interface (the offer and progress from `recitation/status`) and
    a file watcher: the lock file edited, the index follows it, the warning names the new
    version."""
    app = js_workspace(tmp_path, session.env)
    client = await session.start()
    await initialize(client, [app], client_ui=True)
    watchers = await wait_for(
        lambda: [r for r in client.registrations if r.id == "recitation-manifests"],
        what="the manifests' watcher",
    )
    globs = [w["globPattern"] for w in plain(watchers[0].register_options)["watchers"]]
    assert "**/package-lock.json" in globs and "**/*requirements*.txt" in globs
    await wait_status(client, app, own("offered"), "offered")
    await execute(client, "recitation.buildWorkspaceIndex", app.as_uri())
    await wait_status(client, app, lambda s: s["state"] == "ready", "ready", timeout=180)
    assert client.message_requests == []  # the client offers itself
    assert not [t for t in client.progress_reports if "workspace" in str(t)]  # and shows progress
    uri = (app / "duration.js").as_uri()
    await paste(client, uri, ms_parse())
    (diag,) = await wait_for(lambda: client.diagnostics.get(uri), what="the warning", timeout=60)
    assert diag.message.startswith("Quoted: npm:ms@2.1.3 ")
    # npm moves ms to 2.1.2; the client's watcher reports it
    npm_lock(app, session.env, "ms@2.1.2")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=(app / n).as_uri(), type=types.FileChangeType.Changed)
                for n in ("package.json", "package-lock.json")
            ]
        )
    )
    await wait_status(client, app, own("updating"), "updating", timeout=30)
    (diag,) = await wait_for(
        lambda: [d for d in client.diagnostics.get(uri) or [] if "ms@2.1.2" in d.message],
        what="the warning naming ms 2.1.2",
        timeout=180,
    )
    assert diag.message.startswith("Quoted: npm:ms@2.1.2 index.js")
    ready = await wait_status(client, app, lambda s: own("ready")(s) and s["state"] == "ready", "")
    assert ready["message"] == "Workspace index: 1 npm"
    # changes inside node_modules are not the workspace's manifests
    updates = len([s for s in client.statuses if own("updating")(s)])
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=(app / "node_modules" / "ms" / "package.json").as_uri(),
                    type=types.FileChangeType.Changed,
                )
            ]
        )
    )
    await asyncio.sleep(3)
    assert len([s for s in client.statuses if own("updating")(s)]) == updates


@needs_registry
async def test_without_a_client_watcher_the_server_polls_the_lock_file(session, registry, tmp_path):
    """`workspaceIndex: "auto"`: built without asking; a client that cannot watch files:
    the server sees the lock file change itself."""
    app = js_workspace(tmp_path, session.env)
    client = await session.start()
    caps = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))
    await initialize(client, [app], settings={"workspaceIndex": "auto"}, capabilities=caps)
    await wait_status(client, app, lambda s: s["state"] == "ready", "ready", timeout=180)
    assert client.message_requests == []
    uri = (app / "duration.js").as_uri()
    open_doc(client, uri, "", language="javascript")

    async def source() -> str:
        found = await client.protocol.send_request_async(
            "recitation/check", {"text": ms_parse(), "uri": uri}
        )
        return plain(found)["matches"][0]["sources"][0]["repository"]

    assert await source() == "npm:ms@2.1.3"
    npm_lock(app, session.env, "ms@2.1.2")
    deadline = asyncio.get_running_loop().time() + 180
    while (got := await source()) != "npm:ms@2.1.2":
        assert asyncio.get_running_loop().time() < deadline, got
        await asyncio.sleep(0.5)


# -------------------------------------------------------------------- failures, said


async def test_a_failed_build_is_said_with_its_reason(session, tmp_path):
    """Never "nothing found": the build's own reason, in the status and a message."""
    app = tmp_path / "tool"
    app.mkdir()
    (app / "main.py").write_text("import os\n")  # the Python standard library to index
    blocked = own_index(session, app)
    blocked.parent.mkdir(parents=True)
    blocked.write_text("not an index\n")  # where the index goes: a file in the way
    client = await session.start()
    await initialize(client, [app], settings={"workspaceIndex": "auto"})
    failed = await wait_status(client, app, own("failed"), "a failed status", timeout=120)
    assert "exists and is not a directory" in failed["workspaceIndex"]["error"]
    assert failed["state"] == "no-index" and not failed["workspaceIndex"]["exists"]
    (message,) = await wait_for(
        lambda: [m for m in client.messages if "could not index tool" in m.message],
        what="the error message",
    )
    assert message.type == types.MessageType.Error
    assert "exists and is not a directory" in message.message


@needs_registry
async def test_a_package_that_cannot_be_fetched_is_left_out_and_said(session, registry, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text(
        json.dumps({"name": "app", "dependencies": {"ms": "2.1.3", "no-such-package": "1.0.0"}})
    )
    client = await session.start()
    await initialize(client, [app], settings={"workspaceIndex": "auto"})
    ready = await wait_status(client, app, lambda s: s["state"] == "ready", "ready", timeout=180)
    assert ready["message"] == "Workspace index: 1 npm (1 left out)"
    (left,) = ready["workspaceIndex"]["leftOut"]
    assert "no-such-package" in left
