"""Attribution comments where a document holds another language: a `<script>` or `<style>`
block of HTML, Vue or Svelte, a fenced block of Markdown, JSX children. The comment is in
the syntax of the place it goes, and corpus metadata in it cannot end that place early
(`</script>`, `</style>`, `*/`)."""

from __future__ import annotations

import re

import pytest
from lsprotocol import types
from tree_sitter import Language, Parser

from index_tools import Match, judge
from server.code_actions import code_actions
from server.diagnostics import StoredMatch
from server.documents import TextDocument

HOSTILE = "x.js </script><script>alert(1)</SCRIPT> </style> */} <!-- {/* x */}"
QUOTE = "function area(points) {\n  return points.reduce((a, p) => a + p.x * p.y, 0);\n}\n"
MARKUP = '    <div className="card">\n      <h1>{title}</h1>\n    </div>\n'


def stored_in(text: str, quoted: str) -> StoredMatch:
    match = Match.from_dict(
        {
            "kind": "recitation", "length": 60, "file_count": 1, "file_count_exact": True,
            "exact": True, "range": None, "text": quoted,
            "sources": [{
                "url": None,  # the comment names the repository and path instead
                "repository": "acme/widgets", "path": HOSTILE, "license": "MIT",
                "commit": "abc", "start_line": 1, "end_line": 9,
            }],
        }
    )  # fmt: skip
    start = text.index(quoted)
    return StoredMatch.create(match, start, start + len(quoted), ())


def attributed(text: str, quoted: str, language: str, style: str = "comment") -> str:
    """The document with the preferred attribution quick fix applied."""
    doc = TextDocument("file:///w/doc", text, 1, language)
    stored = stored_in(text, quoted)
    verdict = judge(stored.match, stored.identity, None, lambda kind: "warning")
    action = code_actions(doc, [(stored, verdict)], [], style)[0]
    edits = sorted(
        action.edit.changes[doc.uri], key=lambda e: (e.range.start.line, e.range.start.character)
    )
    for edit in reversed(edits):
        doc.apply(types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text))
    return doc.text


def added_lines(before: str, after: str) -> list[str]:
    old = before.splitlines()
    return [line.strip() for line in after.splitlines() if line not in old]


def parses(code: str, tsx: bool) -> bool:
    if tsx:
        import tree_sitter_typescript as grammar

        language = Language(grammar.language_tsx())
    else:
        import tree_sitter_javascript as grammar

        language = Language(grammar.language())
    return not Parser(language).parse(code.encode()).root_node.has_error


@pytest.mark.parametrize("language", ["html", "vue", "svelte"])
@pytest.mark.parametrize("style", ["comment", "spdx"])
def test_a_comment_in_a_script_block_is_a_script_comment_that_cannot_end_it(language, style):
    text = f"<p>hi</p>\n<script>\n{QUOTE}</script>\n<p>bye</p>\n"
    after = attributed(text, QUOTE, language, style)
    for line in added_lines(text, after):
        assert line.startswith("// "), line
        assert not re.search(r"</script|<!--|<script", line, re.IGNORECASE), line
    # the block still ends where it did
    assert len(re.findall(r"</script", after, re.IGNORECASE)) == 1
    block = after.split("<script>", 1)[1].split("</script>", 1)[0]
    assert parses(block, tsx=False)


def test_a_comment_in_a_style_block_is_a_css_comment_that_cannot_end_it():
    css = ".card {\n  color: red;\n  margin: 0 auto;\n}\n"
    text = f"<style>\n{css}</style>\n"
    (line,) = added_lines(text, attributed(text, css, "html"))
    assert line.startswith("/* ") and line.endswith(" */") and line.count("*/") == 1
    assert "</style" not in line.lower()


def test_outside_the_blocks_an_html_comment():
    text = f"<div>\n{MARKUP}</div>\n<script>\nlet x = 1;\n</script>\n"
    (line,) = added_lines(text, attributed(text, MARKUP, "html"))
    assert line.startswith("<!-- ") and line.endswith(" -->")


@pytest.mark.parametrize(
    ("attrs", "expected"), [(' lang="ts"', "// "), (' type="text/babel"', "{/* ")]
)
def test_the_script_blocks_own_language_counts(attrs, expected):
    code = f"function Card() {{\n  return (\n    <section>\n{MARKUP}    </section>\n  );\n}}\n"
    quoted = MARKUP if expected.startswith("{") else code
    text = f"<script{attrs}>\n{code}</script>\n"
    (line,) = added_lines(text, attributed(text, quoted, "html"))
    assert line.startswith(expected), line


@pytest.mark.parametrize("language", ["javascriptreact", "typescriptreact"])
@pytest.mark.parametrize("style", ["comment", "spdx"])
def test_jsx_children_get_a_jsx_comment_and_code_a_line_comment(language, style):
    tsx = language == "typescriptreact"
    code = f"function Card({{ title }}) {{\n  return (\n    <section>\n{MARKUP}    </section>\n  );\n}}\n"
    # the quote among the children of <section>
    after = attributed(code, MARKUP, language, style)
    lines = added_lines(code, after)
    assert lines and all(ln.startswith("{/* ") and ln.endswith(" */}") for ln in lines), lines
    assert all(ln.count("*/") == 1 for ln in lines)
    assert parses(after, tsx), after
    # the quote of the whole function: a line comment above it
    after = attributed(code, code, language, style)
    assert all(ln.startswith("// ") for ln in added_lines(code, after))
    assert parses(after, tsx), after


def test_a_fenced_block_gets_its_languages_comment():
    code = "def area(r):\n    return 3.14159 * r * r\n"
    text = f"# Notes\n\n```python\n{code}```\n\n{MARKUP}"
    (line,) = added_lines(text, attributed(text, code, "markdown"))
    assert line.startswith("# Adapted from")
    (line,) = added_lines(text, attributed(text, MARKUP, "markdown"))
    assert line.startswith("<!-- ")
