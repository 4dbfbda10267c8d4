"""From opening a workspace folder in the editor to the first warning, through the real
language server over stdio: the folder's own index (its dependencies) is used at once when
it exists, or built first (`recitation.workspaceIndex: "auto"`) when it does not.

    python bench/bench_workspace_editor.py WORKSPACE PASTE_FILE [--build] [--runs 3]

PASTE_FILE holds the text pasted into a new file of the workspace (a dependency's function);
the time runs from `initialize` to the `publishDiagnostics` that flags it. With `--build`,
the folder's index is removed first, so the time includes the build (the package cache,
RECITATION_PACKAGE_CACHE, as the environment sets it: warm or cold). The folder's index
lives under XDG_CACHE_HOME, as the server finds it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from index_tools import workspace_index_path  # noqa: E402

LANGUAGES = {".js": "javascript", ".ts": "typescript", ".py": "python", ".go": "go"}


async def first_warning(workspace: Path, paste: str, suffix: str, timeout: float) -> float:
    client = LanguageClient("bench", "1")
    found: asyncio.Future = asyncio.get_running_loop().create_future()
    target = (workspace / f"pasted-by-bench{suffix}").as_uri()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params: types.PublishDiagnosticsParams) -> None:
        if params.uri == target and params.diagnostics and not found.done():
            found.set_result(time.perf_counter())

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(params: types.ConfigurationParams) -> list:
        return [{"workspaceIndex": "auto"} for _ in params.items]

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def progress(params) -> None:
        return None

    env = dict(os.environ, PYTHONPATH=str(REPO))
    await client.start_io(sys.executable, "-m", "server", env=env)
    started = time.perf_counter()
    caps = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
        window=types.WindowClientCapabilities(work_done_progress=True),
    )
    await client.initialize_async(
        types.InitializeParams(
            capabilities=caps,
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="w")],
        )
    )
    client.initialized(types.InitializedParams())
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=target, language_id=LANGUAGES.get(suffix, "plaintext"), version=1, text=""
            )
        )
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=target),
            [types.TextDocumentContentChangeWholeDocument(text=paste)],
        )
    )
    try:
        seen = await asyncio.wait_for(found, timeout)
    finally:
        try:
            await asyncio.wait_for(client.shutdown_async(None), 10)
            client.exit(None)
        except Exception:  # noqa: BLE001 - measuring, not testing the shutdown
            pass
        await client.stop()
    return seen - started


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("paste", type=Path)
    ap.add_argument("--build", action="store_true", help="remove the folder's index first")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=3600)
    args = ap.parse_args()
    workspace = args.workspace.resolve()
    paste = args.paste.read_text(encoding="utf-8")
    index = workspace_index_path(workspace)
    times = []
    for _ in range(args.runs):
        if args.build and index.exists():
            shutil.rmtree(index)
        elif not args.build and not index.exists():
            print(f"no index at {index}: build it first (recitation-index add --create ...)")
            return 2
        times.append(asyncio.run(first_warning(workspace, paste, args.paste.suffix, args.timeout)))
        print(f"open → first warning: {times[-1]:.2f} s", flush=True)
    print(
        f"{'with a first build' if args.build else 'index built before'}: "
        f"median {statistics.median(times):.2f} s, min {min(times):.2f}, max {max(times):.2f} "
        f"({len(times)} runs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
