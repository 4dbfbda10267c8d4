"""`recitation/source`: a source's lines beside the quoted code, for "Compare with source".

The engine finds the source's stored text by its origin and aligns the quote in it
(`index_tools.source_view`, through the folder's index handle: local, an index service, or
both); this module only says which quote and which source a request means, and puts both
sides in the client's coordinates (its position encoding, lines of the texts it gets).

A request names a shown match (`uri` + `id`, as diagnostics and `recitation/match` carry
it) and one of its sources, or, for a match no longer in the document (the references log),
the source itself and the quoted text. See docs/PROTOCOL.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from index_tools import Source, SourceRef, SourceRequest, SourceView, printable

from .diagnostics import StoredMatch, line_span
from .documents import TextDocument

if TYPE_CHECKING:
    from .server import RecitationServer

CMD_COMPARE = "recitation.compareWithSource"  # a client-side command (VS Code, Neovim example)
DEFAULT_CONTEXT_LINES = 3
MAX_CONTEXT_LINES = 200
MAX_TEXT_CHARS = 1 << 20  # of a quote sent without a match


class SourceParamsError(ValueError):
    """The request's params are malformed (InvalidParams)."""


class SourceUnavailable(Exception):
    """The request cannot be answered now (RequestFailed): no index, the match is gone."""


# -- what a client offers --------------------------------------------------------------------


def source_label(source: Source) -> str:
    return printable(" ".join(p for p in (source.repository, source.path, line_span(source)) if p))


def compare_choices(stored: StoredMatch) -> list[dict]:
    """The sources a compare can show: the match's, then its parts' (each once)."""
    out: list[dict] = []
    seen: set[tuple[str, str, str]] = set()

    def add(source: Source, index: int, part: int | None, detail: str) -> None:
        key = (source.repository, source.path, source.commit)
        if key in seen:
            return
        seen.add(key)
        choice = {
            "label": source_label(source) or "indexed file",
            "description": printable(source.license or "NOASSERTION", 120),
            "detail": detail,
            "source": index,
        }
        if part is not None:
            choice["part"] = part
        out.append(choice)

    match = stored.match
    words = f"{match.primary_length:,} words"
    for i, s in enumerate(match.sources):
        add(s, i, None, words)
    for j, p in enumerate(match.parts):
        for i, s in enumerate(p.sources):
            add(s, i, j, f"a part of {p.length:,} words")
    return out


def compare_arguments(uri: str, stored: StoredMatch) -> dict:
    """The argument of the `recitation.compareWithSource` command."""
    return {"uri": uri, "id": stored.id, "choices": compare_choices(stored)}


def compare_link(uri: str, stored: StoredMatch) -> str:
    """A `command:` link running the compare (for a hover; the client runs it itself)."""
    arguments = json.dumps([compare_arguments(uri, stored)], ensure_ascii=True)
    return f"command:{CMD_COMPARE}?{quote(arguments, safe='')}"


# -- the request -------------------------------------------------------------------------------


def _optional(params: dict, key: str, kind: type) -> Any:
    """`params[key]` when it is a `kind` (a bool is no int here), None when absent."""
    value = params.get(key)
    if value is None:
        return None
    if type(value) is not kind and not (kind is str and isinstance(value, str)):
        raise SourceParamsError(f"recitation/source: `{key}` must be a {kind.__name__}")
    return value


def _source_dict(value: dict) -> Source:
    try:
        fields = {
            "repository": value.get("repository") or "",
            "path": value.get("path") or "",
            "commit": value.get("commit") or "",
            "license": value.get("license") or "",
            "url": "",
            "start_line": value.get("start_line") or 0,
            "end_line": value.get("end_line") or 0,
        }
    except AttributeError:
        raise SourceParamsError("recitation/source: `source` must be an object") from None
    if not all(isinstance(fields[k], str) for k in ("repository", "path", "commit")):
        raise SourceParamsError("recitation/source: a source's names must be strings")
    if not all(type(fields[k]) is int and fields[k] >= 0 for k in ("start_line", "end_line")):
        raise SourceParamsError("recitation/source: a source's lines must be whole numbers")
    if not fields["repository"] and not fields["path"]:
        raise SourceParamsError("recitation/source: the source needs a repository or a path")
    return Source(**fields)


async def source_result(ls: RecitationServer, params: Any) -> dict:
    """The answer to `recitation/source` (see the module's docstring)."""
    if not isinstance(params, dict):
        raise SourceParamsError("recitation/source expects {uri, id, source?} or {source, text}")
    uri = _optional(params, "uri", str)
    match_id = _optional(params, "id", str)
    part = _optional(params, "part", int)
    language = _optional(params, "language", str)
    exact = _optional(params, "exact", bool)
    generation = _optional(params, "generation", str)
    text = _optional(params, "text", str)
    context = _optional(params, "contextLines", int)
    context = DEFAULT_CONTEXT_LINES if context is None else context
    if not 0 <= context <= MAX_CONTEXT_LINES:
        raise SourceParamsError(f"recitation/source: `contextLines` must be 0..{MAX_CONTEXT_LINES}")
    chosen = params.get("source", 0)
    if isinstance(chosen, bool) or not isinstance(chosen, (int, dict)):
        raise SourceParamsError("recitation/source: `source` is an index or a source object")
    if text is not None and len(text) > MAX_TEXT_CHARS:
        raise SourceParamsError("recitation/source: `text` is too long")

    doc = ls.documents.get(uri) if uri else None
    stored = ls.matches.find(uri, match_id) if uri and match_id else None
    if stored is not None and doc is not None:
        source, exact_default = _chosen(stored, chosen, part)
        quote_at = (stored.start, stored.end)
        quote = doc.text[stored.start : stored.end]
        language = language or doc.language_id
        exact = exact_default if exact is None else exact
        generation = generation or stored.generation
    elif isinstance(chosen, dict) and text is not None:
        source = _source_dict(chosen)
        quote_at = None
        quote = text
        language = language or (doc.language_id if doc else None)
        exact = True if exact is None else exact
    elif match_id:
        raise SourceUnavailable(
            "the quote is no longer flagged in this document (edited or closed since); "
            "send the source and the quoted text instead"
        )
    else:
        raise SourceParamsError("recitation/source expects {uri, id} or {source: {...}, text}")

    await ls.settings_known().wait()
    scope = ls.scopes.for_uri(uri) if uri else ls.scopes.default()
    handle = await ls.wait_index(scope)
    if not handle.ready:
        raise SourceUnavailable(f"no index: {handle.message}")
    request = SourceRequest(
        SourceRef(
            source.repository, source.path, source.commit, source.start_line, source.end_line,
            generation or None,
        ),
        quote,
        language or None,
        exact,
        context,
    )  # fmt: skip
    view = await handle.source_view(request)
    if view is None:
        raise SourceUnavailable(f"the index cannot answer now: {handle.message}")
    encoding = ls.documents.encoding
    return result_payload(view, uri, doc if quote_at else None, quote_at, quote, params, encoding)


def _chosen(stored: StoredMatch, chosen: Any, part: int | None) -> tuple[Source, bool]:
    """The source a request picks of a match (by index, in the match or one of its parts,
    or as an object naming one), and whether that span is an exact copy."""
    match = stored.match
    sources, exact = match.sources, match.exact
    if part is not None:
        if not 0 <= part < len(match.parts):
            raise SourceParamsError(f"recitation/source: the match has no part {part}")
        sources, exact = match.parts[part].sources, match.parts[part].exact
    if isinstance(chosen, dict):
        return _source_dict(chosen), exact
    if not 0 <= chosen < len(sources):
        raise SourceParamsError(f"recitation/source: the match has no source {chosen}")
    return sources[chosen], exact


def _range(text: str, start: int, end: int, encoding: str) -> dict:
    doc = TextDocument(uri="", text=text, encoding=encoding)
    a, b = doc.position_at(start), doc.position_at(end)
    return {
        "start": {"line": a.line, "character": a.character},
        "end": {"line": b.line, "character": b.character},
    }


def _marks(text: str, marks, shift: int, encoding: str) -> list[dict]:
    doc = TextDocument(uri="", text=text, encoding=encoding)
    out = []
    for m in marks:
        a, b = doc.position_at(m.start + shift), doc.position_at(m.end + shift)
        out.append(
            {
                "range": {
                    "start": {"line": a.line, "character": a.character},
                    "end": {"line": b.line, "character": b.character},
                },
                "kind": m.kind,
            }
        )
    return out


def _yours(
    uri: str | None,
    doc: TextDocument | None,
    quote_at: tuple[int, int] | None,
    quote: str,
    view: SourceView,
    params: dict,
    encoding: str,
) -> dict:
    """The quoted code's side: the document's lines around the quote (or the text sent)."""
    context = params.get("contextLines")
    context = DEFAULT_CONTEXT_LINES if not isinstance(context, int) else context
    if doc is not None and quote_at is not None:
        start, end = quote_at
        first = doc.position_at(start).line
        last = doc.position_at(max(start, end - 1)).line
        first, last = max(first - context, 0), min(last + context, doc.line_count() - 1)
        w0 = doc.line_starts[first]
        w1 = doc.line_starts[last + 1] if last + 1 < doc.line_count() else len(doc.text)
        text = doc.text[w0:w1]
        return {
            "uri": uri,
            "text": text,
            "firstLine": first + 1,
            "quoted": _range(text, start - w0, end - w0, encoding),
            "marks": _marks(text, view.quote_marks, start - w0, encoding),
        }
    rng = params.get("range")
    line = 0
    if isinstance(rng, dict) and isinstance(rng.get("start"), dict):
        value = rng["start"].get("line")
        line = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
    return {
        "uri": uri,
        "text": quote,
        "firstLine": line + 1,
        "quoted": _range(quote, 0, len(quote), encoding),
        "marks": _marks(quote, view.quote_marks, 0, encoding),
    }


def result_payload(
    view: SourceView,
    uri: str | None,
    doc: TextDocument | None,
    quote_at: tuple[int, int] | None,
    quote: str,
    params: dict,
    encoding: str,
) -> dict:
    """The LSP answer: camelCase, ranges in the negotiated position encoding, relative to
    the texts they are in (`text`: the source's lines from `firstLine`; `yours.text`)."""
    out: dict[str, Any] = {
        "status": view.status,
        "message": view.message,
        "generation": view.generation,
        "requestedGeneration": printable(view.ref.generation, 200) if view.ref.generation else None,
        "generationChanged": view.generation_changed,
        "source": {
            "repository": view.repository or printable(view.ref.repository),
            "path": view.path or printable(view.ref.path),
            "commit": view.commit or printable(view.ref.commit, 80),
        },
    }
    if view.status != "ok":
        return out
    out["source"].update(
        {
            "license": view.license,
            "url": view.url,
            "language": view.language,
            "occurrences": view.occurrences,
            "startLine": view.start_line,
            "endLine": view.end_line,
            "lineCount": view.line_count,
        }
    )
    out.update(
        {
            "title": view.title,
            "text": view.text,
            "firstLine": view.first_line,
            "truncated": view.truncated,
            "quoted": _range(view.text, *view.quoted, encoding),
            "marks": _marks(view.text, view.marks, 0, encoding),
            "exact": view.exact,
            "renamed": [{"from": a, "to": b} for a, b in view.renamed],
            "alignedWords": view.aligned_words,
            "quoteWords": view.quote_words,
            "yours": _yours(uri, doc, quote_at, quote, view, params, encoding),
        }
    )
    return out
