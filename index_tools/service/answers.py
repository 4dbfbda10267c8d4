"""An index service's answer checked before it is used: each match of /v1/match has the
shape `Match.to_dict` gives (the fields `Match.from_dict` reads, of their types), or the
whole answer is malformed. A malformed answer is an error, never read as fewer matches."""

from __future__ import annotations

MAX_INT = 1 << 63


class Malformed(ValueError):
    """The answer is not what a service sends."""


def _int(d: dict, key: str, required: bool = False, least: int = 0) -> None:
    if key not in d:
        if required:
            raise Malformed(f"no {key}")
        return
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int) or not least <= v < MAX_INT:
        raise Malformed(f"{key} is not a count")


def _of(d: dict, key: str, kind: type, required: bool = False) -> None:
    if key not in d:
        if required:
            raise Malformed(f"no {key}")
    elif not isinstance(d[key], kind):
        raise Malformed(f"{key} is not a {kind.__name__}")


def _list_of(d: dict, key: str, check) -> None:
    v = d.get(key, [])
    if not isinstance(v, list):
        raise Malformed(f"{key} is not a list")
    for item in v:
        check(item)


def _source(s) -> None:
    if not isinstance(s, dict):
        raise Malformed("a source is not an object")
    for key in ("repository", "path", "commit", "license", "url"):
        _of(s, key, str, required=True)
    for key in ("start_line", "end_line"):
        _int(s, key, required=True)
    for key in ("occurrences", "words"):
        _int(s, key)


def _range(r) -> None:
    if r is None:
        return
    if not isinstance(r, dict):
        raise Malformed("range is not an object")
    for end in ("start", "end"):
        p = r.get(end)
        if not isinstance(p, dict):
            raise Malformed(f"range without its {end}")
        _int(p, "line", required=True)
        _int(p, "character", required=True)


def _renamed(r) -> None:
    if not isinstance(r, dict) or not isinstance(r.get("from"), str):
        raise Malformed("a renamed name is not a pair of texts")
    if not isinstance(r.get("to"), str):
        raise Malformed("a renamed name is not a pair of texts")


def _span(d) -> None:
    """What a match and a part share."""
    if not isinstance(d, dict):
        raise Malformed("a match is not an object")
    _of(d, "kind", str, required=True)
    _int(d, "length", required=True)
    _int(d, "file_count", required=True)
    _of(d, "file_count_exact", bool, required=True)
    for key in ("query_start", "query_end", "suggestion_words"):
        _int(d, key)
    if d.get("query_start", 0) > d.get("query_end", 0):
        raise Malformed("a span ends before it starts")
    _of(d, "exact", bool)
    _range(d.get("range"))
    _list_of(d, "sources", _source)
    _list_of(d, "renamed", _renamed)


def _match(d) -> None:
    _span(d)
    for key in ("char_start", "char_end"):
        _int(d, key)
    for key in ("primary_start", "primary_end"):
        _int(d, key, least=-1)
    _of(d, "text", str)
    _list_of(d, "parts", _span)


def match_dicts(answer) -> list[dict]:
    """The matches of a /v1/match answer (a JSON object), each checked; `Malformed` if the
    answer or any match in it is not of the shape a service sends."""
    matches = answer.get("matches") if isinstance(answer, dict) else None
    if not isinstance(matches, list):
        raise Malformed("an answer without matches")
    for m in matches:
        _match(m)
    return matches


def summary_dict(answer) -> dict:
    """A /v1/stats answer (a JSON object), checked: the counts an index's summary holds
    (`Index.summary`), of their types; `Malformed` otherwise. Fields a service of an older
    version may lack are checked when present."""
    if not isinstance(answer, dict):
        raise Malformed("a summary is not an object")
    _of(answer, "name", str, required=True)
    for key in ("format_version", "shards", "documents", "files", "words", "vocabulary", "bytes"):
        _int(answer, key, required=True)
    _int(answer, "renamed_stride")
    _int(answer, "max_request_bytes")
    _of(answer, "search", str)
    per_word = answer.get("bytes_per_word")
    if per_word is not None and (
        isinstance(per_word, bool) or not isinstance(per_word, int | float)
    ):
        raise Malformed("bytes_per_word is not a number")
    for key in ("shard_words", "shard_id_bytes"):
        _list_of(answer, key, lambda v, key=key: _int({key: v}, key))
    skipped = answer.get("skipped", {})
    if not isinstance(skipped, dict):
        raise Malformed("skipped is not an object")
    for n in skipped.values():
        _int({"skipped": n}, "skipped")
    _list_of(answer, "sources", _record)
    return answer


def _record(r) -> None:
    if not isinstance(r, dict):
        raise Malformed("a source record is not an object")
