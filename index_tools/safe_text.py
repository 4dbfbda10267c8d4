"""Corpus metadata is untrusted: links and names from a dataset row or a repository reach a
hover, a comment inserted into code, a terminal and a CI log. Here they are reduced to what
is safe there: http(s) links without credentials, printable one-line text, and comment
text that cannot change the code around it.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MAX_TEXT = 300  # characters of one metadata value shown anywhere

# query parameters that carry a secret in the links of code hosts, clouds and CDNs
_SECRET_PARAMS = re.compile(
    r"^(?:(?:access|auth|api|private|refresh|id|session|sas)?[-_]?token|auth|key|api[-_]?key|"
    r"apikey|secret|client[-_]?secret|password|passwd|pwd|sig|signature|credential|"
    r"x-amz-.*|x-goog-.*|se|sv|sp|skoid|sktid|code)$",
    re.IGNORECASE,
)
# what a language reads out of a comment: Python's encoding declaration (PEP 263), editor
# modelines (Emacs `-*- ... -*-`, Vim `vim:`/`vi:`/`ex:`)
_DIRECTIVES = re.compile(r"(coding)([:=])|(-\*-)|\b(vim?|ex)(:)", re.IGNORECASE)


def clean_link(url: object) -> str:
    """`url` as a safe http(s) link — no user name or password, no secret-looking query
    parameters, no fragment, no spaces or control characters — or "" when it is not one."""
    if not isinstance(url, str):
        return ""
    url = url.strip()
    if not url.lower().startswith(("https://", "http://")) or any(
        ch.isspace() or _unsafe(ch) for ch in url
    ):
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return ""
    if not host or parts.scheme.lower() not in ("http", "https"):
        return ""
    netloc = host if ":" not in host else f"[{host}]"
    if port is not None:
        netloc += f":{port}"
    query = urlencode(
        [
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if not _SECRET_PARAMS.match(k)
        ]  # fmt: skip
    )
    return urlunsplit((parts.scheme.lower(), netloc, parts.path, query, ""))


def with_fragment(link: str, fragment: str) -> str:
    """A cleaned link with a line fragment (`L5-L9`); "" when the link is not safe."""
    base = clean_link(link)
    return f"{base}#{fragment}" if base and fragment else base


def _unsafe(ch: str) -> bool:
    # control (Cc), format (Cf: bidi overrides and isolates, zero-width), separators
    # (Zl, Zp), surrogates and unassigned code points
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Cn")


def printable(value: object, max_len: int = MAX_TEXT) -> str:
    """One line of printable text: control, format (bidi) and separator characters become
    U+FFFD, runs of whitespace one space, and it is cut at `max_len` characters."""
    text = "" if value is None else str(value)
    out = []
    for ch in text:
        if ch in "\t\n\r\v\f" or ch.isspace():
            out.append(" ")
        elif _unsafe(ch):
            out.append("\ufffd")
        else:
            out.append(ch)
    text = " ".join("".join(out).split())
    return text if len(text) <= max_len else text[: max_len - 1] + "\u2026"


def comment_safe(value: object, terminator: str = "", max_len: int = MAX_TEXT) -> str:
    """Printable text that can sit inside a comment without changing the code: no
    encoding declaration or editor modeline, and not the comment's own `terminator`."""
    text = _DIRECTIVES.sub(
        lambda m: (
            f"{m.group(1)} {m.group(2)}"
            if m.group(1)
            else "- * -"
            if m.group(3)
            else f"{m.group(4)} {m.group(5)}"
        ),
        printable(value, max_len),
    )
    end = terminator.strip()
    if end:
        while end in text:
            text = text.replace(end, " ".join(end))
        if end == "-->":
            text = text.replace("--", "- -")
    return text
