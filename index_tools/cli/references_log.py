"""`recitation-index references LOG`: the VS Code extension's code references log as a bill
of materials, through the writer `check` uses (`sbom.write_sbom`).

The log is the extension's JSON export (`{"format": "recitation-code-references",
"references": [...]}`) or its own store, one JSON entry a line (`code-references.jsonl`):
each entry a match as the language server sent it (`uri`, `range`, `kind`, `text`,
`sources`...). The log says where a quote was when it entered the file; the SBOM describes
the files as they are: each quote is looked for in its file (where the log placed it, else
the nearest copy of its text) and judged with the decisions that apply to the file, as
`check` judges. A quote no longer in its file, and an entry that cannot be read, are left
out and said on stderr. Everything in the log is untrusted input.
"""

from __future__ import annotations

import json
import sys
import urllib.parse
import urllib.request
from pathlib import Path

from ..judge.attribution import split_lines
from ..judge.decisions import DecisionsError
from ..judge.quote_identity import QuoteIdentity
from ..judge.verdict import judge
from ..model import KINDS, Match, Source
from ..safe_text import printable
from ..store.small_files import read_small_file
from .code_files import NotText
from .sbom import Quoted, SbomError, SbomOptions, pinned_namespace, project_name, write_sbom
from .sbom_facts import safe
from .sbom_places import FileBytes
from .scan import DecisionsFinder, display_path

LOG_FORMAT = "recitation-code-references"
MAX_LOG_BYTES = 512 << 20
MAX_TEXT_CHARS = 2000  # the extension keeps this much of a quote's text (then "…")


def read_log(path: str) -> list[dict]:
    """The entries of an exported log (JSON) or of the log's store (JSON lines)."""
    try:
        raw = read_small_file(path, MAX_LOG_BYTES).decode("utf-8-sig")
    except FileNotFoundError:
        raise SbomError(f"{path}: no such file") from None
    except OSError as e:
        raise SbomError(f"{path}: cannot read it: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise SbomError(f"{path}: not a code references log (not UTF-8 text)") from None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict) and data.get("format") == LOG_FORMAT:
        entries = data.get("references")
        if not isinstance(entries, list):
            raise SbomError(f"{path}: a code references export without its references")
        return entries
    if isinstance(data, dict) and "uri" in data:
        return [data]
    entries = []
    for line in raw.splitlines():
        if line.strip():
            try:
                entries.append(json.loads(line))
            except (ValueError, RecursionError):
                entries.append(None)  # counted as unreadable
    if not entries or not any(isinstance(e, dict) for e in entries):
        raise SbomError(
            f"{path}: not a code references log (the extension's JSON export, or its "
            "code-references.jsonl)"
        )
    return entries


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _position(value: object) -> tuple[int, int] | None:
    if not isinstance(value, dict):
        return None
    line, character = _int(value.get("line")), _int(value.get("character"))
    return (line, character) if line is not None and character is not None else None


def _source(d: object) -> Source | None:
    if not isinstance(d, dict):
        return None
    text = {k: d.get(k) if isinstance(d.get(k), str) else "" for k in
            ("repository", "path", "commit", "license", "url")}  # fmt: skip
    start, end = _int(d.get("start_line")), _int(d.get("end_line"))
    if start is None or end is None or start < 1 or end < start:
        return None
    return Source(**text, start_line=start, end_line=end,
                  occurrences=_int(d.get("occurrences")) or 1, words=_int(d.get("words")) or 0)  # fmt: skip


def _file_of(entry: dict, root: Path) -> Path | None:
    """The file an entry names: its file:// URI when that file is here, else its
    workspace-relative `file` (the export's) under `root` (never outside it)."""
    uri = entry.get("uri")
    if isinstance(uri, str) and uri.lower().startswith("file:"):
        parts = urllib.parse.urlsplit(uri)
        path = Path(urllib.request.url2pathname(parts.path))
        if parts.netloc and parts.netloc.lower() != "localhost":
            path = Path(f"//{parts.netloc}{parts.path}")  # a UNC path
        if path.is_file():
            return path
    label = entry.get("file")
    if isinstance(label, str) and label and not Path(label).is_absolute():
        candidate = root / label
        inside = candidate.resolve().is_relative_to(root.resolve())
        if inside and candidate.is_file():
            return candidate
    return None


def _locate(data: FileBytes, entry: dict) -> tuple[int, int] | None:
    """Where the logged quote is in the file now: [start, end) characters, or None."""
    text = entry.get("text")
    rng = entry.get("range") if isinstance(entry.get("range"), dict) else {}
    start, end = _position(rng.get("start")), _position(rng.get("end"))
    if not isinstance(text, str) or not text.strip() or start is None or end is None:
        return None
    at_start, at_end = data.char_at(*start), data.char_at(*end)
    body = data.text
    if text.endswith("\u2026") and len(text) > MAX_TEXT_CHARS:  # kept in part: only in place
        prefix = text[:-1]
        if at_start is None or at_end is None:
            return None
        s = body.rfind(prefix, 0, at_start + len(prefix))
        return (s, at_end) if s >= 0 and s + len(prefix) <= at_end else None
    # the quote ends where the log's range ends (it may begin in the code before it)
    if at_end is not None and body[max(0, at_end - len(text)) : at_end] == text:
        return at_end - len(text), at_end
    hint = at_start if at_start is not None else 0
    found = [
        i
        for i in (body.rfind(text, 0, hint + len(text)), body.find(text, hint))
        if i >= 0
    ]  # fmt: skip
    if not found:
        return None
    s = min(found, key=lambda i: abs(i - hint))
    return s, s + len(text)


def _match(entry: dict, data: FileBytes, span: tuple[int, int]) -> Match | None:
    kind = entry.get("kind")
    length = _int(entry.get("length"))
    if kind not in KINDS or length is None or length < 1:
        return None
    sources = [s for s in map(_source, entry.get("sources") or []) if s is not None]
    count = _int(entry.get("fileCount"))
    exact = entry.get("fileCountExact")
    return Match(
        kind=kind,
        length=length,
        query_start=0,
        query_end=length,
        char_start=span[0],
        char_end=span[1],
        text=data.text[span[0] : span[1]],
        file_count=count if count is not None and count >= 0 else len(sources),
        file_count_exact=exact if isinstance(exact, bool) else False,
        sources=sources,
    )


def logged_quotes(entries: list, root: Path, decisions: str | None, kind_actions: dict):
    """(the quotes found in their files, judged; a line for each entry left out)."""
    finder = DecisionsFinder(decisions)
    quoted: dict[tuple[str, int, int], Quoted] = {}
    left_out: list[str] = []
    files: dict[Path, FileBytes | str] = {}
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            left_out.append(f"entry {n}: not a logged quote")
            continue
        where = safe(entry.get("file") or entry.get("uri") or f"entry {n}", 300)
        path = _file_of(entry, root)
        if path is None:
            left_out.append(f"{where}: no such file here (--root names where the files are)")
            continue
        if path not in files:
            try:
                files[path] = FileBytes.read(path)
            except (OSError, NotText) as e:
                files[path] = printable(getattr(e, "strerror", None) or e, 200)
        data = files[path]
        if isinstance(data, str):
            left_out.append(f"{where}: cannot read it: {data}")
            continue
        span = _locate(data, entry)
        m = _match(entry, data, span) if span is not None else None
        if m is None:
            why = "is no longer in the file" if span is None else "cannot be read"
            left_out.append(f"{where}: the logged quote (entry {n}) {why}")
            continue
        shown = display_path(path)
        if (shown, *span) in quoted:
            continue  # logged again
        try:
            _, file_decisions = finder.for_file(path)
        except DecisionsError as e:
            raise SbomError(str(e)) from None
        first, last = data.line_of(span[0]) - 1, data.line_of(span[1] - 1) - 1
        verdict = judge(
            m, QuoteIdentity.of_text(m.text), file_decisions, kind_actions.__getitem__,
            split_lines(data.text), first, last,
        )  # fmt: skip
        if verdict.action == "off" and not verdict.suppressed:
            continue  # a kind turned off (--severity), as check leaves it out
        quoted[(shown, *span)] = Quoted(shown, path, m, verdict)
    return list(quoted.values()), left_out


def run_references(args, version: str) -> int:
    from .check import CheckUsageError, parse_severities

    try:
        kind_actions = parse_severities(args.severity or [])
    except CheckUsageError as e:
        raise SbomError(str(e)) from None
    entries = read_log(args.log)
    root = Path(args.root) if args.root else Path.cwd()
    if not root.is_dir():
        raise SbomError(f"--root {safe(args.root, 300)}: no such folder")
    quoted, left_out = logged_quotes(entries, root, args.decisions, kind_actions)
    note = (
        f"From the editor's code references log: {len(entries)} logged quote(s), "
        f"{len(quoted)} found in their files as they are now."
    )
    options = SbomOptions(
        project=args.sbom_name or project_name(root),
        tool_version=version,
        namespace=pinned_namespace(args.sbom_namespace),
        notes=(note,),
        root=root,
    )
    text, more = write_sbom(quoted, args.format, options)
    sys.stdout.write(text)
    for line in left_out + more:
        print(f"left out of the SBOM: {line}", file=sys.stderr)
    print(note, file=sys.stderr)
    return 0
