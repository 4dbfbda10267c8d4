"""A tiny language server for the proxy tests: it offers completion items and inline
completions whose text is given on the command line (a JSON file of
`{"label": ..., "text": ...}` entries), publishes one diagnostic of its own per opened
document, and can misbehave on purpose:

- `--crash-on completion`: exits when asked for completions;
- `--hang-on hover`: stops answering anything from the first hover on;
- `--garbage-on open`: writes bytes that are not LSP to stdout when a document opens;
- `--ignore definition`: never answers `textDocument/definition` (and answers the rest).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

SOURCE = "snippets"


def build(args: argparse.Namespace) -> LanguageServer:
    entries = json.loads(Path(args.items).read_text(encoding="utf-8")) if args.items else []
    server = LanguageServer("snippet-server", "1.0")

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(resolve_provider=True, trigger_characters=["."]),
    )
    def completion(ls: LanguageServer, params: types.CompletionParams) -> types.CompletionList:
        if args.crash_on == "completion":
            os._exit(3)
        items = [
            types.CompletionItem(
                label=e["label"],
                insert_text=e["text"],
                kind=types.CompletionItemKind.Snippet,
                data={"n": n},
            )
            for n, e in enumerate(entries)
        ]
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.COMPLETION_ITEM_RESOLVE)
    def resolve(ls: LanguageServer, item: types.CompletionItem) -> types.CompletionItem:
        item.detail = f"snippet {item.label}"
        return item

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION)
    def inline(
        ls: LanguageServer, params: types.InlineCompletionParams
    ) -> list[types.InlineCompletionItem]:
        at = types.Range(params.position, params.position)
        return [types.InlineCompletionItem(insert_text=e["text"], range=at) for e in entries]

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover:
        if args.hang_on == "hover":
            time.sleep(3600)  # a hung server: nothing is answered any more
        return types.Hover(contents=types.MarkupContent(kind="markdown", value="snippet hover"))

    if args.ignore == "definition":

        @server.feature(types.TEXT_DOCUMENT_DEFINITION)
        async def definition(ls: LanguageServer, params: types.DefinitionParams) -> None:
            await asyncio.Event().wait()  # never answered; everything else is

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        if args.garbage_on == "open":
            sys.stdout.buffer.write(b"debug: opened a document\nContent-Length: 9\r\n\r\n{not json")
            sys.stdout.buffer.flush()
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=params.text_document.uri,
                diagnostics=[
                    types.Diagnostic(
                        range=types.Range(types.Position(0, 0), types.Position(0, 1)),
                        message="snippet server was here",
                        source=SOURCE,
                        severity=types.DiagnosticSeverity.Information,
                    )
                ],
            )
        )

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", help="JSON file: [{label, text}, ...]")
    parser.add_argument("--crash-on", choices=["completion"])
    parser.add_argument("--hang-on", choices=["hover"])
    parser.add_argument("--garbage-on", choices=["open"])
    parser.add_argument("--ignore", choices=["definition"])
    build(parser.parse_args()).start_io()


if __name__ == "__main__":
    main()
