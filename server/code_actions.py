"""Quick fixes on a flagged range: add an attribution comment in the language's comment
syntax, open the source, dismiss the match for this workspace."""

from __future__ import annotations

from lsprotocol import types

from index_tools import comment_safe, printable

from .diagnostics import StoredMatch, is_web_link, line_span
from .documents import TextDocument
from .protocol import CMD_DISMISS, CMD_OPEN_SOURCE

# languageId -> (comment start, comment end)
_HASH = ("# ", "")
_SLASHES = ("// ", "")
_DASHES = ("-- ", "")
_HTML = ("<!-- ", " -->")
COMMENT_SYNTAX: dict[str, tuple[str, str]] = {
    **dict.fromkeys(
        [
            "python",
            "shellscript",
            "shell",
            "bash",
            "sh",
            "zsh",
            "ruby",
            "yaml",
            "toml",
            "perl",
            "r",
            "makefile",
            "dockerfile",
            "powershell",
            "elixir",
            "julia",
            "nim",
            "coffeescript",
            "cmake",
            "properties",
            "ini",
            "nix",
        ],
        _HASH,
    ),
    **dict.fromkeys(
        [
            "javascript",
            "javascriptreact",
            "typescript",
            "typescriptreact",
            "java",
            "go",
            "c",
            "cpp",
            "csharp",
            "rust",
            "kotlin",
            "swift",
            "scala",
            "dart",
            "php",
            "groovy",
            "objective-c",
            "objective-cpp",
            "jsonc",
            "zig",
            "proto",
            "fsharp",
            "d",
            "solidity",
            "less",
            "scss",
            "verilog",
            "glsl",
            "hlsl",
            "cuda",
        ],
        _SLASHES,
    ),
    **dict.fromkeys(["sql", "lua", "haskell", "ada", "elm", "vhdl", "plsql"], _DASHES),
    **dict.fromkeys(["html", "markdown", "xml", "vue", "svelte", "xsl", "svg"], _HTML),
    "css": ("/* ", " */"),
    "latex": ("% ", ""),
    "tex": ("% ", ""),
    "matlab": ("% ", ""),
    "erlang": ("% ", ""),
    "lisp": ("; ", ""),
    "clojure": (";; ", ""),
    "scheme": (";; ", ""),
    "vim": ('" ', ""),
    "bat": ("REM ", ""),
}


def comment_syntax(language_id: str) -> tuple[str, str]:
    return COMMENT_SYNTAX.get((language_id or "").lower(), _HASH)


# what ends a line comment early besides the end of the line: PHP leaves PHP mode at `?>`
LINE_COMMENT_ENDS = {"php": "?>"}


def attribution_text(stored: StoredMatch) -> str:
    """`Adapted from <url> (MIT)` for the best source."""
    sources = stored.sources
    if not sources:
        return "Adapted from public code"
    best = sources[0]
    url = best.get("url") or ""
    if is_web_link(url):
        where = url
    else:
        parts = (best.get("repository"), best.get("path"), line_span(best))
        where = " ".join(str(p) for p in parts if p) or "public code"
    lic = best.get("license") or ""
    text = f"Adapted from {where}" + (f" ({lic})" if lic else "")
    return printable(text, 1000)


def attribution_comment(stored: StoredMatch, language_id: str) -> str:
    """The attribution as one comment line. Its text comes from corpus metadata: it is
    reduced to printable text that cannot end the comment early or be read as a directive
    (an encoding declaration, an editor modeline)."""
    start, end = comment_syntax(language_id)
    ends_at = end or LINE_COMMENT_ENDS.get((language_id or "").lower(), "")
    body = comment_safe(attribution_text(stored), ends_at, max_len=500)
    return f"{start}{body}{end}"


def attribution_edit(doc: TextDocument, stored: StoredMatch) -> types.TextEdit:
    """Insert the comment on its own line above the quoted range, with that line's indent."""
    line = doc.position_at(stored.start).line
    text = doc.line_text(line)
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    comment = attribution_comment(stored, doc.language_id)
    at = types.Position(line, 0)
    return types.TextEdit(range=types.Range(at, at), new_text=f"{indent}{comment}\n")


def code_actions(
    doc: TextDocument, matches: list[StoredMatch], diagnostics: list[types.Diagnostic]
) -> list[types.CodeAction]:
    actions: list[types.CodeAction] = []
    for m in matches:
        related = [
            d
            for d in diagnostics
            if d.source == "recitation" and isinstance(d.data, dict) and d.data.get("id") == m.id
        ]
        dismiss = types.Command(
            title="Dismiss this match in this workspace",
            command=CMD_DISMISS,
            arguments=[doc.uri, m.id],
        )
        actions.append(
            types.CodeAction(
                title=f"Add attribution comment: {attribution_text(m)}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=related or None,
                is_preferred=True,
                edit=types.WorkspaceEdit(changes={doc.uri: [attribution_edit(doc, m)]}),
            )
        )
        url = m.best_url
        if url:
            best = m.sources[0]
            label = " ".join(str(p) for p in (best.get("repository"), best.get("path")) if p)
            actions.append(
                types.CodeAction(
                    title=f"Open source: {printable(label or url)}",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=related or None,
                    command=types.Command(
                        title="Open source", command=CMD_OPEN_SOURCE, arguments=[url]
                    ),
                )
            )
        actions.append(
            types.CodeAction(
                title=dismiss.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=related or None,
                command=dismiss,
            )
        )
    return actions
