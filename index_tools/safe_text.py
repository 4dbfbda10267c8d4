"""Corpus metadata is untrusted: links and names from a dataset row or a repository reach a
hover, a comment inserted into code, a terminal and a CI log. Here they are reduced to what
is safe there: http(s) links without credentials, printable one-line text, and comment
text that cannot change the code around it.

- `clean_link(url)`: an http(s) link without user name, password, secret-looking query
  parameters or fragment, or "" (used when an index is built and again when it is shown)
- `printable(text, max_len)`: one line without control, format (bidi) or separator
  characters, credentials in embedded links removed
- `comment_safe(text, terminator)`: printable text that cannot be read as an encoding
  declaration, an editor modeline or a linter's directive (no-qa, the eslint and pylint
  disables, the type checkers' ignore, NO-LINT...), end its comment early or continue it
  onto the next line
- `escape_name(name)`: a file name as reports show it, every byte that is not UTF-8 as
  `\xff` (a name is whatever bytes the file system holds)
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MAX_TEXT = 300  # characters of one metadata value shown anywhere

# query parameters that carry a secret in the links of code hosts, clouds and CDNs: any name
# containing one of the words, and a few short names used by signed URLs
_SECRET_PARAMS = re.compile(
    r"^(?:.*(?:token|secret|passw|signature|credential|api[-_]?key|private[-_]?key|"
    r"session|oauth|jwt|x-amz-|x-goog-).*|auth|key|pwd|sig|se|sv|sp|skoid|sktid|code)$",
    re.IGNORECASE,
)
# a link that needs no cleaning: lower-case scheme and host, no port, user, query or fragment
_PLAIN_LINK = re.compile(
    r"https?://[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*)?"
)
# characters a link never holds as they are (the WHATWG parser reads `\` as `/`)
_LINK_BAD = re.compile(r"[<>\"`\\{}|^]")
# credentials inside text: `scheme://user:password@`, and secret query parameters
_TEXT_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#@]*@")
_TEXT_SECRET_PARAM = re.compile(
    r"(?i)([?&;](?:[\w.-]*(?:token|secret|passw|signature|credential|api[-_]?key)[\w.-]*"
    r"|auth|key|pwd|sig)=)[^\s&#;]*"
)
# what a language or an editor reads out of a comment: Python's encoding declaration
# (PEP 263), editor modelines (Emacs `-*- ... -*-`, Vim `vim:`/`vi:`/`ex:`)
_DIRECTIVES = re.compile(r"(coding)([:=])|(-\*-)|\b(vim?|ex)(:)", re.IGNORECASE)
# what linters, formatters, type checkers and coverage tools read out of a comment on the
# line (or in the file) to stop checking it; each is broken up with a space or a dash (a
# colon after a tool's name becomes a dash). (The
# directives are named here without their punctuation, so that no tool reads this file's
# own comments as one.)
_LINT_DIRECTIVES: tuple[tuple[re.Pattern, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), replacement)
    for pattern, replacement in (
        # no-qa, no-sec, NO-LINT, no-lint, NO-SONAR, no-inspection
        (r"\b(no)(qa|sec|lint|sonar|inspection)", r"\1 \2"),
        # a tool's name, a colon and what to skip (flake8, pylint, mypy, fmt, isort, rubocop,
        # cspell, jscs, the JetBrains formatter...)
        (
            r"(\b|@)(flake8|ruff|pylint|mypy|pyright|isort|fmt|yapf|rubocop|jscs|tslint|jshint"
            r"|cspell|spell-checker|codespell|formatter|pydocstyle|pycodestyle|bandit)\s*:",
            r"\1\2 -",  # some allow spaces around the colon: it goes
        ),
        (r"\b(type)(\s*:\s*ignore)", r"\1 \2"),  # the type checkers' ignore
        # eslint, stylelint, prettier, biome, deno: a dash, then disable, enable or ignore
        (
            r"\b(eslint|stylelint|markdownlint|tslint|biome|prettier|deno-lint|jshint|jscs)"
            r"(-)(disable|enable|ignore)",
            r"\1 \2 \3",
        ),
        (r"@(ts-(?:ignore|nocheck|expect-error|check))", r"@ \1"),  # TypeScript
        (
            r"\b(istanbul|c8|v8|clang-format|shellcheck)(\s+)(ignore|off|on|disable|enable)",
            r"\1 - \3",
        ),
        (r"\b(pragma)([:\s]*)(no)(\s*)(cover)", r"\1 - \3 - \5"),  # coverage.py
    )
)


def clean_link(url: object) -> str:
    """`url` as a safe http(s) link — no user name or password, no secret-looking query
    parameters, no fragment, no spaces, quotes, backslashes or control characters — or ""
    when it is not one."""
    if not isinstance(url, str):
        return ""
    url = url.strip()
    if _PLAIN_LINK.fullmatch(url):
        return url
    if (
        not url.lower().startswith(("https://", "http://"))
        or _LINK_BAD.search(url)
        or any(ch.isspace() or _unsafe(ch) for ch in url)
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


def redact_credentials(text: str) -> str:
    """`text` with the credentials of any link inside it removed (`https://u:p@h/` and
    `?token=...`)."""
    if "@" in text:
        text = _TEXT_USERINFO.sub(r"\1", text)
    if "=" in text:
        text = _TEXT_SECRET_PARAM.sub("\\1\u2026", text)
    return text


def escape_name(name: str) -> str:
    """A file name (as `os.fsdecode` gives it) as every report shows it: a byte that is not
    UTF-8 (a surrogate escape, U+DC80..U+DCFF) as `\xff`, any other lone surrogate as
    `\ud800`; nothing else changes. The result encodes as UTF-8 (JSON, SARIF, SBOMs)."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        pass
    out = []
    for ch in name:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _unsafe(ch: str) -> bool:
    # control (Cc), format (Cf: bidi overrides and isolates, zero-width), separators
    # (Zl, Zp), surrogates and unassigned code points
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Cn")


def _replaced(text: str) -> str:
    """Whitespace as a space, the unsafe characters as U+FFFD, the others as they are."""
    out = []
    for ch in text:
        if ch.isspace():
            out.append(" ")
        elif _unsafe(ch):
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def printable(value: object, max_len: int = MAX_TEXT) -> str:
    """One line of printable text: control, format (bidi) and separator characters become
    U+FFFD, runs of whitespace one space, credentials in links inside it are removed, and it
    is cut at `max_len` characters."""
    text = "" if value is None else str(value)
    if not text.isprintable():  # (printable text, of any script, has nothing to replace)
        text = _replaced(text)
    text = redact_credentials(" ".join(text.split()))
    return text if len(text) <= max_len else text[: max_len - 1] + "\u2026"


def _defuse(text: str, sequence: str) -> str:
    """`text` without `sequence`: its characters are spaced apart until none is left."""
    spaced = " ".join(sequence)
    while sequence in text:
        text = text.replace(sequence, spaced)
    return text


def comment_safe(value: object, terminator: str = "", max_len: int = MAX_TEXT) -> str:
    """Printable text that can sit inside a comment without changing the code or how tools
    read it: no encoding declaration, editor modeline or linter directive (no-qa, the
    eslint and pylint disables, the type checkers' ignore...), not the comment's own
    `terminator` (nor `--`
    when it is `-->`), and no trailing backslash or `??/` that would continue a line
    comment onto the next line (C, C++)."""
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
    for pattern, replacement in _LINT_DIRECTIVES:
        text = pattern.sub(replacement, text)
    end = terminator.strip()
    if end:
        text = _defuse(text, end)
        if end == "-->":  # `--` is not allowed inside an HTML or XML comment at all
            text = _defuse(text, "--")
    text = _defuse(text, "??/")  # the trigraph for a backslash
    return text.rstrip("\\ ")
