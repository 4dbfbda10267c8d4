"""The same kinds in the editor, in CI and through an index service: a module of the
standard library pasted whole is one recitation warning, a license file quoting a header
and a file under the same license header are license hints, a generated table is a
repetitive hint — what `check` says of a file, with a local index or a service, the
language server says of the same text pasted into a document."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import sysconfig
from pathlib import Path

import numpy
import pytest
from lsprotocol import types
from server_helpers import diagnostics_for, insert, open_doc, start_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "index_tools"))
from service_helpers import Service, cli  # noqa: E402

from index_tools import BuildOptions, build_index  # noqa: E402

STDLIB = Path(sysconfig.get_paths()["stdlib"])
MIT = """# Copyright (c) 2019 Example Authors
#
# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to deal
# in the Software without restriction, including without limitation the rights
# to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
# copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in all
# copies or substantial portions of the Software.
#
# THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
# IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
# FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
# AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
# LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
# OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
# SOFTWARE.
"""
TABLE = "".join(f"    table[{i}] = handler_{i}(0x{i:02x}, -{i})\n" for i in range(60))
SEVERITY = {"warning": types.DiagnosticSeverity.Warning, "hint": types.DiagnosticSeverity.Hint}


def first_lines(name: str, lines: int) -> str:
    text = (STDLIB / name).read_text(encoding="utf-8")
    return "".join(text.splitlines(keepends=True)[:lines])


# what a user pastes, and the one (kind, action) every consumer gives it
PASTES = {
    "argparse": (lambda: first_lines("argparse.py", 600), ("recitation", "warning")),
    "turtle": (lambda: first_lines("turtle.py", 1000), ("recitation", "warning")),
    "notice": (
        lambda: (Path(numpy.__file__).parent / "random" / "LICENSE.md").read_text("utf-8"),
        ("license", "hint"),
    ),
    "header": (lambda: MIT + "\n\ndef mine(x):\n    return x * 2\n", ("license", "hint")),
    "table": (lambda: "def fill(table):\n" + TABLE + "    return table\n", ("repetitive", "hint")),
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    """An index of a few modules of the standard library, a module under an MIT header and
    one that fills a generated table."""
    root = tmp_path_factory.mktemp("kinds")
    lib = root / "lib"
    lib.mkdir()
    for name in ("argparse.py", "turtle.py", "optparse.py"):
        shutil.copy(STDLIB / name, lib / name)
    theirs = "\n\ndef theirs(values):\n    return sorted(values, key=abs)[::-1]\n"
    (lib / "licensed.py").write_text(MIT + theirs, encoding="utf-8")
    (lib / "tables.py").write_text(
        "import os\n\n\ndef fill(table):\n" + TABLE + "    return table\n", encoding="utf-8"
    )
    build_index([str(lib)], root / "idx", BuildOptions(jobs=1, progress=False))
    return root / "idx"


def checked(index: str | Path, path: Path) -> list[tuple[str, str]]:
    r = cli("check", str(path), "--index", str(index), "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    return [(x["kind"], x["verdict"]["action"]) for x in json.loads(r.stdout)["results"]]


async def test_the_editor_check_and_the_service_give_the_same_kinds(
    client, indexed, workspace, tmp_path
):
    texts = {name: make() for name, (make, _) in PASTES.items()}
    expected = {name: [want] for name, (_, want) in PASTES.items()}
    files = {}
    for name, text in texts.items():
        files[name] = tmp_path / f"{name}.py"
        files[name].write_bytes(text.encode("utf-8"))

    local = {name: checked(indexed, path) for name, path in files.items()}
    service = await asyncio.to_thread(Service(indexed).start)
    try:
        served = {name: checked(service.url, path) for name, path in files.items()}
    finally:
        await asyncio.to_thread(service.stop)

    await start_session(client, index=indexed, folders=[workspace["a"]])
    editor = {}
    for name, text in texts.items():
        uri = (workspace["a"] / f"{name}.py").as_uri()
        open_doc(client, uri, "")
        insert(client, uri, 2, types.Position(0, 0), text)
        diagnostics = await diagnostics_for(client, uri)
        editor[name] = [
            (d.code, next(a for a, s in SEVERITY.items() if s == d.severity)) for d in diagnostics
        ]
    assert local == expected
    assert served == expected
    assert editor == expected
