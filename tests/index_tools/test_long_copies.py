"""One copy, one quote, the right kind: modules of the standard library pasted into a file,
checked in CI against the default index (`build --default`), are one recitation warning
each, however long, with the license their header carries; a license file that quotes a
header of the standard library is a license hint, no warning."""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import numpy
import pytest
from test_cli import run

from index_tools import tokenize

STDLIB = Path(sysconfig.get_paths()["stdlib"])
# (module, its first lines pasted or None for all of it, the license its header carries)
COPIES = [
    ("argparse.py", 600, "PSF-2.0"),  # 4,300 words
    ("argparse.py", None, "PSF-2.0"),  # 18,100 words
    ("turtle.py", 1000, "Zlib"),  # a zlib license header, then 9,000 words of code
    ("pydoc.py", 800, "PSF-2.0"),
    ("typing.py", 800, "PSF-2.0"),
    ("inspect.py", 800, "PSF-2.0"),
    ("tarfile.py", 1200, "MIT"),  # an MIT license header
]


@pytest.fixture(scope="module")
def default_index(tmp_path_factory) -> dict[str, str]:
    """The environment of a user whose default index is built (the standard library)."""
    env = {"RECITATION_INDEX": str(tmp_path_factory.mktemp("default") / "index")}
    r = run("build", "--default", "--quiet", env=env)
    assert r.returncode == 0, r.stderr
    return env


def pasted(tmp_path: Path, name: str, lines: int | None) -> tuple[Path, str]:
    text = (STDLIB / name).read_text(encoding="utf-8")
    if lines is not None:
        text = "".join(text.splitlines(keepends=True)[:lines])
    path = tmp_path / f"pasted_{Path(name).stem}.py"
    path.write_bytes(text.encode("utf-8"))
    return path, text


@pytest.mark.slow
@pytest.mark.parametrize(("name", "lines", "license"), COPIES)
def test_a_pasted_module_is_one_recitation_warning(default_index, tmp_path, name, lines, license):
    path, text = pasted(tmp_path, name, lines)
    r = run("check", path, "--format", "json", env=default_index)
    assert r.returncode == 1, r.stderr
    (result,) = json.loads(r.stdout)["results"]
    words = tokenize(text)
    last = text.count("\n", 0, words[-1].end)
    assert (result["kind"], result["verdict"]["action"]) == ("recitation", "warning")
    assert result["length"] == len(words)  # the copy, every word of it
    assert result["range"]["start"] == {"line": 0, "character": 0}
    assert result["range"]["end"]["line"] == last
    source = result["sources"][0]
    assert (source["path"], source["license"]) == (f"Lib/{name}", license)
    # the one line a reader sees names the license of the header the copy carries
    r = run("check", path, env=default_index)
    (warning,) = [ln for ln in r.stdout.splitlines() if ": warning: " in ln]
    assert f"Quoted: python/cpython Lib/{name} L1" in warning
    assert f" \u00b7 {license} \u00b7 {len(words):,} words" in warning
    assert "1 quote to act on in 1 file(s) (1 warning)" in r.stderr


@pytest.mark.slow
def test_a_license_file_quoting_a_standard_library_header_is_a_license_hint(
    default_index, tmp_path
):
    """numpy's random/LICENSE.md holds the BSD disclaimer optparse.py's header holds."""
    path = tmp_path / "LICENSE.md"
    path.write_bytes((Path(numpy.__file__).parent / "random" / "LICENSE.md").read_bytes())
    r = run("check", path, "--format", "json", env=default_index)
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout)["results"]
    assert [(x["kind"], x["verdict"]["action"]) for x in found] == [("license", "hint")]
    assert found[0]["sources"][0]["path"] == "Lib/optparse.py"
