"""The npm packages a project's manifest or lock file names, read from the file alone.

    read_npm_file(path, skipped) -> list[Wanted]      # by its name (else by what it holds)

- `package-lock.json` / `npm-shrinkwrap.json`, lockfile versions 1 (nested `dependencies`),
  2 and 3 (`packages` keyed by folder): `read_package_lock`;
- `yarn.lock`, Yarn 1's own format (`"name@range", name@range2:` headers; `version "1.2.3"`,
  `resolved "URL#sha1"`, `integrity sha512-...`) and Yarn Berry's YAML (`"name@npm:^1.0.0":`,
  `resolution: "name@npm:1.2.3"`; its `checksum` is a hash of Yarn's own zip of the package,
  not of the registry's tarball, and pins nothing): `read_yarn_lock`;
- `pnpm-lock.yaml`, lockfile versions 5.x (`/name/1.2.3_peer@1.0.0`), 6.x
  (`/name@1.2.3(peer@1.0.0)`) and 9.x (`name@1.2.3`), read by the small YAML reader below
  (what pnpm and Yarn write: block mappings and sequences, one-line flow collections, plain
  and quoted scalars): `read_pnpm_lock`;
- `package.json`: its dependencies, devDependencies and optionalDependencies, as ranges
  (`read_npm_manifest`).

A lock file gives each package at its exact version (npm's exact constraint, "1.2.3") with
the lock's `integrity` as the pin, once per (name, version) however many times it is
installed; an alias (`"old": "npm:real@1.0.0"`) is the real package. What the registry does
not serve is counted in `skipped[NOT_FROM_REGISTRY]`, never fetched: the workspace's own
members (npm's `"link": true` entries, Yarn's `workspace:` entries other than the root,
pnpm's importers other than `.`), `file:`, `link:`, `portal:` and `patch:` entries, git
dependencies and tarballs from a git host, and a name that is not an npm package name. A
file that is not what its name says (malformed JSON or YAML, an entry that is not a
mapping) raises RegistryError, one line naming the file.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections import Counter

from ...store.small_files import read_small_file
from .packages import MAX_LIST_BYTES, NOT_FROM_REGISTRY, Wanted
from .registry_http import Digest, RegistryError, sri_digests
from .semver import Version

NPM_LOCKS = ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml")
NPM_MANIFEST = "package.json"
MANIFEST_SECTIONS = ("dependencies", "devDependencies", "optionalDependencies")

_NAME = re.compile(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9_][a-z0-9._~-]*$", re.IGNORECASE)
_EXACT = re.compile(
    r"^\d{1,9}\.\d{1,9}\.\d{1,9}(?:-[0-9A-Za-z.-]{1,128})?(?:\+[0-9A-Za-z.-]{1,128})?$"
)
# a dependency's value that is not a registry range: a path, a URL, git, a workspace member
_NOT_REGISTRY = re.compile(
    r"^(?:file:|link:|workspace:|portal:|patch:|exec:|git[+:@]|github:|gitlab:|bitbucket:"
    r"|gist:|https?:|[\w.-]+/|\.\.?(?:/|\\|$)|/|\\|~/|[A-Za-z]:[/\\])",
    re.IGNORECASE,
)
_GIT_HOSTS = ("codeload.github.com", "github.com", "bitbucket.org")


def split_spec(text: str) -> tuple[str, str]:
    """`lodash@4` -> ("lodash", "4"); `@babel/core` -> ("@babel/core", "")."""
    text = text.strip()
    at = text.find("@", 1)
    if at == -1:
        return text, ""
    return text[:at], text[at + 1 :].strip()


def check_name(name: str) -> str:
    if len(name) > 214 or not _NAME.match(name):
        raise RegistryError(f"not an npm package name: {name!r}")
    return name


def is_registry_range(value: str) -> bool:
    """Whether a dependency's value (after an `npm:` alias) asks the registry: a range, a
    version or a tag, not a path, URL, git or workspace reference."""
    return not _NOT_REGISTRY.match(value.strip())


def _is_exact(version: object) -> bool:
    return (
        isinstance(version, str)
        and bool(_EXACT.match(version))
        and (Version.parse(version) is not None)
    )


class _Found:
    """The packages a file names, once per (name, version), and what it names that the
    registry does not serve."""

    def __init__(self, base: str, skipped: Counter) -> None:
        self.base = base
        self.skipped = skipped
        self.wanted: list[Wanted] = []
        self.at: dict[tuple[str, str], int] = {}

    def not_from_registry(self, n: int = 1) -> None:
        self.skipped[NOT_FROM_REGISTRY] += n

    def exact(self, name: object, version: object, pins: tuple[Digest, ...] = ()) -> None:
        try:
            check_name(name)
        except (RegistryError, TypeError):
            self.not_from_registry()
            return
        if not _is_exact(version):
            self.not_from_registry()
            return
        key = (name, str(version))
        if key in self.at:  # the same package installed at several places
            i = self.at[key]
            if pins and not self.wanted[i].pinned:
                self.wanted[i] = Wanted(name, key[1], pins, self.wanted[i].where)
            return
        self.at[key] = len(self.wanted)
        self.wanted.append(Wanted(name, key[1], pins, f"{self.base} {name}"))


def _pins(integrity: object) -> tuple[Digest, ...]:
    return tuple(sri_digests(integrity))[:1] if isinstance(integrity, str) else ()


def _from_git_host(url: str) -> bool:
    """Whether a tarball URL is a git host's archive of a commit, not a registry's file
    (GitLab serves npm registries too: only its archive paths count)."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return True
    if host.startswith("gitlab.") or host == "gitlab.com":
        return "/-/archive/" in parts.path or "/repository/archive" in parts.path
    return host in _GIT_HOSTS


# ---------------------------------------------------------------- reading a file


def read_text(path: str) -> str:
    """A manifest or lock file's text (at most MAX_LIST_BYTES); RegistryError naming it."""
    try:
        data = read_small_file(path, MAX_LIST_BYTES)
    except FileNotFoundError:
        raise RegistryError(f"{path}: no such file") from None
    except OSError as e:
        raise RegistryError(f"{path}: cannot read it ({e.strerror or e})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RegistryError(f"{path}: not UTF-8 text") from None


def _json(text: str, path: str, what: str) -> dict:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise RegistryError(f"{path}: not valid JSON") from None
    if not isinstance(doc, dict):
        raise RegistryError(f"{path}: not {what}")
    return doc


def file_kind(path: str, text: str) -> str | None:
    """Which reader a file is for: by its name, else (a renamed copy) by what it holds;
    None for neither a manifest nor a lock file."""
    base = os.path.basename(path).lower()
    if base in ("package-lock.json", "npm-shrinkwrap.json"):
        return "package-lock"
    if base == "yarn.lock":
        return "yarn"
    if base in ("pnpm-lock.yaml", "pnpm-lock.yml"):
        return "pnpm"
    if base.endswith(".json"):
        return "json"
    head = text[:4096]
    if "# yarn lockfile v1" in head or re.search(r"(?m)^__metadata:", head):
        return "yarn"
    if re.search(r"(?m)^lockfileVersion:", head):
        return "pnpm"
    return None


def read_kind(kind: str, text: str, path: str, skipped: Counter) -> list[Wanted]:
    """The packages of a file's text, read as `kind` (`file_kind`'s answer)."""
    if kind == "json":
        doc = _json(text, path, "a package.json or package-lock.json")
        if "lockfileVersion" in doc:
            return _package_lock(doc, path, skipped)
        return _manifest(doc, path, skipped)
    if kind == "package-lock":
        return _package_lock(_json(text, path, "a package-lock.json"), path, skipped)
    if kind == "yarn":
        return _yarn_lock(text, path, skipped)
    if kind == "pnpm":
        return _pnpm_lock(text, path, skipped)
    raise ValueError(kind)


def read_npm_file(path: str, skipped: Counter) -> list[Wanted]:
    """The packages a package.json, package-lock.json, npm-shrinkwrap.json, yarn.lock or
    pnpm-lock.yaml names (another name: read as what it holds, if it is one of those)."""
    text = read_text(path)
    kind = file_kind(path, text)
    if kind is None:
        raise RegistryError(f"{path}: not a package.json nor an npm, Yarn or pnpm lock file")
    return read_kind(kind, text, path, skipped)


def read_npm_manifest(path: str, skipped: Counter) -> list[Wanted]:
    """A package.json's dependencies, devDependencies and optionalDependencies (ranges)."""
    return _manifest(_json(read_text(path), path, "a package.json"), path, skipped)


def read_package_lock(path: str, skipped: Counter) -> list[Wanted]:
    """The packages of a package-lock.json or npm-shrinkwrap.json (lockfile v1-v3)."""
    return _package_lock(_json(read_text(path), path, "a package-lock.json"), path, skipped)


def read_yarn_lock(path: str, skipped: Counter) -> list[Wanted]:
    """The packages of a yarn.lock, Yarn 1's or Yarn Berry's."""
    return _yarn_lock(read_text(path), path, skipped)


def read_pnpm_lock(path: str, skipped: Counter) -> list[Wanted]:
    """The packages of a pnpm-lock.yaml (lockfile 5.x, 6.x, 9.x)."""
    return _pnpm_lock(read_text(path), path, skipped)


# ---------------------------------------------------------------- package.json


def dependency(name: str, value: object, where: str, skipped: Counter) -> Wanted | None:
    """A package.json dependency as a Wanted (its range), None (counted) when it is not
    from the registry."""
    if not isinstance(value, str):
        skipped[NOT_FROM_REGISTRY] += 1
        return None
    value = value.strip()
    if value.startswith("npm:"):  # an alias: "npm:other@^1"
        name, value = split_spec(value[4:])
    if not is_registry_range(value) or not _NAME.match(name) or len(name) > 214:
        skipped[NOT_FROM_REGISTRY] += 1
        return None
    return Wanted(name=name, constraint=value or "latest", where=where)


def _manifest(doc: dict, path: str, skipped: Counter) -> list[Wanted]:
    base = os.path.basename(path)
    wanted, seen = [], set()
    for section in MANIFEST_SECTIONS:
        deps = doc.get(section)
        if not isinstance(deps, dict):
            continue  # none, or not a mapping: nothing named
        for name, value in deps.items():
            w = dependency(str(name), value, f"{base} {section}", skipped)
            if w and (w.name, w.constraint) not in seen:
                seen.add((w.name, w.constraint))
                wanted.append(w)
    return wanted


# ---------------------------------------------------------------- package-lock.json


def _package_lock(doc: dict, path: str, skipped: Counter) -> list[Wanted]:
    version = doc.get("lockfileVersion")
    if version is None:
        raise RegistryError(f"{path}: not a package-lock.json (no lockfileVersion)")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RegistryError(f"{path}: lockfileVersion {str(version)[:40]!r} is not a number")
    found = _Found(os.path.basename(path), skipped)
    packages = doc.get("packages")
    if packages is not None:  # lockfileVersion 2 and 3: entries keyed by their folder
        if not isinstance(packages, dict):
            raise RegistryError(f"{path}: its packages are not a mapping")
        for key, entry in packages.items():
            if "node_modules/" not in key:
                continue  # the project itself and its workspace members' own folders
            folder_name = key.rsplit("node_modules/", 1)[1]
            if not isinstance(entry, dict):
                raise RegistryError(f"{path}: the entry {key[:200]!r} is not a mapping")
            name = entry.get("name") if isinstance(entry.get("name"), str) else folder_name
            _lock_entry(found, name, entry)
        return found.wanted
    deps = doc.get("dependencies")  # lockfileVersion 1: nested dependencies
    stack = [deps] if deps is not None else []
    while stack:
        level = stack.pop()
        if not isinstance(level, dict):
            raise RegistryError(f"{path}: its dependencies are not a mapping")
        for name, entry in level.items():
            if not isinstance(entry, dict):
                raise RegistryError(f"{path}: the entry {name[:200]!r} is not a mapping")
            _lock_entry(found, name, entry)
            if entry.get("dependencies") is not None:
                stack.append(entry["dependencies"])
    return found.wanted


def _lock_entry(found: _Found, name: str, entry: dict) -> None:
    if entry.get("link") or entry.get("bundled") or entry.get("inBundle"):
        found.not_from_registry()  # a workspace member or file: folder; inside another
        return
    version = entry.get("version")
    resolved = entry.get("resolved")
    if resolved is not None and (
        not isinstance(resolved, str)
        or not resolved.startswith(("http://", "https://"))
        or _from_git_host(resolved)
    ):
        found.not_from_registry()  # file:, git+ssh:, a git host's tarball
        return
    if isinstance(version, str) and version.startswith("npm:"):  # lockfile v1's alias
        name, version = split_spec(version[4:])
    found.exact(name, version, _pins(entry.get("integrity")))


# ---------------------------------------------------------------- yarn.lock


def _yarn_lock(text: str, path: str, skipped: Counter) -> list[Wanted]:
    if re.search(r"(?m)^__metadata:", text):
        return _yarn_berry(text, path, skipped)
    return _yarn_classic(text, path, skipped)


def _yarn_berry(text: str, path: str, skipped: Counter) -> list[Wanted]:
    doc = _yaml_mapping(text, path)
    found = _Found(os.path.basename(path), skipped)
    for key, entry in doc.items():
        if key == "__metadata":
            continue
        if not isinstance(entry, dict):
            raise RegistryError(f"{path}: the entry {key[:200]!r} is not a mapping")
        resolution = entry.get("resolution")
        if not isinstance(resolution, str):
            raise RegistryError(f"{path}: the entry {key[:200]!r} has no resolution")
        at = resolution.find("@", 1)
        name, ref = (resolution[:at], resolution[at + 1 :]) if at > 0 else (resolution, "")
        if ref.startswith("npm:"):  # "name@npm:1.2.3", perhaps "::__archiveUrl=..."
            found.exact(name, ref[4:].split("::", 1)[0])  # `checksum` is Yarn's own hash
        elif ref != "workspace:.":  # the root project is not counted
            found.not_from_registry()  # workspace:, patch:, file:, link:, portal:, git
    return found.wanted


def _yarn_classic(text: str, path: str, skipped: Counter) -> list[Wanted]:
    found = _Found(os.path.basename(path), skipped)
    entry: tuple[list[str], dict[str, str]] | None = None
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r").rstrip()
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        if body.startswith("\t"):
            raise RegistryError(f"{path}:{number}: indented with a tab")
        indent = len(line) - len(body)
        try:
            if indent == 0:
                if entry is not None:
                    _yarn_entry(found, *entry)
                if not body.endswith(":"):
                    raise ValueError("expected an entry's names ending in ':'")
                entry = (_yarn_names(body[:-1]), {})
            elif entry is None:
                raise ValueError("an indented line before any entry")
            elif indent == 2:
                key, value = _yarn_field(body)
                entry[1][key] = value
            # deeper lines: an entry's dependencies, not needed here
        except ValueError as e:
            raise RegistryError(f"{path}:{number}: {e}") from None
    if entry is not None:
        _yarn_entry(found, *entry)
    return found.wanted


def _quoted(text: str, i: int) -> tuple[str, int]:
    """The JSON-style double-quoted string at text[i]; (its value, the index after it)."""
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
        elif c == '"':
            try:
                return json.loads(text[i : j + 1]), j + 1
            except ValueError:
                raise ValueError("a malformed quoted string") from None
        else:
            j += 1
    raise ValueError("a quoted string with no end")


def _yarn_names(text: str) -> list[str]:
    names, i = [], 0
    while i < len(text):
        while i < len(text) and text[i] == " ":
            i += 1
        if i < len(text) and text[i] == '"':
            name, i = _quoted(text, i)
        else:
            end = text.find(",", i)
            end = len(text) if end == -1 else end
            name, i = text[i:end].strip(), end
        while i < len(text) and text[i] == " ":
            i += 1
        if i < len(text):
            if text[i] != ",":
                raise ValueError("expected ',' between an entry's names")
            i += 1
        if not name:
            raise ValueError("an empty name")
        names.append(name)
    if not names:
        raise ValueError("an entry with no name")
    return names


def _yarn_field(body: str) -> tuple[str, str]:
    if body.startswith('"'):
        key, i = _quoted(body, 0)
    else:
        i = 0
        while i < len(body) and body[i] not in " :":
            i += 1
        key = body[:i]
    rest = body[i:].lstrip(" ")
    if rest.startswith(":"):
        rest = rest[1:].lstrip(" ")
    if rest.startswith('"'):
        value, end = _quoted(rest, 0)
        if rest[end:].strip():
            raise ValueError(f"unexpected text after {key}'s value")
        return key, value
    return key, rest


def _yarn_entry(found: _Found, names: list[str], fields: dict) -> None:
    name = ""
    from_registry = True
    for spec in names:
        spec_name, spec_range = split_spec(spec)
        if spec_range.startswith("npm:"):  # "alias@npm:real@1.0.0"
            spec_name, spec_range = split_spec(spec_range[4:])
        if not is_registry_range(spec_range):
            from_registry = False
        name = name or spec_name
    resolved = fields.get("resolved", "")
    if resolved and (not resolved.startswith(("http://", "https://")) or _from_git_host(resolved)):
        from_registry = False
    if not from_registry:
        found.not_from_registry()
        return
    pins = _pins(fields.get("integrity"))
    sha1 = resolved.rpartition("#")[2] if "#" in resolved else ""
    if not pins and re.fullmatch(r"[0-9a-f]{40}", sha1):  # before yarn 1.10: no integrity
        pins = (Digest("sha1", sha1),)
    found.exact(name, fields.get("version"), pins)


# ---------------------------------------------------------------- pnpm-lock.yaml


def _pnpm_lock(text: str, path: str, skipped: Counter) -> list[Wanted]:
    docs = [d for d in _yaml(text, path) if isinstance(d, dict) and "lockfileVersion" in d]
    if not docs:
        raise RegistryError(f"{path}: not a pnpm lock file (no lockfileVersion)")
    doc = docs[-1]  # pnpm's own environment may come first, in a document of its own
    found = _Found(os.path.basename(path), skipped)
    importers = doc.get("importers")
    if isinstance(importers, dict):  # the workspace's members, each a folder of its own
        found.not_from_registry(sum(1 for key in importers if key != "."))
    packages = doc.get("packages")
    if packages is None:
        return found.wanted
    if not isinstance(packages, dict):
        raise RegistryError(f"{path}: its packages are not a mapping")
    for key, entry in packages.items():
        if not isinstance(entry, dict):
            raise RegistryError(f"{path}: the entry {key[:200]!r} is not a mapping")
        resolution = entry.get("resolution")
        if not isinstance(resolution, dict):
            raise RegistryError(f"{path}: the entry {key[:200]!r} has no resolution")
        name, version = _pnpm_key(key)
        if (
            resolution.get("type") is not None  # directory, git
            or "commit" in resolution
            or str(resolution.get("tarball") or "").startswith("file:")
            or _from_git_host(str(resolution.get("tarball") or ""))
        ):
            found.not_from_registry()
            continue
        found.exact(name, version, _pins(resolution.get("integrity")))
    return found.wanted


def _pnpm_key(key: str) -> tuple[str, str]:
    """("name", "1.2.3") of `/name/1.2.3_peer@1.0.0` (5.x), `/@s/name@1.2.3(peer@1.0.0)`
    (6.x) or `name@1.2.3` (9.x); what is not a registry package gives a version that is
    not one (`file:...`, a URL)."""
    k = key[1:] if key.startswith("/") else key
    start = k.find("/") + 1 if k.startswith("@") else 0
    ends = [i for i in (k.find("/", start), k.find("@", start)) if i > 0]
    if (k.startswith("@") and not start) or not ends:
        return k, ""
    end = min(ends)
    version = k[end + 1 :]
    for cut in ("(", "_"):  # a peer suffix; npm versions have neither
        version = version.split(cut, 1)[0]
    return k[:end], version


# ---------------------------------------------------------------- YAML, as lock files write it

MAX_YAML_DEPTH = 64


class _YamlError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")


def _yaml_mapping(text: str, path: str) -> dict:
    docs = [d for d in _yaml(text, path) if isinstance(d, dict)]
    if not docs:
        raise RegistryError(f"{path}: not a YAML mapping")
    return docs[-1]


def _yaml(text: str, path: str) -> list:
    """The documents of YAML text as pnpm and Yarn Berry write it: every scalar a str."""
    try:
        return _yaml_documents(text)
    except _YamlError as e:
        raise RegistryError(f"{path}: {e}") from None
    except RecursionError:
        raise RegistryError(f"{path}: nested too deeply") from None


def _yaml_documents(text: str) -> list:
    docs: list[list[tuple[int, str, int]]] = [[]]
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r").rstrip(" \t")
        body = line.lstrip(" ")
        if not body or body.startswith("#") or (not line[:1].isspace() and body[0] == "%"):
            continue
        if line == "---" or line.startswith("--- "):
            if line[4:].strip() and not line[4:].strip().startswith("#"):
                raise _YamlError(number, "a document starting on its marker's line")
            docs.append([])
            continue
        if line == "...":
            continue
        if body.startswith("\t"):
            raise _YamlError(number, "indented with a tab")
        docs[-1].append((len(line) - len(body), body, number))
    return [_YamlBlocks(lines).document() for lines in docs if lines]


def _is_item(body: str) -> bool:
    return body == "-" or body.startswith("- ")


class _YamlBlocks:
    def __init__(self, lines: list[tuple[int, str, int]]) -> None:
        self.lines = lines
        self.i = 0

    def document(self):
        value = self.block(self.lines[0][0], 0)
        if self.i < len(self.lines):
            raise _YamlError(self.lines[self.i][2], "unexpected indentation")
        return value

    def block(self, indent: int, depth: int):
        if depth > MAX_YAML_DEPTH:
            raise _YamlError(self.lines[self.i][2], "nested too deeply")
        if _is_item(self.lines[self.i][1]):
            return self.sequence(indent, depth)
        return self.mapping(indent, depth)

    def mapping(self, indent: int, depth: int) -> dict:
        out: dict = {}
        while self.i < len(self.lines):
            at, body, number = self.lines[self.i]
            if at < indent:
                break
            if at > indent:
                raise _YamlError(number, "unexpected indentation")
            if _is_item(body):
                raise _YamlError(number, "a list item where a key was expected")
            key, rest = _yaml_key(body, number)
            self.i += 1
            out[key] = self.value(rest, indent, depth, number, in_mapping=True)
        return out

    def sequence(self, indent: int, depth: int) -> list:
        out: list = []
        while self.i < len(self.lines):
            at, body, number = self.lines[self.i]
            if at < indent or (at == indent and not _is_item(body)):
                break
            if at > indent:
                raise _YamlError(number, "unexpected indentation")
            rest = body[1:].lstrip(" ")
            if rest and not rest.startswith(("'", '"', "{", "[")) and _has_key(rest):
                self.lines[self.i] = (at + len(body) - len(rest), rest, number)
                out.append(self.mapping(at + len(body) - len(rest), depth + 1))
                continue
            self.i += 1
            out.append(self.value(rest, indent, depth, number))
        return out

    def value(self, rest: str, indent: int, depth: int, number: int, in_mapping=False):
        nxt = self.lines[self.i] if self.i < len(self.lines) else None
        if not rest:
            if nxt and nxt[0] > indent:
                return self.block(nxt[0], depth + 1)
            if nxt and in_mapping and nxt[0] == indent and _is_item(nxt[1]):
                return self.sequence(indent, depth + 1)
            return None
        if rest[0] in "|>":  # a block scalar: its lines, kept as they are
            lines = []
            while self.i < len(self.lines) and self.lines[self.i][0] > indent:
                lines.append(self.lines[self.i][1])
                self.i += 1
            return "\n".join(lines)
        value, plain = _yaml_scalar(rest, number, depth)
        while self.i < len(self.lines) and self.lines[self.i][0] > indent:
            if not plain or _has_key(self.lines[self.i][1]):
                raise _YamlError(self.lines[self.i][2], "unexpected indentation")
            value += " " + self.lines[self.i][1]  # a plain scalar continued
            self.i += 1
        return value


def _has_key(body: str) -> bool:
    return ": " in body or body.endswith(":")


def _yaml_key(body: str, number: int) -> tuple[str, str]:
    if body[0] in "\"'":
        key, i = _yaml_quoted(body, 0, number)
        rest = body[i:].lstrip(" ")
        if not rest.startswith(":") or (len(rest) > 1 and rest[1] != " "):
            raise _YamlError(number, "expected ':' after a quoted key")
        return key, _strip_comment(rest[1:].strip())
    if body.startswith(("? ", "&", "*", "!", "{", "[")):
        raise _YamlError(number, "a key of a kind lock files do not write")
    pos = body.find(": ")
    if pos == -1:
        if not body.endswith(":"):
            raise _YamlError(number, "expected 'key: value'")
        pos = len(body) - 1
    return body[:pos].rstrip(), _strip_comment(body[pos + 1 :].strip())


def _strip_comment(rest: str) -> str:
    if rest.startswith("#"):
        return ""
    if rest[:1] in ("'", '"', "{", "["):
        return rest  # the scalar's reader takes its comment off
    cut = rest.find(" #")
    return rest if cut == -1 else rest[:cut].rstrip()


_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
            "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
            "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}  # fmt: skip
_HEX = {"x": 2, "u": 4, "U": 8}


def _yaml_quoted(text: str, i: int, number: int) -> tuple[str, int]:
    quote, j, out = text[i], i + 1, []
    while j < len(text):
        c = text[j]
        if quote == "'":
            if c == "'":
                if text[j + 1 : j + 2] == "'":
                    out.append("'")
                    j += 2
                    continue
                return "".join(out), j + 1
            out.append(c)
            j += 1
            continue
        if c == '"':
            return "".join(out), j + 1
        if c == "\\":
            e = text[j + 1 : j + 2]
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
                j += 2
                continue
            if e in _HEX:
                digits = text[j + 2 : j + 2 + _HEX[e]]
                if len(digits) == _HEX[e] and all(d in "0123456789abcdefABCDEF" for d in digits):
                    code = int(digits, 16)
                    if code <= 0x10FFFF:
                        out.append(chr(code))
                        j += 2 + _HEX[e]
                        continue
            raise _YamlError(number, "a malformed escape in a quoted string")
        out.append(c)
        j += 1
    raise _YamlError(number, "a quoted string with no end on its line")


def _yaml_scalar(rest: str, number: int, depth: int) -> tuple[object, bool]:
    """(value, whether it is a plain scalar that may continue on the next lines)."""
    c = rest[0]
    if c in "\"'{[":
        if c in "\"'":
            value, end = _yaml_quoted(rest, 0, number)
        else:
            value, end = _yaml_flow(rest, 0, number, depth)
        tail = rest[end:].strip()
        if tail and not tail.startswith("#"):
            raise _YamlError(number, "unexpected text after a value")
        return value, False
    if c in "&*!":
        raise _YamlError(number, "anchors, aliases and tags are not read here")
    return rest, True


def _yaml_flow(text: str, i: int, number: int, depth: int) -> tuple[object, int]:
    """The one-line flow mapping or sequence at text[i]; (its value, the index after it)."""
    if depth > MAX_YAML_DEPTH:
        raise _YamlError(number, "nested too deeply")
    closer = "}" if text[i] == "{" else "]"
    out: dict | list = {} if closer == "}" else []
    i += 1
    while True:
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text):
            raise _YamlError(number, f"no '{closer}' on the line")
        if text[i] == closer:
            return out, i + 1
        item, i = _flow_item(text, i, number, depth, key=isinstance(out, dict))
        if isinstance(out, dict):
            while i < len(text) and text[i] == " ":
                i += 1
            value = None
            if text[i : i + 1] == ":":
                i += 1
                while i < len(text) and text[i] == " ":
                    i += 1
                if text[i : i + 1] not in (",", closer):
                    value, i = _flow_item(text, i, number, depth, key=False)
            out[str(item)] = value
        else:
            out.append(item)
        while i < len(text) and text[i] == " ":
            i += 1
        if text[i : i + 1] == ",":
            i += 1
        elif i >= len(text):
            raise _YamlError(number, f"no '{closer}' on the line")
        elif text[i] != closer:
            raise _YamlError(number, f"expected ',' or '{closer}'")


def _flow_item(text: str, i: int, number: int, depth: int, key: bool) -> tuple[object, int]:
    c = text[i]
    if c in "{[":
        return _yaml_flow(text, i, number, depth + 1)
    if c in "\"'":
        return _yaml_quoted(text, i, number)
    j = i
    while j < len(text) and text[j] not in ",{}[]":
        if text[j] == ":" and (j + 1 == len(text) or text[j + 1] in " ,}]") and key:
            break
        j += 1
    return text[i:j].strip(), j
