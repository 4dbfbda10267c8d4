"""Shared pieces of the server tests: the fixture corpus, a recording LSP client, waiting
with a deadline, and UTF-16 positions computed independently of the server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any, Union

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORPUS = FIXTURES / "corpus"
SNIPPETS_CSV = REPO.parent / "shared" / "data" / "matched_snippets.csv"

SERVER_COMMAND = [
    sys.executable,
    "-m",
    "server",
    *os.environ.get("RECITATION_TEST_SERVER_ARGS", "").split(),
]


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("RECITATION_INDEX", None)
    return env


def manifest() -> dict[str, dict[str, str]]:
    return json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))


def corpus_text(name: str) -> str:
    return (CORPUS / name).read_text(encoding="utf-8")


def write_corpus_jsonl(out: Path) -> Path:
    """The fixture corpus as a dataset with repository, path, commit and license per file."""
    with out.open("w", encoding="utf-8") as f:
        for name, meta in manifest().items():
            f.write(json.dumps({**meta, "content": corpus_text(name)}) + "\n")
    return out


def block(text: str, first: str, stop: str | None = None) -> str:
    """The part of `text` from the line starting with `first` up to (not including) the line
    starting with `stop` (or the end), without trailing blank lines."""
    start = text.index(first)
    end = text.index(stop, start) if stop else len(text)
    return text[start:end].rstrip() + "\n"


def line_range(text: str, part: str) -> tuple[int, int]:
    """1-based first and last line of `part` inside `text`."""
    start = text.index(part)
    first = text.count("\n", 0, start) + 1
    return first, first + part.rstrip("\n").count("\n")


def utf16_position(text: str, offset: int) -> types.Position:
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    units = len(text[line_start:offset].encode("utf-16-le")) // 2
    return types.Position(line=line, character=units)


def end_position(text: str) -> types.Position:
    return utf16_position(text, len(text))


async def wait_for(predicate, timeout: float = 30.0, what: str = "a condition") -> Any:
    """Poll `predicate` until it returns something truthy, or fail at the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


EXIT_SECONDS = 30.0


async def end_session(client: LanguageClient) -> None:
    """`shutdown` then `exit`, as an editor ends a session: the server's process must be
    gone within EXIT_SECONDS. One still running then is killed, and the test fails."""
    try:
        await asyncio.wait_for(client.shutdown_session(), EXIT_SECONDS)
    except asyncio.TimeoutError:
        process = client._server  # pygls' handle of the server's process
        if process is not None and process.returncode is None:
            process.kill()
        pytest.fail(f"the server did not exit within {EXIT_SECONDS:.0f} s of shutdown and exit")


def frame(message: Any) -> bytes:
    """A JSON-RPC message as LSP frames it on a stream."""
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def unframe(data: bytes) -> list[Any]:
    """The messages of a stream of frames (a server's whole output), in order."""
    messages, at = [], 0
    while (head_end := data.find(b"\r\n\r\n", at)) >= 0:
        length = int(re.search(rb"Content-Length: *(\d+)", data[at:head_end]).group(1))
        body_at = head_end + 4
        messages.append(json.loads(data[body_at : body_at + length]))
        at = body_at + length
    return messages


def plain(value: Any) -> Any:
    """Parameters of a custom notification as plain dicts and lists."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class RecordingClient(LanguageClient):
    """A pytest-lsp client that also keeps every publishDiagnostics and every Recitation
    notification, in order."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.statuses: list[dict] = []
        self.match_notes: list[dict] = []
        self.registrations: list[types.Registration] = []


def make_client(cls: type[RecordingClient] = RecordingClient) -> RecordingClient:
    from pygls.protocol import default_converter

    client = cls(protocol_cls=LanguageClientProtocol, converter_factory=default_converter)
    # lsprotocol reads any code action that has a `command` as a Command; a real editor
    # tells them apart by the type of `command` (a string only in a Command)
    converter = client.protocol._converter

    def command_or_action(obj: Any, _: Any) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007 - the key lsprotocol registers
        command_or_action,
    )
    features = dict(DEFAULT_CLIENT_FEATURES)
    default_publish = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(client: RecordingClient, params: types.PublishDiagnosticsParams):
        client.published.append(params)
        default_publish(client, params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    register_lsp_features(client, features)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(client: RecordingClient, params: types.RegistrationParams):
        client.registrations.extend(params.registrations)

    @client.feature("recitation/status")
    def on_status(client: RecordingClient, params: Any):
        client.statuses.append(plain(params))

    @client.feature("recitation/match")
    def on_match(client: RecordingClient, params: Any):
        client.match_notes.append(plain(params))

    return client


def folder(uri_path: Path) -> types.WorkspaceFolder:
    return types.WorkspaceFolder(uri=uri_path.as_uri(), name=uri_path.name)


async def start_session(
    client: RecordingClient,
    *,
    index: Path | str | None,
    folders: list[Path],
    settings: dict | None = None,
    capabilities: str | types.ClientCapabilities = "visual_studio_code",
    nested: bool = True,
) -> types.InitializeResult:
    from pytest_lsp import client_capabilities

    options: dict[str, Any] = dict(settings or {})
    if index is not None:
        options["indexPath"] = str(index)
    init = {"recitation": options} if nested else options
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=(
                client_capabilities(capabilities) if isinstance(capabilities, str) else capabilities
            ),
            initialization_options=init,
            workspace_folders=[folder(f) for f in folders],
            root_uri=folders[0].as_uri() if folders else None,
        )
    )


def open_doc(client: LanguageClient, uri: str, text: str, language: str = "python") -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=1, text=text
            )
        )
    )


def insert(client: LanguageClient, uri: str, version: int, at: types.Position, text: str) -> None:
    change(client, uri, version, types.Range(at, at), text)


def change(client: LanguageClient, uri: str, version: int, rng: types.Range, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=rng, text=text)],
        )
    )


async def diagnostics_for(
    client: LanguageClient, uri: str, count: int = 1, what: str = "diagnostics"
) -> list[types.Diagnostic]:
    return await wait_for(
        lambda: (
            client.diagnostics.get(uri) if len(client.diagnostics.get(uri) or []) >= count else None
        ),
        what=f"{what} for {uri}",
    )


def send_raw(client: LanguageClient, message: dict) -> None:
    """Write a JSON-RPC message as is, bypassing the client's typed serialization."""
    res = client.protocol.writer.write(frame(message))
    if hasattr(res, "__await__"):
        asyncio.ensure_future(res)


async def raw_request(client: LanguageClient, method: str, params: Any) -> Any:
    """Send a request with arbitrary (possibly malformed) params; the response resolves
    like any other (an error response raises JsonRpcException)."""
    from concurrent.futures import Future

    msg_id = f"raw-{uuid.uuid4().hex}"
    future: Future = Future()
    client.protocol._request_futures[msg_id] = future
    send_raw(client, {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wrap_future(future)


def raw_notify(client: LanguageClient, method: str, params: Any) -> None:
    send_raw(client, {"jsonrpc": "2.0", "method": method, "params": params})


async def quote_found(client: LanguageClient, index: Path, workspace: dict[str, Path]) -> str:
    """The message of the one warning on the fixture corpus's convex hull, pasted after
    `import math` into a file of workspace folder a (the session started there)."""
    await start_session(client, index=index, folders=[workspace["a"]])
    uri = (workspace["a"] / "app.py").as_uri()
    head = "import math\n\n\n"
    hull = block(corpus_text("geo.py"), "def convex_hull", "\n\ndef rotate_about")
    open_doc(client, uri, head)
    insert(client, uri, 2, end_position(head), hull)
    (diag,) = await diagnostics_for(client, uri)
    return diag.message
