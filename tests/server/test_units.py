"""The pure parts of the server: settings, document edits, hover text, comment syntax."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from index_tools import Match
from server.code_actions import attribution_comment, comment_syntax
from server.diagnostics import StoredMatch, message_for
from server.documents import UTF8, UTF16, UTF32, Edit, TextDocument, map_span
from server.hover import escape, hover_markdown, hover_plaintext
from server.settings import Settings, layered_settings, parse_settings, to_dict


def match(sources: int = 1, exact: bool = True, kind: str = "recitation") -> dict:
    return {
        "kind": kind,
        "length": 87,
        "suggestion_words": 87,
        "range": None,
        "file_count": 3,
        "file_count_exact": exact,
        "text": "x",
        "sources": [
            {
                "url": f"https://example.org/r{i}/blob/c/f.py#L5-L20",
                "repository": f"owner/r{i}",
                "path": "Lib/json/decoder.py",
                "commit": "abc",
                "license": "PSF-2.0",
                "start_line": 5,
                "end_line": 20,
                "occurrences": 1,
                "words": 87,
            }
            for i in range(sources)
        ],
    }


def test_settings_defaults_camel_case_and_nesting():
    assert to_dict(Settings())["minInsertWords"] == 10
    nested, problems = parse_settings({"recitation": {"minTokens": 80, "scanOnOpen": True}})
    flat, _ = parse_settings({"minTokens": 80, "scanOnOpen": True})
    assert nested == flat and nested.min_tokens == 80 and nested.scan_on_open and not problems


def test_bad_fields_fall_back_one_by_one():
    settings, problems = parse_settings(
        {
            "enable": "yes",
            "minTokens": 0,
            "contextTokens": 50,
            "completionMode": "loud",
            "severity": {"license": "off", "idiom": 7},
            "unknownKey": 1,
        }
    )
    assert settings.enable is True and settings.min_tokens == 60
    assert settings.context_tokens == 50 and settings.completion_mode == "warn"
    assert settings.severity.license == "off" and settings.severity.idiom == "hint"
    assert len(problems) == 4
    assert any("completionMode" in p and "'block'" in p for p in problems)


def test_layers_override_in_order_and_merge_severity():
    settings, problems = layered_settings(
        {"recitation": {"minTokens": 70, "severity": {"license": "error"}}},
        None,
        {"severity": {"idiom": "off"}, "enable": False},
    )
    assert settings.min_tokens == 70 and not settings.enable
    assert settings.severity.license == "error" and settings.severity.idiom == "off"
    assert not problems
    _, problems = layered_settings("nonsense")
    assert problems


def test_positions_in_each_encoding():
    doc = TextDocument("file:///x", "a🎉b\nß\n")
    assert doc.position_at(3) == types.Position(0, 4)  # UTF-16: the emoji is two units
    doc.encoding = UTF8
    assert doc.position_at(3) == types.Position(0, 6)
    assert doc.offset_at(types.Position(1, 2)) == 5  # after the two bytes of "ß"
    doc.encoding = UTF32
    assert doc.position_at(3) == types.Position(0, 3)
    doc.encoding = UTF16
    assert doc.offset_at(types.Position(0, 99)) == 3  # clamped to the line
    assert doc.offset_at(types.Position(9, 0)) == len(doc.text)


def test_whole_document_change_is_diffed_into_one_edit():
    doc = TextDocument("file:///x", "hello world")
    edit = doc.apply(types.TextDocumentContentChangeWholeDocument(text="hello big world"))
    assert (edit.start, edit.old_end, edit.inserted) == (6, 6, "big ")


@given(
    st.integers(0, 50),
    st.integers(0, 50),
    st.integers(0, 60),
    st.integers(0, 60),
    st.integers(0, 20),
)
def test_map_span_keeps_untouched_spans_on_their_text(a, length, s, e_len, new_len):
    text = "".join(chr(97 + i % 26) for i in range(120))
    start, end = a, a + length
    s, e = min(s, 110), min(s + e_len, 115)
    new = "Z" * new_len
    after = text[:s] + new + text[e:]
    edit = Edit(1, s, e, s + new_len, new)
    ns, ne, touched = map_span(start, end, edit)
    assert 0 <= ns <= ne <= len(after)
    if not touched:
        assert after[ns:ne] == text[start:end]


def stored_of(d: dict) -> StoredMatch:
    return StoredMatch.create(Match.from_dict(d), 0, 1, ("x",))


def test_message_wording():
    assert message_for(Match.from_dict(match())) == (
        "Quoted: owner/r0 Lib/json/decoder.py L5\u2013L20 \u00b7 PSF-2.0 \u00b7 87 words "
        "\u00b7 3 files"
    )
    inexact = Match.from_dict(match(exact=False))
    assert message_for(inexact).endswith("\u00b7 at least 3 files")
    assert message_for(Match.from_dict(match(kind="license"))).startswith("License text: owner/r0")


def test_hover_lists_a_few_sources_and_counts_the_rest():
    text = hover_markdown([(stored_of(match(sources=8)), None)])
    assert text.count("](https://example.org/") == 5
    assert "- and 3 more" in text
    assert text.startswith("**Sources (3 files):**")


def test_escape_neutralizes_markdown_and_html():
    assert escape("[a](javascript:x) <img> *b* `c`\n# d") == (
        "\\[a\\]\\(javascript\\:x\\) \\<img\\> \\*b\\* \\`c\\` \\# d"
    )


def test_comment_syntax_by_language():
    stored = stored_of(match())
    url = "https://example.org/r0/blob/c/f.py#L5-L20"
    assert attribution_comment(stored, "python") == f"# Adapted from {url} (PSF-2.0)"
    assert attribution_comment(stored, "rust") == f"// Adapted from {url} (PSF-2.0)"
    assert attribution_comment(stored, "lua") == f"-- Adapted from {url} (PSF-2.0)"
    assert attribution_comment(stored, "markdown") == f"<!-- Adapted from {url} (PSF-2.0) -->"
    assert comment_syntax("unknown-language") == ("# ", "")
    hostile = match()
    hostile["sources"][0]["url"] = ""
    hostile["sources"][0]["repository"] = "a-->b"
    comment = attribution_comment(stored_of(hostile), "html")
    assert comment.count("-->") == 1 and comment.endswith("-->")


def test_plaintext_hover_for_clients_without_markdown():
    text = hover_plaintext([(stored_of(match(sources=7)), None)])
    assert (
        "- owner/r0 Lib/json/decoder.py L5\u2013L20 <https://example.org/r0/blob/c/f.py#L5-L20>"
        " \u00b7 PSF-2.0" in text
    )
    assert "- and 2 more" in text and "\\" not in text


def test_renamed_copies_say_so():
    m = match()
    m["exact"] = False
    m["renamed"] = [{"from": "total", "to": "acc_*"}]
    typed = Match.from_dict(m)
    assert message_for(typed).startswith("Renamed copy: owner/r0 Lib/json/decoder.py")
    assert message_for(typed).endswith("\u00b7 renamed total \u2192 acc_*")
    text = hover_markdown([(stored_of(m), None)])
    assert "**Renamed copy:** total \u2192 acc\\_\\*" in text


def test_check_and_the_editor_share_default_severities():
    import dataclasses

    from index_tools.cli.check import DEFAULT_KIND_ACTIONS
    from server.settings import SeveritySettings

    assert dataclasses.asdict(SeveritySettings()) == DEFAULT_KIND_ACTIONS


def test_a_hover_whose_parts_cannot_be_read_says_so_and_keeps_the_sources():
    """Parts left for later whose making fails (the index damaged meanwhile): the hover
    still lists the quote's sources and says the parts could not be read, both ways."""
    from index_tools.model import Later

    def broken():
        raise OSError("shard 2 <truncated>")

    typed = Match.from_dict(match(sources=2))
    typed.parts, typed.parts_later = Match.LATER, Later(broken)
    stored = StoredMatch.create(typed, 0, 10, ("x",))
    md, plain = hover_markdown([(stored, None)]), hover_plaintext([(stored, None)])
    assert md.startswith("**Sources (3 files):**") and "](https://example.org/r1/" in md
    assert "**Parts:**\n- could not be read from the index: shard 2 \\<truncated\\>" in md
    assert "- could not be read from the index: shard 2 <truncated>" in plain
    assert message_for(typed).endswith("\u00b7 87 words \u00b7 3 files")
