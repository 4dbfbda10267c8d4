"""`recitation-index show`: a source's lines with the quoted part marked, in the terminal.

Reads what `query` reads (a suggestion on stdin or in a file, `--context-file`), or the JSON
that `query --json` printed, picks a match and one of its sources, and prints the source's lines
around the quote from the index (local or an index service: the same request as the
editor's "Compare with source"). On a terminal the common words are coloured (renamed names
in another colour); otherwise the quoted lines are marked with `>`. The source's text is
untrusted: control and bidi characters are shown as `<U+XXXX>`, never sent to the terminal.

Exit status: 0 shown, 1 nothing to show (no match, or the source is no longer in the index),
2 bad usage or a missing index.
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata

from ..match.source_view import OK, SourceRequest, SourceView, source_view
from ..model import query_report
from ..safe_text import printable
from .output import json_text

BOLD_GREEN = "\x1b[1;32m"
BOLD_YELLOW = "\x1b[1;33m"
DIM = "\x1b[2m"
RESET = "\x1b[0m"


def add_show_parser(sub, func) -> None:
    """The `show` subcommand, run by `func(args)` (commands.py opens the index)."""
    s = sub.add_parser(
        "show",
        help="print a source's lines beside a quote read from a file or stdin",
        description="Read a suggestion from FILE or stdin (or the JSON `query --json` "
        "printed), pick a match and one of its sources, and print the source's lines around "
        "the quote with the quoted part marked: coloured on a terminal, `>` before each "
        "quoted line otherwise. The language (renamed copies) is --language, else FILE's or "
        "--context-file's extension, else the one that finds the most quoted words. Exit "
        "status 1 when there is nothing to show.",
    )
    s.add_argument("index", nargs="?", metavar="DIR", help="default: the default index")
    s.add_argument("file", nargs="?", metavar="FILE", help="the code to look up (default: stdin)")
    # not `index_opt`, which `main` puts in place of the first positional: that may be FILE
    s.add_argument("--index", dest="show_index", metavar="DIR", help="(the same as DIR)")
    s.add_argument("--match", type=int, default=1, metavar="N", help="which match (1)")
    s.add_argument("--source", type=int, default=1, metavar="N", help="which of its sources (1)")
    s.add_argument("--part", type=int, metavar="N", help="a source of the match's Nth part")
    s.add_argument(
        "--context-lines", type=int, default=3, metavar="N", help="lines around the quote (3)"
    )
    s.add_argument("--context-file", metavar="F", help="code written before the suggestion")
    s.add_argument("--min-tokens", type=int, default=60, help="shortest span reported (60)")
    s.add_argument(
        "--language",
        metavar="LANG",
        help="as for query; default: FILE's or --context-file's extension, else the language "
        "whose renamed copies quote the most words",
    )
    s.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="(auto: a terminal)"
    )
    s.add_argument("--json", action="store_true", help="print the view as the service's JSON")
    s.add_argument("--token-file", metavar="F", help="as for query")
    s.set_defaults(func=func)


def code_path(args) -> str | None:
    """The file of code to look up, when one is named (else stdin); `args.index` left the
    index's: `show DIR FILE`, `show --index DIR FILE`, and `show FILE` with the default
    index (a file is never an index, which is a folder)."""
    if args.show_index:
        if args.index and not args.file:
            args.file = args.index
        args.index = args.show_index
    elif args.index and not args.file and os.path.isfile(args.index):
        args.index, args.file = None, args.index
    return args.file


def _languages(idx) -> list[str]:
    """The languages of the index's rename-insensitive view (every supported one for an
    index service, which says none)."""
    from ..text.normalize import GRAMMARS, supported

    header = getattr(idx, "header", None)
    names = getattr(header, "renamed_languages", None)
    if not isinstance(names, list):
        names = sorted(GRAMMARS)
    return [lang for lang in names if supported(lang)]


def _report(stdin: str, context: str, args, idx) -> dict:
    """The query report: read as given (`query --json`), or made by querying the index.

    The language is `--language`, else the file's (FILE, else `--context-file`), else the
    one whose answer quotes the most words (none first: exact matching alone when no
    renamed copy adds any), so that `--match 1` is the renamed copy when it is the longer
    quote, as `check` reports the file."""
    stripped = stdin.lstrip()
    if stripped.startswith("{"):
        try:
            report = json.loads(stripped)
        except ValueError:
            report = None
        if isinstance(report, dict) and isinstance(report.get("matches"), list):
            return report
    from ..build.sources.languages import language_for_path

    named = args.file or args.context_file
    language = args.language or (language_for_path(named) if named else None)

    def ask(lang):
        return idx.match(stdin, context, min_tokens=args.min_tokens, language=lang)

    matches = ask(language)
    if not language:
        best = sum(m.length for m in matches)
        for lang in _languages(idx):
            answer = ask(lang)
            words = sum(m.length for m in answer)
            if words > best:
                language, matches, best = lang, answer, words
    args.language = language
    return query_report(stdin, context, matches)


class NotAReport(ValueError):
    """JSON on stdin shaped like a query report whose matches cannot be read."""


def _objects(value, where: str) -> list[dict]:
    """`value` as a list of JSON objects (absent: none), or NotAReport naming `where`."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
        raise NotAReport(
            f"the query report on stdin cannot be read: {where} is not a list of objects"
        )
    return value


def _pick(report: dict, args) -> tuple[dict, dict, bool] | str:
    """(match, source, exact), or what is missing; NotAReport when the report's matches,
    parts or sources are not lists of objects."""
    matches = _objects(report["matches"], "`matches`")
    if not matches:
        return "no quoted span to show"
    if not 1 <= args.match <= len(matches):
        return f"there {_are(len(matches), 'match')}; --match {args.match} is none of them"
    m = matches[args.match - 1]
    where = f"match {args.match}"
    span, exact = m, m.get("exact", True) is not False
    if args.part is not None:
        parts = _objects(m.get("parts"), f"`parts` of {where}")
        if not 1 <= args.part <= len(parts):
            return f"match {args.match} has {_n(len(parts), 'part')}; --part {args.part} is none"
        span = parts[args.part - 1]
        where = f"part {args.part} of {where}"
        exact = span.get("exact", True) is not False
    sources = _objects(span.get("sources"), f"`sources` of {where}")
    if not 1 <= args.source <= len(sources):
        return f"that span has {_n(len(sources), 'source')}; --source {args.source} is none of them"
    return m, sources[args.source - 1], exact


def _n(count: int, noun: str) -> str:
    """`1 match`, `3 matches`, `2 parts`."""
    plural = noun + ("es" if noun.endswith(("ch", "s", "x")) else "s")
    return f"{count} {noun if count == 1 else plural}"


def _are(count: int, noun: str) -> str:
    """`is 1 match`, `are 3 matches`."""
    return f"{'is' if count == 1 else 'are'} {_n(count, noun)}"


def show_view(args, idx, stdin: str, context: str) -> int:
    """Pick the match and source `args` name, ask `idx` (an `Index` or a `RemoteIndex`) for
    the source's lines, and print them (see the module's docstring for the exit status)."""
    from ..service.remote import RemoteIndex

    report = _report(stdin, context, args, idx)
    try:
        picked = _pick(report, args)
    except NotAReport as exc:
        print(f"recitation-index: {exc}", file=sys.stderr)
        return 2
    if isinstance(picked, str):
        print(f"recitation-index: {picked}", file=sys.stderr)
        return 1
    match, src, exact = picked
    quote = match.get("text") if isinstance(match.get("text"), str) else ""
    try:
        request = SourceRequest.from_dict(
            {
                "source": src,
                "quote": quote,
                "language": args.language,
                "exact": exact,
                "context_lines": args.context_lines,
            }
        )
    except ValueError as exc:
        print(f"recitation-index: the match's source cannot be asked for: {exc}", file=sys.stderr)
        return 2
    remote = isinstance(idx, RemoteIndex)
    view = idx.source_view(request) if remote else source_view(idx, request)
    if args.json:
        print(json_text(view.to_dict(quote)))
        return 0 if view.status == OK else 1
    if view.status != OK:
        print(f"recitation-index: {printable(view.message, 1000)}", file=sys.stderr)
        return 1
    print(render(view, _colour(args.color)))
    return 0


def _colour(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    return (
        sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    )


def terminal_safe(text: str) -> str:
    """`text` with every control, format (bidi), separator or unassigned character shown as
    `<U+XXXX>` (tabs kept): nothing the terminal would act on."""
    if text.isascii() and text.isprintable():
        return text
    out = []
    for ch in text:
        if ch == "\t" or (ch.isprintable() and unicodedata.category(ch) not in ("Cf", "Cs", "Cn")):
            out.append(ch)
        else:
            out.append(f"<U+{ord(ch):04X}>")
    return "".join(out)


def render(view: SourceView, colour: bool) -> str:
    """The header (what, where, license), a note when there is one, then the lines."""
    head = printable(view.title, 1000)
    if view.commit:  # a package's origin holds its version (pypi:name==1.0, npm:name@1.0)
        package = view.repository.startswith(("pypi:", "npm:"))
        head += (
            f" \u00b7 {'version' if package else 'commit'} {view.commit[: 40 if package else 12]}"
        )
    lines_out = [f"{BOLD_GREEN}{head}{RESET}" if colour else head]
    if view.url:
        lines_out.append(view.url)
    if view.message:
        lines_out.append(printable(view.message, 1000))
    if view.renamed:
        shown = ", ".join(f"{a} \u2192 {b}" for a, b in view.renamed)
        lines_out.append(f"renamed copy: {printable(shown, 2000)}")
    text = view.text
    width = len(str(view.first_line + text.count("\n")))
    q0, q1 = view.quoted
    offset = 0
    marks = sorted(view.marks, key=lambda m: m.start)
    for n, line in enumerate(text.splitlines(keepends=True)):
        body = line.rstrip("\r\n")
        a, b = offset, offset + len(body)
        offset += len(line)
        quoted = a < q1 and b >= q0 and (q0 < b or not body)
        number = str(view.first_line + n).rjust(width)
        if colour:
            lines_out.append(f"{DIM}{number} \u2502{RESET} {_coloured(body, a, marks)}")
        else:
            lines_out.append(f"{'>' if quoted else ' '} {number} | {terminal_safe(body)}")
    if view.truncated:
        lines_out.append("(cut: the quote is longer than what is shown)")
    return "\n".join(lines_out)


def _coloured(body: str, start: int, marks) -> str:
    """One line with the marked words coloured (same: green, renamed: yellow)."""
    out, at = [], 0
    end = start + len(body)
    for m in marks:
        if m.end <= start or m.start >= end:
            continue
        a, b = max(m.start, start) - start, min(m.end, end) - start
        out.append(terminal_safe(body[at:a]))
        colour = BOLD_YELLOW if m.kind == "renamed" else BOLD_GREEN
        out.append(f"{colour}{terminal_safe(body[a:b])}{RESET}")
        at = b
    out.append(terminal_safe(body[at:]))
    return "".join(out)
