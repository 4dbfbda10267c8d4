"""A kind describes a span as a whole, at every length: code cut from real files (the
standard library, the project's own dependencies) is a recitation from 60 to 50,000 words;
a generated table is repetitive at every length; the texts of the most used SPDX licenses
are licenses alone and as a code file's header, while a module copied with its license
header is code. Each on the compiled checks and on the Python ones."""

from __future__ import annotations

import re
import sysconfig
from pathlib import Path

import pytest
from kinds_cases import MOST_USED_LICENSES, TABLE_SHAPES, generated_table, license_text

from index_tools.match import kernel
from index_tools.text.kinds import classify
from index_tools.text.legal import OTHER_SHARE, is_license, is_license_text, paragraphs
from index_tools.text.words import tokenize

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SITE = Path(sysconfig.get_paths()["purelib"])
LENGTHS = [60, 100, 150, 400, 1_000, 3_000, 10_000, 30_000, 50_000]
# the largest modules of the standard library and of packages the project depends on
CODE_FILES = [
    STDLIB / "_pydecimal.py",  # 52,000 words
    STDLIB / "turtle.py",
    STDLIB / "pydoc.py",
    STDLIB / "typing.py",
    STDLIB / "inspect.py",
    STDLIB / "tarfile.py",
    STDLIB / "argparse.py",
    STDLIB / "difflib.py",
    STDLIB / "datetime.py",
    SITE / "numpy" / "ma" / "core.py",  # 69,000 words
    SITE / "numpy" / "lib" / "_function_base_impl.py",
    SITE / "lsprotocol" / "types.py",  # 97,000 words, generated from the LSP's model
    SITE / "pygls" / "protocol" / "json_rpc.py",
    SITE / "hypothesis" / "core.py",
]


@pytest.fixture(params=["native", "python"])
def checks(request):
    """The kind of a span as the matcher asks for it, on one search path."""
    if request.param == "native" and not kernel.available():
        pytest.fail(f"the native search did not load: {kernel.status()}")

    def kind(text: str) -> str:
        words = [w.text for w in tokenize(text)]
        license, repetitive = kernel.word_checks(words)
        return classify(words, text, table=kernel.text_is_table, license=license,
                        repetitive=repetitive)  # fmt: skip

    with kernel.using(request.param):
        yield kind


def growing_spans(path: Path, kind, starts: int = 6) -> list[tuple[int, str]]:
    """(length, text) of spans of every length up to the file's end, from the first line of
    a few of the file's top-level definitions spread over it: those whose first 60 words
    are a recitation already (a definition of 60 words can be an idiom: plain code)."""
    text = path.read_text(encoding="utf-8")
    words = tokenize(text)
    at = {w.start: i for i, w in enumerate(words)}
    defs = [at[m.start()] for m in re.finditer(r"^(?:async def|def|class) ", text, re.M)]

    def cut(first: int, n: int) -> str:
        return text[words[first].start : words[first + n - 1].end]

    authored = [d for d in defs if d + LENGTHS[0] <= len(words) and kind(cut(d, LENGTHS[0]))
                == "recitation"]  # fmt: skip
    return [
        (n, cut(first, n))
        for first in authored[:: max(1, len(authored) // starts)][:starts]
        for n in LENGTHS
        if first + n <= len(words)
    ]


def test_code_cut_from_real_files_is_a_recitation_at_every_length(checks):
    """Spans from a definition on: a recitation at 60 words stays one to 50,000 (a share of
    distinct words fell below a bound near 4,000 words: "repetitive")."""
    seen: dict[int, int] = {}
    wrong = []
    for path in CODE_FILES:
        for n, text in growing_spans(path, checks):
            seen[n] = seen.get(n, 0) + 1
            kind = checks(text)
            if kind != "recitation":
                wrong.append((path.name, n, kind, text[:60]))
    assert wrong == []
    assert set(seen) == set(LENGTHS), seen  # every length cut, 50,000 words included
    assert min(seen.values()) >= 3, seen


@pytest.mark.parametrize("shape", TABLE_SHAPES)
def test_a_generated_table_is_repetitive_at_every_length(checks, shape):
    kinds = {n: checks(generated_table(shape, n)) for n in LENGTHS}
    assert kinds == {n: "repetitive" for n in LENGTHS}


def as_header(text: str, style: str) -> str:
    """A license as a code file's header comment, in one of three comment styles."""
    lines = text.strip().splitlines()
    if style == "#":
        return "".join(f"# {ln}".rstrip() + "\n" for ln in lines)
    if style == "//":
        return "".join(f"// {ln}".rstrip() + "\n" for ln in lines)
    return "/*\n" + "".join(f" * {ln}".rstrip() + "\n" for ln in lines) + " */\n"


CODE_AFTER = {
    "#": "\nimport os\n\n\ndef main():\n    return os.getcwd()\n",
    "//": '\n#include <stdio.h>\n\nint main(void) {\n    return puts("hi");\n}\n',
    "/*": '\npackage main\n\nimport "os"\n\nfunc main() {\n\tos.Exit(0)\n}\n',
}


@pytest.mark.parametrize("spdx_id", MOST_USED_LICENSES)
def test_the_most_used_licenses_are_licenses_alone_and_in_code_files(checks, spdx_id):
    text = license_text(spdx_id)
    kinds = {"alone": checks(text)}
    for style, code in CODE_AFTER.items():
        kinds[style] = checks(as_header(text, style) + code)
    assert kinds == {"alone": "license", "#": "license", "//": "license", "/*": "license"}


def test_a_module_copied_with_its_license_header_is_code(checks):
    """turtle.py (zlib header), tarfile.py (MIT header): the first lines with the header
    and code after it; the header alone is a license."""
    for name, lines, header_lines in (("turtle.py", 1000, 22), ("tarfile.py", 1200, 27)):
        text = (STDLIB / name).read_text(encoding="utf-8")
        first = "".join(text.splitlines(keepends=True)[:lines])
        head = "".join(text.splitlines(keepends=True)[:header_lines])
        assert (checks(first), checks(head)) == ("recitation", "license"), name


def test_a_license_header_and_a_function_after_it_are_code(checks):
    """A header and a function of about its length (json's py_scanstring): code somebody
    wrote, under that header."""
    header = as_header(license_text("MIT"), "#")
    source = (STDLIB / "json" / "decoder.py").read_text(encoding="utf-8")
    start = source.index("def py_scanstring")
    function = source[start : source.index("scanstring = c_scanstring or py_scanstring")]
    assert 250 < len(tokenize(function)) < 600
    assert checks(header) == "license"
    assert checks(header + "\n\n" + function) == "recitation"


def test_license_text_is_decided_by_its_other_paragraphs_share_at_every_cut():
    """`is_license_text` reads the largest paragraphs first and stops once the share is
    decided: the same answer as summing every paragraph of other text, for a header with
    more and more code after it (across the share's bound)."""
    header = as_header(license_text("MIT"), "#")
    source = (STDLIB / "json" / "decoder.py").read_text(encoding="utf-8")
    code = source[source.index("def py_scanstring") :].splitlines(keepends=True)
    answers = set()
    for lines in range(0, 120, 3):
        text = header + "\n" + "".join(code[:lines])
        words = [w.text for w in tokenize(text)]
        other = sum(n for n, legal in paragraphs(text) if not legal)
        summed = is_license(words) and other <= OTHER_SHARE * len(words)
        assert is_license_text(words, text) == summed, lines
        answers.add(summed)
    assert answers == {True, False}
