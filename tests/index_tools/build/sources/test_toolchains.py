"""The Go, Java and Rust standard libraries as corpus sources (`toolchains.py`), from the
toolchains this machine has (Debian: golang-go, openjdk-17-source, rust-src; see
scripts/system-deps.sh): each indexed for real, a known function of it pasted and found
by `recitation-index query` with its version, license and a link at the release tag;
`find_toolchains`; held.identity; what an absent toolchain says."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from index_tools import BuildOptions, add_to_index, build_index
from index_tools.build import held
from index_tools.build.sources import SourceError, open_source
from index_tools.build.sources import toolchains as tc
from index_tools.build.sources.toolchains import (
    GoStdlibSource,
    JavaStdlibSource,
    RustStdlibSource,
    find_toolchains,
    jdk_repository_path,
)

CLI = [sys.executable, "-m", "index_tools.cli"]
OPTIONS = BuildOptions(jobs=1, progress=False)


def run(*args, stdin=""):
    return subprocess.run(
        [*CLI, *map(str, args)], input=stdin, capture_output=True, text=True, timeout=600
    )


def block(text: str, marker: str) -> str:
    """The lines of `text` from the one holding `marker` to the brace that closes the block
    it opens."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if marker in line)
    depth, opened = 0, False
    for end in range(start, len(lines)):
        depth += lines[end].count("{") - lines[end].count("}")
        opened = opened or "{" in lines[end]
        if opened and depth == 0:
            return "".join(lines[start : end + 1])
    raise AssertionError(f"no end to the block at {marker!r}")


def query(index: Path, text: str, language: str) -> list[dict]:
    done = run("query", index, "--json", "--language", language, stdin=text)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["matches"]


def source_of(matches: list[dict], path: str) -> dict:
    for m in matches:
        for s in m["sources"]:
            if s["path"] == path:
                return s
    raise AssertionError(f"{path} not among {[s['path'] for m in matches for s in m['sources']]}")


def _available(language: str) -> tc.Toolchain | None:
    return next((t for t in find_toolchains() if t.language == language), None)


GO = _available("go")
JAVA = _available("java")
RUST = _available("rust")
needs_go = pytest.mark.skipif(GO is None, reason="no Go toolchain with its sources (golang-go)")
needs_java = pytest.mark.skipif(JAVA is None, reason="no JDK with lib/src.zip (openjdk-17-source)")
needs_rust = pytest.mark.skipif(RUST is None, reason="no Rust standard library sources (rust-src)")


# ---------------------------------------------------------------- this machine's toolchains


def test_find_toolchains_on_this_machine():
    started = time.perf_counter()
    found = {t.language: t for t in find_toolchains(with_missing=True)}
    seconds = time.perf_counter() - started
    assert seconds < 10, seconds  # a few version commands, no source file read
    if shutil.which("go"):
        goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True)
        version = Path(goroot.stdout.strip(), "VERSION").read_text().splitlines()[0]
        go = found["go"]
        assert (go.version, go.spec, go.license) == (version[2:], "go:stdlib", "BSD-3-Clause")
        assert go.where == os.path.realpath(Path(goroot.stdout.strip(), "src"))
    if shutil.which("java") and not os.environ.get("JAVA_HOME"):
        home = Path(os.path.realpath(shutil.which("java"))).parent.parent
        release = (home / "release").read_text()
        version = re.search(r'^JAVA_VERSION="([^"]+)"', release, re.M).group(1)
        java = found["java"]
        assert (java.version, java.spec) == (version, "java:stdlib")
        assert java.license == "GPL-2.0-only WITH Classpath-exception-2.0"
        if (home / "lib" / "src.zip").is_file():
            zip_path = os.path.realpath(home / "lib" / "src.zip")
            assert os.path.realpath(java.where) == zip_path and not java.missing
        else:
            assert "openjdk-" in java.missing and "-source" in java.missing
    if RUST is not None:
        rust = found["rust"]
        assert rust.spec == "rust:stdlib" and rust.license == "MIT OR Apache-2.0"
        assert os.path.isdir(os.path.join(rust.where, "core")) and re.match(
            r"^\d+\.\d+\.\d+", rust.version
        )
    assert all(t.spec in tc.TOOLCHAIN_SPECS for t in found.values())


def test_the_specs_are_opened_by_open_source():
    for toolchain, cls in (
        (GO, GoStdlibSource),
        (JAVA, JavaStdlibSource),
        (RUST, RustStdlibSource),
    ):
        if toolchain is None:
            continue
        src = open_source(toolchain.spec)
        assert isinstance(src, cls)
        d = src.describe()
        assert d["kind"] == f"{toolchain.language}-stdlib" and d["language"] == toolchain.language
        assert d["version"] == toolchain.version and d["license"] == toolchain.license
        assert toolchain.where not in json.dumps(d)  # no local paths in an index's header
        assert held.identity(src) == held.Identity(toolchain.spec, toolchain.version)


# ---------------------------------------------------------------- Go


@pytest.fixture(scope="module")
def go_index(tmp_path_factory):
    if GO is None:
        pytest.skip("no Go toolchain with its sources (golang-go)")
    out = tmp_path_factory.mktemp("go") / "idx"
    src = GoStdlibSource(only=["strings", "unicode/utf8"])
    summary = build_index([src], out, OPTIONS)
    assert summary.files > 10
    return out, src


@needs_go
def test_go_leaves_out_testdata_and_keeps_tests():
    src = GoStdlibSource(only=["go/printer", "strings"])
    paths = src.paths()
    assert "go/printer/printer.go" in paths and "strings/strings_test.go" in paths
    assert not [p for p in paths if "/testdata/" in p]
    assert Path(src.src, "go", "printer", "testdata").is_dir()


def _fake_goroot(root: Path, version: str, body: str) -> Path:
    (root / "src" / "demo").mkdir(parents=True)
    (root / "VERSION").write_text(f"{version}\ntime 2024-01-01T00:00:00Z\n")
    (root / "src" / "demo" / "demo.go").write_text(body)
    (root / "src" / "demo" / "testdata").mkdir()
    (root / "src" / "demo" / "testdata" / "broken.go").write_text("package broken\nfunc {\n")
    return root


GO_BODY = """package demo

// Sum adds the numbers of a slice, skipping the negative ones, and says how many it added.
func Sum(values []int) (total int, counted int) {
	for _, v := range values {
		if v < 0 {
			continue
		}
		total += v
		counted++
	}
	return total, counted
}
"""


def test_a_new_go_version_replaces_the_old_one(tmp_path):
    old = _fake_goroot(tmp_path / "go-old", "go1.21.5", GO_BODY)
    new = _fake_goroot(tmp_path / "go-new", "go1.21.6", GO_BODY.replace("counted", "added"))
    out = tmp_path / "idx"
    first = build_index([f"go:stdlib={old}"], out, OPTIONS)
    assert first.files == 1  # testdata left out
    again = add_to_index(out, [f"go:stdlib={old}"], OPTIONS)
    assert again.files == 0 and again.skipped.get("source already in the index") == 1
    newer = add_to_index(out, [f"go:stdlib={new}"], OPTIONS)
    assert newer.replaced == [("Go 1.21.6 standard library", "1.21.5", "1.21.6")]
    stats = json.loads(run("stats", out, "--json").stdout)
    assert [(s["key"], s["version"], s["commit"]) for s in stats["sources"]] == [
        ("go:stdlib", "1.21.6", "go1.21.6")
    ]


def test_go_versions_and_tags(tmp_path):
    for line, version, tag in (
        ("go1.19.8", "1.19.8", "go1.19.8"),
        ("go1.22rc1", "1.22rc1", "go1.22rc1"),
        ("devel go1.23-abcdef Mon Jan 1", "devel go1.23-abcdef Mon Jan 1", ""),
    ):
        root = tmp_path / line.replace(" ", "_")
        (root / "src").mkdir(parents=True)
        (root / "VERSION").write_text(line + "\n")
        go = tc.locate_go(str(root))
        assert (go.version, go.tag) == (version, tag)
    src = GoStdlibSource("go:stdlib", str(_fake_goroot(tmp_path / "dev", "devel go1.23-x", "")))
    assert src.commit == "" and src.license == "BSD-3-Clause"


# ---------------------------------------------------------------- Java


@pytest.fixture(scope="module")
def java_index(tmp_path_factory):
    if JAVA is None:
        pytest.skip("no JDK with lib/src.zip (openjdk-17-source)")
    out = tmp_path_factory.mktemp("java") / "idx"
    src = JavaStdlibSource(
        only=["java.base/java/util/ArrayList.java", "java.base/java/util/AbstractList.java"]
    )
    summary = build_index([src], out, OPTIONS)
    assert summary.files == 2
    return out, src


def _java_tag(home: str) -> str:
    release = Path(home, "release").read_text()
    runtime = re.search(r'^JAVA_RUNTIME_VERSION="([^"]+)"', release, re.M).group(1)
    vnum, build = re.match(r"^([\d.]+)\+(\d+)", runtime).groups()
    return f"jdk-{vnum}+{build}"


@needs_java
def test_java_files_not_in_the_shared_folder():
    src = JavaStdlibSource(
        only=[
            "java.base/java/lang/ProcessImpl.java",  # unix/classes
            "java.base/java/nio/ByteBuffer.java",  # generated from a template
            "java.base/java/lang/String.java",
            "jdk.localedata/sun/util/resources/cldr/ext",  # CLDR data: left out
        ]
    )
    docs = {d.origin.path: d.origin for d in src.documents()}
    tag, repo = src.commit, src.repository
    unix = "src/java.base/unix/classes/java/lang/ProcessImpl.java"
    assert docs[unix].link == f"https://github.com/{repo}/blob/{tag}/{unix}"
    assert docs["java.base/java/nio/ByteBuffer.java"].link == ""
    assert "src/java.base/share/classes/java/lang/String.java" in docs
    assert len(docs) == 3 and src.skipped["generated"] > 100


def test_java_repository_paths():
    assert (
        jdk_repository_path("java.base/java/lang/String.java")
        == "src/java.base/share/classes/java/lang/String.java"
    )
    assert jdk_repository_path("java.base/module-info.java") == (
        "src/java.base/share/classes/module-info.java"
    )
    assert jdk_repository_path("java.base/java/lang/ProcessImpl.java") == (
        "src/java.base/unix/classes/java/lang/ProcessImpl.java"
    )
    assert jdk_repository_path("java.base/java/lang/ProcessImpl.java", ("windows", "share")) == (
        "src/java.base/windows/classes/java/lang/ProcessImpl.java"
    )
    assert jdk_repository_path("java.base/sun/nio/ch/DefaultSelectorProvider.java") == (
        "src/java.base/linux/classes/sun/nio/ch/DefaultSelectorProvider.java"
    )
    assert jdk_repository_path("java.base/java/nio/ByteBuffer.java") == ""
    assert jdk_repository_path("java.base/java/lang/NoSuchClassHere.java") == ""


def _fake_jdk(home: Path, version: str, runtime: str, os_name: str = "Linux") -> Path:
    (home / "lib").mkdir(parents=True)
    (home / "release").write_text(
        f'IMPLEMENTOR="Test"\nJAVA_RUNTIME_VERSION="{runtime}"\nJAVA_VERSION="{version}"\n'
        f'OS_NAME="{os_name}"\n'
    )
    with zipfile.ZipFile(home / "lib" / "src.zip", "w") as z:
        z.writestr(
            "java.base/java/lang/ProcessImpl.java",
            "package java.lang;\n\nfinal class ProcessImpl {\n    static int exitValue() {\n"
            "        return 0;\n    }\n}\n",
        )
    return home


def test_another_jdk_named_and_its_tag(tmp_path):
    for version, runtime, repository, tag in (
        ("21.0.2", "21.0.2+13-LTS", "openjdk/jdk21u", "jdk-21.0.2+13"),
        ("17.0.15", "17.0.15+6-Debian-1deb12u1", "openjdk/jdk17u", "jdk-17.0.15+6"),
        ("17.0.19", "17.0.19+10-1-deb12u2-Debian", "openjdk/jdk17u", "jdk-17.0.19+10"),
        ("21", "21+35", "openjdk/jdk21u", "jdk-21+35"),
        ("11.0.22", "", "openjdk/jdk11u", "jdk-11.0.22-ga"),
        ("26", "26-ea+20", "openjdk/jdk", ""),  # early access: no tag to link
    ):
        home = _fake_jdk(tmp_path / runtime.replace("+", "_") / version, version, runtime)
        src = open_source(f"java:stdlib={home}")
        assert (src.repository, src.commit, src.version) == (repository, tag, version)
        (doc,) = src.documents()
        expected = f"https://github.com/{repository}/blob/{tag}/{doc.origin.path}" if tag else ""
        assert doc.origin.path == "src/java.base/unix/classes/java/lang/ProcessImpl.java"
        assert doc.origin.link == expected
    windows = _fake_jdk(tmp_path / "win", "21.0.2", "21.0.2+13-LTS", "Windows")
    (doc,) = open_source(f"java:stdlib={windows / 'lib' / 'src.zip'}").documents()
    assert doc.origin.path == "src/java.base/windows/classes/java/lang/ProcessImpl.java"


def test_a_jdk_without_its_sources(tmp_path):
    home = _fake_jdk(tmp_path / "jdk", "17.0.9", "17.0.9+9")
    (home / "lib" / "src.zip").unlink()
    with pytest.raises(SourceError) as e:
        open_source(f"java:stdlib={home}")
    message = str(e.value)
    assert "\n" not in message and "openjdk-17-source" in message and "src.zip" in message


# ---------------------------------------------------------------- Rust


@pytest.fixture(scope="module")
def rust_index(tmp_path_factory):
    """The whole of the Rust standard library, built by the CLI from the spec."""
    if RUST is None:
        pytest.skip("no Rust standard library sources (rust-src)")
    out = tmp_path_factory.mktemp("rust") / "idx"
    done = run("build", "rust:stdlib", "--out", out, "--jobs", 2, "--quiet", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["files"] > 500
    return out, open_source("rust:stdlib")


@needs_rust
def test_rust_submodules_have_no_link():
    src = RustStdlibSource(only=["stdarch/crates/core_arch/src/x86/sse.rs", "core/src/option.rs"])
    links = {d.origin.path: d.origin.link for d in src.documents()}
    assert links["library/stdarch/crates/core_arch/src/x86/sse.rs"] == ""
    assert links["library/core/src/option.rs"].endswith(
        f"/{RUST.version}/library/core/src/option.rs"
    )


def _fake_rust_tree(top: Path, version: str | None) -> Path:
    for crate in ("core", "std", "alloc"):
        (top / "library" / crate / "src").mkdir(parents=True)
        (top / "library" / crate / "src" / "lib.rs").write_text(f"//! The {crate} crate.\n")
    if version:
        (top / "src").mkdir()
        (top / "src" / "version").write_text(version + "\n")
    return top


def test_rust_named_folders_and_versions(tmp_path):
    tree = _fake_rust_tree(tmp_path / "checkout", "1.75.0")
    for named in (tree, tree / "library"):
        src = open_source(f"rust:stdlib={named}")
        assert (src.version, src.commit) == ("1.75.0", "1.75.0")
        assert [d.origin.path for d in src.documents()] == [
            "library/alloc/src/lib.rs",
            "library/core/src/lib.rs",
            "library/std/src/lib.rs",
        ]
    debian = _fake_rust_tree(tmp_path / "rustc-1.70.0", None)
    assert open_source(f"rust:stdlib={debian}").version == "1.70.0"
    nightly = _fake_rust_tree(tmp_path / "nightly", "1.80.0-nightly")
    assert open_source(f"rust:stdlib={nightly}").commit == ""  # no tag, no commit known
    with pytest.raises(SourceError, match="holds no Rust standard library"):
        open_source(f"rust:stdlib={tmp_path}")


# ---------------------------------------------------------------- found at the release tag


def _stdlib_text(src, rel: str) -> str:
    """A file of a toolchain's standard library, read from where the toolchain keeps it."""
    if isinstance(src, JavaStdlibSource):
        with zipfile.ZipFile(src.zip) as z:
            return z.read(rel).decode()
    return Path(src.src if isinstance(src, GoStdlibSource) else src.library, rel).read_text()


def _release(language: str, src) -> tuple[str, str, str]:
    """The repository, release tag and license a toolchain's files are expected under."""
    if language == "go":
        return "golang/go", "go" + GO.version, "BSD-3-Clause"
    if language == "java":
        feature = JAVA.version.split(".")[0]
        return (
            f"openjdk/jdk{feature}u",
            _java_tag(src.jdk.home),
            "GPL-2.0-only WITH Classpath-exception-2.0",
        )
    return "rust-lang/rust", RUST.version, "MIT OR Apache-2.0"


# a known function of each standard library, pasted renamed into a file of the user's: (the
# language, its file among the toolchain's sources, the line that opens it, the rename, the
# user's lines before and after it, its path in the language's repository, the subset the
# index names after its version)
RELEASE_TAG_CASES = [
    pytest.param(
        "go", "strings/strings.go", "func Repeat(s string, count int) string {",
        ("func Repeat(", "func repeatString("), ("package main\n\n", ""),
        "src/strings/strings.go", " only strings,unicode/utf8",
        marks=needs_go, id="go-strings.Repeat",
    ),
    pytest.param(
        "java", "java.base/java/util/ArrayList.java",
        "boolean removeIf(Predicate<? super E> filter, int i, final int end)",
        ("removeIf(", "dropWhere("), ("class Bag<E> {\n", "}\n"),
        "src/java.base/share/classes/java/util/ArrayList.java",
        " only java.base/java/util/ArrayList.java,java.base/java/util/AbstractList.java",
        marks=needs_java, id="java-ArrayList.removeIf",
    ),
    pytest.param(
        "rust", "alloc/src/vec/mod.rs", "pub fn retain_mut<F>(&mut self, mut f: F)",
        ("retain_mut", "keep_where"), ("impl<T> Stack<T> {\n", "}\n"),
        "library/alloc/src/vec/mod.rs", "",
        marks=needs_rust, id="rust-Vec.retain_mut",
    ),
]  # fmt: skip


@pytest.mark.parametrize("language, rel, opening, rename, around, path, subset", RELEASE_TAG_CASES)
def test_a_standard_library_function_found_at_its_release_tag(
    request, language, rel, opening, rename, around, path, subset
):
    out, src = request.getfixturevalue(f"{language}_index")
    code = _stdlib_text(src, rel)
    function = block(code, opening)
    pasted = around[0] + function.replace(*rename) + around[1]
    found = source_of(query(out, pasted, language), path)
    repository, tag, spdx = _release(language, src)
    assert (found["repository"], found["commit"], found["license"]) == (repository, tag, spdx)
    first = code[: code.index(function)].count("\n") + 1
    assert found["start_line"] <= first + 1
    assert found["url"] == (
        f"https://github.com/{repository}/blob/{tag}/{path}"
        f"#L{found['start_line']}-L{found['end_line']}"
    )
    stats = json.loads(run("stats", out, "--json").stdout)
    (entry,) = stats["sources"]
    toolchain = {"go": GO, "java": JAVA, "rust": RUST}[language]
    assert (entry["kind"], entry["key"], entry["version"]) == (
        f"{language}-stdlib",
        f"{language}:stdlib",
        toolchain.version + subset,
    )


# ---------------------------------------------------------------- absent toolchains


@pytest.fixture
def bare_machine(tmp_path, monkeypatch):
    """No toolchain on PATH, none in the usual places, no variables naming one."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for name in ("GOROOT", "JAVA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tc, "GO_ROOTS", (str(tmp_path / "go"),))
    monkeypatch.setattr(tc, "JDK_DEFAULTS", ())
    monkeypatch.setattr(tc, "JDK_GLOBS", (str(tmp_path / "jvm" / "*"),))
    monkeypatch.setattr(tc, "RUST_SOURCE_GLOBS", (str(tmp_path / "src" / "rustc-*"),))
    return tmp_path


def test_an_absent_toolchain_says_what_to_install(bare_machine):
    assert find_toolchains(with_missing=True) == []
    for spec, install in (
        ("go:stdlib", "golang-go"),
        ("java:stdlib", "openjdk-17-jdk openjdk-17-source"),
        ("rust:stdlib", "rust-src"),
    ):
        with pytest.raises(SourceError) as e:
            open_source(spec)
        message = str(e.value)
        assert message.startswith(f"{spec}: ") and "\n" not in message and install in message
    with pytest.raises(SourceError, match="no path after"):
        open_source("go:stdlib=")


def test_the_cli_says_it_in_one_line(tmp_path):
    done = run("build", f"go:stdlib={tmp_path / 'nowhere'}", "--out", tmp_path / "idx")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "expected a GOROOT" in done.stderr
