"""The decisions file, quote identity, attribution and verdicts: what `check` and the editor
share."""

from __future__ import annotations

import random

import pytest

from index_tools import (
    Decisions,
    DecisionsError,
    DecisionsFile,
    Match,
    QuoteIdentity,
    Source,
    find_attribution,
    judge,
    load_decisions,
)
from index_tools.judge.decisions import parse_decisions
from index_tools.text.words import word_texts

GEO = """\
def haversine(lat1, lon1, lat2, lon2):
    # great-circle distance between two points on a sphere, in kilometres
    rlat1, rlat2 = math.radians(lat1), math.radians(lat2)
    dlat = rlat2 - rlat1
    dlon = math.radians(lon2 - lon1)
    a = math.sin(dlat / 2) ** 2 + math.cos(rlat1) * math.cos(rlat2) * math.sin(dlon / 2) ** 2
    return 6371.0 * 2 * math.asin(math.sqrt(a))
"""


def source(**kw) -> Source:
    base = dict(
        repository="acme/widgets",
        path="src/geo.py",
        commit="4f2a9c1e0b7d",
        license="MIT",
        url="https://github.com/acme/widgets/blob/4f2a9c1e0b7d/src/geo.py#L7-L15",
        start_line=7,
        end_line=15,
    )
    return Source(**{**base, **kw})


def match(kind="recitation", license="MIT", **kw) -> Match:
    return Match(
        kind=kind,
        length=len(word_texts(GEO)),
        query_start=0,
        query_end=len(word_texts(GEO)),
        char_start=0,
        char_end=len(GEO),
        text=GEO,
        file_count=3,
        file_count_exact=True,
        sources=[source(license=license, **kw)],
    )


# -- quote identity ----------------------------------------------------------------------


def test_a_piece_of_a_dismissed_quote_is_covered_and_a_longer_quote_is_not():
    words = word_texts(GEO)
    whole = QuoteIdentity.of_words(words)
    rng = random.Random(7)
    for _ in range(50):
        a = rng.randrange(0, len(words) - 20)
        b = rng.randrange(a + 20, len(words) + 1)
        assert whole.covers(QuoteIdentity.of_words(words[a:b])), (a, b)
    longer = QuoteIdentity.of_words([*words, "print", "(", "dlat", ")"])
    assert not whole.covers(longer)
    other = QuoteIdentity.of_text(GEO.replace("6371.0", "3958.8"))
    assert not whole.covers(other)
    # whitespace and line breaks are not words: reformatting keeps the identity
    assert QuoteIdentity.of_text(GEO.replace("\n", "\r\n").replace("    ", "\t")) == whole


def test_fingerprints_round_trip_and_bad_ones_are_refused():
    q = QuoteIdentity.of_text(GEO)
    assert QuoteIdentity.parse_fingerprints(q.fingerprint_text()) == q.fingerprints
    with pytest.raises(ValueError):
        QuoteIdentity.parse_fingerprints("12345678 zz")
    with pytest.raises(ValueError):
        QuoteIdentity.parse_fingerprints("123456789")


# -- the file ----------------------------------------------------------------------------


def test_dismissals_are_written_in_id_order_keeping_comments(tmp_path):
    (tmp_path / ".recitation.toml").write_text(
        '# our team\'s decisions\nversion = 1\n\n[policy]\nnetwork-copyleft = "error"  # never\n'
    )
    f = DecisionsFile(tmp_path)
    ids = []
    for i in range(4):
        q = QuoteIdentity.of_text(GEO + f"\nx = {i}\n")
        ids.append(q.id)
        f.dismiss(q, f"def haversine {i}", "acme/widgets src/geo.py", "MIT")
    text = (tmp_path / ".recitation.toml").read_text()
    assert text.startswith("# our team's decisions\n")
    assert 'network-copyleft = "error"  # never' in text
    written = [line.split('"')[1] for line in text.splitlines() if line.startswith("id = ")]
    assert written == sorted(ids)
    decisions = load_decisions(tmp_path)
    assert [d.id for d in decisions.dismissed] == sorted(ids)
    assert decisions.policy.editor == {"network-copyleft": "error"}
    decisions, found = f.undismiss(ids[2])
    assert found and ids[2] not in {d.id for d in decisions.dismissed}
    assert ids[2] not in (tmp_path / ".recitation.toml").read_text()


def test_a_new_file_explains_itself_and_allow_is_idempotent(tmp_path):
    f = DecisionsFile(tmp_path)
    f.allow("github.com/acme/*")
    f.allow("github.com/acme/*")
    assert "Commit this file" in (tmp_path / ".recitation.toml").read_text()
    assert load_decisions(tmp_path).allowed == ("github.com/acme/*",)
    decisions, found = f.disallow("github.com/acme/*")
    assert found and decisions.allowed == ()


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("version = 1\n[policy\n", 2, "line 2"),
        ('version = 1\n\n[policy]\nMIT = "loud"\n', 4, "expected one of off, hint"),
        ('[allow]\nsources = "acme/*"\n', 2, "list of strings"),
        ("version = 9\n", 1, "version 9"),
        ('[polcy]\nx = "error"\n', 1, "unknown section 'polcy'"),
        ('[[dismissed]]\nid = "a"\nfingerprints = "xyz123456"\n', 3, "not a fingerprint"),
    ],
)
def test_errors_name_the_line(text, line, words):
    with pytest.raises(DecisionsError) as e:
        parse_decisions(text, ".recitation.toml")
    assert f".recitation.toml: line {line}: " in str(e.value) and words in str(e.value)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('[allow]\nsource = ["acme/*"]\n', 2, "unknown key 'source' in [allow]"),
        ('version = 1\n[policy]\nMIT = "error"\nBSD-Nope-9 = "error"\n', 4, "nor a license id"),
        ('[policy.completions]\n"GPL-3.0-only" = "block"\nperm = "warn"\n', 3, "'perm' in"),
        ('[[dismissed]]\nid = "a"\nwhy = "ours"\n', 3, "unknown key 'why' in [[dismissed]]"),
        ('[[dismissed]]\nid = "a"\nwords = "many"\n', 3, "words must be a count"),
        ("[check]\nallow-skipped = 3\n", 2, "true, false or a list of globs"),
        ("[check]\nallow-skiped = true\n", 2, "unknown key 'allow-skiped' in [check]"),
    ],
)
def test_unknown_keys_and_policy_keys_that_are_no_license_are_errors_with_their_line(
    text, line, words
):
    with pytest.raises(DecisionsError) as e:
        parse_decisions(text, ".recitation.toml")
    assert f".recitation.toml: line {line}: " in str(e.value) and words in str(e.value)


def test_policy_keys_may_be_categories_spdx_ids_expressions_and_license_refs():
    d = parse_decisions(
        '[policy]\nweak-copyleft = "hint"\n"gpl-2.0" = "error"\n'
        '"MIT OR Apache-2.0" = "off"\n"LicenseRef-acme-internal" = "off"\n'
        '[check]\nallow-skipped = ["*.png", "assets/"]\n'
    )
    assert set(d.policy.editor) == {
        "weak-copyleft", "gpl-2.0-only", "mit or apache-2.0", "licenseref-acme-internal"
    }  # fmt: skip
    assert d.check.allows_skipping("logo.png") and d.check.allows_skipping("assets/a/b.bin")
    assert not d.check.allows_skipping("src/geo.py")


def test_a_decisions_file_of_junk_keys_is_refused_at_once_with_a_line(tmp_path):
    """3.5 MB of unknown policy keys once delayed every hover by 11-13 s."""
    import time

    junk = "[policy]\n" + "".join(f'junk-{i} = "error"\n' for i in range(200_000))
    (tmp_path / ".recitation.toml").write_text(junk)
    assert len(junk) > 3_000_000
    started = time.monotonic()
    with pytest.raises(DecisionsError) as e:
        load_decisions(tmp_path)
    assert "larger than 2 MiB" in str(e.value) and len(str(e.value).splitlines()) == 1
    assert time.monotonic() - started < 1
    # under the limit, the first junk key is the error
    (tmp_path / ".recitation.toml").write_text(junk[: junk.index("\n", 100_000) + 1])
    with pytest.raises(DecisionsError, match="line 2: 'junk-0' in"):
        load_decisions(tmp_path)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_decisions_file_that_is_no_regular_file_is_one_line(tmp_path, kind):
    import os

    path = tmp_path / ".recitation.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    with pytest.raises(DecisionsError) as e:
        load_decisions(tmp_path)
    assert "not a regular file" in str(e.value) and len(str(e.value).splitlines()) == 1
    with pytest.raises(DecisionsError):
        DecisionsFile(tmp_path).allow("acme/widgets")


@pytest.mark.skipif(__import__("os").name != "posix", reason="links")
def test_an_edit_writes_a_links_target_and_never_replaces_a_link_to_nothing(tmp_path):
    """`allow` once replaced a link to a shared decisions file by a copy of it, and a
    dangling link by a new file."""
    import os

    shared = tmp_path / "shared.toml"
    shared.write_text("# the team's decisions\nversion = 1\n")
    path = tmp_path / ".recitation.toml"
    path.symlink_to("shared.toml")
    DecisionsFile(tmp_path).allow("acme/widgets")
    assert path.is_symlink() and os.readlink(path) == "shared.toml"
    assert shared.read_text().startswith("# the team's decisions\n")
    assert load_decisions(tmp_path).allowed == ("acme/widgets",)

    path.unlink()
    path.symlink_to("missing.toml")
    with pytest.raises(DecisionsError) as e:
        DecisionsFile(tmp_path).allow("acme/widgets")
    assert str(e.value) == f"{path}: cannot write: a link to a missing file"
    assert path.is_symlink() and not (tmp_path / "missing.toml").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("opening", "closing"), [("[", "]"), ("{a = ", "}"), ("[", ""), ("a.", "a = 1"), ("[a.", "a]")]
)
def test_a_decisions_file_nested_too_deeply_is_one_line_naming_it(tmp_path, opening, closing):
    """`a = [[[[…` 100,000 deep once ended in RecursionError (in the editor, an error
    popup without file or line); a dotted key of 100,000 parts took minutes to parse."""
    import time

    path = tmp_path / ".recitation.toml"
    value = opening * 100_000 + closing * (100_000 if len(closing) == 1 else 1)
    text = "version = 1\n" + (value if opening.endswith(".") else "a = " + value) + "\n"
    path.write_text(text)
    expected = (
        f"{path}: line 2: arrays, tables or dotted keys nested too deeply to read (over 64 levels)"
    )
    started = time.monotonic()
    with pytest.raises(DecisionsError) as e:
        load_decisions(tmp_path)
    assert str(e.value) == expected
    assert time.monotonic() - started < 1
    with pytest.raises(DecisionsError) as e:
        DecisionsFile(tmp_path).allow("acme/widgets")
    assert str(e.value) == expected
    assert path.read_text() == text
    # 64 levels are read (a decisions file needs 3)
    path.write_text("version = 1\nx = " + "[" * 64 + "]" * 64 + "\n" + "a" + ".a" * 63 + " = 1\n")
    with pytest.raises(DecisionsError, match="line 2: unknown section 'x'"):
        load_decisions(tmp_path)


def test_a_byte_order_mark_is_read_and_kept(tmp_path):
    """Saved by an editor with a UTF-8 BOM: once "Empty key"."""
    path = tmp_path / ".recitation.toml"
    path.write_bytes(b'\xef\xbb\xbfversion = 1\n[policy]\nMIT = "error"\n')
    assert load_decisions(tmp_path).policy.editor == {"mit": "error"}
    DecisionsFile(tmp_path).allow("acme/widgets")
    assert path.read_bytes().startswith(b"\xef\xbb\xbfversion = 1\n")
    assert load_decisions(tmp_path).allowed == ("acme/widgets",)


@pytest.mark.skipif(__import__("os").name != "posix", reason="POSIX file modes")
def test_editing_keeps_the_files_mode(tmp_path):
    """`allowSource` once rewrote a 0644 file as 0600."""
    import os

    path = tmp_path / ".recitation.toml"
    path.write_text("version = 1\n")
    for mode in (0o644, 0o664, 0o600):
        os.chmod(path, mode)
        DecisionsFile(tmp_path).allow(f"acme/{mode:o}")
        assert os.stat(path).st_mode & 0o777 == mode
    path.unlink()
    old = os.umask(0o022)
    try:
        DecisionsFile(tmp_path).allow("acme/new")
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o777 == 0o644
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_file_with_an_error_is_not_edited(tmp_path):
    (tmp_path / ".recitation.toml").write_text("[policy\n")
    with pytest.raises(DecisionsError):
        DecisionsFile(tmp_path).allow("acme/widgets")
    assert (tmp_path / ".recitation.toml").read_text() == "[policy\n"


# -- allowed sources, attribution, verdicts ----------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "allowed"),
    [
        ("acme/widgets", True),
        ("ACME/Widgets", True),
        ("acme", True),  # a whole owner
        ("acme/wid", False),
        ("github.com/acme/*", True),
        ("https://github.com/acme/*", True),
        ("github.com/other/*", False),
        ("acme/widgets/src/**", True),
        ("acme/widgets/docs/**", False),
        ("*/geo.py", True),
    ],
)
def test_allow_patterns(pattern, allowed):
    d = Decisions(allowed=(pattern,))
    assert (d.allowed_by([source()]) == pattern) is allowed


@pytest.mark.parametrize(
    ("line", "attributed"),
    [
        (
            "# Adapted from https://github.com/acme/widgets/blob/4f2a9c1e0b7d/src/geo.py#L7-L15",
            True,
        ),
        ("# from https://github.com/acme/widgets/blob/main/src/geo.py (MIT)", True),  # any commit
        ("# SPDX-SnippetComment: Adapted from acme/widgets src/geo.py L7-L15 (MIT)", True),
        ("// taken from acme/widgets, file src/geo.py", True),
        ("# see geo.py", False),  # a file name alone
        ("# Adapted from https://github.com/acme/widgets/blob/main/src/other.py", False),
        ("# Adapted from https://github.com/other/widgets/blob/main/src/geo.py", False),
    ],
)
def test_attribution_names_a_source(line, attributed):
    lines = ["import math", "", line, *GEO.splitlines()]
    found = find_attribution(lines, 3, 3 + GEO.count("\n") - 1, [source()])
    assert (found is not None) is attributed
    if attributed:
        assert found.line == 2


def test_attribution_is_looked_for_near_the_quote_only():
    far = ["# Adapted from https://github.com/acme/widgets/blob/x/src/geo.py", *[""] * 7]
    lines = [*far, *GEO.splitlines()]
    assert find_attribution(lines, len(far), len(lines) - 1, [source()]) is None
    lines = [*far[1:], *GEO.splitlines(), "# end of the code from acme/widgets src/geo.py"]
    found = find_attribution(lines, 7, 7 + GEO.count("\n") - 1, [source()])
    assert found is not None and found.line == len(lines) - 1  # the line right after


def severity(kind: str) -> str:
    return {"recitation": "warning"}.get(kind, "hint")


def test_verdict_order_dismissed_allowed_attributed_policy_kind():
    m = match(license="AGPL-3.0-only")
    q = QuoteIdentity.of_text(GEO)
    lines = GEO.splitlines()
    policy = parse_decisions(
        '[policy]\nnetwork-copyleft = "error"\n"AGPL-3.0-only" = "information"\n'
    )
    assert judge(m, q, None, severity, lines, 0, 6).action == "warning"
    v = judge(m, q, policy, severity, lines, 0, 6)
    assert (v.action, v.category) == ("information", "network-copyleft")  # the id beats
    policy = parse_decisions('[policy]\nnetwork-copyleft = "error"\n')
    v = judge(m, q, policy, severity, lines, 0, 6)
    assert (v.action, v.reason) == ("error", "license policy for network-copyleft: error")
    attributed = ["# Adapted from https://github.com/acme/widgets/blob/x/src/geo.py", *lines]
    v = judge(m, q, policy, severity, attributed, 1, 7)
    assert (v.action, v.state, v.suppressed) == ("hint", "attributed", True)
    allowed = Decisions(allowed=("acme/*",), policy=policy.policy)
    assert judge(m, q, allowed, severity, attributed, 1, 7).state == "allowed"
    # a boring kind keeps its own severity whatever the policy says
    assert (
        judge(match(kind="license", license="AGPL-3.0-only"), q, policy, severity).action == "hint"
    )
