"""The source beside the quote: a source file's lines around what a match quotes, and where
the common words lie on both sides.

What the editor's "Compare with source", the `recitation/source` request, the index
service's `/v1/source` and `recitation-index show` all show. Given a source as a match names
it (repository, path, commit, its lines) and the quoted text, the stored document is found
by its origin (`source_texts`: the one call into the index), and both texts are cut into the
engine's words (`text.words`) and aligned here, on their own: maximal common runs of words
(exact, or rename-insensitive through `text.normalize` for a renamed copy), the best chain
of them in order on both sides. No matcher internals are used, so the view stays right
whatever engine found the match, and when the index changed generation in between.

Offsets here are Python string offsets; `to_dict` gives LSP-style ranges (0-based line,
UTF-16 character) relative to the text they are in, as the model's ranges are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Position, Range
from ..safe_text import printable
from ..text.normalize import canonical, normalize_words, supported
from ..text.words import WORD_RE, LineIndex, Word, tokenize
from .source_texts import SourceText, source_texts

SEED = 8  # words of a common run's seed; shorter runs are not shown as common
MAX_POSITIONS = 64  # places of one seed in the source looked at (repetitive text)
MAX_RUNS = 600  # common runs chained (the longest; chaining is quadratic in them)
MAX_QUOTE_WORDS = 50_000  # a longer quote is aligned on its first words only
MAX_SEARCH_CHARS = 2_000_000  # past this, only the lines around the reported ones are searched
SEARCH_PAD_LINES = 40  # lines searched around the reported ones before the whole file
MAX_CONTEXT_LINES = 200
MAX_WINDOW_LINES = 5_000  # lines of source sent at most (the rest: `truncated`)
MAX_WINDOW_CHARS = 1 << 20

OK = "ok"
REMOVED = "removed"


@dataclass(frozen=True)
class SourceRef:
    """A source as a request names it: its origin (as the match's `Source` shows it), the
    lines the match reported, and the generation the match came from (when known)."""

    repository: str
    path: str
    commit: str = ""
    start_line: int = 0  # 1-based; 0: unknown
    end_line: int = 0
    generation: str | None = None


@dataclass(frozen=True)
class CommonRun:
    """Words [quote, quote + length) of the quote are words [source, source + length) of
    the source (equal, or equal but for renamed identifiers)."""

    quote: int
    source: int
    length: int


@dataclass
class Mark:
    start: int  # offsets in the text the mark is in
    end: int
    kind: str  # "same": the same words; "renamed": a name renamed in the copy


@dataclass
class Alignment:
    runs: list[CommonRun]
    exact: bool
    quote_marks: list[Mark]  # offsets in the quote
    source_marks: list[Mark]  # offsets in the source text
    renamed: list[tuple[str, str]]  # (source name, name in the quote), first seen first

    @property
    def words(self) -> int:
        return sum(r.length for r in self.runs)


# --- aligning two word sequences --------------------------------------------------------------


def common_runs(quote: list[str], source: list[str], lo: int = 0, hi: int | None = None):
    """Maximal runs of at least SEED equal words between `quote` and `source[lo:hi]`."""
    hi = len(source) if hi is None else hi
    k = min(SEED, len(quote))
    if k == 0 or hi - lo < k:
        return []
    seeds: dict[tuple[str, ...], list[int]] = {}
    for j in range(lo, hi - k + 1):
        places = seeds.setdefault(tuple(source[j : j + k]), [])
        if len(places) < MAX_POSITIONS:
            places.append(j)
    runs: list[CommonRun] = []
    reach: dict[int, int] = {}  # diagonal -> quote word up to which it is already covered
    for i in range(len(quote) - k + 1):
        for j in seeds.get(tuple(quote[i : i + k]), ()):
            d = j - i
            if reach.get(d, -1) > i:
                continue
            a, b = i, j
            while a > 0 and b > lo and quote[a - 1] == source[b - 1]:
                a, b = a - 1, b - 1
            e = i + k
            while e < len(quote) and e + d < hi and quote[e] == source[e + d]:
                e += 1
            reach[d] = e
            runs.append(CommonRun(a, b, e - a))
    return runs


def best_chain(runs: list[CommonRun]) -> list[CommonRun]:
    """The runs in order on both sides, not overlapping, covering the most words."""
    if not runs:
        return []
    runs = sorted(set(runs), key=lambda r: -r.length)[:MAX_RUNS]
    runs.sort(key=lambda r: (r.quote, r.source))
    best = [r.length for r in runs]
    back = [-1] * len(runs)
    for i, r in enumerate(runs):
        for j in range(i):
            p = runs[j]
            before = p.quote + p.length <= r.quote and p.source + p.length <= r.source
            if before and best[j] + r.length > best[i]:
                best[i], back[i] = best[j] + r.length, j
    i = max(range(len(runs)), key=lambda n: (best[n], -n))
    chain = []
    while i >= 0:
        chain.append(runs[i])
        i = back[i]
    return chain[::-1]


def _marks(words: list[Word], spans: list[tuple[int, int, str]]) -> list[Mark]:
    """Word spans [a, b) of one kind each -> character marks, adjacent ones of a kind joined."""
    out: list[Mark] = []
    for a, b, kind in spans:
        if a >= b:
            continue
        start, end = words[a].start, words[b - 1].end
        if out and out[-1].kind == kind and out[-1].end == start:
            out[-1].end = end
        else:
            out.append(Mark(start, end, kind))
    return out


def _join(marks: list[Mark], text: str) -> list[Mark]:
    """Marks of one kind separated by whitespace only become one."""
    out: list[Mark] = []
    for m in marks:
        if out and out[-1].kind == m.kind and not text[out[-1].end : m.start].strip():
            out[-1].end = m.end
        else:
            out.append(Mark(m.start, m.end, m.kind))
    return out


def align(
    quote: str,
    source: str,
    language: str | None = None,
    exact: bool = True,
    near_lines: tuple[int, int] | None = None,
) -> Alignment:
    """Where the words of `quote` lie in `source`: the best chain of common runs, searched
    first around `near_lines` (1-based, the lines the match reported), then in the whole
    source. In a language whose identifiers are known, the rename-insensitive views are
    aligned too when the exact words leave part of the quote out, and win when they cover
    more of it (never for an exact copy: nothing is left to cover); names that differ are
    then marked renamed. `exact=False` (the match says renamed copy) tries
    the rename-insensitive views first."""
    qw = tokenize(quote)[:MAX_QUOTE_WORDS]
    lang = canonical(language)
    if lang is None or not supported(lang):
        lang = None
    chain, sw = _chain(qw, source, near_lines, None) if exact or lang is None else ([], [])
    if lang is not None and _covered(chain) < len(qw):
        renamed_chain, renamed_words = _chain(qw, source, near_lines, lang)
        if _covered(renamed_chain) > _covered(chain):
            chain, sw = renamed_chain, renamed_words
    q_spans: list[tuple[int, int, str]] = []
    s_spans: list[tuple[int, int, str]] = []
    renamed: dict[tuple[str, str], None] = {}
    for r in chain:
        i = 0
        while i < r.length:
            same = qw[r.quote + i].text == sw[r.source + i].text
            j = i + 1
            while j < r.length and (qw[r.quote + j].text == sw[r.source + j].text) == same:
                j += 1
            kind = "same" if same else "renamed"
            q_spans.append((r.quote + i, r.quote + j, kind))
            s_spans.append((r.source + i, r.source + j, kind))
            if not same:
                for n in range(i, j):
                    renamed[(sw[r.source + n].text, qw[r.quote + n].text)] = None
            i = j
    return Alignment(
        runs=chain,
        exact=not renamed,
        quote_marks=_join(_marks(qw, q_spans), quote),
        source_marks=_join(_marks(sw, s_spans), source),
        renamed=list(renamed),
    )


def _chain(
    qw: list[Word], source: str, near_lines: tuple[int, int] | None, language: str | None
) -> tuple[list[CommonRun], list[Word]]:
    """The best chain of common runs of the quote's words in the source (and the source's
    words it indexes), on the exact words or, with a `language`, the rename-insensitive
    ones: the lines around `near_lines` first, the whole source when they lack words."""

    def seen(words: list[Word]) -> list[str]:
        texts = [w.text for w in words]
        return (normalize_words(texts, language) or texts) if language else texts

    qt = seen(qw)
    sw: list[Word] = []
    chain: list[CommonRun] = []
    if near_lines and near_lines[0] > 0:
        a, b = _chars_near(source, near_lines)
        sw = [Word(m.group(), m.start(), m.end()) for m in WORD_RE.finditer(source, a, b)]
        chain = best_chain(common_runs(qt, seen(sw)))
    if _covered(chain) < len(qt) and len(source) <= MAX_SEARCH_CHARS:
        every = tokenize(source)
        whole = best_chain(common_runs(qt, seen(every)))
        if _covered(whole) > _covered(chain):
            chain, sw = whole, every
    return chain, sw


def _covered(chain: list[CommonRun]) -> int:
    return sum(r.length for r in chain)


def _chars_near(text: str, lines: tuple[int, int]) -> tuple[int, int]:
    """The character span of the lines around `lines` (1-based, as the engine counts them:
    `\\n`), padded by SEARCH_PAD_LINES or the span's own length."""
    first, last = lines[0], max(lines)
    pad = max(SEARCH_PAD_LINES, last - first + 1)
    want_a, want_b = max(first - 1 - pad, 0), last + pad  # line breaks before the span's ends
    a, at, n = 0, -1, 0
    while n < want_b:
        at = text.find("\n", at + 1)
        if at < 0:
            return a, len(text)
        n += 1
        if n == want_a:
            a = at + 1
    return a, at + 1


# --- the view ---------------------------------------------------------------------------------


@dataclass
class SourceView:
    """A source's lines around a quote, for one request."""

    status: str  # OK, or REMOVED: no document with this origin in the current generation
    ref: SourceRef
    generation: str = ""  # the generation that answered
    message: str = ""  # what the client should say (removed; generation changed; not aligned)
    repository: str = ""
    path: str = ""
    commit: str = ""
    license: str = ""
    url: str = ""
    language: str = ""
    occurrences: int = 1
    text: str = ""  # the source's lines first_line.. (whole lines)
    first_line: int = 1  # 1-based line of `text`'s first line in the source file
    line_count: int = 0  # lines of the whole source file
    start_line: int = 0  # 1-based lines of the quoted part in the source file
    end_line: int = 0
    quoted: tuple[int, int] = (0, 0)  # offsets of the quoted part in `text`
    marks: list[Mark] = field(default_factory=list)  # in `text`
    quote_marks: list[Mark] = field(default_factory=list)  # in the quote sent
    aligned_words: int = 0  # words of the quote found in the source
    quote_words: int = 0
    exact: bool = True
    renamed: list[tuple[str, str]] = field(default_factory=list)
    truncated: bool = False  # the window was cut at MAX_WINDOW_LINES / MAX_WINDOW_CHARS

    @property
    def generation_changed(self) -> bool:
        return bool(self.ref.generation) and self.ref.generation != self.generation

    @property
    def title(self) -> str:
        """`acme/widgets src/geo.py L17–L38 · MIT` (printable)."""
        lines = (
            f"L{self.start_line}"
            if self.start_line == self.end_line
            else f"L{self.start_line}\u2013L{self.end_line}"
        )
        where = " ".join(p for p in (self.repository, self.path) if p) or "indexed file"
        return f"{where} {lines} \u00b7 {self.license or 'NOASSERTION'}"

    def to_dict(self, quote: str | None = None) -> dict:
        """JSON: ranges in `text` (and, given the quote, in it) as LSP counts them."""
        out: dict = {
            "status": self.status,
            "message": self.message,
            "generation": self.generation,
            "requested_generation": (
                printable(self.ref.generation, MAX_GENERATION_CHARS)
                if self.ref.generation
                else None
            ),
            "generation_changed": self.generation_changed,
            # what the request named, as printable as what the index holds
            "repository": self.repository or printable(self.ref.repository),
            "path": self.path or printable(self.ref.path),
            "commit": self.commit or printable(self.ref.commit, 80),
        }
        if self.status != OK:
            return out
        index = LineIndex(self.text)
        out.update(
            {
                "license": self.license,
                "url": self.url,
                "language": self.language,
                "occurrences": self.occurrences,
                "title": self.title,
                "text": self.text,
                "first_line": self.first_line,
                "line_count": self.line_count,
                "start_line": self.start_line,
                "end_line": self.end_line,
                "quoted": _range(index, *self.quoted).to_dict(),
                "marks": [_mark_dict(index, m) for m in self.marks],
                "aligned_words": self.aligned_words,
                "quote_words": self.quote_words,
                "exact": self.exact,
                "renamed": [{"from": a, "to": b} for a, b in self.renamed],
                "truncated": self.truncated,
            }
        )
        if quote is not None:
            qi = LineIndex(quote)
            out["quote_marks"] = [_mark_dict(qi, m) for m in self.quote_marks]
        return out

    @classmethod
    def from_dict(cls, d: object, request: SourceRequest) -> SourceView:
        """A view read back from JSON (an index service's answer to `request`): checked,
        its metadata made printable again; ValueError when it is not a view."""
        if not isinstance(d, dict) or d.get("status") not in (OK, REMOVED):
            raise ValueError("not a source view")

        def text(key: str, limit: int = 300) -> str:
            value = d.get(key)
            return printable(value, limit) if isinstance(value, str) else ""

        def number(key: str, default: int = 0) -> int:
            value = d.get(key)
            return value if type(value) is int and value >= 0 else default

        view = cls(
            status=d["status"],
            ref=request.ref,
            generation=text("generation", MAX_GENERATION_CHARS),
            message=text("message", 1000),
            repository=text("repository"),
            path=text("path"),
            commit=text("commit", 80),
        )
        if view.status != OK:
            return view
        body = d.get("text")
        if not isinstance(body, str):
            raise ValueError("a source view without its text")
        url = d.get("url")
        view.license = text("license", 120)
        view.url = url if isinstance(url, str) and url == printable(url, 4000) else ""
        view.language = text("language", 40)
        view.occurrences = max(number("occurrences", 1), 1)
        view.text = body
        view.first_line = max(number("first_line", 1), 1)
        view.line_count = number("line_count")
        view.start_line = number("start_line")
        view.end_line = max(number("end_line"), view.start_line)
        quoted = d.get("quoted")
        if isinstance(quoted, dict) and "start" in quoted and "end" in quoted:
            a, b = offset_of(body, quoted["start"]), offset_of(body, quoted["end"])
            view.quoted = (a, max(a, b))
        view.marks = marks_from_dicts(body, d.get("marks"))
        view.quote_marks = marks_from_dicts(request.quote, d.get("quote_marks"))
        view.aligned_words = number("aligned_words")
        view.quote_words = number("quote_words")
        view.exact = d.get("exact") is not False
        renamed = d.get("renamed")
        view.renamed = [
            (printable(r.get("from"), 120), printable(r.get("to"), 120))
            for r in (renamed if isinstance(renamed, list) else [])
            if isinstance(r, dict)
        ]
        view.truncated = d.get("truncated") is True
        return view


def _range(index: LineIndex, start: int, end: int) -> Range:
    return Range(Position(*index.position(start)), Position(*index.position(end)))


def _mark_dict(index: LineIndex, m: Mark) -> dict:
    return {"range": _range(index, m.start, m.end).to_dict(), "kind": m.kind}


class _Offsets:
    """LSP positions (UTF-16 characters) -> string offsets in one text, clamped to it."""

    def __init__(self, text: str):
        self.text = text
        self.starts = LineIndex(text).line_starts

    def __call__(self, position: object) -> int:
        if not isinstance(position, dict):
            raise ValueError("not a position")
        line, units = position.get("line"), position.get("character")
        if type(line) is not int or type(units) is not int:
            raise ValueError("not a position")
        text, starts = self.text, self.starts
        line = min(max(line, 0), len(starts) - 1)
        i = starts[line]
        end = starts[line + 1] if line + 1 < len(starts) else len(text)
        while end > i and text[end - 1] in "\r\n":
            end -= 1
        while i < end and units > 0:
            units -= 2 if ord(text[i]) > 0xFFFF else 1
            i += 1
        return i


def offset_of(text: str, position: object) -> int:
    """The string offset of an LSP position (UTF-16 character) in `text`, clamped to it;
    ValueError when it is not a position."""
    return _Offsets(text)(position)


def marks_from_dicts(text: str, marks: object) -> list[Mark]:
    """Marks read back from JSON (ranges in `text`), malformed ones left out."""
    out: list[Mark] = []
    at = _Offsets(text)
    for m in marks if isinstance(marks, list) else []:
        try:
            a, b = at(m["range"]["start"]), at(m["range"]["end"])
        except (KeyError, TypeError, ValueError):
            continue
        if a < b:
            out.append(Mark(a, b, "renamed" if m.get("kind") == "renamed" else "same"))
    return out


def _line_starts(text: str) -> list[int]:
    """Offsets where the source's lines begin, as the engine numbers them (`\\n`)."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _line_of(starts: list[int], offset: int) -> int:
    """1-based line of an offset."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def view_of(
    found: SourceText,
    ref: SourceRef,
    quote: str,
    language: str | None = None,
    exact: bool = True,
    context_lines: int = 3,
) -> SourceView:
    """The view of one stored document: the quote aligned in it, the lines around it."""
    text = found.text
    starts = _line_starts(text)
    lang = found.language or canonical(language) or ""
    near = (ref.start_line, ref.end_line or ref.start_line) if ref.start_line > 0 else None
    al = align(quote, text, lang or language, exact, near)
    if al.runs:
        qs = al.source_marks[0].start
        qe = al.source_marks[-1].end
        start_line, end_line = _line_of(starts, qs), _line_of(starts, max(qs, qe - 1))
    else:  # not found in it: the lines the match reported
        n = len(starts)
        start_line = min(max(ref.start_line, 1), n)
        end_line = min(max(ref.end_line, start_line), n)
        qs, qe = starts[start_line - 1], _line_end(text, starts, end_line)
    context_lines = min(max(context_lines, 0), MAX_CONTEXT_LINES)
    first_line = max(start_line - context_lines, 1)
    last_line = min(end_line + context_lines, len(starts))
    truncated = False
    if last_line - first_line + 1 > MAX_WINDOW_LINES:
        last_line, truncated = first_line + MAX_WINDOW_LINES - 1, True
    w0 = starts[first_line - 1]
    w1 = _line_end(text, starts, last_line)
    if w1 - w0 > MAX_WINDOW_CHARS:
        cut = text.rfind("\n", w0, w0 + MAX_WINDOW_CHARS)
        w1, truncated = (cut + 1 if cut > w0 else w0 + MAX_WINDOW_CHARS), True
    window = text[w0:w1]
    marks = [Mark(m.start - w0, m.end - w0, m.kind) for m in al.source_marks if m.start >= w0]
    marks = [Mark(m.start, min(m.end, len(window)), m.kind) for m in marks if m.start < len(window)]
    quote_words = min(len(tokenize(quote)), MAX_QUOTE_WORDS)
    o = found.origin
    view = SourceView(
        status=OK,
        ref=ref,
        generation=found.generation,
        repository=printable(o.repository),
        path=printable(o.path),
        commit=printable(o.commit, 80),
        license=printable(o.license, 120),
        url=o.url(start_line, end_line),
        language=lang,
        occurrences=found.occurrences,
        text=window,
        first_line=first_line,
        line_count=len(starts),
        start_line=start_line,
        end_line=end_line,
        quoted=(max(qs - w0, 0), min(max(qe - w0, 0), len(window))),
        marks=marks,
        quote_marks=al.quote_marks,
        aligned_words=al.words,
        quote_words=quote_words,
        exact=al.exact,
        renamed=[(printable(a, 120), printable(b, 120)) for a, b in al.renamed],
        truncated=truncated,
    )
    view.message = _message(view)
    return view


def _line_end(text: str, starts: list[int], line: int) -> int:
    """Offset just past 1-based `line` (its line break included)."""
    return starts[line] if line < len(starts) else len(text)


def _message(view: SourceView) -> str:
    said = []
    if view.generation_changed:
        said.append(
            "The index changed since this quote was found; this is the file as the current "
            "index holds it."
        )
    if view.quote_words and not view.aligned_words:
        said.append(
            "The quoted words are not in this file as the index holds it now; showing the "
            "lines the match reported."
        )
    elif view.aligned_words < view.quote_words:
        said.append(
            f"{view.aligned_words:,} of the {view.quote_words:,} words of the quote are in it."
        )
    return " ".join(said)


def removed(ref: SourceRef, generation: str) -> SourceView:
    where = " ".join(printable(p) for p in (ref.repository, ref.path) if p) or "the source"
    changed = bool(ref.generation) and ref.generation != generation
    return SourceView(
        status=REMOVED,
        ref=ref,
        generation=generation,
        message=(
            f"{where} is no longer in the index"
            + (" (it was rebuilt since this quote was found)" if changed else "")
            + "."
        ),
    )


MAX_NAME_CHARS = 4_000  # of a repository, path or commit in a request
MAX_GENERATION_CHARS = 200


def _too_long(name: str, value: str, limit: int) -> str:
    return f"`{name}` is too long: {len(value):,} characters, at most {limit:,}"


@dataclass(frozen=True)
class SourceRequest:
    """What a client asks for: a source of a match, the quoted text, how to align them.

    Its JSON (the index service's `/v1/source`, the CLI's `show --json` input):
    `{"source": {"repository", "path", "commit", "start_line", "end_line", ...}, "quote",
    "generation"?, "language"?, "exact"?, "context_lines"?}`; `source` is a source as a
    match lists it (other fields are ignored)."""

    ref: SourceRef
    quote: str
    language: str | None = None
    exact: bool = True
    context_lines: int = 3

    def to_dict(self) -> dict:
        r = self.ref
        return {
            "source": {
                "repository": r.repository,
                "path": r.path,
                "commit": r.commit,
                "start_line": r.start_line,
                "end_line": r.end_line,
            },
            "generation": r.generation,
            "quote": self.quote,
            "language": self.language,
            "exact": self.exact,
            "context_lines": self.context_lines,
        }

    @classmethod
    def from_dict(cls, raw: object) -> SourceRequest:
        """The request, checked: ValueError names the first field that is wrong."""
        if not isinstance(raw, dict):
            raise ValueError("the request must be a JSON object")
        src = raw.get("source")
        if not isinstance(src, dict):
            raise ValueError("`source` must be an object (a source as a match lists it)")
        names = {}
        for key in ("repository", "path", "commit"):
            value = src.get(key, "")
            if value is None:
                value = ""
            if not isinstance(value, str):
                raise ValueError(f"`source.{key}` must be a string")
            if len(value) > MAX_NAME_CHARS:
                raise ValueError(_too_long(f"source.{key}", value, MAX_NAME_CHARS))
            names[key] = value
        if not names["repository"] and not names["path"]:
            raise ValueError("`source` needs a repository or a path")
        lines = []
        for key in ("start_line", "end_line"):
            value = src.get(key, 0)
            if value is None:
                value = 0
            if type(value) is not int or value < 0:
                raise ValueError(f"`source.{key}` must be a whole number >= 0")
            lines.append(value)
        generation = raw.get("generation")
        if generation is not None and not isinstance(generation, str):
            raise ValueError("`generation` must be a short string or null")
        if generation is not None and len(generation) > MAX_GENERATION_CHARS:
            raise ValueError(_too_long("generation", generation, MAX_GENERATION_CHARS))
        quote = raw.get("quote", "")
        if not isinstance(quote, str):
            raise ValueError("`quote` must be a string")
        language = raw.get("language")
        if language is not None and (not isinstance(language, str) or len(language) > 40):
            raise ValueError("`language` must be a short string or null")
        exact = raw.get("exact", True)
        if not isinstance(exact, bool):
            raise ValueError("`exact` must be true or false")
        context = raw.get("context_lines", 3)
        if type(context) is not int or not 0 <= context <= MAX_CONTEXT_LINES:
            raise ValueError(f"`context_lines` must be 0..{MAX_CONTEXT_LINES}")
        ref = SourceRef(
            names["repository"], names["path"], names["commit"], lines[0], lines[1],
            generation or None,
        )  # fmt: skip
        return cls(ref, quote, language or None, exact, context)


def source_view(index, request: SourceRequest) -> SourceView:
    """The view of a source in `index`'s generation: its lines around the quote, the
    common words marked on both sides (`exact=False`: a renamed copy, renamed names
    marked). Of documents sharing the origin (a dataset listing a path twice), the one
    the quote is in; REMOVED when none is left in this generation."""
    ref = request.ref
    candidates = source_texts(index, ref.repository, ref.path, ref.commit)
    if not candidates:
        return removed(ref, index.generation)
    views = [
        view_of(c, ref, request.quote, request.language, request.exact, request.context_lines)
        for c in candidates
    ]
    return max(views, key=lambda v: (v.aligned_words, -abs(v.start_line - ref.start_line)))
