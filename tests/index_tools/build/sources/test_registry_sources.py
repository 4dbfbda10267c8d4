"""PyPI and npm packages as corpus sources, against real registry software on loopback:
pypiserver and verdaccio, started here, serving package files these tests make (hostile
ones included). One test fetches a small real package from each public registry and is
skipped when they cannot be reached."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
import warnings
import zipfile

import pytest
from registry_helpers import (
    PypiServer,
    Verdaccio,
    free_port,
    have_verdaccio,
    npm_tarball,
    sdist,
    tar_gz,
)

from index_tools.build.sources.archives import (
    DUPLICATE_NAME,
    LINK,
    SPECIAL_FILE,
    UNSAFE_PATH,
    ArchiveLimits,
)
from index_tools.build.sources.npm import open_npm
from index_tools.build.sources.packages import PACKAGE_REFUSED, PACKAGE_UNAVAILABLE, RegistryOptions
from index_tools.build.sources.pypi import open_pypi
from index_tools.build.sources.registry_http import RegistryError

SESSIONS = b'''# SPDX-License-Identifier: Apache-2.0
"""Sessions: settings that persist across requests."""


def merge_setting(request_setting, session_setting, dict_class=dict):
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
UTIL = b"def double(x):\n    return 2 * x\n"


def options(tmp_path, **kw) -> RegistryOptions:
    kw.setdefault("cache", str(tmp_path / "cache"))
    kw.setdefault("progress", False)
    kw.setdefault("retries", 1)
    kw.setdefault("timeout", 20)
    return RegistryOptions(**kw)


def docs_of(source):
    return {d.origin.path: d for d in source.documents()}


# ---------------------------------------------------------------- PyPI (pypiserver)


@pytest.fixture(scope="module")
def pypi(tmp_path_factory):
    server = PypiServer(tmp_path_factory.mktemp("pypiserver"))
    files = {"src/demo/sessions.py": SESSIONS, "src/demo/util.py": UTIL, "README.md": b"# demo\n"}
    urls = ("Homepage, https://demo.example.org", "Source, https://github.com/acme/demo")
    for version in ("1.0.0", "1.1.0", "2.0.0rc1"):
        server.add(f"demo-{version}.tar.gz", sdist("demo", version, files, project_urls=urls))
    server.add("plain-0.1.tar.gz", sdist("plain", "0.1", {"plain.py": UTIL},
                                          license_expression=""))  # fmt: skip
    hostile = [
        ("evil-1.0/../escape.py", UTIL),
        ("/abs/evil.py", UTIL),
        ("C:/drive/evil.py", UTIL),
        ("evil-1.0/..\\..\\back.py", UTIL),
        ("evil-1.0/link.py", b"", {"type": b"2", "linkname": "/etc/passwd"}),
        ("evil-1.0/hard.py", b"", {"type": b"1", "linkname": "evil-1.0/ok.py"}),
        ("evil-1.0/dev.py", b"", {"type": b"3", "devmajor": 1, "devminor": 3}),
        ("evil-1.0/fifo.py", b"", {"type": b"6"}),
        ("evil-1.0/ok.py", UTIL),
        ("evil-1.0/ok.py", b"def replaced():\n    return 'second copy'\n"),
    ]
    server.add("evil-1.0.tar.gz", sdist("evil", "1.0", {}, extra=hostile))
    bomb = tar_gz([("bomb-1.0/PKG-INFO", b"Name: bomb\nVersion: 1.0\n\n"),
                   ("bomb-1.0/zeros.py", b"\0" * (3 << 20))])  # fmt: skip
    server.add("bomb-1.0.tar.gz", bomb)
    many = [("many-1.0/PKG-INFO", b"Name: many\nVersion: 1.0\n\n")]
    many += [(f"many-1.0/m{i}.py", UTIL) for i in range(60)]
    server.add("many-1.0.tar.gz", tar_gz(many))
    server.add("broken-1.0.tar.gz", sdist("broken", "1.0", {"b.py": UTIL})[:200])
    server.add("zipped-1.0.zip", zipped())
    server.add("wheely-2.0-py3-none-any.whl", wheel())
    yield server
    server.stop()


def zipped() -> bytes:
    """A zip sdist with hostile members: escaping names, a symlink, a device, a duplicate."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr(
                "zipped-1.0/PKG-INFO", "Name: zipped\nVersion: 1.0\nLicense: BSD-3-Clause\n\n"
            )
            z.writestr("zipped-1.0/good.py", UTIL)
            z.writestr("zipped-1.0/../../up.py", UTIL)
            z.writestr("/root.py", UTIL)
            z.writestr("zipped-1.0/C:/x.py", UTIL)  # a drive letter only at the start counts
            for name, kind in (("zipped-1.0/sym.py", 0o120777), ("zipped-1.0/dev.py", 0o020644)):
                info = zipfile.ZipInfo(name)
                info.create_system = 3
                info.external_attr = kind << 16
                z.writestr(info, "/etc/passwd")
            z.writestr("zipped-1.0/good.py", b"print('second')\n")
    return buf.getvalue()


def wheel() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("wheely/__init__.py", UTIL)
        z.writestr("wheely-2.0.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: wheely\nVersion: 2.0\n"
                   "Classifier: License :: OSI Approved :: MIT License\n"
                   "Project-URL: Repository, https://gitlab.com/acme/wheely\n\n")  # fmt: skip
    return buf.getvalue()


def test_pypi_zip_sdist_and_wheel(pypi, tmp_path):
    opts = options(tmp_path, pypi_url=pypi.url)
    src = open_pypi("pypi:zipped", "zipped", options=opts, max_file_bytes=10**6)
    docs = docs_of(src)
    assert set(docs) == {"good.py", "C:/x.py"} and "second" not in docs["good.py"].text
    assert docs["good.py"].origin.license == "BSD-3-Clause"
    s = src.skipped
    assert (s[UNSAFE_PATH], s[LINK], s[SPECIAL_FILE], s[DUPLICATE_NAME]) == (2, 1, 1, 1)
    src = open_pypi("pypi:wheely", "wheely", options=opts, max_file_bytes=10**6)
    (doc,) = src.documents()
    assert (doc.origin.repository, doc.origin.path, doc.origin.license) == (
        "pypi:wheely==2.0", "wheely/__init__.py", "MIT")  # fmt: skip
    assert src.describe()["packages"][0]["repository_url"] == "https://gitlab.com/acme/wheely"


def test_pypi_newest_release_with_provenance(pypi, tmp_path):
    src = open_pypi("pypi:demo", "demo", options=options(tmp_path, pypi_url=pypi.url),
                    max_file_bytes=1_000_000)  # fmt: skip
    assert src.name == "pypi:demo==1.1.0"  # the pre-release 2.0.0rc1 is not the newest
    docs = docs_of(src)
    assert set(docs) == {"src/demo/sessions.py", "src/demo/util.py"}
    o = docs["src/demo/util.py"].origin
    assert (o.repository, o.commit, o.license) == ("pypi:demo==1.1.0", "1.1.0", "MIT")
    # the file's own header wins over the package's metadata
    assert docs["src/demo/sessions.py"].origin.license == "Apache-2.0"
    assert src.describe()["packages"][0]["repository_url"] == "https://github.com/acme/demo"
    assert o.link == ""  # a private index: no public viewer
    assert src.skipped["unsupported"] >= 2  # README.md, PKG-INFO


def test_pypi_pinned_version_and_specifier(pypi, tmp_path):
    opts = options(tmp_path, pypi_url=pypi.url)
    assert open_pypi("pypi:demo==1.0.0", "demo==1.0.0", options=opts,
                     max_file_bytes=10**6).name == "pypi:demo==1.0.0"  # fmt: skip
    assert open_pypi("s", "demo<1.1", options=opts, max_file_bytes=10**6).name == "pypi:demo==1.0.0"
    assert open_pypi("s", "demo>=2.0.0rc1", options=opts,
                     max_file_bytes=10**6).name == "pypi:demo==2.0.0rc1"  # fmt: skip


def test_pypi_license_from_license_file(pypi, tmp_path):
    src = open_pypi("pypi:plain", "plain", options=options(tmp_path, pypi_url=pypi.url),
                    max_file_bytes=10**6)  # fmt: skip
    assert [d.origin.license for d in src.documents()] == ["NOASSERTION"]


def test_pypi_hostile_archive_is_read_safely(pypi, tmp_path):
    before = set(os.listdir(tmp_path))
    src = open_pypi("pypi:evil", "evil", options=options(tmp_path, pypi_url=pypi.url),
                    max_file_bytes=10**6)  # fmt: skip
    docs = docs_of(src)
    assert list(docs) == ["ok.py"]
    assert "second copy" not in docs["ok.py"].text  # the first of two same names is kept
    s = src.skipped
    assert s[UNSAFE_PATH] == 4 and s[LINK] == 2 and s[SPECIAL_FILE] == 2
    assert s[DUPLICATE_NAME] == 1
    assert set(os.listdir(tmp_path)) - before == {"cache"}  # nothing unpacked anywhere


def test_pypi_archive_past_the_limits_is_refused(pypi, tmp_path):
    limits = ArchiveLimits(max_members=50, max_expanded_bytes=1 << 20)
    opts = options(tmp_path, pypi_url=pypi.url, limits=limits)
    with pytest.raises(RegistryError, match=r"pypi:bomb: .*expands past 1,048,576 bytes"):
        open_pypi("pypi:bomb", "bomb", options=opts, max_file_bytes=10**6)
    with pytest.raises(RegistryError, match="more than 50 members"):
        open_pypi("pypi:many", "many", options=opts, max_file_bytes=10**6)
    # in a list, with keep_going: left out and counted
    listing = tmp_path / "list.txt"
    listing.write_text("# packages\nbomb\nmany\ndemo==1.0.0  # pinned\n")
    opts.keep_going = True
    src = open_pypi("pypi:list", str(listing), options=opts, max_file_bytes=10**6)
    assert [f.resolved.name for f in src.fetched] == ["demo"]
    list(src.documents())
    assert src.skipped[PACKAGE_REFUSED] == 2


def test_pypi_damaged_archive(pypi, tmp_path):
    with pytest.raises(RegistryError, match="digest mismatch|damaged|not a tar"):
        open_pypi("pypi:broken", "broken", options=options(tmp_path, pypi_url=pypi.url),
                  max_file_bytes=10**6)  # fmt: skip


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "nosuchpackage",
            r"^pypi:nosuchpackage: no project named 'nosuchpackage' on 127\.0\.0\.1$",
        ),
        ("demo==9.9", r"^pypi:demo==9\.9: 'demo' has no release matching ==9\.9 on 127\.0\.0\.1$"),
    ],
)
def test_pypi_missing_package_or_version(pypi, tmp_path, value, message):
    with pytest.raises(RegistryError, match=message):
        open_pypi(f"pypi:{value}", value, options=options(tmp_path, pypi_url=pypi.url),
                  max_file_bytes=10**6)  # fmt: skip


def test_pypi_registry_down(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/simple/"
    with pytest.raises(RegistryError) as e:
        open_pypi("pypi:demo", "demo", options=options(tmp_path, pypi_url=url),
                  max_file_bytes=10**6)  # fmt: skip
    assert "cannot reach" in str(e.value) and "connection refused" in str(e.value)
    assert "\n" not in str(e.value)


def test_requirements_hash_mismatch_and_list_errors(pypi, tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("demo==1.0.0 --hash=sha256:" + "0" * 64 + "\n")
    with pytest.raises(RegistryError, match="digest mismatch"):
        open_pypi("pypi:r", str(req), options=options(tmp_path, pypi_url=pypi.url),
                  max_file_bytes=10**6)  # fmt: skip
    good = hashlib.sha256((pypi.packages / "demo-1.0.0.tar.gz").read_bytes()).hexdigest()
    inc = tmp_path / "base.txt"
    inc.write_text(f"demo==1.0.0 \\\n    --hash=sha256:{good}\n")
    req.write_text("-r base.txt\n-e ./local\nplain ; python_version > '3'\n"
                   "nosuchpackage\nother @ https://example.org/x.tar.gz\n")  # fmt: skip
    with pytest.raises(
        RegistryError, match=r"^pypi:nosuchpackage \(requirements\.txt:4\): no project"
    ):
        open_pypi("pypi:r", str(req), options=options(tmp_path, pypi_url=pypi.url),
                  max_file_bytes=10**6)  # fmt: skip
    src = open_pypi("pypi:r", str(req), options=options(tmp_path, pypi_url=pypi.url,
                    keep_going=True), max_file_bytes=10**6)  # fmt: skip
    assert [f.resolved.name for f in src.fetched] == ["demo", "plain"]
    list(src.documents())
    assert src.skipped[PACKAGE_UNAVAILABLE] == 1 and src.skipped["not from the registry"] == 2


def test_downloads_are_cached_and_resumed(pypi, tmp_path):
    opts = options(tmp_path, pypi_url=pypi.url)
    # a pinned version needs no registry once cached
    own = PypiServer(tmp_path / "own")
    own.add("demo-1.0.0.tar.gz", (pypi.packages / "demo-1.0.0.tar.gz").read_bytes())
    alone = options(tmp_path, pypi_url=own.url, cache=str(tmp_path / "c2"))
    open_pypi("pypi:demo==1.0.0", "demo==1.0.0", options=alone, max_file_bytes=10**6)
    own.stop()
    src = open_pypi("pypi:demo==1.0.0", "demo==1.0.0", options=alone, max_file_bytes=10**6)
    assert len(docs_of(src)) == 2
    with pytest.raises(RegistryError, match=r"^pypi:demo: cannot reach .*connection refused$"):
        open_pypi("pypi:demo", "demo", options=alone, max_file_bytes=10**6)
    src = open_pypi("pypi:demo==1.0.0", "demo==1.0.0", options=opts, max_file_bytes=10**6)
    archive = src.fetched[0].archive
    whole = archive.read_bytes()
    # an interrupted download: half of it in the .part file
    archive.unlink()
    part = archive.with_name(archive.name + ".part")
    part.write_bytes(whole[: len(whole) // 2])
    src = open_pypi("pypi:demo==1.0.0", "demo==1.0.0", options=opts, max_file_bytes=10**6)
    assert archive.read_bytes() == whole and not part.exists()
    # a stale partial file of something else: fetched again whole
    archive.unlink()
    part.write_bytes(b"x" * 1000)
    open_pypi("pypi:demo==1.0.0", "demo==1.0.0", options=opts, max_file_bytes=10**6)
    assert archive.read_bytes() == whole


# ---------------------------------------------------------------- npm (verdaccio)

needs_verdaccio = pytest.mark.skipif(
    not have_verdaccio(), reason="verdaccio is not installed (scripts/registry-servers.sh)"
)


@pytest.fixture(scope="module")
def npm(tmp_path_factory):
    if not have_verdaccio():
        pytest.skip("verdaccio is not installed (scripts/registry-servers.sh)")
    server = Verdaccio(tmp_path_factory.mktemp("verdaccio"))
    js = (b"// lodash-ish\n'use strict';\n" + SESSIONS.replace(b"#", b"//")).replace(b'"""', b"/*")
    for version in ("1.0.0", "1.2.0", "2.0.0-beta.1"):
        manifest = {"name": "leftpad", "version": version, "license": "MIT",
                    "repository": {"type": "git", "url": "git+https://github.com/acme/leftpad.git"}}  # fmt: skip
        tag = "next" if "beta" in version else "latest"
        server.publish("leftpad", version, npm_tarball(manifest, {"index.js": js,
                       "lib/pad.ts": b"export const pad = (s: string) => ' ' + s;\n"}),
                       manifest, tag=tag)  # fmt: skip
    scoped = {"name": "@acme/widgets", "version": "3.1.4", "license": "(MIT OR Apache-2.0)",
              "repository": "github:acme/widgets"}  # fmt: skip
    server.publish("@acme/widgets", "3.1.4", npm_tarball(scoped, {"src/w.js": b"module.exports = 1;\n"}), scoped)  # fmt: skip
    hostile = [
        ("package/../../escape.js", b"x = 1;\n"),
        ("/etc/evil.js", b"x = 1;\n"),
        ("package/link.js", b"", {"type": b"2", "linkname": "../../../etc/passwd"}),
        ("package/ok.js", b"module.exports = 'ok';\n"),
    ]
    server.publish("hostile", "1.0.0", npm_tarball({"name": "hostile", "version": "1.0.0"}, {},
                   extra=hostile))  # fmt: skip
    tampered = npm_tarball({"name": "tampered", "version": "1.0.0"}, {"t.js": b"t = 1;\n"})
    fake = base64.b64encode(hashlib.sha512(b"something else").digest()).decode()
    server.publish("tampered", "1.0.0", tampered, integrity=f"sha512-{fake}")
    yield server
    server.stop()


@needs_verdaccio
def test_npm_latest_tag_range_and_scoped(npm, tmp_path):
    opts = options(tmp_path, npm_registry=npm.url)
    src = open_npm("npm:leftpad", "leftpad", options=opts, max_file_bytes=10**6)
    docs = docs_of(src)
    assert src.name == "npm:leftpad@1.2.0" and set(docs) == {"index.js", "lib/pad.ts"}
    o = docs["lib/pad.ts"].origin
    assert (o.repository, o.commit, o.license, o.link) == ("npm:leftpad@1.2.0", "1.2.0", "MIT", "")
    assert docs["index.js"].origin.license == "Apache-2.0"  # its own header
    assert src.describe()["packages"][0]["repository_url"] == "https://github.com/acme/leftpad"
    assert open_npm("s", "leftpad@next", options=opts, max_file_bytes=10**6).name == (
        "npm:leftpad@2.0.0-beta.1"
    )
    assert open_npm("s", "leftpad@~1.0", options=opts, max_file_bytes=10**6).name == (
        "npm:leftpad@1.0.0"
    )
    src = open_npm("s", "@acme/widgets", options=opts, max_file_bytes=10**6)
    (doc,) = src.documents()
    assert doc.origin.repository == "npm:@acme/widgets@3.1.4" and doc.origin.path == "src/w.js"
    assert doc.origin.license == "MIT OR Apache-2.0"
    assert src.describe()["packages"][0]["repository_url"] == "https://github.com/acme/widgets"


@needs_verdaccio
def test_npm_hostile_tarball(npm, tmp_path):
    src = open_npm("npm:hostile", "hostile", options=options(tmp_path, npm_registry=npm.url),
                   max_file_bytes=10**6)  # fmt: skip
    assert list(docs_of(src)) == ["ok.js"]
    assert src.skipped[UNSAFE_PATH] == 2 and src.skipped[LINK] == 1


@needs_verdaccio
def test_npm_integrity_mismatch_and_missing(npm, tmp_path):
    opts = options(tmp_path, npm_registry=npm.url)
    with pytest.raises(RegistryError, match=r"^npm:tampered: digest mismatch"):
        open_npm("npm:tampered", "tampered", options=opts, max_file_bytes=10**6)
    assert not any(p.suffix in (".tgz",) for p in (tmp_path / "cache").rglob("*"))
    with pytest.raises(RegistryError, match=r"no package named 'nosuch'"):
        open_npm("npm:nosuch", "nosuch", options=opts, max_file_bytes=10**6)
    with pytest.raises(RegistryError, match=r"'leftpad' has no version 9\.9\.9"):
        open_npm("npm:leftpad@9.9.9", "leftpad@9.9.9", options=opts, max_file_bytes=10**6)


@needs_verdaccio
def test_npm_package_json_and_lock(npm, tmp_path):
    opts = options(tmp_path, npm_registry=npm.url)
    pj = tmp_path / "package.json"
    pj.write_text(json.dumps({
        "dependencies": {"leftpad": "^1.0.0", "@acme/widgets": "3.x", "local": "file:../x"},
        "devDependencies": {"gitdep": "github:acme/gitdep", "alias": "npm:leftpad@1.0.0"},
    }))  # fmt: skip
    src = open_npm("npm:package.json", str(pj), options=opts, max_file_bytes=10**6)
    got = sorted(src.ecosystem.repository(f.resolved) for f in src.fetched)
    assert got == ["npm:@acme/widgets@3.1.4", "npm:leftpad@1.0.0", "npm:leftpad@1.2.0"]
    list(src.documents())
    assert src.skipped["not from the registry"] == 2
    tarball = urllib.request.urlopen(f"{npm.url}leftpad/-/leftpad-1.0.0.tgz").read()
    good = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    lock = {"lockfileVersion": 3, "packages": {
        "": {"name": "app"},
        "node_modules/leftpad": {"version": "1.0.0", "resolved": "https://x/leftpad.tgz",
                                 "integrity": good},
        "node_modules/linked": {"link": True, "resolved": "../linked"},
    }}  # fmt: skip
    lockfile = tmp_path / "package-lock.json"
    lockfile.write_text(json.dumps(lock))
    src = open_npm("npm:lock", str(lockfile), options=opts, max_file_bytes=10**6)
    assert [f.resolved.version for f in src.fetched] == ["1.0.0"]
    bad = base64.b64encode(hashlib.sha512(b"other").digest()).decode()
    lock["packages"]["node_modules/leftpad"]["integrity"] = f"sha512-{bad}"
    lockfile.write_text(json.dumps(lock))
    with pytest.raises(RegistryError, match="pinned by the list"):
        open_npm("npm:lock", str(lockfile), options=opts, max_file_bytes=10**6)


@needs_verdaccio
def test_npm_private_registry_with_token(tmp_path):
    server = Verdaccio(tmp_path / "private", private=True)
    try:
        token = server.add_user("ci", "secret-password")
        manifest = {"name": "internal", "version": "0.1.0", "license": "UNLICENSED"}
        server.publish("internal", "0.1.0", npm_tarball(manifest, {"i.js": b"i = 1;\n"}), manifest)
        with pytest.raises(RegistryError, match="access refused"):
            open_npm("npm:internal", "internal", options=options(tmp_path, npm_registry=server.url),
                     max_file_bytes=10**6)  # fmt: skip
        src = open_npm("npm:internal", "internal",
                       options=options(tmp_path, npm_registry=server.url, npm_token=token),
                       max_file_bytes=10**6)  # fmt: skip
        (doc,) = src.documents()
        assert doc.origin.repository == "npm:internal@0.1.0"
        assert token not in json.dumps(src.describe())
    finally:
        server.stop()


# ---------------------------------------------------------------- the public registries


def _reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10):
            return True
    except Exception:
        return False


def test_public_registries(tmp_path):
    if not (
        _reachable("https://pypi.org/simple/six/")
        and _reachable("https://registry.npmjs.org/is-number")
    ):
        pytest.skip("the public registries cannot be reached")
    opts = options(tmp_path, retries=2)
    src = open_pypi("pypi:six==1.16.0", "six==1.16.0", options=opts, max_file_bytes=10**6)
    docs = docs_of(src)
    o = docs["six.py"].origin
    assert (o.repository, o.license) == ("pypi:six==1.16.0", "MIT")
    assert o.link.startswith("https://inspector.pypi.io/project/six/1.16.0/packages/")
    assert o.link.endswith("/six-1.16.0.tar.gz/six-1.16.0/six.py")
    assert o.url(3, 7) == o.link + "#line.3-7" and o.url(3) == o.link + "#line.3"
    src = open_npm("npm:is-number@7.0.0", "is-number@7.0.0", options=opts, max_file_bytes=10**6)
    o = docs_of(src)["index.js"].origin
    assert (o.repository, o.license) == ("npm:is-number@7.0.0", "MIT")
    assert o.link == "https://app.unpkg.com/is-number@7.0.0/files/index.js"
    assert o.url(3, 7) == o.link + "#L3-7" and o.url(3) == o.link + "#L3"
    assert (
        src.describe()["packages"][0]["repository_url"]
        == "https://github.com/jonschlinkert/is-number"
    )


# ---------------------------------------------------------------- the CLI and the builders

CLI = [sys.executable, "-m", "index_tools.cli"]


def cli(*args, stdin="", env=None):
    return subprocess.run(
        [*CLI, *map(str, args)], input=stdin, capture_output=True, text=True, timeout=600,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def _registries(pypi, npm_url, tmp_path) -> list[str]:
    return ["--pypi-url", pypi.url, "--npm-registry", npm_url, "--max-unpacked-mb", 1,
            "--package-cache", tmp_path / "cache", "--jobs", 1]  # fmt: skip


@pytest.fixture(scope="module")
def npm_url(request):
    return request.getfixturevalue("npm").url if have_verdaccio() else "http://127.0.0.1:9/"


def test_cli_build_and_quote_shows_package_version_license_link(pypi, npm_url, tmp_path):
    specs = ["pypi:demo"] + (["npm:leftpad@1.0.0"] if have_verdaccio() else [])
    out = tmp_path / "idx"
    r = cli("build", *specs, "--out", out, *_registries(pypi, npm_url, tmp_path))
    assert r.returncode == 0, r.stderr
    assert "skipped:" in r.stdout and "unsupported" in r.stdout
    quote = SESSIONS.decode().split("\n", 2)[2]  # without the license header
    r = cli("query", out, stdin=quote)
    assert r.returncode == 0, r.stderr
    assert "pypi:demo==1.1.0 src/demo/sessions.py" in r.stdout and "Apache-2.0" in r.stdout
    r = cli("query", out, "--json", stdin=quote)
    src = json.loads(r.stdout)["matches"][0]["sources"][0]
    assert (src["repository"], src["commit"], src["path"]) == (
        "pypi:demo==1.1.0", "1.1.0", "src/demo/sessions.py")  # fmt: skip
    from index_tools.model import Source
    from server.hover import source_line

    hover = source_line(Source.from_dict(src)).replace("\\", "")  # markdown escapes
    assert "pypi:demo==1.1.0 src/demo/sessions.py" in hover and "Apache-2.0" in hover
    code = tmp_path / "work" / "copied.py"
    code.parent.mkdir()
    code.write_text(quote)
    r = cli("check", code, "--index", out, "--format", "sarif")
    sarif = json.loads(r.stdout)
    assert "pypi:demo==1.1.0" in json.dumps(sarif)
    if have_verdaccio():
        js = cli("query", out, "--json", stdin=quote.replace("#", "//").replace('"""', "/*"))
        repos = {s["repository"] for m in json.loads(js.stdout)["matches"] for s in m["sources"]}
        assert "npm:leftpad@1.0.0" in repos


def test_cli_failures_are_one_line_exit_2_and_publish_nothing(pypi, npm_url, tmp_path):
    out = tmp_path / "idx"
    reg = _registries(pypi, npm_url, tmp_path)
    assert cli("build", "pypi:demo==1.0.0", "--out", out, *reg).returncode == 0
    before = cli("stats", out, "--json").stdout
    down = ["--pypi-url", f"http://127.0.0.1:{free_port()}/simple/"]
    cases = [
        (["pypi:nosuchpackage"], "no project named 'nosuchpackage'"),
        (["pypi:demo==7.0"], "'demo' has no release matching ==7.0"),
        (["pypi:demo==1.0.0", "pypi:bomb"], None),
        (["pypi:demo", *down], "connection refused"),
        (["pypi:demo", "pypi:evil", "pypi:broken"], None),
    ]
    for args, message in cases:
        r = cli("build", *args, "--out", out, *reg[2 if down[0] in args else 0 :])
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
        if message:
            assert message in lines[0]
        assert cli("stats", out, "--json").stdout == before  # the old index, untouched
    fresh = tmp_path / "never"
    r = cli("build", "pypi:nosuchpackage", "--out", fresh, *reg)
    assert r.returncode == 2 and not fresh.exists()
    (tmp_path / "file").write_text("")
    r = cli("build", "pypi:demo", "--out", fresh, *reg, "--package-cache", tmp_path / "file" / "c")
    assert r.returncode == 2 and not fresh.exists()
    assert r.stderr.count("\n") == 1 and "cannot use the package cache" in r.stderr


def test_cli_requirements_file_and_keep_going(pypi, npm_url, tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("demo==1.0.0\nnosuchpackage\nbomb\n")
    reg = _registries(pypi, npm_url, tmp_path)
    r = cli("build", req, "--out", tmp_path / "a", *reg)
    assert r.returncode == 2 and "2 of 3 packages could not be fetched" in r.stderr
    r = cli("build", req, "--out", tmp_path / "a", "--keep-going", "--json", *reg)
    assert r.returncode == 0, r.stderr
    skipped = json.loads(r.stdout)["skipped"]
    assert skipped["package unavailable"] == 1 and skipped["package refused"] == 1
    assert "left out: pypi:nosuchpackage (requirements.txt:2): no project named" in r.stderr
    assert "left out: pypi:bomb (requirements.txt:3): the archive expands past" in r.stderr


def test_spark_builder_reads_packages(pypi, npm_url, tmp_path):
    if importlib.util.find_spec("pyspark") is None or not shutil.which("java"):
        pytest.skip("PySpark or Java is missing (the Spark builder's own tests say which)")
    out = tmp_path / "spark"
    r = cli("build", "pypi:demo", "--engine", "spark", "--out", out,
            *_registries(pypi, npm_url, tmp_path))  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = cli("query", out, "--json", stdin=SESSIONS.decode().split("\n", 2)[2])
    src = json.loads(r.stdout)["matches"][0]["sources"][0]
    assert src["repository"] == "pypi:demo==1.1.0"


# ---------------------------------------------------------------- pieces


def test_only_http_and_credentials_stay_on_their_registry():
    from index_tools.build.sources.registry_http import Endpoint, Http

    for url in ("file:///etc/passwd", "ftp://example.org/x.tgz"):
        with pytest.raises(RegistryError, match="not an http"):
            Http(retries=0).get_bytes(url, {}, "")
    e = Endpoint.parse("https://ci:s3cret@mirror.example.org/simple")
    assert e.url == "https://mirror.example.org/simple/" and "s3cret" not in repr(e)
    assert e.headers_for("https://mirror.example.org/packages/x.tar.gz")["Authorization"]
    assert e.headers_for("https://cdn.example.org/x.tar.gz") == {}
    assert e.headers_for("http://mirror.example.org/x.tar.gz") == {}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("^1.2.0", "1.9.0"),
        ("~1.2.0", "1.2.5"),
        ("1.x", "1.9.0"),
        ("*", "2.0.0"),
        (">=1.2.5 <2", "1.9.0"),
        ("1.2.3 - 1.2.5", "1.2.5"),
        ("<1.0.0 || ^2", "2.0.0"),
        ("^0.2.3", "0.2.9"),
        ("^3.0.0-beta.1", "3.0.0-beta.2"),
        ("^9", None),
    ],
)
def test_npm_ranges(spec, expected):
    from index_tools.build.sources.semver import best_match

    versions = ["0.2.3", "0.2.9", "0.3.0", "1.2.3", "1.2.5", "1.9.0", "2.0.0", "2.1.0-rc.1",
                "3.0.0-beta.1", "3.0.0-beta.2"]  # fmt: skip
    assert best_match(versions, spec) == expected


def test_cli_build_names_the_versions_fetched_and_what_it_left_out(pypi, tmp_path):
    """`build pypi:demo` (no version given) says which version it indexed, and the kinds of
    the files it left out as not source code."""
    out = tmp_path / "idx"
    r = cli("build", "pypi:demo", "--out", out, *_registries(pypi, "http://127.0.0.1:9/", tmp_path))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "sources: pypi:demo==1.1.0" in lines, r.stdout
    (skipped,) = [line for line in lines if line.startswith("skipped:")]
    assert re.search(r"\d+ unsupported \((no extension|\.\w+) \d+", skipped), skipped
