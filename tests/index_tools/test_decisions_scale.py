"""Decisions files of any allowed size cost the same per check (issue #37: 150,000 allowed
sources made every check 0.5 s): allowed sources and dismissals are found through an index
that answers as reading the lists in order would, and a file is parsed once per text."""

from __future__ import annotations

import fnmatch
import os
import random

import pytest

from index_tools import Source
from index_tools.judge import decisions as decisions_module
from index_tools.judge.decisions import (
    Decisions,
    Dismissal,
    load_decisions,
    parse_decisions,
)
from index_tools.judge.quote_identity import QuoteIdentity


def reference_allowed_by(patterns, sources) -> str | None:
    """The rule as written: for each source in turn, the first pattern naming one of its
    names (a glob: the whole name; else the name or one of its leading folders)."""

    def matches(pattern: str, name: str) -> bool:
        p = pattern.strip().strip("/").lower()
        if "://" in p:
            p = p.split("://", 1)[1]
        if not p:
            return False
        if any(c in p for c in "*?["):
            return fnmatch.fnmatchcase(name, p)
        return name == p or name.startswith(p + "/")

    for source in sources:
        names = decisions_module.source_names(source)
        for pattern in patterns:
            if any(matches(pattern, name) for name in names):
                return pattern
    return None


def source(repository: str, path: str = "", url: str = "") -> Source:
    return Source(
        repository=repository, path=path, commit="", license="MIT", url=url,
        start_line=1, end_line=2,
    )  # fmt: skip


WORDS = ["acme", "Acme", "widgets", "w", "src", "lib", "x.py", "gh", "a.b", "github.com"]


def random_pattern(rng: random.Random) -> str:
    parts = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
    pattern = "/".join(parts)
    roll = rng.random()
    if roll < 0.15:
        pattern += "/*"
    elif roll < 0.25:
        pattern += "/**"
    elif roll < 0.3:
        pattern = pattern[:2] + "*" + pattern[2:]
    elif roll < 0.35:
        pattern = "*" + pattern[-3:]
    elif roll < 0.4:
        pattern = pattern.replace("w", "?", 1)
    elif roll < 0.45:
        pattern = pattern.replace("a", "[ab]", 1)
    elif roll < 0.5:
        pattern = "https://" + pattern
    elif roll < 0.55:
        pattern = "/" + pattern + "/ "
    elif roll < 0.57:
        pattern = rng.choice(["", " ", "/", "https://"])
    elif roll < 0.6:
        pattern = pattern + "[unclosed"
    return pattern


def random_source(rng: random.Random) -> Source:
    repo = "/".join(rng.choice(WORDS) for _ in range(rng.randint(0, 2)))
    path = "/".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3)))
    host = rng.choice(["github.com", "gh", "a.b"])
    url = rng.choice(["", f"https://{host}/{repo}/blob/v1/{path}#L3", f"http://{host}/{repo}"])
    return source(repo, path, url)


@pytest.mark.parametrize("seed", range(20))
def test_allowed_sources_are_found_as_reading_the_list_in_order(seed):
    rng = random.Random(seed)
    patterns = tuple(random_pattern(rng) for _ in range(rng.randint(0, 60)))
    decisions = Decisions(allowed=patterns)
    for _ in range(200):
        sources = [random_source(rng) for _ in range(rng.randint(0, 3))]
        assert decisions.allowed_by(sources) == reference_allowed_by(patterns, sources)


def identity(rng: random.Random, pool: list[int]) -> QuoteIdentity:
    prints = frozenset(rng.sample(pool, rng.randint(0, 6)))
    return QuoteIdentity(f"{rng.randrange(40):016x}", rng.randint(60, 90), prints)


@pytest.mark.parametrize("seed", range(20))
def test_dismissals_are_found_as_reading_the_list_in_order(seed):
    rng = random.Random(seed)
    pool = list(range(12))
    dismissed = tuple(Dismissal(identity(rng, pool)) for _ in range(rng.randint(0, 40)))
    decisions = Decisions(dismissed=dismissed)
    for _ in range(200):
        quote = identity(rng, pool)
        expected = next((d for d in dismissed if d.identity.covers(quote)), None)
        assert decisions.dismissal_for(quote) is expected


def big_allow_list(n: int = 150_000) -> str:
    lines = ["version = 1", "", "[allow]", "sources = ["]
    for i in range(n):
        if i % 50 == 0:
            lines.append(f'"gh.io/o{i:x}/*",')
        elif i % 50 == 1:
            lines.append(f'"o{i:x}/s/**",')
        else:
            lines.append(f'"o{i:x}/r",')
    return "\n".join([*lines, "]", ""])


def test_a_list_of_150000_allowed_sources_answers_as_a_short_one(tmp_path):
    text = big_allow_list()
    assert 1 << 20 < len(text.encode()) < decisions_module.MAX_BYTES
    decisions = parse_decisions(text)
    last = f"o{149_998:x}"
    assert decisions.allowed_by([source(last, "r/x.py")]) == f"{last}/r"
    url = f"https://gh.io/o{149_950:x}/x/y.py#L1"
    assert decisions.allowed_by([source("other", "y.py", url)]) == f"gh.io/o{149_950:x}/*"
    assert decisions.allowed_by([source(f"o{149_951:x}", "s/deep/z.py")]) == f"o{149_951:x}/s/**"
    assert decisions.allowed_by([source("acme/widgets", "src/x.py")]) is None
    # each source is compared with the patterns under its own leading folders only
    compared = []
    real = fnmatch.fnmatchcase

    def counting(name, pattern):
        compared.append(pattern)
        return real(name, pattern)

    decisions_module.fnmatch.fnmatchcase = counting
    try:
        decisions.allowed_by([source("acme/widgets", "src/x.py", "https://gh.io/acme/x")])
    finally:
        decisions_module.fnmatch.fnmatchcase = real
    assert len(compared) < 5


def test_a_decisions_file_is_parsed_once_per_text(tmp_path, monkeypatch):
    parsed = []
    real = decisions_module.parse_decisions

    def counting(text, where=decisions_module.FILE_NAME):
        parsed.append(where)
        return real(text, where)

    monkeypatch.setattr(decisions_module, "parse_decisions", counting)
    path = tmp_path / ".recitation.toml"
    path.write_text(big_allow_list(20_000))
    first = load_decisions(tmp_path)
    for _ in range(5):  # as every check of a folder asks for it
        assert load_decisions(tmp_path) is first
    os.utime(path, (1, 1))  # touched, the same text: not parsed again
    assert load_decisions(tmp_path) is first
    assert len(parsed) == 1
    # a change of the same size, with the time put back: parsed again
    stat = path.stat()
    path.write_text(path.read_text().replace('"o2/r"', '"o2/q"'))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    changed = load_decisions(tmp_path)
    assert len(parsed) == 2
    assert changed.allowed_by([source("o2", "q")]) == "o2/q"
    assert first.allowed_by([source("o2", "q")]) is None
    # a file with an error is said each time, never kept
    path.write_text("version = 1\n[allow]\nsources = 5\n")
    for _ in range(2):
        with pytest.raises(decisions_module.DecisionsError, match="line 3"):
            load_decisions(tmp_path)
