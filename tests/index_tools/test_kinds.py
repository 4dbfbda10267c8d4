"""Kinds of quotes on real text, through the real builder and matcher, and the licenses a
source shows: a file's own beats its repository's."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

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
