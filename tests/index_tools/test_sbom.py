"""What a project quotes as an SBOM: `check --format spdx|spdx-tv|cyclonedx` and the editor's
references log (`recitation-index references`) on a real index of git repositories (acme/widgets
is MIT) and a PyPI package served by pypiserver on loopback, in a project with one quote
attributed, one dismissed and one of a kind that is only a hint. Every document is read back
and validated by the field's libraries: spdx-tools (no validation message) and
cyclonedx-python-lib's schema validator for CycloneDX 1.6."""

from __future__ import annotations

import codecs
import json
import sys
import uuid
from pathlib import Path

import pytest
from engine_fixtures import HAVERSINE, REGEX_TABLE, line_of, make_corpus
from test_check import git
from test_cli import run

sys.path.insert(0, str(Path(__file__).parent / "build" / "sources"))
from registry_helpers import PypiServer, sdist  # noqa: E402

from index_tools import DecisionsFile, QuoteIdentity  # noqa: E402
from index_tools.cli.sbom import Quoted, SbomError, SbomOptions, write_sbom  # noqa: E402
from index_tools.cli.sbom_packages import package_of  # noqa: E402
from index_tools.cli.sbom_places import FileBytes  # noqa: E402
from index_tools.model import Match, Source  # noqa: E402

PACKAGED = '''def merge_setting(request_setting, session_setting, dict_class=dict):
    """Determines appropriate setting for a given request, taking into account
    the explicit setting on that request, and the setting in the session."""
    if session_setting is None:
        return request_setting
    if request_setting is None:
        return session_setting
    merged_setting = dict_class(sorted(session_setting.items()))
    merged_setting.update(sorted(request_setting.items()))
    none_keys = [k for (k, v) in merged_setting.items() if v is None]
    for key in none_keys:
        del merged_setting[key]
    return merged_setting
'''
ATTRIBUTION = "# Adapted from https://github.com/acme/widgets/blob/main/src/geo.py, MIT license\n"
GEO = "import math\n\n" + ATTRIBUTION + HAVERSINE
SESSIONS = "import os\n\n\n" + PACKAGED
EPOCH = {"SOURCE_DATE_EPOCH": "1767225600"}  # 2026-01-01


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The index (three git repositories and pypi:demo==1.1.0) and the project."""
    tmp = tmp_path_factory.mktemp("sbom")
    info = make_corpus(tmp)
    server = PypiServer(tmp / "pypiserver")
    server.add("demo-1.1.0.tar.gz", sdist("demo", "1.1.0", {"src/demo/sessions.py":
               PACKAGED.encode()}, license_expression="BSD-3-Clause"))  # fmt: skip
    try:
        r = run("build", *info["repos"], "pypi:demo==1.1.0", "--out", tmp / "idx",
                "--pypi-url", server.url, "--package-cache", tmp / "cache", "--jobs", 1, "-q")  # fmt: skip
    finally:
        server.stop()
    assert r.returncode == 0, r.stderr
    project = tmp / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "geo.py").write_text(GEO)
    (project / "src" / "sessions.py").write_text(SESSIONS)
    (project / "src" / "table.py").write_text(REGEX_TABLE)
    (project / "README.md").write_text("# a project\n")
    git(project, "init", "-q")
    git(project, "add", "src", "README.md")
    r = check(tmp / "idx", project, "--format", "json")
    (found,) = [x for x in json.loads(r.stdout)["results"] if x["file"] == "src/sessions.py"]
    DecisionsFile(project).dismiss(QuoteIdentity.of_text(found["text"]), "def merge", "", "")
    return {"index": tmp / "idx", "project": project, **info}


def check(index, cwd, *args, env=None):
    return run("check", ".", "--index", index, *args, cwd=cwd, env=env)


def sbom(world, fmt, *args):
    r = check(world["index"], world["project"], "--format", fmt, *args, env=EPOCH)
    assert r.returncode == 0, r.stderr  # attributed, dismissed and a hint: nothing fails
    return r.stdout


@pytest.fixture(scope="module")
def documents(world):
    """Each format written once (SOURCE_DATE_EPOCH set)."""
    return {fmt: sbom(world, fmt) for fmt in ("spdx", "spdx-tv", "cyclonedx")}


def spdx_parsed(text: str, suffix: str, tmp_path: Path):
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    path = tmp_path / f"doc{suffix}"
    path.write_text(text, encoding="utf-8")
    document = parse_file(str(path))
    assert validate_full_spdx_document(document) == []
    return document


def cyclonedx_valid(text: str) -> dict:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    return json.loads(text)


def snippet_of(document, file_name: str):
    files = {f.spdx_id: f.name for f in document.files}
    (snippet,) = [s for s in document.snippets if files[s.file_spdx_id] == file_name]
    return snippet


def copied_from(document, snippet) -> dict:
    """The packages a snippet is tied to: name -> (package, relationship)."""
    packages = {p.spdx_id: p for p in document.packages}
    return {
        packages[r.related_spdx_element_id].name: (packages[r.related_spdx_element_id], r)
        for r in document.relationships
        if r.spdx_element_id == snippet.spdx_id
    }


def purl(package) -> str:
    (ref,) = [r.locator for r in package.external_references if r.reference_type == "purl"]
    return ref


def quoted_bytes(world, name: str, byte_range) -> bytes:
    data = (world["project"] / name).read_bytes()
    return data[byte_range[0] - 1 : byte_range[1]]


def test_spdx_document_validates_with_the_snippets_files_lines_licenses_and_sources(
    world, documents, tmp_path
):
    document = spdx_parsed(documents["spdx"], ".spdx.json", tmp_path)
    assert document.creation_info.spdx_version == "SPDX-2.3"
    assert str(document.creation_info.created) == "2026-01-01 00:00:00"
    assert {f.name for f in document.files} == {"./src/geo.py", "./src/sessions.py",
                                                "./src/table.py"}  # fmt: skip

    geo = snippet_of(document, "./src/geo.py")  # the attributed git quote
    assert geo.line_range == (line_of(GEO, "def haversine"), line_of(GEO, "return c * r"))
    assert quoted_bytes(world, "src/geo.py", geo.byte_range) == HAVERSINE.rstrip("\n").encode()
    assert str(geo.license_concluded) == "MIT"
    assert [str(x) for x in geo.license_info_in_snippet] == ["MIT"]
    assert geo.attribution_texts == [ATTRIBUTION.strip()]
    assert "Verdict: attributed, attributed on line 3" in geo.comment
    assert "Kind: recitation (code quoted from public code)\n" in geo.comment  # no hint kind
    assert "Found in 3 files of the index" in geo.comment
    sources = copied_from(document, geo)
    widgets, rel = sources["acme/widgets"]
    assert widgets.version == world["acme_sha"]
    assert purl(widgets) == f"pkg:github/acme/widgets@{world['acme_sha']}"
    assert widgets.download_location == f"git+https://github.com/acme/widgets@{world['acme_sha']}"
    assert rel.relationship_type.name == "COPY_OF" and "src/geo.py L7-L15" in rel.comment
    routes, _ = sources["routes"]  # no license, no link: no claim of either
    assert str(routes.license_declared) == "NOASSERTION" and not routes.external_references

    sessions = snippet_of(document, "./src/sessions.py")  # the dismissed PyPI quote
    first = line_of(SESSIONS, "def merge_setting")
    assert sessions.line_range == (first, line_of(SESSIONS, "    return merged_setting"))
    assert quoted_bytes(world, "src/sessions.py", sessions.byte_range).startswith(b"def merge")
    assert str(sessions.license_concluded) == "BSD-3-Clause"
    assert "Verdict: dismissed, dismissed (" in sessions.comment
    demo, rel = copied_from(document, sessions)["demo"]
    assert (demo.version, purl(demo)) == ("1.1.0", "pkg:pypi/demo@1.1.0")
    assert str(demo.download_location) == "NOASSERTION"  # a private registry: not known
    assert "src/demo/sessions.py" in rel.comment

    table = snippet_of(document, "./src/table.py")
    assert "Kind: repetitive (a repetitive sequence); reported as a hint only" in table.comment
    project = next(p for p in document.packages if p.files_analyzed)
    assert project.name == "project"


def test_spdx_tag_value_validates_too(documents, tmp_path):
    text = documents["spdx-tv"]
    assert text.startswith("## Document Information\nSPDXVersion: SPDX-2.3\n")
    document = spdx_parsed(text, ".spdx", tmp_path)
    assert str(snippet_of(document, "./src/geo.py").license_concluded) == "MIT"


def test_cyclonedx_bom_validates_with_sources_files_evidence_and_pedigree(world, documents):
    bom = cyclonedx_valid(documents["cyclonedx"])
    assert bom["specVersion"] == "1.6" and bom["metadata"]["component"]["name"] == "project"
    assert bom["metadata"]["timestamp"].startswith("2026-01-01T00:00:00")
    by_name = {c["name"]: c for c in bom["components"]}
    demo = by_name["demo"]
    assert (demo["version"], demo["purl"]) == ("1.1.0", "pkg:pypi/demo@1.1.0")
    assert demo["licenses"] == [{"license": {"id": "BSD-3-Clause"}}]
    assert "licenses" not in by_name["routes"]  # no license is never a license claim
    widgets = by_name["acme/widgets"]
    assert widgets["purl"] == f"pkg:github/acme/widgets@{world['acme_sha']}"
    assert {"type": "vcs", "url": "https://github.com/acme/widgets"} in widgets[
        "externalReferences"
    ]

    geo = by_name["src/geo.py"]
    assert geo["type"] == "file"
    (occurrence,) = geo["evidence"]["occurrences"]
    assert occurrence["location"] == "src/geo.py"
    assert occurrence["line"] == line_of(GEO, "def haversine")
    assert occurrence["offset"] == GEO.index("def haversine")  # bytes: ASCII
    assert "Verdict: attributed" in occurrence["additionalContext"]
    assert {a["name"] for a in geo["pedigree"]["ancestors"]} == {"acme/widgets", "other/fork",
                                                                 "routes"}  # fmt: skip
    assert geo["evidence"]["licenses"] == [{"license": {"id": "MIT"}}]
    (prop,) = geo["properties"]
    assert prop["name"] == "recitation:quote" and " recitation attributed hint " in prop["value"]

    sessions = by_name["src/sessions.py"]
    assert [a["purl"] for a in sessions["pedigree"]["ancestors"]] == ["pkg:pypi/demo@1.1.0"]
    assert " dismissed off " in sessions["properties"][0]["value"]
    assert "hint-kind" in by_name["src/table.py"]["properties"][0]["value"]


def test_two_runs_are_identical_and_the_namespace_can_be_pinned(world, documents):
    assert sbom(world, "spdx") == documents["spdx"]
    pinned = "https://example.com/spdxdocs/project-1.0"
    bom = json.loads(sbom(world, "cyclonedx", "--sbom-namespace", pinned, "--sbom-name", "w"))
    assert bom["serialNumber"] == f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, pinned)}"
    assert bom["metadata"]["component"]["name"] == "w"
    assert json.loads(documents["cyclonedx"])["serialNumber"] != bom["serialNumber"]
    r = check(world["index"], world["project"], "--format", "spdx", "--sbom-namespace", "x#y")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("recitation-index: --sbom-namespace 'x#y': expected an absolute")
    assert len(r.stderr.splitlines()) == 1


def _log_entry(world, result: dict, **changes) -> dict:
    """A match of `check --format json` as the extension logs it (toEntry)."""
    path = world["project"] / result["file"]
    return {
        "time": "2026-01-01T00:00:00.000Z",
        "uri": path.as_uri(),
        "range": result["range"],
        "kind": result["kind"],
        "length": result["length"],
        "fileCount": result["file_count"],
        "fileCountExact": result["file_count_exact"],
        "text": result["text"],
        "sources": result["sources"],
        "file": result["file"],
        "line": result["range"]["start"]["line"] + 1,
        **changes,
    }


def test_the_references_log_exports_through_the_same_writer(world, tmp_path):
    r = check(world["index"], world["project"], "--format", "json")
    results = {x["file"]: x for x in json.loads(r.stdout)["results"]}
    gone = _log_entry(world, results["src/geo.py"], uri="file:///nowhere/x.py", file="x.py")
    out_of_root = _log_entry(
        world, results["src/geo.py"], uri="untitled:1", file="../widgets/src/geo.py"
    )
    entries = [_log_entry(world, results[f]) for f in sorted(results)]
    # exported on another machine: the workspace-relative path under --root finds it
    entries[-1]["uri"] = "file:///elsewhere/src/table.py"
    log = {
        "format": "recitation-code-references",
        "version": 1,
        "references": [*entries, gone, out_of_root, 7],
    }
    (tmp_path / "refs.json").write_text(json.dumps(log))
    # the file changed since: two lines above the quote; the log's range is stale
    (world["project"] / "src" / "geo.py").write_text("# moved\n\n" + GEO)
    try:
        out = run("references", tmp_path / "refs.json", "--format", "spdx", cwd=world["project"],
                  env=EPOCH)  # fmt: skip
        cdx = run("references", tmp_path / "refs.json", "--format", "cyclonedx",
                  cwd=world["project"], env=EPOCH)  # fmt: skip
    finally:
        (world["project"] / "src" / "geo.py").write_text(GEO)
    assert out.returncode == 0, out.stderr
    assert "left out of the SBOM: x.py: no such file here" in out.stderr
    assert "left out of the SBOM: ../widgets/src/geo.py: no such file here" in out.stderr
    assert "left out of the SBOM: entry 6: not a logged quote" in out.stderr
    assert "6 logged quote(s), 3 found in their files as they are now" in out.stderr
    document = spdx_parsed(out.stdout, ".spdx.json", tmp_path)
    geo = snippet_of(document, "./src/geo.py")
    assert geo.line_range == (line_of(GEO, "def haversine") + 2, line_of(GEO, "return c * r") + 2)
    assert "Verdict: attributed" in geo.comment  # judged as check judges, decisions applied
    assert "Verdict: dismissed" in snippet_of(document, "./src/sessions.py").comment
    bom = cyclonedx_valid(cdx.stdout)
    assert "pkg:pypi/demo@1.1.0" in {c.get("purl") for c in bom["components"]}


def test_a_log_that_is_no_log_is_one_line(world, tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    for path in (tmp_path / "notes.txt", tmp_path / "missing.json"):
        r = run("references", path, cwd=world["project"])
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr


def hostile_quote(tmp_path: Path) -> Quoted:
    code = tmp_path / "code.py"
    code.write_text("x = 1\n" + PACKAGED, encoding="utf-8")
    evil = Source(
        repository="evil\n</text>\nPackageName: injected",
        path="a</TEXT>b\u202e.py",
        commit="1.0\nSPDXID: x",
        license="MIT; rm -rf /",
        url="javascript:alert(1)",
        start_line=1,
        end_line=12,
    )
    start = len("x = 1\n")
    m = Match("recitation", 80, 0, 80, start, start + len(PACKAGED) - 1,
              PACKAGED[:-1], 1, True, [evil])  # fmt: skip
    return Quoted("code.py", code, m)


def test_untrusted_metadata_cannot_claim_a_license_or_inject_a_tag(tmp_path):
    options = SbomOptions(project="p", tool_version="1")
    text, left_out = write_sbom([hostile_quote(tmp_path)], "spdx-tv", options)
    assert left_out == []
    document = spdx_parsed(text, ".spdx", tmp_path)
    lines = text.splitlines()
    assert not [x for x in lines if x.startswith(("PackageName: injected", "SPDXID: x"))]
    assert {p.name for p in document.packages} == {"p", "evil </ text> PackageName: injected"}
    (snippet,) = document.snippets
    assert str(snippet.license_concluded) == "NOASSERTION"
    assert "'MIT; rm -rf /', which is not an expression of SPDX-listed licenses" in snippet.comment
    assert "javascript" not in text and "\u202e" not in text
    bom = cyclonedx_valid(write_sbom([hostile_quote(tmp_path)], "cyclonedx", options)[0])
    assert all("licenses" not in c for c in bom["components"])


def test_a_missing_library_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "spdx_tools.spdx.validation.document_validator", None)
    with pytest.raises(SbomError, match="^--format spdx needs the Python package spdx-tools"):
        write_sbom([hostile_quote(tmp_path)], "spdx", SbomOptions("p", "1"))


@pytest.mark.parametrize(
    "data",
    [
        "h\u00e9llo\r\n\u20ac x\ny".encode(),
        codecs.BOM_UTF16_LE + "a\u00e9\n\U0001f600b".encode("utf-16-le"),
        b"ok \xff\xfe then\n\xe2\x82 more",
    ],
)
def test_byte_offsets_follow_the_encoding_and_undecodable_bytes(data):
    from index_tools.cli.code_files import windows_of

    f = FileBytes(data)
    (window,) = windows_of(iter([data]), 1 << 20, 1 << 18)
    assert f.text.replace("\0", " ") == window.text  # the text check reads
    for i, ch in enumerate(f.text):
        piece = data[f.byte_offset(i) : f.byte_offset(i + 1)]
        assert ch == "\ufffd" or piece.decode(f.encoding) == ch
    assert f.byte_offset(len(f.text)) == len(data)


def source(repository: str, url: str = "", commit: str = "1.0") -> Source:
    return Source(repository, "pkg/mod.py", commit, "MIT", url, 1, 9)


def test_sources_become_packages_with_purls_and_download_locations():
    files = "/packages/ab/cd/" + "e" * 60 + "/demo-1.0.tar.gz"
    public = source("pypi:Demo_Pkg==1.0",
                    f"https://inspector.pypi.io/project/demo-pkg/1.0{files}/demo-1.0/mod.py#line.1-9")  # fmt: skip
    p = package_of(public)
    assert (p.name, p.version, p.purl) == ("Demo_Pkg", "1.0", "pkg:pypi/demo-pkg@1.0")
    assert p.download == f"https://files.pythonhosted.org{files}"
    assert package_of(source("pypi:demo==1.0")).download == ""  # another registry: not known
    npm = package_of(source("npm:@babel/core@7.1.0",
                            "https://app.unpkg.com/@babel/core@7.1.0/files/lib/index.js#L1-9"))  # fmt: skip
    assert npm.purl == "pkg:npm/%40babel/core@7.1.0"
    assert npm.download == "https://registry.npmjs.org/@babel/core/-/core-7.1.0.tgz"
    sha = "0123456789abcdef0123456789abcdef01234567"
    lab = package_of(source("g/r", f"https://gitlab.com/g/r/-/blob/{sha}/pkg/mod.py#L1-9", sha))
    assert (
        lab.vcs == "https://gitlab.com/g/r" and lab.download == f"git+https://gitlab.com/g/r@{sha}"
    )
    assert lab.purl.startswith(f"pkg:generic/r@{sha}?vcs_url=git%2Bhttps://gitlab.com/g/r")
    for hostile in ("pypi:x==1.0 ; rm", "npm:../../x@1", "acme/w\n"):
        assert not package_of(source(hostile, "javascript:alert(1)")).purl


def test_check_help_lists_the_sbom_formats():
    r = run("check", "--help")
    assert r.returncode == 0
    for word in ("spdx", "spdx-tv", "cyclonedx", "--sbom-namespace", "SOURCE_DATE_EPOCH"):
        assert word in r.stdout
    assert "recitation-index references" in run("references", "--help").stdout


def test_lone_surrogates_in_a_logged_source_never_fail_a_format(world, tmp_path):
    """A references log whose source names hold lone surrogates (JSON's "\\ud800", which
    the extension's log can carry): every format is written, valid, in UTF-8."""
    r = check(world["index"], world["project"], "--format", "json")
    (result,) = [x for x in json.loads(r.stdout)["results"] if x["file"] == "src/geo.py"]
    entry = _log_entry(world, result)
    for s in entry["sources"]:
        s["repository"] = "acme/wid\ud800gets"
        s["commit"] = "abc\udc80def"
        s["path"] = "src/\udfffgeo.py"
    log = tmp_path / "refs.json"
    log.write_text(json.dumps({"format": "recitation-code-references", "references": [entry]}))
    for fmt in ("spdx", "spdx-tv", "cyclonedx"):
        out = run("references", log, "--format", fmt, cwd=world["project"], env=EPOCH)
        assert out.returncode == 0, (fmt, out.stderr)
        assert "unexpected" not in out.stderr and "\ud800" not in out.stdout
        if fmt == "cyclonedx":
            cyclonedx_valid(out.stdout)
        else:
            spdx_parsed(out.stdout, ".spdx.json" if fmt == "spdx" else ".spdx", tmp_path)
        assert "gets" in out.stdout  # the names are kept, the surrogates replaced


@pytest.mark.parametrize("fmt", ["spdx", "spdx-tv"])
def test_a_folder_checked_from_elsewhere_names_its_files_in_its_package(world, tmp_path, fmt):
    """`check /elsewhere/project --format spdx` run outside the project: the files are named
    relative to the described package (`./src/geo.py`), as when run inside it."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    r = run("check", world["project"], "--index", world["index"], "--format", fmt, cwd=outside,
            env=EPOCH)  # fmt: skip
    assert r.returncode == 0, r.stderr
    document = spdx_parsed(r.stdout, ".spdx.json" if fmt == "spdx" else ".spdx", tmp_path)
    names = sorted(f.name for f in document.files)
    assert names == ["./src/geo.py", "./src/sessions.py", "./src/table.py"], names
    sub = run("check", "src", "--index", world["index"], "--format", fmt,
              cwd=world["project"], env=EPOCH)  # fmt: skip
    inside = spdx_parsed(sub.stdout, ".spdx.json" if fmt == "spdx" else ".spdx", tmp_path)
    assert sorted(f.name for f in inside.files) == names


def described_package(document):
    """The package the document DESCRIBES: the checked project."""
    packages = {p.spdx_id: p for p in document.packages}
    (described,) = [packages[r.related_spdx_element_id] for r in document.relationships
                    if r.relationship_type.name == "DESCRIBES"]  # fmt: skip
    return described


def test_a_folder_checked_from_elsewhere_is_the_package_named(world, tmp_path):
    """`check /elsewhere/project --format spdx` names the described package after the
    checked project (its git work tree, else the folder checked), not the folder it is run
    from."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    plain = tmp_path / "plain-folder"  # in no git work tree
    plain.mkdir()
    (plain / "geo.py").write_text(GEO)
    for checked, name in ((world["project"], "project"), (world["project"] / "src", "project"),
                          (plain, "plain-folder"), (plain / "geo.py", "plain-folder")):  # fmt: skip
        r = run("check", checked, "--index", world["index"], "--format", "spdx", cwd=outside,
                env=EPOCH)  # fmt: skip
        assert r.returncode == 0, r.stderr
        document = spdx_parsed(r.stdout, ".spdx.json", tmp_path)
        assert described_package(document).name == name, checked
    # --sbom-name still names it
    r = run("check", plain, "--index", world["index"], "--format", "spdx", "--sbom-name",
            "chosen", cwd=outside, env=EPOCH)  # fmt: skip
    assert described_package(spdx_parsed(r.stdout, ".spdx.json", tmp_path)).name == "chosen"
