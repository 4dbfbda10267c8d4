"""Quick fixes on a flagged range: attribute it (a comment, or SPDX snippet tags around it,
in the language's comment syntax), open the source, allow the source's repository, dismiss
the quote (both recorded in the folder's decisions file)."""

from __future__ import annotations

from lsprotocol import types

from index_tools import (
    DECISIONS_FILE,
    Verdict,
    comment_safe,
    literal_pattern,
    plain_attribution,
    printable,
    source_groups,
    spdx_snippet_tags,
)

from .compare import CMD_COMPARE, compare_arguments, source_label
from .diagnostics import StoredMatch
from .documents import TextDocument
from .embedded import Place, break_up, place_of
from .protocol import CMD_ALLOW_SOURCE, CMD_DISMISS, CMD_OPEN_SOURCE

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


# short names (Markdown fences' info strings) of the languages above
ALIASES = {
    "py": "python", "js": "javascript", "jsx": "javascriptreact", "ts": "typescript",
    "tsx": "typescriptreact", "rb": "ruby", "rs": "rust", "kt": "kotlin", "cs": "csharp",
    "c++": "cpp", "yml": "yaml", "golang": "go", "console": "shell", "objc": "objective-c",
}  # fmt: skip


def comment_syntax(language_id: str) -> tuple[str, str]:
    language = (language_id or "").lower()
    return COMMENT_SYNTAX.get(ALIASES.get(language, language), _HASH)


# what ends a line comment early besides the end of the line: PHP leaves PHP mode at `?>`
LINE_COMMENT_ENDS = {"php": "?>"}


def _comment(text: str, language_id: str, place: Place | None = None) -> str:
    """`text` as one comment line, in the syntax of the language where it goes (`place`:
    an embedded script or style, a fenced block, JSX children). Corpus metadata in it is
    reduced to printable text that cannot end the comment (or the block holding it) early
    or be read as a directive (an encoding declaration, an editor modeline)."""
    place = place or Place((language_id or "").lower())
    if place.jsx_children:
        start, end, ends_at = "{/* ", " */}", "*/"
    else:
        start, end = comment_syntax(place.language)
        ends_at = end or LINE_COMMENT_ENDS.get(place.language, "")
    safe = break_up(comment_safe(text, ends_at, max_len=500), place.unsafe)
    return f"{start}{safe}{end}"


def attribution_text(stored: StoredMatch) -> str:
    """`Adapted from <url> (MIT)` for the best source."""
    return plain_attribution(stored.match.best_source)


def attribution_comment(stored: StoredMatch, language_id: str, place: Place | None = None) -> str:
    return _comment(attribution_text(stored), language_id, place)


def _indent_of(doc: TextDocument, line: int) -> str:
    text = doc.line_text(line)
    return text[: len(text) - len(text.lstrip(" \t"))]


def _eol(doc: TextDocument) -> str:
    return "\r\n" if "\r\n" in doc.text else "\n"


def attribution_edits(doc: TextDocument, stored: StoredMatch, style: str) -> list[types.TextEdit]:
    """The attribution above the quoted range, with its first line's indent: one comment,
    or SPDX snippet tags around the lines of the range."""
    first = doc.position_at(stored.start).line
    indent = _indent_of(doc, first)
    eol = _eol(doc)
    at = types.Position(first, 0)
    place = place_of(doc.text, doc.offset_at(at), doc.language_id)
    if style != "spdx":
        text = f"{indent}{attribution_comment(stored, doc.language_id, place)}{eol}"
        return [types.TextEdit(range=types.Range(at, at), new_text=text)]
    before, after = spdx_snippet_tags(stored.match.best_source)
    head = "".join(f"{indent}{_comment(t, doc.language_id, place)}{eol}" for t in before)
    last = doc.position_at(max(stored.start, stored.end - 1)).line
    if last + 1 < doc.line_count():
        end_at = types.Position(last + 1, 0)
        tail_place = place_of(doc.text, doc.offset_at(end_at), doc.language_id)
    else:  # the quote ends the document, without a line break after it
        end_at = doc.position_at(len(doc.text))
        tail_place = place_of(doc.text, len(doc.text), doc.language_id)
    tail = "".join(f"{indent}{_comment(t, doc.language_id, tail_place)}{eol}" for t in after)
    if last + 1 >= doc.line_count():
        tail = eol + tail.rstrip("\r\n")
    return [
        types.TextEdit(range=types.Range(at, at), new_text=head),
        types.TextEdit(range=types.Range(end_at, end_at), new_text=tail),
    ]


def command_action(
    title: str, command: types.Command, related: list[types.Diagnostic] | None
) -> types.CodeAction:
    return types.CodeAction(
        title=title, kind=types.CodeActionKind.QuickFix, diagnostics=related, command=command
    )


def code_actions(
    doc: TextDocument,
    judged: list[tuple[StoredMatch, Verdict]],
    diagnostics: list[types.Diagnostic],
    style: str = "comment",
    compare: bool = False,
) -> list[types.CodeAction]:
    """`compare`: the client runs `recitation.compareWithSource` itself (it said so)."""
    actions: list[types.CodeAction] = []
    for m, verdict in judged:
        related = [
            d
            for d in diagnostics
            if d.source == "recitation" and isinstance(d.data, dict) and d.data.get("id") == m.id
        ] or None
        best = m.match.best_source
        if verdict.state != "attributed":
            styles = ["spdx", "comment"] if style == "spdx" else ["comment", "spdx"]
            for i, st in enumerate(styles):
                license = best.license if best is not None else ""
                title = (
                    f"Add attribution comment: {attribution_text(m)}"
                    if st == "comment"
                    else f"Add SPDX snippet tags ({printable(license or 'NOASSERTION', 80)})"
                )
                actions.append(
                    types.CodeAction(
                        title=title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=related,
                        is_preferred=i == 0,
                        edit=types.WorkspaceEdit(changes={doc.uri: attribution_edits(doc, m, st)}),
                    )
                )
        if compare and best is not None:
            args = compare_arguments(doc.uri, m)
            one = len(args["choices"]) == 1
            actions.append(
                command_action(
                    f"Compare with source: {source_label(best)}"
                    if one
                    else f"Compare with source ({len(args['choices'])} sources)",
                    types.Command(
                        title="Compare with source", command=CMD_COMPARE, arguments=[args]
                    ),
                    related,
                )
            )
        url = m.best_url
        if url and best is not None:
            label = " ".join(p for p in (best.repository, best.path) if p)
            actions.append(
                command_action(
                    f"Open source: {printable(label or url)}",
                    types.Command(title="Open source", command=CMD_OPEN_SOURCE, arguments=[url]),
                    related,
                )
            )
        repos = dict.fromkeys(g[0].repository for g in source_groups(m.match) if g[0].repository)
        for repo in repos:
            allow = [doc.uri, literal_pattern(repo)]
            actions.append(
                command_action(
                    f"Allow {printable(repo, 200)} in this workspace (our own code)",
                    types.Command(title="Allow source", command=CMD_ALLOW_SOURCE, arguments=allow),
                    related,
                )
            )
        dismiss = [doc.uri, m.id]
        actions.append(
            command_action(
                f"Dismiss this quote (recorded in {DECISIONS_FILE})",
                types.Command(title="Dismiss this quote", command=CMD_DISMISS, arguments=dismiss),
                related,
            )
        )
    return actions
