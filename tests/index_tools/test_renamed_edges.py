"""A renamed copy's edges end where the copy ends: pasted between the user's own
definitions, its quote neither starts on the `}` that closes the user's previous function
nor ends on the `def`, `function` or `fn` that opens the next one (the source has a `}`
and a definition there too, and in the rename-insensitive view any name equals any
name). Python, JavaScript and Rust; the underline and `show` take in no line of the
user's own."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from index_tools import BuildOptions, build_index, open_index, tokenize

pytestmark = pytest.mark.usefixtures("search_path")  # both search paths

PY = """import os


def pick_mirror(address, table, fallback=None):
    table = table or {}
    parts = address.split("://", 1)
    scheme = parts[0] if len(parts) == 2 else "http"
    host = parts[-1].split("/", 1)[0]
    keys = [scheme + "://" + host, scheme, "all://" + host, "all"]
    chosen = fallback
    for key in keys:
        if key in table:
            chosen = table[key]
            break
    return chosen


def mirror_names(table):
    return sorted(table)
"""
JS = """function clampAll(values, low, high) {
  return values.map((v) => Math.min(high, Math.max(low, v)));
}

function groupByLength(words, minimum) {
  const groups = new Map();
  for (const word of words) {
    if (word.length < minimum) {
      continue;
    }
    const key = word.length;
    if (!groups.has(key)) {
      groups.set(key, []);
    }
    groups.get(key).push(word.toLowerCase());
  }
  return Array.from(groups.entries()).sort((a, b) => a[0] - b[0]);
}

function longest(words) {
  return words.reduce((a, b) => (b.length > a.length ? b : a), "");
}
"""
RS = """pub fn clamp_all(values: &mut Vec<i64>, low: i64, high: i64) {
    for v in values.iter_mut() {
        *v = (*v).max(low).min(high);
    }
}

pub fn group_by_length(words: &[String], minimum: usize) -> Vec<(usize, Vec<String>)> {
    let mut groups: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
    for word in words {
        if word.len() < minimum {
            continue;
        }
        groups.entry(word.len()).or_default().push(word.to_lowercase());
    }
    groups.into_iter().collect()
}

pub fn longest(words: &[String]) -> usize {
    words.iter().map(|w| w.len()).max().unwrap_or(0)
}
"""


def block(text: str, start: str, stop: str) -> str:
    a = text.index(start)
    return text[a : text.index(stop, a)].rstrip() + "\n"


def renamed(text: str, names: dict[str, str]) -> str:
    return re.sub(r"\b\w+\b", lambda m: names.get(m.group(), m.group()), text)


# language: (file name, the indexed file, the function pasted, its renames, the user's file
# around it: its previous definition and its next one)
CASES = {
    "python": (
        "mirrors.py",
        PY,
        block(PY, "def pick_mirror", "\n\ndef mirror_names"),
        {"table": "routes", "parts": "pieces", "chosen": "found", "keys": "order"},
        (
            "import sys\n\n\ndef helper(x):\n    return x + 1\n\n\n",
            "\n\ndef main(argv):\n    print(pick_mirror(argv[1], {}))\n",
        ),
    ),  # fmt: skip
    "javascript": (
        "words.js",
        JS,
        block(JS, "function groupByLength", "\nfunction longest"),
        {"groups": "buckets", "word": "w", "key": "size", "minimum": "atLeast"},
        (
            "function first(xs) {\n  return xs[0];\n}\n",
            "\nfunction main(argv) {\n  return first(argv);\n}\n",
        ),
    ),  # fmt: skip
    "rust": (
        "words.rs",
        RS,
        block(RS, "pub fn group_by_length", "\npub fn longest"),
        {"groups": "buckets", "word": "w", "minimum": "at_least"},
        (
            "pub fn first(xs: &[i64]) -> i64 {\n    xs[0]\n}\n",
            '\npub fn main() {\n    println!("{}", first(&[1]));\n}\n',
        ),
    ),  # fmt: skip
}


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("edges")
    (root / "src").mkdir()
    for name, source, *_ in CASES.values():
        (root / "src" / name).write_text(source, encoding="utf-8")
    build_index([str(root / "src")], root / "idx", BuildOptions(jobs=1, progress=False))
    return root / "idx"


def user_file(language: str) -> tuple[str, str]:
    _, _, function, names, (before, after) = CASES[language]
    pasted = renamed(function, names)
    return before + pasted + after, pasted


@pytest.mark.parametrize("language", list(CASES))
def test_a_renamed_copy_stops_at_the_copys_own_first_and_last_words(index_dir, language):
    file, pasted = user_file(language)
    with open_index(index_dir) as idx:
        (m,) = idx.match(file, min_tokens=40, language=language)
    assert m.exact is False
    assert sorted(m.renamed) == sorted(CASES[language][3].items())  # none of the user's own
    body = pasted.strip()
    assert m.text == body  # not the `}` before it, not the `def`/`function`/`fn` after it
    start = file.index(body)
    assert m.char_start == start and m.char_end == start + len(body)
    last_line = file[: start + len(body)].count("\n")
    assert (m.range.start.line, m.range.end.line) == (file[:start].count("\n"), last_line)
    assert m.length == len(tokenize(body))
    # its source lines are the function's, not the next definition's first line
    name, source, function, *_ = CASES[language]
    first = source[: source.index(function)].count("\n") + 1
    (src,) = m.sources
    assert (src.path, src.start_line, src.end_line) == (
        name,
        first,
        first + function.count("\n") - 1,
    )


def test_show_marks_the_copy_and_no_line_of_the_users(index_dir, tmp_path):
    file, pasted = user_file("python")
    path = tmp_path / "app.py"
    path.write_text(file, encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "index_tools.cli", "show", str(index_dir), str(path),
         "--color", "never", "--min-tokens", "40"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    marked = [line for line in r.stdout.splitlines() if line.startswith(">")]
    function = CASES["python"][2]
    assert len(marked) == function.count("\n")
    assert "return chosen" in marked[-1]
