"""npm manifests and lock files read for the packages they name (`npm_locks`).

The lock files under fixtures/locks/npm/ were written by the real tools (npm at lockfile
versions 1-3 and as a shrinkwrap, yarn 1, Yarn Berry 3 and 4, pnpm 7, 8 and 9) for one small
workspace against verdaccio, by `make_npm_locks.py` there; the tests never run those tools.
They read the files, and publish the same packages (made byte for byte the same) to a fresh
verdaccio to fetch every lock through `open_source` as a user would, the lock's integrity
checked on each download. Lock file shapes the fixture project does not produce (git and
tarball dependencies, patches, old formats) and hostile files are written here.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from collections import Counter
from pathlib import Path

import pytest
from registry_helpers import Verdaccio, have_verdaccio

from index_tools.build.sources import npm, npm_locks, open_source
from index_tools.build.sources.base import SourceError
from index_tools.build.sources.npm_locks import (
    NPM_LOCKS,
    read_npm_file,
    read_npm_manifest,
    read_package_lock,
    read_pnpm_lock,
    read_yarn_lock,
)
from index_tools.build.sources.packages import NOT_FROM_REGISTRY, RegistryOptions
from index_tools.build.sources.registry_http import Digest, RegistryError

FIXTURES = Path(__file__).parent / "fixtures" / "locks" / "npm"
_spec = importlib.util.spec_from_file_location("make_npm_locks", FIXTURES / "make_npm_locks.py")
made = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(made)

# each lock file of the fixture project: (its reader, what it counts as not from the registry)
LOCKS = {
    "npm-v1/package-lock.json": (read_package_lock, 3),  # @app/a, @app/b, localdep
    "npm-v2/package-lock.json": (read_package_lock, 3),  # their "link": true entries
    "npm-v3/package-lock.json": (read_package_lock, 3),
    "npm-shrinkwrap/npm-shrinkwrap.json": (read_package_lock, 3),
    "yarn1/yarn.lock": (read_yarn_lock, 1),  # localdep (yarn 1 leaves the members out)
    "berry3/yarn.lock": (read_yarn_lock, 3),  # two workspace: members and localdep's file:
    "berry4/yarn.lock": (read_yarn_lock, 3),
    "pnpm7/pnpm-lock.yaml": (read_pnpm_lock, 3),  # two importers and localdep's directory
    "pnpm8/pnpm-lock.yaml": (read_pnpm_lock, 3),
    "pnpm9/pnpm-lock.yaml": (read_pnpm_lock, 3),
}


def sri(data: bytes) -> Digest:
    return Digest("sha512", hashlib.sha512(data).hexdigest())


TARBALL_DIGESTS = {
    (name, version): sri(made.package_tarball(name, version, deps, peers))
    for name, version, deps, peers in made.PACKAGES
}


def read(path, reader=read_npm_file):
    skipped = Counter()
    return reader(str(path), skipped), skipped[NOT_FROM_REGISTRY]


def pairs(wanted) -> set[tuple[str, str]]:
    return {(w.name, w.constraint) for w in wanted}


def write(tmp_path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# ---------------------------------------------------------------- the real tools' lock files


@pytest.mark.parametrize("rel", sorted(LOCKS))
def test_each_lock_gives_the_locked_packages_with_their_pins(rel):
    path = FIXTURES / rel
    reader, not_from_registry = LOCKS[rel]
    wanted, skipped = read(path, reader)
    assert pairs(wanted) == made.LOCKED  # both leftpads, both @acme/colors (one by its alias)
    assert len(wanted) == len(made.LOCKED)  # each (name, version) once
    assert skipped == not_from_registry  # workspace members and the file: folder
    assert {w.where for w in wanted} == {f"{path.name} {w.name}" for w in wanted}
    for w in wanted:
        if rel.startswith("berry"):
            assert w.pinned == ()  # Berry's checksum is of Yarn's own zip, not the tarball
        else:
            assert w.pinned == (TARBALL_DIGESTS[(w.name, w.constraint)],), w
    # the dispatcher, npm's list reader and the format's reader agree
    assert read(path) == (wanted, skipped) == read(path, npm.read_list)


def test_the_published_packages_are_the_same_bytes_every_time():
    name, version, deps, peers = made.PACKAGES[4]
    data = made.package_tarball(name, version, deps, peers)
    assert data == made.package_tarball(name, version, deps, peers)
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as tar:
        members = {m.name: m for m in tar.getmembers()}
        manifest = json.load(tar.extractfile("package/package.json"))
    assert set(members) == {"package/package.json", "package/index.js"}
    assert {m.mtime for m in members.values()} == {1_700_000_000}
    assert manifest["dependencies"] == {"@acme/colors": "^2.0.0", "leftpad": "1.0.0"}
    big = made.tarball({"big.js": os.urandom(200_000)})  # several stored blocks
    with tarfile.open(fileobj=io.BytesIO(big)) as tar:
        assert tar.extractfile("package/big.js").read() == gzip.decompress(big)[512:200_512]


def test_package_json_ranges():
    wanted, skipped = read(FIXTURES / "project" / "package.json", read_npm_manifest)
    assert pairs(wanted) == {
        ("@acme/widgets", "^3.1.0"),
        ("@acme/colors", "1.0.0"),  # colors-legacy: npm:@acme/colors@1.0.0
        ("leftpad", "^1.2.0"),
        ("react-lite", "^18.0.0"),
        ("react-lite-dom", "18.2.0"),
    }
    assert skipped == 1  # localdep: file:vendor/localdep
    assert {w.where for w in wanted} == {
        "package.json dependencies",
        "package.json devDependencies",
    }
    # a member names its sibling by a range: one file cannot tell it is a member (the
    # workspace, which knows its members' names, leaves it out)
    member, _ = read(FIXTURES / "project" / "packages" / "a" / "package.json")
    assert pairs(member) == {("@acme/colors", "^2.0.0"), ("@app/b", "^1.0.0")}


def test_package_json_what_is_not_from_the_registry(tmp_path):
    pj = write(tmp_path, "package.json", json.dumps({
        "dependencies": {
            "tilde": "~1.2.3", "tag": "latest", "any": "", "star": "*", "or": "1 || 2",
            "hyphen": "1.0.0 - 2.0.0", "alias": "npm:@scope/real@^2", "dup": "^1",
        },
        "devDependencies": {
            "ws": "workspace:^", "f": "file:../f", "l": "link:../l", "p": "portal:../p",
            "g1": "github:acme/g1", "g2": "git+https://example.com/g2.git", "g3": "acme/g3#v1",
            "g4": "git@example.com:acme/g4.git", "u": "https://example.com/u.tgz",
            "rel": "../rel", "home": "~/x", "abs": "/x", "num": 3, "bad name": "1.0.0",
            "../../etc": "1.0.0",
        },
        "optionalDependencies": {"dup": "^1"},
        "peerDependencies": {"peer": "^1"},
    }))  # fmt: skip
    wanted, skipped = read(pj)
    assert pairs(wanted) == {
        ("tilde", "~1.2.3"), ("tag", "latest"), ("any", "latest"), ("star", "*"),
        ("or", "1 || 2"), ("hyphen", "1.0.0 - 2.0.0"), ("@scope/real", "^2"), ("dup", "^1"),
    }  # fmt: skip
    assert len(wanted) == 8 and skipped == 15
    for odd in ([], {"dependencies": []}, {"dependencies": "x"}):
        write(tmp_path, "package.json", json.dumps(odd))
        if isinstance(odd, list):
            with pytest.raises(RegistryError, match=r"package\.json: not a package\.json"):
                read(pj, read_npm_manifest)
        else:
            assert read(pj) == ([], 0)


# ---------------------------------------------------------------- shapes the project lacks


def test_package_lock_git_tarballs_bundles_and_nested_members(tmp_path):
    good = base64.b64encode(hashlib.sha512(b"x").digest()).decode()
    lock = {"lockfileVersion": 3, "packages": {
        "": {"name": "app", "workspaces": ["packages/a"]},
        "packages/a": {"name": "a", "version": "1.0.0", "dependencies": {"ms": "^2"}},
        "packages/a/node_modules/ms": {"version": "2.1.3", "integrity": f"sha512-{good} sha1-A",
                                       "resolved": "https://r/ms/-/ms-2.1.3.tgz"},
        "node_modules/ms": {"version": "2.1.3"},  # no resolved: still the registry's
        "node_modules/a": {"resolved": "packages/a", "link": True},
        "node_modules/g": {"version": "1.0.0", "resolved": "git+ssh://git@github.com/a/g.git#abc"},
        "node_modules/t": {"version": "1.0.0",
                           "resolved": "https://codeload.github.com/a/t/tar.gz/abc"},
        "node_modules/f": {"version": "1.0.0", "resolved": "file:vendor/f-1.0.0.tgz"},
        "node_modules/gl": {"version": "1.0.0",
                            "resolved": "https://gitlab.com/a/gl/-/archive/abc/gl-abc.tar.gz"},
        "node_modules/r": {"version": "4.0.0",  # GitLab's npm registry is a registry
                           "resolved": "https://gitlab.com/api/v4/projects/1/packages/npm/r/-/r-4.0.0.tgz"},
        "node_modules/ms/node_modules/b": {"version": "1.0.0", "inBundle": True},
        "node_modules/bad": {"version": "latest"},
        "node_modules/BAD NAME": {"version": "1.0.0"},
        "node_modules/@s/x": {"version": "1.0.0-rc.1+build.5", "resolved": "http://r/@s/x/-/x.tgz"},
    }}  # fmt: skip
    wanted, skipped = read(write(tmp_path, "package-lock.json", json.dumps(lock)))
    assert [(w.name, w.constraint) for w in wanted] == [
        ("ms", "2.1.3"),
        ("r", "4.0.0"),
        ("@s/x", "1.0.0-rc.1+build.5"),
    ]
    assert wanted[0].pinned == (Digest("sha512", hashlib.sha512(b"x").hexdigest()),)
    assert skipped == 8
    v1 = {"lockfileVersion": 1, "dependencies": {
        "a": {"version": "1.0.0", "dependencies": {"b": {"version": "2.0.0", "dependencies": {
            "c": {"version": "github:x/c#abc", "from": "github:x/c"}}}}},
        "alias": {"version": "npm:@s/real@3.0.0"},
        "bundled": {"version": "1.0.0", "bundled": True},
    }}  # fmt: skip
    wanted, skipped = read(write(tmp_path, "npm-shrinkwrap.json", json.dumps(v1)))
    assert pairs(wanted) == {("a", "1.0.0"), ("b", "2.0.0"), ("@s/real", "3.0.0")}
    assert skipped == 2


def test_yarn1_git_urls_aliases_and_old_sha1_pins(tmp_path):
    sha1 = hashlib.sha1(b"old").hexdigest()
    text = f"""# yarn lockfile v1


"@s/x@^1.0.0", "@s/x@^1.1.0":
  version "1.1.0"
  resolved "https://r/@s/x/-/x-1.1.0.tgz#{sha1}"
  integrity "sha512-{base64.b64encode(hashlib.sha512(b"x").digest()).decode()}"
  dependencies:
    y "^2"

old@1.0.0:
  version "1.0.0"
  resolved "https://r/old/-/old-1.0.0.tgz#{sha1}"

"real-alias@npm:y@2.0.0", y@^2:
  version "2.0.0"
  resolved "https://r/y/-/y-2.0.0.tgz"

"g@github:acme/g":
  version "1.0.0"
  resolved "https://codeload.github.com/acme/g/tar.gz/0123456"

"u@https://example.com/u.tgz":
  version "1.0.0"
  resolved "https://example.com/u.tgz"

"w@git+https://example.com/w.git#main":
  version "3.0.0"
  resolved "git+https://example.com/w.git#0123456"
"""
    wanted, skipped = read(write(tmp_path, "yarn.lock", text))
    assert [(w.name, w.constraint) for w in wanted] == [("@s/x", "1.1.0"), ("old", "1.0.0"),
                                                         ("y", "2.0.0")]  # fmt: skip
    assert wanted[0].pinned[0].algorithm == "sha512"
    assert wanted[1].pinned == (Digest("sha1", sha1),)  # before yarn 1.10: the URL's sha1
    assert wanted[2].pinned == () and skipped == 3


def test_yarn_berry_protocols(tmp_path):
    text = """# This file is generated by running "yarn install" inside your project.

__metadata:
  version: 8
  cacheKey: 10c0

"app@workspace:.":
  version: 0.0.0-use.local
  resolution: "app@workspace:."

"a@npm:^1.0.0, a@npm:^1.1.0":
  version: 1.1.0
  resolution: "a@npm:1.1.0"
  checksum: 10c0/0000
  languageName: node
  linkType: hard

"resolve@patch:resolve@npm%3A^1.22.1#optional!builtin<compat/resolve>":
  version: 1.22.8
  resolution: "resolve@patch:resolve@npm%3A1.22.8#optional!builtin<compat/resolve>::version=1.22.8&hash=c3c19d"

"resolve@npm:^1.22.1":
  version: 1.22.8
  resolution: "resolve@npm:1.22.8"
  dependenciesMeta:
    fsevents:
      optional: true
  bin:
    resolve: bin/resolve
  conditions: os=darwin & cpu=arm64

"@s/m@npm:2.0.0::__archiveUrl=https%3A%2F%2Fr%2Fm.tgz":
  version: 2.0.0
  resolution: "@s/m@npm:2.0.0::__archiveUrl=https%3A%2F%2Fr%2Fm.tgz"

"p@portal:../p::locator=app%40workspace%3A.":
  resolution: "p@portal:../p::locator=app%40workspace%3A."
"l@link:../l::locator=app%40workspace%3A.":
  resolution: "l@link:../l::locator=app%40workspace%3A."
"g@https://github.com/acme/g.git#commit=abc":
  resolution: "g@https://github.com/acme/g.git#commit=abc"
"e@exec:./gen.js":
  resolution: "e@exec:./gen.js::hash=1&locator=app%40workspace%3A."
'x@npm:1.0.0':
  resolution: 'x@npm:1.0.0'
"""
    wanted, skipped = read(write(tmp_path, "yarn.lock", text))
    assert [(w.name, w.constraint, w.pinned) for w in wanted] == [
        ("a", "1.1.0", ()), ("resolve", "1.22.8", ()), ("@s/m", "2.0.0", ()), ("x", "1.0.0", ()),
    ]  # fmt: skip
    assert skipped == 5  # the patch, portal, link, git and exec entries


def test_pnpm_old_and_odd_keys_and_documents(tmp_path):
    digest = "sha512-" + base64.b64encode(hashlib.sha512(b"x").digest()).decode()
    v5 = f"""lockfileVersion: 5.3
specifiers:
  a: ^1.0.0
dependencies:
  a: 1.0.0
packages:
  /a/1.0.0:
    resolution: {{integrity: {digest}}}
  /@types/b/2.0.0_@types+react@18.0.0_react@18.2.0:
    resolution: {{integrity: {digest}, tarball: 'https://r/@types/b/-/b-2.0.0.tgz'}}
    peerDependencies:
      react: '*'
  /@types/b/2.0.0_react@17.0.0:
    resolution: {{integrity: {digest}}}
  github.com/acme/g/0123456:
    resolution: {{tarball: https://codeload.github.com/acme/g/tar.gz/0123456}}
    name: g
    version: 1.0.0
  file:../local.tgz:
    resolution: {{integrity: {digest}, tarball: file:../local.tgz}}
  /c/3.0.0-beta.2:
    resolution:
      integrity: {digest}
"""
    wanted, skipped = read(write(tmp_path, "v5/pnpm-lock.yaml", v5))
    assert [(w.name, w.constraint) for w in wanted] == [("a", "1.0.0"), ("@types/b", "2.0.0"),
                                                         ("c", "3.0.0-beta.2")]  # fmt: skip
    assert all(w.pinned for w in wanted) and skipped == 2
    v9 = f"""---
lockfileVersion: '9.0'
importers:
  .:
    configDependencies: {{}}
packages:
  pnpm@9.15.9:
    resolution: {{integrity: {digest}}}

---
lockfileVersion: '9.0'

importers:

  .:
    dependencies:
      g:
        specifier: github:acme/g
        version: https://codeload.github.com/acme/g/tar.gz/0123456
  'packages/with space':
    dependencies: {{}}

packages:

  '@s/d@1.0.0(react@18.2.0)(@s/e@1.0.0(react@18.2.0))':
    resolution: {{integrity: {digest}}}

  g@https://codeload.github.com/acme/g/tar.gz/0123456:
    resolution: {{tarball: https://codeload.github.com/acme/g/tar.gz/0123456}}
    version: 1.0.0

  h@git+https://example.com/h.git#0123456:
    resolution: {{commit: 0123456, repo: https://example.com/h.git, type: git}}
    version: 2.0.0
"""
    wanted, skipped = read(write(tmp_path, "v9/pnpm-lock.yaml", v9))
    assert pairs(wanted) == {("@s/d", "1.0.0")}  # not pnpm's own environment's pnpm
    assert skipped == 3  # the member 'packages/with space', g and h


def test_a_renamed_lock_file_is_read_by_what_it_holds(tmp_path):
    for rel in ("yarn1/yarn.lock", "berry4/yarn.lock", "pnpm9/pnpm-lock.yaml"):
        copy = write(tmp_path, "copy.lock", (FIXTURES / rel).read_bytes())
        assert pairs(read(copy)[0]) == made.LOCKED
    for rel in ("yarn1/yarn.lock", "berry3/yarn.lock", "pnpm7/pnpm-lock.yaml"):  # Windows' ends
        crlf = (FIXTURES / rel).read_bytes().replace(b"\n", b"\r\n")
        assert pairs(read(write(tmp_path, f"crlf/{rel}", crlf))[0]) == made.LOCKED
    names = write(tmp_path, "names.txt", "leftpad@1.0.0\n# a comment\n@acme/colors\n")
    assert pairs(read(names, npm.read_list)[0]) == {("leftpad", "1.0.0"), ("@acme/colors", "")}
    with pytest.raises(RegistryError, match=r"names\.txt: not a package\.json nor an npm"):
        read(names)


def test_yaml_reader():
    text = """# a comment
top:
  'single ''quoted''': "double \\"quoted\\" \\u00e9 \\x41"
  plain: a value # a comment
  url: http://example.com/a#b
  flow: {a: 1, b: [x, 'y, z', {c: d}], e: "f}"}
  empty:
  list:
  - one
  - two: 2
    three: 3
  -
    - nested
  continued: first
    second
  block: |
    line one
    line two
  nothing: ~
...
"""
    (doc,) = npm_locks._yaml(text, "t.yaml")
    assert doc == {"top": {
        "single 'quoted'": 'double "quoted" é A', "plain": "a value",
        "url": "http://example.com/a#b",
        "flow": {"a": "1", "b": ["x", "y, z", {"c": "d"}], "e": "f}"},
        "empty": None, "list": ["one", {"two": "2", "three": "3"}, ["nested"]],
        "continued": "first second", "block": "line one\nline two", "nothing": "~",
    }}  # fmt: skip


# ---------------------------------------------------------------- hostile and malformed files


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("package-lock.json", "{", "not valid JSON"),
        ("package-lock.json", "[1]", "not a package-lock.json"),
        ("package-lock.json", "{}", "no lockfileVersion"),
        ("package-lock.json", '{"lockfileVersion": "3"}', "is not a number"),
        ("package-lock.json", '{"lockfileVersion": 3, "packages": []}', "not a mapping"),
        (
            "package-lock.json",
            '{"lockfileVersion": 3, "packages": {"node_modules/a": 1}}',
            "the entry 'node_modules/a' is not a mapping",
        ),
        (
            "package-lock.json",
            '{"lockfileVersion": 1, "dependencies": {"a": []}}',
            "the entry 'a' is not a mapping",
        ),
        ("package-lock.json", "[" * 100_000 + "]" * 100_000, "not valid JSON"),
        ("yarn.lock", "a@^1\n  version 1\n", r"yarn\.lock:1: expected an entry's names"),
        ("yarn.lock", '"a@^1:\n', r"yarn\.lock:1: a quoted string with no end"),
        ("yarn.lock", "  version 1\n", r"yarn\.lock:1: an indented line before any entry"),
        ("yarn.lock", "a@^1:\n\tversion 1\n", r"yarn\.lock:2: indented with a tab"),
        ("yarn.lock", "a@^1, , b@1:\n", "an empty name"),
        ("yarn.lock", 'a@1:\n  version "1\\q"\n', "a malformed quoted string"),
        ("yarn.lock", "__metadata:\n  version: 8\nx@npm:1:\n  version: 1\n", "has no resolution"),
        ("yarn.lock", "__metadata:\n  version: 8\nx@npm:1: 5\n", "is not a mapping"),
        (
            "yarn.lock",
            "__metadata:\n  version: 8\n   bad: indent\n",
            "line 3: unexpected indentation",
        ),
        ("pnpm-lock.yaml", "packages: {}\n", "no lockfileVersion"),
        ("pnpm-lock.yaml", "lockfileVersion: 5.4\npackages: []\n", "not a mapping"),
        ("pnpm-lock.yaml", "lockfileVersion: 5.4\npackages:\n  /a/1.0.0: {}\n", "no resolution"),
        (
            "pnpm-lock.yaml",
            "lockfileVersion: 5.4\npackages:\n  /a/1.0.0:\n    resolution: {integrity: x\n",
            "line 4: no '}' on the line",
        ),
        ("pnpm-lock.yaml", "lockfileVersion: &a 5.4\n", "anchors, aliases and tags"),
        ("pnpm-lock.yaml", "lockfileVersion: '5.4\n", "a quoted string with no end"),
        ("pnpm-lock.yaml", "lockfileVersion: 5.4\n? complex\n", "a key of a kind"),
        ("pnpm-lock.yaml", "lockfileVersion: 5.4\njust words\n", "line 2: expected 'key: value'"),
        ("pnpm-lock.yaml", "lockfileVersion: 5.4\n- item\n", "a list item where a key was"),
        ("pnpm-lock.yaml", "a: 1\n\tb: 2\n", "indented with a tab"),
        ("pnpm-lock.yaml", "a: {b: [c}\n", "expected ',' or ']'"),
        ("pnpm-lock.yaml", "".join(f"{' ' * i}k:\n" for i in range(200)), "nested too deeply"),
        ("pnpm-lock.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("pnpm-lock.yaml", "--- {}\n", "a document starting on its marker's line"),
    ],
)
def test_malformed_files_are_one_line_naming_the_file(tmp_path, name, text, message):
    path = write(tmp_path, name, text)
    with pytest.raises(RegistryError, match=message) as e:
        read(path)
    assert str(e.value).startswith(str(path)) and "\n" not in str(e.value)


def test_binary_huge_and_special_files(tmp_path, monkeypatch):
    for name in NPM_LOCKS:
        path = write(tmp_path, name, b"\x89PNG\r\n\x1a\n\xff\xfe\x00" + bytes(range(256)) * 64)
        with pytest.raises(RegistryError, match=rf"^{path}: not UTF-8 text$"):
            read(path)
    with pytest.raises(RegistryError, match=r": no such file$"):
        read(tmp_path / "none" / "yarn.lock")
    fifo = tmp_path / "fifo" / "pnpm-lock.yaml"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    with pytest.raises(RegistryError, match="a named pipe"):  # refused, never waited on
        read(fifo)
    monkeypatch.setattr(npm_locks, "MAX_LIST_BYTES", 1000)
    path = write(tmp_path, "big/yarn.lock", "# yarn lockfile v1\n" + "#" * 2000)
    with pytest.raises(RegistryError, match=r"cannot read it \(.*larger"):
        read(path)


def test_huge_lines_and_odd_names_are_read_in_time(tmp_path):
    long = "a" * 8_000_000
    files = {
        "yarn.lock": f'"{long}@^1", x@1:\n  version "1.0.0"\n  integrity "sha512-{long}"\n'
        "ok@^1:\n  version 1.0.0\n",
        "pnpm-lock.yaml": f"lockfileVersion: '9.0'\npackages:\n  '{long}@1.0.0':\n"
        f"    resolution: {{integrity: sha512-{long}}}\n  ok@1.0.0:\n    resolution: {{}}\n",
        "package-lock.json": json.dumps(
            {
                "lockfileVersion": 3,
                "packages": {
                    f"node_modules/{long}": {"version": "1.0.0", "integrity": f"sha512-{long}"},
                    "node_modules/ok": {"version": "1.0.0"},
                },
            }
        ),
    }
    for name, text in files.items():
        start = time.monotonic()
        wanted, skipped = read(write(tmp_path, name, text))
        assert pairs(wanted) == {("ok", "1.0.0")} and skipped == 1, name
        assert time.monotonic() - start < 20, name
    odd = ["../../etc/passwd", "a b", "a\nb", "é", "@scope", "@/x", "x" * 215, "UP/per", "-x",
           ".x", "a@1", "a%2fb", "\u202e"]  # fmt: skip
    lock = {
        "lockfileVersion": 3,
        "packages": {f"node_modules/{n}": {"version": "1.0.0"} for n in odd},
    }
    lock["packages"]["node_modules/v"] = {"version": "1.0.0; rm -rf /"}
    lock["packages"]["node_modules/w"] = {"version": "v1.0.0"}
    lock["packages"]["node_modules/ok"] = {"version": "1.0.0", "name": "\u202eevil"}
    wanted, skipped = read(write(tmp_path, "odd/package-lock.json", json.dumps(lock)))
    assert wanted == [] and skipped == len(odd) + 3
    odd.remove("a@1")  # in yarn.lock, the name "a" at the range "1@^1"
    yarn = "".join(f'"{json.dumps(n)[1:-1]}@^1":\n  version "1.0.0"\n' for n in odd)
    wanted, skipped = read(write(tmp_path, "odd/yarn.lock", yarn))
    assert wanted == [] and skipped == len(odd)


# ---------------------------------------------------------------- fetched from a registry

needs_verdaccio = pytest.mark.skipif(
    not have_verdaccio(), reason="verdaccio is not installed (scripts/registry-servers.sh)"
)


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    if not have_verdaccio():
        pytest.skip("verdaccio is not installed (scripts/registry-servers.sh)")
    server = Verdaccio(tmp_path_factory.mktemp("verdaccio"))
    made.publish_all(server)
    yield server, tmp_path_factory.mktemp("package-cache")
    server.stop()


def _options(registry) -> RegistryOptions:
    server, cache = registry
    return RegistryOptions(npm_registry=server.url, cache=str(cache), progress=False,
                           retries=1, timeout=20)  # fmt: skip


@needs_verdaccio
@pytest.mark.parametrize("rel", sorted(LOCKS))
def test_every_lock_fetches_its_packages_verified(registry, rel):
    path = FIXTURES / rel
    src = open_source(f"npm:{path}", registry=_options(registry))
    got = {(f.resolved.name, f.resolved.version) for f in src.fetched}
    assert got == made.LOCKED and len(src.fetched) == len(made.LOCKED)
    docs = list(src.documents())
    assert {d.origin.repository for d in docs} == {f"npm:{n}@{v}" for n, v in made.LOCKED}
    assert {d.origin.license for d in docs} == {"MIT"}
    assert src.skipped[NOT_FROM_REGISTRY] == LOCKS[rel][1]
    described = {(p["name"], p["version"]) for p in src.describe()["packages"]}
    assert described == made.LOCKED


@needs_verdaccio
def test_lock_paths_and_specs_open_as_package_lists(registry, tmp_path, monkeypatch):
    opts = _options(registry)
    for rel in ("yarn1/yarn.lock", "pnpm8/pnpm-lock.yaml"):
        src = open_source(str(FIXTURES / rel), registry=opts)  # a bare path
        assert {(f.resolved.name, f.resolved.version) for f in src.fetched} == made.LOCKED
    monkeypatch.chdir(FIXTURES / "berry4")
    src = open_source("npm:yarn.lock", registry=opts)
    assert src.name == "npm:yarn.lock" and len(src.fetched) == len(made.LOCKED)
    # a tampered pin stops the build, naming the package and the lock
    text = (FIXTURES / "yarn1" / "yarn.lock").read_text()
    integrity = TARBALL_DIGESTS[("tiny-ms", "2.1.3")]
    good = base64.b64encode(bytes.fromhex(integrity.hex)).decode()
    bad = base64.b64encode(hashlib.sha512(b"other").digest()).decode()
    lock = write(tmp_path, "yarn.lock", text.replace(good, bad))
    with pytest.raises(RegistryError, match=r"^npm:tiny-ms@2\.1\.3 \(yarn\.lock tiny-ms\): digest"):
        open_source(str(lock), registry=opts)
    with pytest.raises((RegistryError, SourceError), match="no such file"):
        open_source("npm:" + str(tmp_path / "none" / "pnpm-lock.yaml"), registry=opts)


@needs_verdaccio
def test_cli_builds_an_index_of_a_lock_file(registry, tmp_path):
    server, cache = registry
    lock = FIXTURES / "pnpm9" / "pnpm-lock.yaml"
    out = tmp_path / "idx"

    def cli(*args, stdin=None):
        return subprocess.run([sys.executable, "-m", "index_tools.cli", *map(str, args)],
                              input=stdin, capture_output=True, text=True, timeout=600)  # fmt: skip

    r = cli("build", f"npm:{lock}", "--out", out, "--npm-registry", server.url,
            "--package-cache", cache)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "3 not from the registry" in r.stdout
    stats = json.loads(cli("stats", out, "--json").stdout)
    (source,) = stats["sources"]
    assert {(p["name"], p["version"], p["license"]) for p in source["packages"]} == {
        (n, v, "MIT") for n, v in made.LOCKED
    }
    assert stats["skipped"][NOT_FROM_REGISTRY] == 3
    quote = made.source("@acme/widgets", "3.1.4").decode()
    r = cli("query", out, "--json", "--min-tokens", 20, stdin=quote)
    found = {(s["repository"], s["path"], s["license"])
             for m in json.loads(r.stdout)["matches"] for s in m["sources"]}  # fmt: skip
    assert found == {("npm:@acme/widgets@3.1.4", "index.js", "MIT")}
