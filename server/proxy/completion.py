"""Completion items and inline completions checked against the index before the editor
shows them.

Each item's insert text (its text edit's new text, else `insertText`, else the label;
snippet syntax reduced to the text it inserts) is looked up with the document's text before
the place it goes as context, through the engine's `Index.match(..., language=languageId)`.
Only the kinds worth a user's decision count: `recitation` (including renamed copies) and
`license`; `repetitive` and `common` matches are the note's boring buckets and leave items
alone, as does a kind whose severity is "off" in the folder's settings.

An item with fewer words than `recitation.minInsertWords` is not looked up: it cannot carry
a quote of its own, and most items (names, keywords) are that short, which keeps a list of
a hundred items cheap. Lookups of one response run together on the index's worker thread.

`warn`: the item stays; `labelDetails.description` says "public code · MIT · acme/widgets",
the documentation gains the attribution, and `sortText` moves it below unflagged items.
`block`: the item is removed (a resolved item keeps its label but inserts nothing) and the
relay reports it. `off`: items pass untouched.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from index_tools import Match, describe_match, tokenize

from ..hover import escape, source_line
from ..indexes import IndexHandle
from ..settings import Settings
from ..words import context_start
from .documents import Text, offset_at

log = logging.getLogger(__name__)

FLAGGED_KINDS = ("recitation", "license")
SORT_PREFIX = "~"  # sorts after letters and digits
_SNIPPET = re.compile(r"\$\{(\d+)(?::([^}]*)|\|([^}|]*)[^}]*\|)?\}|\$\d+|\\([$}\\])")
_WORD = re.compile(r"\w+|[^\w\s]")


def snippet_text(snippet: str) -> str:
    """The text a snippet inserts: placeholders become their default, tab stops nothing."""

    def sub(m: re.Match[str]) -> str:
        if m.group(4):
            return m.group(4)
        if m.group(2) is not None:
            return m.group(2)
        if m.group(3) is not None:
            return m.group(3)
        return ""

    return _SNIPPET.sub(sub, snippet)


def item_edit(item: dict[str, Any]) -> tuple[str, Any]:
    """(insert text, range or None) of a completion item."""
    edit = item.get("textEdit")
    text: Any = None
    rng = None
    if isinstance(edit, dict) and isinstance(edit.get("newText"), str):
        text = edit["newText"]
        rng = edit.get("range") or edit.get("insert")
    elif isinstance(item.get("insertText"), str):
        text = item["insertText"]
    elif isinstance(item.get("textEditText"), str):
        text = item["textEditText"]
    else:
        text = item.get("label") if isinstance(item.get("label"), str) else ""
    if item.get("insertTextFormat") == 2:
        text = snippet_text(text)
    return text, rng


def inline_edit(item: dict[str, Any]) -> tuple[str, Any]:
    text = item.get("insertText")
    if isinstance(text, dict):  # a StringValue: a snippet
        text = snippet_text(text.get("value") or "")
    return (text if isinstance(text, str) else ""), item.get("range")


def count_words(text: str) -> int:
    """Words as the index counts them (the design's rule)."""
    return len(_WORD.findall(text))


def short_label(m: Match) -> str:
    """`public code · MIT · acme/widgets`"""
    src = m.best_source
    parts = ["public code" if m.exact else "renamed public code"]
    if src is not None:
        parts.append(src.license or "NOASSERTION")
        if src.repository:
            parts.append(src.repository)
    return " \u00b7 ".join(parts)


def attribution_markdown(m: Match, max_sources: int = 3) -> str:
    lines = [f"**Recitation**: {escape(describe_match(m))}"]
    lines += [f"- {source_line(src)}" for src in m.sources[:max_sources]]
    return "\n".join(lines)


def attribution_plain(m: Match, max_sources: int = 3) -> str:
    lines = [f"Recitation: {describe_match(m)}"]
    for src in m.sources[:max_sources]:
        where = " ".join(p for p in (src.repository, src.path) if p)
        lines.append(f"- {where} L{src.start_line}-L{src.end_line} {src.url}".rstrip())
    return "\n".join(lines)


def annotate_item(item: dict[str, Any], m: Match, markdown: bool = True) -> dict[str, Any]:
    """A copy of `item` that says where its text comes from and sorts after the others."""
    out = dict(item)
    details = dict(item.get("labelDetails") or {})
    label = short_label(m)
    old = details.get("description")
    details["description"] = f"{label} \u00b7 {old}" if isinstance(old, str) and old else label
    out["labelDetails"] = details
    doc = item.get("documentation")
    if markdown:
        ours = attribution_markdown(m)
        if isinstance(doc, dict) and doc.get("kind") == "markdown":
            value = f"{ours}\n\n---\n\n{doc.get('value', '')}"
        elif isinstance(doc, dict):
            value = f"{ours}\n\n---\n\n```\n{doc.get('value', '')}\n```"
        elif isinstance(doc, str) and doc:
            value = f"{ours}\n\n---\n\n```\n{doc}\n```"
        else:
            value = ours
        out["documentation"] = {"kind": "markdown", "value": value}
    else:
        ours = attribution_plain(m)
        old_doc = doc.get("value", "") if isinstance(doc, dict) else doc or ""
        out["documentation"] = f"{ours}\n\n{old_doc}".rstrip()
    label_text = item.get("label") if isinstance(item.get("label"), str) else ""
    out["sortText"] = SORT_PREFIX + str(item.get("sortText") or label_text)
    return out


def blocked_item(item: dict[str, Any], m: Match, markdown: bool = True) -> dict[str, Any]:
    """A resolved item under `block`: it keeps its label and inserts nothing."""
    out = annotate_item(item, m, markdown)
    out.pop("additionalTextEdits", None)
    out["insertText"] = ""
    out["insertTextFormat"] = 1
    edit = out.get("textEdit")
    if isinstance(edit, dict):
        out["textEdit"] = {**edit, "newText": ""}
    details = dict(out["labelDetails"])
    details["description"] = "blocked: " + details["description"]
    out["labelDetails"] = details
    return out


def match_summary(m: Match) -> dict[str, Any]:
    d = m.to_dict()
    d["description"] = describe_match(m)
    return d


# -- the index ---------------------------------------------------------------------------


class ProxyIndex:
    """The language server's handle on one index (`IndexHandle`: opened on first use,
    following published generations, lookups on its worker thread), with what completion
    checks remember between requests."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle = IndexHandle(path)
        self._tails: OrderedDict[tuple[str, int, str | None], bool] = OrderedDict()
        # the context before a place, by the text before it and the number of words
        self.contexts: OrderedDict[tuple[str, int], str] = OrderedDict()

    @property
    def error(self) -> str:
        return "" if self.handle.ready else self.handle.message

    async def ready(self) -> bool:
        await self.handle.wait()
        return self.handle.ready

    def _match_all(
        self,
        index: Any,
        texts: list[str],
        contexts: list[str],
        words: list[int],
        min_tokens: int,
        language: str | None,
    ) -> list[list[Match]]:
        out: list[list[Match]] = []
        need = self._tail_needs(index, texts, contexts, words, min_tokens)
        quoted: dict[str, bool] = {}
        for text, context in zip(texts, contexts):
            try:
                if text in need.get(context, {}):
                    if context not in quoted:
                        quoted[context] = self._tail_quoted(
                            index, context, need[context][""], language, self._tails
                        )
                    if not quoted[context]:
                        out.append([])
                        continue
                out.append(index.match(text, context, min_tokens, language=language))
            except Exception:
                log.exception("looking up a completion")
                out.append([])
        return out

    def _tail_needs(
        self, index: Any, texts: list[str], contexts: list[str], words: list[int], min_tokens: int
    ) -> dict[str, dict[str, int]]:
        """Items shorter than `min_tokens` words can only be part of a reported span if the
        last `min_tokens - words` words of their context are themselves a quoted run. Per
        context: the items that qualify for that test, and under "" the shortest tail any of
        them needs (a longer tail contains it, so one lookup decides for all of them)."""
        k = int(getattr(index, "k", 1))
        need: dict[str, dict[str, int]] = {}
        for text, context, n in zip(texts, contexts, words):
            tail = min_tokens - n
            if tail >= k:
                group = need.setdefault(context, {"": tail})
                group[text] = tail
                group[""] = min(group[""], tail)
        return need

    def _tail_quoted(
        self,
        index: Any,
        context: str,
        words: int,
        language: str | None,
        seen: OrderedDict[tuple[str, int, str | None], bool],
    ) -> bool:
        """Whether the last `words` words of `context` are a quoted run. Remembered for the
        last few tails: while a word is typed, every request has the same context."""
        key = (context, words, language)
        if key in seen:
            seen.move_to_end(key)
            return seen[key]
        tail = context[context_start(context, len(context), words) :]
        found = len(tokenize(tail)) >= words and bool(
            index.match(tail, "", words, language=language)
        )
        seen[key] = found
        while len(seen) > 64:
            seen.popitem(last=False)
        return found

    async def match_all(
        self,
        texts: list[str],
        contexts: list[str],
        words: list[int],
        min_tokens: int,
        language: str | None,
    ) -> list[list[Match]]:
        if not texts:
            return []
        found = await self.handle.run(self._match_all, texts, contexts, words, min_tokens, language)
        return found if found is not None else [[] for _ in texts]

    def close(self) -> None:
        self.handle.close()


@dataclass
class Candidate:
    """One item's text and where it goes."""

    index: int
    text: str
    start: int  # offset in the document where the text goes
    words: int


@dataclass
class Verdict:
    index: int
    match: Match


@dataclass
class Checked:
    flagged: list[Verdict] = field(default_factory=list)


def flagged_match(matches: list[Match], settings: Settings) -> Match | None:
    for m in matches:
        if m.kind in FLAGGED_KINDS and settings.severity.for_kind(m.kind) != "off":
            return m
    return None


def context_before(index: ProxyIndex, text: str, start: int, settings: Settings) -> str:
    """The last `contextTokens` words before `start`; remembered for the last few places
    (while a word is typed the text before the item's start does not change)."""
    key = (text[:start], settings.context_tokens)
    cache = index.contexts
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    context = text[context_start(text, start, settings.context_tokens) : start]
    cache[key] = context
    while len(cache) > 8:
        cache.popitem(last=False)
    return context


async def check_candidates(
    index: ProxyIndex, doc: Text, candidates: list[Candidate], settings: Settings
) -> list[Verdict]:
    """The candidates whose text quotes indexed code, with their best match."""
    todo = [c for c in candidates if c.words >= settings.min_insert_words]
    if not todo:
        return []
    unique: dict[tuple[str, int], int] = {}
    texts: list[str] = []
    contexts: list[str] = []
    words: list[int] = []
    context_at: dict[int, str] = {}
    for c in todo:
        key = (c.text, c.start)
        if key not in unique:
            unique[key] = len(texts)
            start = min(c.start, len(doc.text))
            if start not in context_at:
                context_at[start] = context_before(index, doc.text, start, settings)
            texts.append(c.text)
            contexts.append(context_at[start])
            words.append(c.words)
    results = await index.match_all(
        texts, contexts, words, settings.min_tokens, doc.language or None
    )
    verdicts = []
    for c in todo:
        m = flagged_match(results[unique[(c.text, c.start)]], settings)
        if m is not None:
            verdicts.append(Verdict(c.index, m))
    return verdicts


def start_offset(doc: Text, rng: Any, position: Any, encoding: str, word_prefix: bool) -> int:
    """Where an item's text goes: its range's start, else the position (before the word
    being typed, for items without a range)."""
    if isinstance(rng, dict) and isinstance(rng.get("start"), dict):
        return offset_at(doc.text, rng["start"], encoding)
    at = offset_at(doc.text, position, encoding)
    if word_prefix:
        while at > 0 and (doc.text[at - 1].isalnum() or doc.text[at - 1] == "_"):
            at -= 1
    return at
