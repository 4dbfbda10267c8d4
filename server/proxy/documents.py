"""The open documents' text as the editor sends it, enough to read the text before a
completion position. Positions count in the negotiated encoding (UTF-16 by default)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Text:
    uri: str
    language: str
    text: str
    version: int = 0


def _units(ch: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(ch.encode("utf-8"))
    if encoding == "utf-16":
        return 2 if ord(ch) > 0xFFFF else 1
    return 1


def offset_at(text: str, position: Any, encoding: str = "utf-16") -> int:
    """Character offset of an LSP position (a dict); clamped to the line and the text."""
    if not isinstance(position, dict):
        return len(text)
    line = position.get("line", 0)
    character = position.get("character", 0)
    if not isinstance(line, int) or not isinstance(character, int) or line < 0:
        return len(text)
    start = 0
    for _ in range(line):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if encoding == "utf-32" or text.isascii() or text[start:end].isascii():
        return min(start + max(character, 0), end)
    units = 0
    i = start
    while i < end and units < character:
        units += _units(text[i], encoding)
        i += 1
    return i


class Texts:
    def __init__(self) -> None:
        self.encoding = "utf-16"
        self._docs: dict[str, Text] = {}

    def get(self, uri: Any) -> Text | None:
        return self._docs.get(uri) if isinstance(uri, str) else None

    def all(self) -> list[Text]:
        return list(self._docs.values())

    def did_open(self, params: Any) -> None:
        item = params.get("textDocument") if isinstance(params, dict) else None
        if isinstance(item, dict) and isinstance(item.get("uri"), str):
            text = item.get("text") if isinstance(item.get("text"), str) else ""
            language = item.get("languageId") if isinstance(item.get("languageId"), str) else ""
            version = item.get("version") if type(item.get("version")) is int else 0
            self._docs[item["uri"]] = Text(item["uri"], language, text, version)

    def did_change(self, params: Any) -> None:
        if not isinstance(params, dict):
            return
        identifier = params.get("textDocument")
        doc = self.get(identifier.get("uri") if isinstance(identifier, dict) else None)
        if doc is None:
            return
        if type(identifier.get("version")) is int:
            doc.version = identifier["version"]
        for change in params.get("contentChanges") or []:
            if not isinstance(change, dict) or not isinstance(change.get("text"), str):
                continue
            rng = change.get("range")
            if isinstance(rng, dict):
                a = offset_at(doc.text, rng.get("start"), self.encoding)
                b = offset_at(doc.text, rng.get("end"), self.encoding)
                doc.text = doc.text[:a] + change["text"] + doc.text[max(a, b) :]
            else:
                doc.text = change["text"]

    def did_close(self, params: Any) -> None:
        if isinstance(params, dict):
            self._docs.pop((params.get("textDocument") or {}).get("uri"), None)
