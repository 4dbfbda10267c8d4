"""Kinds of quotes on real text, through the real builder and matcher, and the licenses a
source shows: a file's own beats its repository's."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from index_tools import (
    KIND_LABELS,
    KINDS,
    BuildOptions,
    build_index,
    describe_kind,
    license_category,
    open_index,
)

SNIPPETS = Path(__file__).resolve().parents[3] / "shared" / "data" / "matched_snippets.csv"

# The opening of Sphinx's quickstart conf.py template (short excerpt), as generated projects
# carry it.
SPHINX_CONF = """# -*- coding: utf-8 -*-
#
# Configuration file for the Sphinx documentation builder.
#
# This file does only contain a selection of the most common options. For a
# full list see the documentation:
# http://www.sphinx-doc.org/en/master/config

# -- Path setup --------------------------------------------------------------

# If extensions (or modules to document with autodoc) are in another directory,
# add these directories to sys.path here. If the directory is relative to the
# documentation root, use os.path.abspath to make it absolute, like shown here.
#
# import os
# import sys
# sys.path.insert(0, os.path.abspath('.'))
"""


def note_snippets() -> dict[str, str]:
    if not SNIPPETS.exists():
        pytest.skip(f"the seed data set is not beside the checkout ({SNIPPETS})")
    with open(SNIPPETS, encoding="utf-8", newline="") as f:
        return {r["matching_part_of_suggestion"][:60]: r["matching_part_of_suggestion"]
                for r in csv.DictReader(f, delimiter=";")}  # fmt: skip


def pick(snippets: dict[str, str], start: str) -> str:
    return next(t for k, t in snippets.items() if k.startswith(start))


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    s = note_snippets()
    texts = {
        "mit": pick(s, "Permission is hereby granted"),
        "bsd": pick(s, "# Copyright (C) 2010 Google Inc."),
        "apache": pick(s, "#    Unless required by applicable law"),
        "motion": pick(s, ", cv2.COLOR_BGR2GRAY)"),
        "quicksort": pick(s, "(arr):\n    if len(arr) <= 1:\n        return arr\n    pivot"),
        "primes": pick(s, "= [2, 3, 5, 7, 11"),
        "regex": pick(s, "\\s+\\d+\\s+"),
        "sphinx": SPHINX_CONF,
        "euclid": pick(s, "x, y, u, v = 0, 1, 1, 0"),
        "forward": pick(s, ")       \n    def forward(self, x):"),
        "argparse": pick(s, "parser = argparse.ArgumentParser(description='PyTo"),
        "insertion": pick(s, "for i in range(1, len(array)):\n        key = array[i]"),
    }
    tmp = tmp_path_factory.mktemp("kinds")
    corpus = tmp / "corpus.jsonl"
    with open(corpus, "w", encoding="utf-8") as f:
        for name, text in texts.items():
            copies = 200 if name == "motion" else 3  # widely copied: still a recitation
            for i in range(copies):
                f.write(json.dumps({"content": text, "repository": f"r/{name}",
                                    "path": f"f{i}.py"}) + "\n")  # fmt: skip
    build_index([str(corpus)], tmp / "index", BuildOptions(jobs=1, progress=False))
    with open_index(tmp / "index") as idx:
        yield idx, texts


def kind(idx, text: str) -> str:
    ms = idx.match(text, min_tokens=50)
    assert ms, "the indexed text is found"
    return max(ms, key=lambda m: m.length).kind


@pytest.mark.parametrize("name", ["euclid", "forward", "argparse"])
def test_plain_authored_code_is_a_recitation(real, name):
    """A tuple-assignment algorithm, a tutorial's network, a script's options: no comment,
    no prose, still somebody's particular code."""
    idx, texts = real
    assert kind(idx, texts[name]) == "recitation"


def test_textbook_algorithm_is_an_idiom(real):
    idx, texts = real
    assert kind(idx, texts["insertion"]) == "idiom"


@pytest.mark.parametrize("name", ["mit", "bsd", "apache"])
def test_license_texts_are_license(real, name):
    idx, texts = real
    assert kind(idx, texts[name]) == "license"


def test_sphinx_template_is_an_idiom(real):
    idx, texts = real
    assert kind(idx, texts["sphinx"]) == "idiom"


def test_real_recitation_stays_one_however_many_files(real):
    idx, texts = real
    (m,) = idx.match(texts["motion"])
    assert m.kind == "recitation"
    assert m.file_count == 200  # shown on the match, not turned into a kind


def test_idiom_inventory_repetitive(real):
    idx, texts = real
    assert kind(idx, texts["quicksort"]) == "idiom"
    assert kind(idx, texts["primes"]) == "inventory"
    assert kind(idx, texts["regex"]) == "repetitive"


def test_every_kind_has_a_description():
    assert set(KIND_LABELS) == set(KINDS)
    assert describe_kind("license") == "a license text"
    assert "inventory" in describe_kind("inventory")


@pytest.mark.parametrize(
    "expr, category",
    [
        ("MIT", "permissive"),
        ("Apache-2.0", "permissive"),
        ("LGPL-2.1", "weak-copyleft"),
        ("LGPL-2.1-or-later", "weak-copyleft"),
        ("MPL-2.0", "weak-copyleft"),
        ("GPL-3.0", "strong-copyleft"),
        ("GPL-2.0-or-later", "strong-copyleft"),
        ("AGPL-3.0", "network-copyleft"),
        ("AGPL-3.0-only", "network-copyleft"),
        ("MIT OR GPL-3.0", "permissive"),
        ("MIT AND GPL-3.0", "strong-copyleft"),
        ("GPL-2.0-only WITH Classpath-exception-2.0", "weak-copyleft"),
        ("SSPL-1.0", "network-copyleft"),
        ("LicenseRef-scancode-commercial-license", "restricted"),
        ("NOASSERTION", "unknown"),
        ("not-a-license", "unknown"),
        ("", "unknown"),
    ],
)
def test_license_categories(expr, category):
    assert license_category(expr) == category


def test_file_spdx_line_beats_the_repository_license(tmp_path):
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "LICENSE").write_text(
        "MIT License\n\nPermission is hereby granted, free of charge, to any person "
        "obtaining a copy of this software...\n"
    )
    body = "".join(f"def f{i}(a, b):\n    return a * {i} + b - {i}\n\n" for i in range(40))
    (repo / "own.py").write_text("# SPDX-License-Identifier: GPL-2.0+\n" + body)
    out = tmp_path / "index"
    build_index([str(repo)], out, BuildOptions(jobs=1, progress=False))
    r = subprocess.run(
        [sys.executable, "-m", "index_tools.cli", "query", str(out), "--json"],
        input=body, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    out_json = json.loads(r.stdout)
    matches = out_json["matches"] if isinstance(out_json, dict) else out_json
    licenses = {s["license"] for m in matches for s in m["sources"]}
    assert licenses == {"GPL-2.0-or-later"}


# Synthetic spans for the classifier alone: each differs from an idiom by one sign.
PLAIN = """def merge(a, b):
    out = []
    while a and b:
        out.append(a.pop(0) if a[0] < b[0] else b.pop(0))
    return out + a + b
"""


def test_vocabulary_holds_keywords_builtins_and_stdlib_names():
    from index_tools.text.vocabulary import is_common_name

    for name in ("while", "fn", "len", "append", "defaultdict", "Turtle", "self"):
        assert is_common_name(name), name
    assert not is_common_name("subscription_key")


@pytest.mark.parametrize(
    "extra",
    [
        "    q, r, t = r, t, q + r\n",  # a state tuple updated together
        "    # smaller head first\n",  # a short explanatory comment
        "    total = subscription_key + image_url\n",  # the author's own variable names
        "    self.conv1 = self.conv2 = self.fc1 = None\n",  # the author's own members
        "    print('merged lists', 'no duplicates')\n",  # messages in words
    ],
)
def test_one_sign_of_authorship_makes_a_recitation(extra):
    from index_tools import tokenize
    from index_tools.text.kinds import classify

    def kind_of(text: str) -> str:
        return classify([w.text for w in tokenize(text)], text)

    assert kind_of(PLAIN) == "idiom"
    authored = PLAIN.replace("    return", extra + "    return")
    assert kind_of(authored) == "recitation"


def test_status_table_with_wrapped_rows_is_an_inventory():
    from index_tools import tokenize
    from index_tools.text.kinds import classify

    rows = """    RED = 100, 'Red', 'The colour of blood'
    GREEN = (101, 'Green',
        'Grass and leaves in summer')
    BLUE = 102, 'Blue', 'A clear sky at noon'
    YELLOW = 103, 'Yellow'
    ORANGE = (104, 'Orange',
        'Named after a fruit, later a colour')
    PURPLE = 105, 'Purple', 'Dye made from sea snails'
    BROWN = 106, 'Brown', 'Earth, wood and coffee'
    BLACK = (107, 'Black',
        'Absence of visible light')
"""
    assert classify([w.text for w in tokenize(rows)], rows) == "inventory"


def test_a_span_starting_inside_a_docstring_reads_its_code_as_code():
    from index_tools.text.span_features import segments

    text = 'sorted array\n    """\n    for i in range(n):\n        pass\n'
    kinds = [k for k, _ in segments(text)]
    assert kinds[0] == "string" and "code" in kinds


def test_template_runs_are_made_of_the_shipped_template_words():
    """`is_template` hashes only runs made of the templates' words: every run the data
    holds must be made of them, or a template would go unseen."""
    from index_tools.text.templates import _reference, is_template, run_hashes
    from index_tools.text.words import WORD_RE

    ref, known = _reference()
    assert len(ref) > 1000 and len(known) > 100
    words = WORD_RE.findall(SPHINX_CONF)
    hashes = run_hashes(words).tolist()
    found = [i for i, h in enumerate(hashes) if h in ref]
    assert len(found) > len(hashes) / 2
    assert all(set(words[i : i + 12]) <= known for i in found)
    assert is_template(words, 0.5)
    # a word no template has, every fourth word: no run is a template's
    changed = [w if i % 4 else "frobnicate_widget" for i, w in enumerate(words)]
    assert not is_template(changed, 0.5)


def test_a_lookups_template_check_answers_as_the_rule_for_every_span(monkeypatch):
    """`is_template` and a lookup's `QueryTemplates` (each run hashed once for all its
    spans) answer as the rule read plainly: at least `share` of a span's runs of 12 words
    (a run of one word repeated, a separator line, left out) are made of the templates'
    words and hashed among theirs. Spans of a query mixing a template, code, a separator
    line and non-ASCII words, asked in any order and at several shares; spans mostly a
    separator line of a word no template has, then a template (its runs left out, the
    template is most of what is left), and code the sampled words show short of a template
    (`_too_few`) and those they cannot."""
    import random

    from index_tools.text.templates import (
        TEMPLATE_K,
        QueryTemplates,
        _reference,
        is_template,
        run_hashes,
    )  # fmt: skip
    from index_tools.text.words import WORD_RE

    code = pick(note_snippets(), "for i in range(1, len(array)):\n        key = array[i]")
    separator = "# " + "-" * 70 + "\n"  # a run of one word: no template's, whoever has it
    tildes = "# " + "~" * 70 + "\n"  # (a word none of the templates has)
    half = len(SPHINX_CONF) // 2
    text = (
        SPHINX_CONF + code + "\n# é ünïcode\n" + separator + SPHINX_CONF[:half] + tildes
        + SPHINX_CONF[half:]
    )  # fmt: skip
    words = WORD_RE.findall(text)
    ref, known = _reference()
    hashes = run_hashes(words).tolist()
    template = [h in ref and set(words[i : i + TEMPLATE_K]) <= known for i, h in enumerate(hashes)]
    one_word = [len(set(words[i : i + TEMPLATE_K])) == 1 for i in range(len(hashes))]

    def rule(a: int, b: int, share: float) -> bool:
        runs = [i for i in range(a, b - TEMPLATE_K + 1) if not one_word[i]]
        return len(runs) > 0 and sum(template[i] for i in runs) >= share * len(runs)

    rng = random.Random(3)
    checks = QueryTemplates(words)
    answers = []
    # spans around the separator line: mostly it, then code and the template
    around = []
    for line in ("-", "~"):
        at = next(i for i in range(len(words)) if words[i : i + 30] == [line] * 30)
        ends = [min(len(words), at + rng.randrange(60, 160)) for _ in range(300)]
        around += [(at - rng.randrange(20), b) for b in ends]
    sampled = QueryTemplates._too_few
    short = []  # the spans the sampled words said short of a template

    def too_few(self, start: int, end: int, share: float) -> bool:
        short.append(sampled(self, start, end, share))
        return short[-1]

    monkeypatch.setattr(QueryTemplates, "_too_few", too_few)
    for k in range(1800):
        a = rng.randrange(len(words))
        b = rng.randrange(a, len(words) + 1)
        if k < len(around):
            a, b = around[k]
        share = rng.choice([0.0, 0.3, 0.5, 0.9])
        answers.append(rule(a, b, share))
        assert checks.is_template(a, b, share) == answers[-1], (a, b, share)
        assert is_template(words[a:b], share) == answers[-1], (a, b, share)
    assert 100 < sum(answers) < len(answers) - 100  # templates and not, both asked
    assert 100 < sum(short) < len(short) - 100  # said by the sampled words, and not


def test_rows_join_open_brackets_whatever_the_characters():
    """Logical rows from bracket depth, strings and comments left out, with characters
    of any width and a lone surrogate (text from an editor can hold one)."""
    from index_tools.text.kinds import _rows

    text = "x = ('é(', [  # (\n  1, '\ud800'])\ny = {'😀': 2}\nz = [\n3\n]\n"
    assert list(_rows(text)) == [  # each row, and the lines after it
        ("x = ('é(', [  # (   1, '\ud800'])", 4),
        ("y = {'😀': 2}", 3),
        ("z = [ 3 ]", 0),
    ]


ROW_LINES = ["A = 1, 'a'", "B = 2, 'b'", "C = (3,", "  'c')", "print(x)", "# note", "", "]",
             "f(1.0, -1.0)", "if x:", "    y = [1, 2]", '"""', "z = {1: 'q'}"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ROW_LINES), max_size=24))
def test_a_table_is_decided_as_by_all_its_rows(lines):
    """`is_table` stops reading rows once 70% of one shape is out of reach: the same answer
    as the rule applied to every row."""
    from index_tools.text.kinds import _row_shape, _rows, is_table

    text = "\n".join(lines)
    shapes = [_row_shape(row) for row, _ in _rows(text)]
    shaped = [x for x in shapes if x]
    counts = {x: shaped.count(x) for x in shaped}  # in order of first appearance
    top = max(counts, key=counts.get) if counts else ""
    whole = len(shaped) >= 6 and counts[top] / len(shaped) >= 0.7 and any(c in top for c in ",=:")
    assert is_table(text) == whole


def test_every_legal_phrase_holds_a_key_that_lets_it_be_read():
    """`is_license` reads the phrases only in text holding one of the keys."""
    from index_tools.text.legal import LEGAL_KEYS, LEGAL_PHRASES, NOTICE_PHRASES

    for phrase in LEGAL_PHRASES + NOTICE_PHRASES:
        assert any(k in phrase for k in LEGAL_KEYS), phrase
