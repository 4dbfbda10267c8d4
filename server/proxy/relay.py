"""The relay: the editor on stdio, the wrapped server and Recitation's server as children.

Routing (ids of editor requests go to the children unchanged; ids of requests coming from
the children are renumbered, so the two children's ids never collide at the editor):

| from the editor | goes to |
| --- | --- |
| `initialize` | the upstream first, then ours with the encoding the upstream chose; results merged |
| `shutdown`, `exit`, `initialized`, document and workspace notifications (watched files too), `window/workDoneProgress/cancel`, `$/setTrace` | both |
| `textDocument/hover`, `textDocument/codeAction` | both; answers merged (the upstream's alone, unchanged, when ours has none) |
| `workspace/executeCommand` for `recitation.*`, `recitation/*` requests | ours |
| completion, `completionItem/resolve`, inline completion | the upstream; items checked here |
| everything else | the upstream, answers unchanged |
| `$/cancelRequest` | the child(ren) still working on that id |

From the children: responses go back to the editor (merged where above); requests to the
editor get a fresh id and their answer goes back to the child under its own id;
`publishDiagnostics` is merged; other notifications pass unchanged.

Failures. A request a child has not answered in `request_timeout` seconds is answered with
an error (and cancelled at the child). A child that does not read what it is sent holds the
editor back (the relay reads the editor's next message once the child has read down to a
bound, see `child.py`); one that has read nothing for `timeout` seconds (30 s for ours) is
stopped. A child that exits is started again after 1 s, then 2, 4 ... 30 s while it keeps
exiting soon after a start (up to `MAX_QUICK_EXITS` in a row), initialized with the editor's
`initialize`, and sent the open documents as they are now; the editor is told each time.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import os
import shlex
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from index_tools import QuoteIdentity, judge

from ..folders import Scopes
from ..indexes import resolve_index_path
from ..protocol import is_notification_method, notification_with_id
from ..settings import SECTION, layered_settings
from .capabilities import merge_initialize
from .child import Child, ChildGone, id_key
from .completion import (
    Candidate,
    ProxyIndex,
    Verdict,
    annotate_item,
    blocked_item,
    check_candidates,
    count_words,
    inline_edit,
    item_edit,
    match_summary,
    start_offset,
)
from .diagnostics import OURS, UPSTREAM, DiagnosticsMerge
from .documents import Texts
from .framing import Message, MessageReader, MessageWriter, encode

log = logging.getLogger(__name__)

BLOCKED = "recitation/blocked"
FLAGGED = "recitation/flagged"
COMPLETION = "textDocument/completion"
RESOLVE = "completionItem/resolve"
INLINE = "textDocument/inlineCompletion"
MERGED = ("textDocument/hover", "textDocument/codeAction")
TO_BOTH = {
    "initialized",
    "exit",
    "$/setTrace",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "workspace/didChangeConfiguration",
    "workspace/didChangeWorkspaceFolders",
    # the file watchers both may have registered (decisions, manifests), and the cancel
    # button of a progress either may have created (a child ignores a token not its own)
    "workspace/didChangeWatchedFiles",
    "window/workDoneProgress/cancel",
}
REQUEST_FAILED = -32803
INFO = 3
METHOD_NOT_FOUND = -32601
INIT_TIMEOUT = 60.0
ERROR, WARNING = 1, 2


def our_command() -> list[str]:
    level = logging.getLevelName(logging.getLogger().getEffectiveLevel())
    return [sys.executable, "-m", "server", "--log-level", str(level)]


def our_env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return env


CANCEL_GRACE = 1.0  # seconds a child gets to answer a cancelled request
REQUEST_CANCELLED = -32800
RESTART_DELAYS = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)  # seconds before a start, by quick exits
STABLE_SECONDS = 60.0  # a child that ran this long before exiting starts the delays over
MAX_QUICK_EXITS = 8  # exits soon after a start, in a row, before no more restarts
OURS_READ_TIMEOUT = 30.0  # Recitation's server may lag behind on a burst of large edits


class Relay:
    def __init__(
        self, upstream: list[str], timeout: float = 10.0, request_timeout: float = 60.0
    ) -> None:
        self.upstream_label = shlex.join(upstream)
        self.upstream = Child("upstream", upstream)
        self.ours = Child("recitation", our_command(), our_env())
        self.timeout = timeout
        self.request_timeout = request_timeout
        self.editor = MessageWriter(sys.stdout.buffer)
        self.texts = Texts()
        self.scopes = Scopes()
        self.indexes: dict[str, ProxyIndex] = {}
        self.diagnostics = DiagnosticsMerge()
        self.client_caps: dict[str, Any] = {}
        self.init_options: Any = None
        self.pushed_settings: Any = None
        self.next_id = 0
        # requests sent to the editor: our id -> (child, its id) or a future of ours
        self.outgoing: dict[int, tuple[Child, Any] | asyncio.Future[Any]] = {}
        self.reverse: dict[tuple[str, tuple[bool, Any]], int] = {}
        self.originals: OrderedDict[str, tuple[dict[str, Any], str, Any]] = OrderedDict()
        self.last_completion: tuple[Any, Any] | None = None
        self.shutting_down = False
        self.stopping = False  # the editor went away or sent exit
        self.said: set[str] = set()
        self.done = asyncio.Event()
        self.tasks: set[asyncio.Task[Any]] = set()

    # -- output to the editor ------------------------------------------------------------

    def to_editor(self, data: dict[str, Any]) -> None:
        self.editor.write(data)

    def notify(self, method: str, params: Any) -> None:
        self.to_editor({"jsonrpc": "2.0", "method": method, "params": params})

    def respond(self, msg_id: Any, result: Any) -> None:
        self.to_editor({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def respond_error(self, msg_id: Any, code: int, message: str) -> None:
        self.to_editor(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        )

    def show(self, key: str, kind: int, message: str) -> None:
        """A `window/showMessage`, once per key."""
        if key in self.said:
            return
        self.said.add(key)
        log.warning("%s", message)
        self.notify("window/showMessage", {"type": kind, "message": message})

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("relay task failed", exc_info=task.exception())

    # -- start and stop ------------------------------------------------------------------

    async def run(self, stdin: asyncio.StreamReader) -> int:
        started = await self.upstream.start(self.garbage_of(self.upstream))
        if not started:
            self.show(
                "upstream-start",
                ERROR,
                f"Recitation could not start the wrapped language server `{self.upstream_label}`: "
                f"{self.upstream.start_error}. Recitation's own checks keep running.",
            )
        else:
            self.spawn(self.read_child(self.upstream))
        if await self.ours.start(self.garbage_of(self.ours)):
            self.spawn(self.read_child(self.ours))
        self.spawn(self.read_editor(stdin))
        await self.done.wait()
        self.stopping = True
        for child in (self.upstream, self.ours):
            child.close_stdin()
        await asyncio.gather(
            self.upstream.wait_exit(2.0), self.ours.wait_exit(2.0), return_exceptions=True
        )
        for index in self.indexes.values():
            index.close()
        return 0 if self.shutting_down else 1

    def garbage_of(self, child: Child) -> Any:
        return lambda what: self.garbage(child, what)

    def name_of(self, child: Child) -> str:
        if child is self.upstream:
            return f"The wrapped language server `{self.upstream_label}`"
        return "Recitation's server"

    def garbage(self, child: Child, what: str) -> None:
        name = self.upstream_label if child is self.upstream else "Recitation's server"
        self.show(
            f"garbage-{child.name}",
            WARNING,
            f"The language server `{name}` wrote output that is not LSP ({what}); "
            "it was skipped. Further output of this kind is only logged.",
        )
        log.warning("%s: %s", child.name, what)

    async def read_editor(self, stdin: asyncio.StreamReader) -> None:
        reader = MessageReader(stdin, lambda w: log.warning("from the editor: %s", w))
        while (msg := await reader.read()) is not None:
            try:
                self.from_editor(msg)
            except Exception:
                log.exception("handling %s", msg.method or "a response")
            await self.hold_back()
        self.done.set()

    async def hold_back(self) -> None:
        """Back-pressure: the editor's next message is read once each child has read what
        it was sent down to a bound; a child that reads nothing for its timeout is
        stopped (and started again)."""
        for child in (self.upstream, self.ours):
            timeout = self.timeout if child is self.upstream else OURS_READ_TIMEOUT
            unread = child.unread()
            if child.alive and not await child.drain(timeout):
                self.show(
                    f"{child.name}-deaf-{child.restarts}",
                    ERROR,
                    f"{self.name_of(child)} does not read what it is sent ({unread >> 20} MB "
                    f"waiting for {timeout:.0f} s): it is stopped and will be started again. "
                    + (
                        "Recitation's own checks keep running."
                        if child is self.upstream
                        else "The wrapped language server keeps working."
                    ),
                )
                child.kill()

    async def read_child(self, child: Child) -> None:
        assert child.reader is not None
        while (msg := await child.reader.read()) is not None:
            try:
                self.from_child(child, msg)
            except Exception:
                log.exception("handling %s from %s", msg.method or "a response", child.name)
        child.gone()
        if child.proc is not None:
            with contextlib.suppress(Exception):
                child.exit_code = await asyncio.wait_for(child.proc.wait(), 2.0)
        for params in self.diagnostics.forget(UPSTREAM if child is self.upstream else OURS):
            self.notify("textDocument/publishDiagnostics", params)
        if self.shutting_down or self.stopping:
            return
        code = f" (exit code {child.exit_code})" if child.exit_code is not None else ""
        quick = time.monotonic() - child.started_at < STABLE_SECONDS
        child.quick_exits = child.quick_exits + 1 if quick else 1
        if child.quick_exits > MAX_QUICK_EXITS:
            again = (
                f"It exited {child.quick_exits} times in a row soon after starting: it is not "
                "started again until the editor restarts the server."
            )
        else:
            delay = RESTART_DELAYS[min(child.quick_exits, len(RESTART_DELAYS)) - 1]
            again = f"Restarting it in {delay:.0f} s (restart {child.restarts + 1})."
            self.spawn(self.restart(child, delay))
        if child is self.upstream:
            self.show(
                f"upstream-exit-{child.restarts}",
                ERROR,
                f"The wrapped language server `{self.upstream_label}` stopped{code}; "
                + again[0].lower()
                + again[1:]
                + " Its features (completion, definitions, ...) are unavailable meanwhile; "
                "Recitation's own checks keep running.",
            )
        else:
            self.show(
                f"ours-exit-{child.restarts}",
                ERROR,
                f"Recitation's checks stopped{code}; "
                + again[0].lower()
                + again[1:]
                + " The wrapped language server keeps working. See the server log.",
            )

    async def restart(self, child: Child, delay: float) -> None:
        """Start a child that exited again: initialize it as the editor did, then send it
        `initialized`, the pushed settings and the open documents as they are now."""
        await asyncio.sleep(delay)
        if self.shutting_down or self.stopping:
            return
        child.restarts += 1
        child.ready = child.init_data is None  # not initialized yet: the editor will
        if not await child.start(self.garbage_of(child)):
            self.show(
                f"{child.name}-restart-failed-{child.restarts}",
                ERROR,
                f"{self.name_of(child)} could not be started again: {child.start_error}.",
            )
            return
        self.spawn(self.read_child(child))
        if child.init_data is None:
            return
        request_id = f"recitation-restart-{child.restarts}"
        data = {**child.init_data, "id": request_id}
        body = encode(data)
        answer = await self.answer(
            child, Message(data, body), body, timeout=max(self.timeout, INIT_TIMEOUT), force=True
        )
        if answer is None or not isinstance(answer.data.get("result"), dict):
            child.kill()  # its exit starts the next attempt, later
            return
        child.send({"jsonrpc": "2.0", "method": "initialized", "params": {}}, force=True)
        if self.pushed_settings is not None:
            child.send(
                {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                 "params": {"settings": self.pushed_settings}},
                force=True,
            )  # fmt: skip
        for doc in self.texts.all():
            child.send(
                {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                 "params": {"textDocument": {"uri": doc.uri, "languageId": doc.language,
                                             "version": doc.version, "text": doc.text}}},
                force=True,
            )  # fmt: skip
        child.ready = True
        self.show(
            f"{child.name}-restarted-{child.restarts}",
            INFO,
            f"{self.name_of(child)} was restarted and has the open documents again.",
        )

    # -- editor -> children --------------------------------------------------------------

    def from_editor(self, msg: Message) -> None:
        method = msg.method
        if msg.is_response:
            self.editor_response(msg)
        elif method is None:
            return
        elif msg.is_request:
            self.editor_request(msg, method)
        else:
            self.editor_notification(msg, method)

    def editor_notification(self, msg: Message, method: str) -> None:
        params = msg.data.get("params")
        if method == "$/cancelRequest":
            msg_id = params.get("id") if isinstance(params, dict) else None
            key = id_key(msg_id)
            for child in (self.upstream, self.ours):
                if key in child.pending:
                    child.send_body(msg.body)
            # a child that ignores the cancellation must not leave the editor waiting
            asyncio.get_running_loop().call_later(CANCEL_GRACE, self.cancelled, msg_id)
            return
        if method == "textDocument/didOpen":
            self.texts.did_open(params)
        elif method == "textDocument/didChange":
            self.texts.did_change(params)
        elif method == "textDocument/didClose":
            self.texts.did_close(params)
        elif method == "workspace/didChangeConfiguration":
            if isinstance(params, dict) and isinstance(params.get("settings"), dict):
                self.pushed_settings = params["settings"]
            self.spawn(self.refresh_settings())
        elif method == "workspace/didChangeWorkspaceFolders":
            event = params.get("event") if isinstance(params, dict) else None
            if isinstance(event, dict):
                for f in event.get("removed") or []:
                    self.scopes.remove(f.get("uri", ""))
                for f in event.get("added") or []:
                    self.scopes.add(f.get("uri", ""), f.get("name", ""))
            self.spawn(self.refresh_settings())
        elif method == "initialized":
            self.spawn(self.refresh_settings())
        self.upstream.send_body(msg.body)
        if method in TO_BOTH:
            self.ours.send_body(msg.body)
        if method == "exit":
            self.shutting_down = True
            self.done.set()

    def editor_request(self, msg: Message, method: str) -> None:
        if is_notification_method(method):  # with an id: a request no one would answer
            self.respond_error(msg.id, METHOD_NOT_FOUND, notification_with_id(method))
        elif method == "initialize":
            self.spawn(self.initialize(msg))
        elif method == "shutdown":
            self.shutting_down = True
            self.spawn(self.both(msg, lambda up, ours: None))
        elif method in MERGED:
            self.spawn(self.both(msg, merge_hover if method == MERGED[0] else merge_actions))
        elif method.startswith("recitation/") or (
            method == "workspace/executeCommand"
            and str((msg.data.get("params") or {}).get("command", "")).startswith("recitation.")
        ):
            self.pass_through(self.ours, msg)
        elif method in (COMPLETION, RESOLVE, INLINE):
            self.spawn(self.completion(msg, method))
        else:
            self.pass_through(self.upstream, msg)

    def pass_through(self, child: Child, msg: Message) -> None:
        fut = child.request(msg)

        def done(f: asyncio.Future[Message]) -> None:
            if f.cancelled():
                return
            if f.exception() is not None:
                self.respond_error(msg.id, REQUEST_FAILED, self.gone_message(child))
            else:
                self.editor.write_body(f.result().body)

        fut.add_done_callback(done)
        loop = asyncio.get_running_loop()
        if child is self.upstream:
            loop.call_later(self.timeout, self.slow, fut, msg.method)
        loop.call_later(self.request_timeout, self.unanswered, child, msg, fut)

    def unanswered(self, child: Child, msg: Message, fut: asyncio.Future[Message]) -> None:
        """`msg` has waited `request_timeout` for the child: answered with an error, and
        cancelled at the child (a late answer is dropped)."""
        if fut.done():
            return
        key = id_key(msg.id)
        if child.pending.get(key) is fut:
            del child.pending[key]
        fut.cancel()
        child.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg.id}})
        self.respond_error(
            msg.id,
            REQUEST_FAILED,
            f"{self.name_of(child)} did not answer `{msg.method}` in {self.request_timeout:g} s",
        )

    def cancelled(self, msg_id: Any) -> None:
        """The editor cancelled `msg_id` a while ago: if a child still has not answered,
        answer it for the child (RequestCancelled) and stop waiting."""
        key = id_key(msg_id)
        waiting = [c.pending.pop(key) for c in (self.upstream, self.ours) if key in c.pending]
        if any(not f.done() for f in waiting):
            for f in waiting:
                f.cancel()
            self.respond_error(msg_id, REQUEST_CANCELLED, "request cancelled")

    def slow(self, fut: asyncio.Future[Message], method: str | None) -> None:
        if not fut.done():
            self.show(
                f"upstream-slow-{method}",
                WARNING,
                f"The wrapped language server `{self.upstream_label}` has not answered "
                f"`{method}` in {self.timeout:.0f} s: it may be hung. Recitation's own checks "
                "keep running.",
            )

    def gone_message(self, child: Child) -> str:
        state = "is restarting" if child.alive and not child.ready else "is not running"
        if child is self.upstream:
            return f"the wrapped language server `{self.upstream_label}` {state}"
        return f"Recitation's server {state}"

    async def answer(
        self,
        child: Child,
        msg: Message,
        body: bytes | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> Message | None:
        """The child's response, or None when it is gone or does not answer in time."""
        fut = child.request(msg, body, force)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout or self.timeout)
        except ChildGone:
            return None
        except asyncio.TimeoutError:
            if child is self.upstream:
                self.slow(fut, msg.method)
            return None

    async def both(self, msg: Message, merge: Any) -> None:
        up, ours = await asyncio.gather(
            self.answer(self.upstream, msg), self.answer(self.ours, msg)
        )
        up_result = up.data.get("result") if up is not None else None
        our_result = ours.data.get("result") if ours is not None else None
        if up is not None and our_result is None:
            self.editor.write_body(up.body)
        elif ours is not None and (up is None or "error" in up.data):
            self.editor.write_body(ours.body)
        elif up is None and ours is None:
            self.respond(msg.id, None)
        else:
            self.respond(msg.id, merge(up_result, our_result))

    async def initialize(self, msg: Message) -> None:
        params = msg.data.get("params")
        params = params if isinstance(params, dict) else {}
        self.client_caps = params.get("capabilities") or {}
        self.init_options = params.get("initializationOptions")
        folders = [
            (f["uri"], f.get("name", ""))
            for f in params.get("workspaceFolders") or []
            if "uri" in f
        ]
        if not folders and isinstance(params.get("rootUri"), str):
            folders = [(params["rootUri"], params["rootUri"].rstrip("/").rsplit("/", 1)[-1])]
        self.scopes.set_folders(folders)
        for scope in self.scopes.all():
            scope.settings, _ = layered_settings(*self.init_layers(scope.uri))
        self.upstream.init_data = msg.data  # to initialize it again after a restart
        # starting up takes longer than answering: a hang is reported later than usual
        up = await self.answer(self.upstream, msg, timeout=max(self.timeout, INIT_TIMEOUT))
        up_result = up.data.get("result") if up is not None else None
        if up is None or not isinstance(up_result, dict):
            reason = json.dumps(up.data.get("error"))[:200] if up is not None else "no answer"
            self.show(
                "upstream-init",
                ERROR,
                f"The wrapped language server `{self.upstream_label}` did not initialize "
                f"({reason}). Recitation's own checks keep running.",
            )
            up_result = None
        encoding = "utf-16"
        if up_result is not None:
            encoding = (up_result.get("capabilities") or {}).get("positionEncoding") or "utf-16"
        self.texts.encoding = encoding
        ours_params = copy.deepcopy(params)
        general = ours_params.setdefault("capabilities", {}).setdefault("general", {})
        general["positionEncodings"] = [encoding]
        self.ours.init_data = {**msg.data, "params": ours_params}
        body = encode(self.ours.init_data)
        ours = await self.answer(self.ours, msg, body, timeout=max(self.timeout, INIT_TIMEOUT))
        our_result = ours.data.get("result") if ours is not None else None
        self.respond(
            msg.id,
            merge_initialize(up_result, our_result if isinstance(our_result, dict) else None),
        )

    # -- settings for the completion checks ----------------------------------------------

    def init_layers(self, uri: str | None) -> list[Any]:
        layers = [self.init_options]
        opts = self.init_options
        folders = opts.get("folders") if isinstance(opts, dict) else None
        if uri and isinstance(folders, list):
            for entry in folders:
                if (
                    isinstance(entry, dict)
                    and str(entry.get("uri", "")).rstrip("/") == uri.rstrip("/")
                    and isinstance(entry.get("settings"), dict)
                ):
                    layers.append(entry["settings"])
        return layers

    def client_has(self, *path: str) -> bool:
        node: Any = self.client_caps
        for part in path:
            if not isinstance(node, dict):
                return False
            node = node.get(part)
        return bool(node)

    async def refresh_settings(self) -> None:
        scopes = self.scopes.all()
        pulled: list[Any] = [None] * len(scopes)
        if self.client_has("workspace", "configuration"):
            items = [
                {"scopeUri": s.uri, "section": SECTION} if s.uri else {"section": SECTION}
                for s in scopes
            ]
            try:
                result = await self.ask_editor("workspace/configuration", {"items": items})
                if isinstance(result, list) and len(result) == len(scopes):
                    pulled = result
            except Exception as exc:
                log.info("workspace/configuration: %s", exc)
        for scope, raw in zip(scopes, pulled):
            scope.settings, _ = layered_settings(
                *self.init_layers(scope.uri), self.pushed_settings, raw
            )

    async def ask_editor(self, method: str, params: Any) -> Any:
        self.next_id += 1
        my_id = self.next_id  # other requests may take the next ids while this one waits
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.outgoing[my_id] = fut
        self.to_editor({"jsonrpc": "2.0", "id": my_id, "method": method, "params": params})
        try:
            return await asyncio.wait_for(fut, self.timeout)
        finally:
            self.outgoing.pop(my_id, None)

    def editor_response(self, msg: Message) -> None:
        target = self.outgoing.pop(msg.id, None) if isinstance(msg.id, int) else None
        if target is None:
            return
        if isinstance(target, asyncio.Future):
            if not target.done():
                if "error" in msg.data:
                    target.set_exception(RuntimeError(json.dumps(msg.data["error"])))
                else:
                    target.set_result(msg.data.get("result"))
            return
        child, child_id = target
        self.reverse.pop((child.name, id_key(child_id)), None)
        child.send({**msg.data, "id": child_id})

    # -- children -> editor --------------------------------------------------------------

    def from_child(self, child: Child, msg: Message) -> None:
        if msg.is_response:
            child.resolve(msg)
            return
        method = msg.method
        if msg.is_request:
            self.next_id += 1
            self.outgoing[self.next_id] = (child, msg.id)
            self.reverse[(child.name, id_key(msg.id))] = self.next_id
            self.to_editor({**msg.data, "id": self.next_id})
        elif method == "textDocument/publishDiagnostics":
            merged = self.diagnostics.publish(
                UPSTREAM if child is self.upstream else OURS, msg.data.get("params")
            )
            if merged is not None:
                self.notify(method, merged)
        elif method == "$/cancelRequest":
            params = msg.data.get("params")
            ours_id = self.reverse.get(
                (child.name, id_key(params.get("id") if isinstance(params, dict) else None))
            )
            if ours_id is not None:
                self.notify(method, {"id": ours_id})
        else:
            self.editor.write_body(msg.body)

    # -- completion ----------------------------------------------------------------------

    def completion_scope(self, uri: Any) -> tuple[Any, ProxyIndex | None]:
        scope = self.scopes.for_uri(uri if isinstance(uri, str) else None)
        settings = scope.settings
        scope.decisions.refresh()
        policed = bool(scope.decisions.decisions.policy.completions)
        if not settings.enable or (settings.completion_mode == "off" and not policed):
            return settings, None
        path = resolve_index_path(settings.index_path, scope.uri)
        index = self.indexes.get(str(path))
        if index is None:
            index = self.indexes[str(path)] = ProxyIndex(path)
        return settings, index

    def markdown_docs(self) -> bool:
        formats = (
            ((self.client_caps.get("textDocument") or {}).get("completion") or {}).get(
                "completionItem"
            )
            or {}
        ).get("documentationFormat")
        return not isinstance(formats, list) or "markdown" in formats

    async def completion(self, msg: Message, method: str) -> None:
        params = msg.data.get("params")
        params = params if isinstance(params, dict) else {}
        body = None
        if method == RESOLVE:
            original = self.originals.get(item_key(params))
            if original is not None:
                body = encode({**msg.data, "params": original[0]})
        fut = self.upstream.request(msg, body)
        forwarded = time.perf_counter()
        loop = asyncio.get_running_loop()
        loop.call_later(self.timeout, self.slow, fut, method)
        loop.call_later(self.request_timeout, self.unanswered, self.upstream, msg, fut)
        try:
            resp = await fut
        except ChildGone:
            self.respond_error(msg.id, REQUEST_FAILED, self.gone_message(self.upstream))
            return
        except asyncio.CancelledError:
            if fut.cancelled():  # unanswered, or cancelled by the editor: answered there
                return
            raise
        result = resp.data.get("result")
        try:
            out = await self.check_result(method, params, result)
        except Exception:
            log.exception("checking completions")
            out = None
        if out is None:
            self.editor.write_body(resp.body)
        else:
            self.respond(msg.id, out)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "%s: relay time %.3f ms (request %.3f, response %.3f)",
                method,
                (forwarded - msg.received + time.perf_counter() - resp.received) * 1000,
                (forwarded - msg.received) * 1000,
                (time.perf_counter() - resp.received) * 1000,
            )

    async def check_result(self, method: str, params: dict[str, Any], result: Any) -> Any:
        """The result to send instead of the upstream's, or None to send it unchanged."""
        if result is None:
            return None
        if method == RESOLVE:
            if not isinstance(result, dict):
                return None
            original = self.originals.get(item_key(params))
            if original is not None:
                uri, position = original[1], original[2]
            elif self.last_completion is not None:
                # an item not flagged in its list: its text may only be known now
                uri, position = self.last_completion
            else:
                return None
        else:
            uri = (params.get("textDocument") or {}).get("uri")
            position = params.get("position")
            if method == COMPLETION:
                self.last_completion = (uri, position)
        doc = self.texts.get(uri)
        settings, index = self.completion_scope(uri)
        if doc is None or index is None:
            return None
        if method == RESOLVE:
            items = [result]
        else:
            items = result if isinstance(result, list) else result.get("items")
        if not isinstance(items, list):
            return None
        inline = method == INLINE
        candidates = []
        starts: dict[Any, int] = {}  # items of one list mostly share their start
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            text, rng = inline_edit(item) if inline else item_edit(item)
            if len(text) < settings.min_insert_words:
                continue  # fewer characters than words needed: too short to carry a quote
            words = count_words(text)
            if words < settings.min_insert_words:
                continue
            start = rng.get("start") if isinstance(rng, dict) else None
            key = (start.get("line"), start.get("character")) if isinstance(start, dict) else None
            if key not in starts:
                starts[key] = start_offset(doc, rng, position, self.texts.encoding, not inline)
            candidates.append(Candidate(i, text, starts[key], words))
        verdicts = await check_candidates(index, doc, candidates, settings)
        verdicts, modes = self.decide(uri, verdicts, settings)
        if not verdicts:
            return None
        markdown = self.markdown_docs()
        self.report(modes, method, uri, position, items, verdicts, inline)
        if method == RESOLVE:
            m = verdicts[0].match
            return (
                blocked_item(result, m, markdown)
                if modes[verdicts[0].index] == "block"
                else annotate_item(result, m, markdown)
            )
        by_index = {v.index: v for v in verdicts}
        new_items: list[Any] = []
        for i, item in enumerate(items):
            v = by_index.get(i)
            if v is None:
                new_items.append(item)
            elif modes[i] == "block":
                continue
            elif inline:
                new_items.append(item)
            else:
                annotated = annotate_item(item, v.match, markdown)
                self.remember(annotated, item, uri, position)
                new_items.append(annotated)
        if isinstance(result, list):
            return new_items
        return {**result, "items": new_items}

    def remember(
        self, annotated: dict[str, Any], original: dict[str, Any], uri: Any, position: Any
    ) -> None:
        """Resolve requests for an annotated item go upstream with the item as it sent it."""
        self.originals[item_key(annotated)] = (original, uri, position)
        while len(self.originals) > 2000:
            self.originals.popitem(last=False)

    def decide(
        self, uri: Any, verdicts: list[Verdict], settings: Any
    ) -> tuple[list[Verdict], dict[int, str]]:
        """The folder's decisions applied to flagged items: dismissed quotes and allowed
        sources pass untouched; the license policy's `[policy.completions]` picks warn, block
        or off per item, else the `completionMode` setting."""
        scope = self.scopes.for_uri(uri if isinstance(uri, str) else None)
        kept, modes = [], {}  # the decisions were read again by completion_scope
        for v in verdicts:
            j = judge(
                v.match,
                QuoteIdentity.of_text(v.match.text),
                scope.decisions.decisions,
                settings.severity.for_kind,
            )
            mode = j.completion or settings.completion_mode
            if j.action == "off" or mode == "off":
                continue
            kept.append(v)
            modes[v.index] = mode
        return kept, modes

    def report(
        self,
        modes: dict[int, str],
        method: str,
        uri: Any,
        position: Any,
        items: list[Any],
        verdicts: list[Verdict],
        inline: bool,
    ) -> None:
        by_mode: dict[str, list[dict[str, Any]]] = {}
        for v in verdicts:
            mode = modes[v.index]
            if mode != "block" and not inline:
                continue
            entries = by_mode.setdefault(mode, [])
            item = items[v.index]
            text, _ = inline_edit(item) if inline else item_edit(item)
            label = item.get("label") if not inline else None
            entries.append(
                {
                    "label": label
                    if isinstance(label, str)
                    else text.strip().split("\n", 1)[0][:80],
                    "text": text,
                    "match": match_summary(v.match),
                }
            )
            what = "inline completion" if inline else "completion item"
            verb = "removed" if mode == "block" else "flagged"
            log.warning(
                "%s %s %r in %s: %s",
                verb,
                what,
                entries[-1]["label"],
                uri,
                entries[-1]["match"]["description"],
            )
        for mode, entries in by_mode.items():
            self.notify(
                BLOCKED if mode == "block" else FLAGGED,
                {
                    "uri": uri,
                    "position": position,
                    "method": method,
                    "mode": mode,
                    "items": entries,
                },
            )


def item_key(item: Any) -> str:
    if not isinstance(item, dict):
        return ""
    return json.dumps([item.get("label"), item.get("data")], sort_keys=True, default=str)


def _hover_parts(value: Any) -> list[str]:
    contents = value.get("contents") if isinstance(value, dict) else None
    if isinstance(contents, dict) and "kind" in contents:
        return [str(contents.get("value", ""))]
    if isinstance(contents, dict):
        return [f"```{contents.get('language', '')}\n{contents.get('value', '')}\n```"]
    if isinstance(contents, str):
        return [contents]
    if isinstance(contents, list):
        return [p for c in contents for p in _hover_parts({"contents": c})]
    return []


def merge_hover(upstream: Any, ours: Any) -> Any:
    """Ours first (it is about the quoted range under the cursor), then the upstream's."""
    if not upstream:
        return ours
    parts = _hover_parts(ours) + _hover_parts(upstream)
    out: dict[str, Any] = {
        "contents": {"kind": "markdown", "value": "\n\n---\n\n".join(p for p in parts if p)}
    }
    rng = (ours or {}).get("range") or upstream.get("range")
    if rng:
        out["range"] = rng
    return out


def merge_actions(upstream: Any, ours: Any) -> Any:
    return list(ours or []) + list(upstream or [])
