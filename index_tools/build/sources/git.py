"""A git repository: exactly the files committed at HEAD (never the working tree).

Files are listed with `git ls-tree` and read through one `git cat-file --batch` process.
The `origin` remote gives the repository name and the web link of each file:

- github.com: repository "owner/repo",
  link `https://github.com/owner/repo/blob/<commit>/<path>`, line anchors
- other hosts: repository "host/owner/repo" (GitLab: "host/group/.../repo"), and
  - hosts with "github" in the name (GitHub Enterprise): `.../blob/<commit>/<path>`, anchors
  - hosts with "gitlab" in the name: `.../-/blob/<commit>/<path>`, anchors
  - bitbucket.org: `.../src/<commit>/<path>`, no line anchors (Bitbucket's differ)
  - codeberg.org, hosts with "gitea" / "forgejo": `.../src/commit/<commit>/<path>`, anchors
  - Azure DevOps, sourcehut: no link (their file URLs take another shape)
  - any other host: `.../blob/<commit>/<path>`, no line anchors
- no origin, or an origin that is a local path: repository = the folder's name, no link

Credentials in the remote URL are never kept; SSH remotes link to the host's https site.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

from index_tools.model import Document, Origin

from .base import CorpusSource, SkipReasons, SourceError
from .filters import is_oversize, text_from_bytes
from .folder import skip_dir
from .languages import language_for_path
from .licenses import NOASSERTION, license_from_files

_HOST = re.compile(r"^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::\d{1,5})?$")
_SSH_ALIASES = {
    "ssh.github.com": "github.com",
    "altssh.gitlab.com": "gitlab.com",
    "altssh.bitbucket.org": "bitbucket.org",
}
_NO_LINK_HOSTS = ("dev.azure.com", "visualstudio.com", "git.sr.ht")


def _git_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")
    }
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_NO_LAZY_FETCH"] = "1"
    return env


def _run_git(cwd: str, *args: str, check: bool = True) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", cwd, *args],
            capture_output=True,
            env=_git_env(),
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise SourceError("git is not installed (needed to read a git repository)") from None
    if proc.returncode != 0:
        if not check:
            return None
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SourceError(f"{cwd}: git {args[0]} failed: {message[-1] if message else ''}")
    return proc.stdout.decode("utf-8", "replace").strip()


def is_git_top(path: str) -> bool:
    """True when path is the top folder of a git working tree (or has a .git entry)."""
    if os.path.exists(os.path.join(path, ".git")):
        return True
    try:
        inside = _run_git(path, "rev-parse", "--is-inside-work-tree", check=False)
        if inside != "true":
            return False
        top = _run_git(path, "rev-parse", "--show-toplevel", check=False)
    except SourceError:
        return False
    return bool(top) and os.path.realpath(top) == os.path.realpath(path)


# ---------------------------------------------------------------- remotes and links


def parse_remote(url: str) -> tuple[str, str, str] | None:
    """(scheme, host, "owner/repo") of a remote URL, credentials and ".git" dropped.

    None for local paths, file:// URLs and anything that is not a recognizable host.
    """
    url = url.strip()
    scheme = "https"
    if "://" in url:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return None
        given = parts.scheme.lower()
        if given not in ("http", "https", "ssh", "git", "git+ssh", "ssh+git"):
            return None
        host = (parts.hostname or "").lower()
        if given in ("http", "https"):
            scheme = given
            if port is not None and port != (443 if given == "https" else 80):
                host = f"{host}:{port}"
        path = parts.path
    else:
        m = re.match(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$", url)  # scp-like: [user@]host:path
        if not m or len(m.group(1)) == 1:  # "C:\..." is a Windows path
            return None
        host, path = m.group(1).lower(), m.group(2)
    host = _SSH_ALIASES.get(host, host)
    if not _HOST.match(host):
        return None
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    segments = [s for s in path.split("/") if s]
    if len(segments) < 2 or any(s in (".", "..") for s in segments):
        return None
    return scheme, host, "/".join(segments)


def repository_name(host: str, repo_path: str) -> str:
    """ "owner/repo" on github.com, "host/owner/repo" elsewhere."""
    return repo_path if host == "github.com" else f"{host}/{repo_path}"


def repository_link(remote: tuple[str, str, str] | None) -> str:
    """The web page of the repository, or "" when unknown."""
    if remote is None or not file_link(remote, "HEAD", "x")[0]:
        return ""
    scheme, host, repo_path = remote
    return f"{scheme}://{host}/{quote(repo_path, safe='/~')}"


def file_link(remote: tuple[str, str, str] | None, commit: str, path: str) -> tuple[str, bool]:
    """(web link to `path` at `commit`, whether `#L<a>-L<b>` selects lines there)."""
    if remote is None:
        return "", False
    scheme, host, repo_path = remote
    bare_host = host.split(":")[0]
    if any(bare_host == h or bare_host.endswith("." + h) for h in _NO_LINK_HOSTS):
        return "", False
    base = f"{scheme}://{host}/{quote(repo_path, safe='/~')}"
    commit = quote(commit, safe="")
    rel = quote(path, safe="/")
    if "github" in bare_host:
        return f"{base}/blob/{commit}/{rel}", True
    if "gitlab" in bare_host:
        return f"{base}/-/blob/{commit}/{rel}", True
    if bare_host == "bitbucket.org":
        return f"{base}/src/{commit}/{rel}", False
    if bare_host == "codeberg.org" or "gitea" in bare_host or "forgejo" in bare_host:
        return f"{base}/src/commit/{commit}/{rel}", True
    return f"{base}/blob/{commit}/{rel}", False


# ---------------------------------------------------------------- the source


class _CatFile:
    """One `git cat-file --batch` process answering blob requests in turn."""

    def __init__(self, top: str) -> None:
        self.proc = subprocess.Popen(
            ["git", "-C", top, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_git_env(),
        )

    def read(self, sha: str) -> bytes | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(sha.encode("ascii") + b"\n")
            self.proc.stdin.flush()
        except OSError:
            raise SourceError("git cat-file stopped unexpectedly") from None
        header = self.proc.stdout.readline()
        fields = header.split()
        if len(fields) != 3:  # "<sha> missing" (or the process died)
            if not header:
                raise SourceError("git cat-file stopped unexpectedly")
            return None
        size = int(fields[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)  # the newline after the content
        return data

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            if self.proc.stdout:
                self.proc.stdout.close()


def _ls_tree(
    top: str, commit: str, recursive: bool = True
) -> Iterator[tuple[str, str, str, int, str]]:
    """(mode, type, sha, size or -1, path) of the tree at `commit`, streamed."""
    args = ["git", "-C", top, "ls-tree", "-z", "-l", "--full-tree"]
    if recursive:
        args.append("-r")
    proc = subprocess.Popen(
        [*args, commit],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=_git_env(),
    )
    assert proc.stdout is not None
    try:
        pending = b""
        while True:
            chunk = proc.stdout.read(1 << 16)
            if not chunk:
                break
            pending += chunk
            *entries, pending = pending.split(b"\0")
            for entry in entries:
                meta, _, raw_path = entry.partition(b"\t")
                mode, kind, sha, size = meta.decode("ascii").split()
                path = raw_path.decode("utf-8", "replace")
                yield mode, kind, sha, int(size) if size.isdigit() else -1, path
        if proc.wait() != 0:
            raise SourceError(f"{top}: git ls-tree failed for {commit}")
    finally:
        proc.stdout.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()


class GitSource(CorpusSource):
    """The files committed at HEAD of a git repository, read with git itself.

    Folders are skipped as in a plain folder (hidden ones, node_modules, __pycache__, ...);
    symlinks and non-code files count as unsupported; submodules are not entered.
    """

    kind = "git"

    def __init__(self, spec: str, top: str, *, max_file_bytes: int = 1_000_000) -> None:
        super().__init__(spec, max_file_bytes=max_file_bytes)
        self.top = os.path.realpath(top)
        _run_git(self.top, "rev-parse", "--git-dir")  # reports git's own complaint, if any
        commit = _run_git(
            self.top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False
        )
        if not commit:
            raise SourceError(f"{spec}: git repository has no commits")
        self.commit = commit
        url = _run_git(self.top, "remote", "get-url", "origin", check=False)
        self.remote = parse_remote(url) if url else None
        folder = os.path.basename(self.top) or self.top
        self.repository = repository_name(*self.remote[1:]) if self.remote else folder
        self.name = self.repository
        self.license = self._license()

    def _license(self) -> str:
        top_files = {
            path: sha
            for mode, kind, sha, _size, path in _ls_tree(self.top, self.commit, recursive=False)
            if kind == "blob" and mode != "120000"
        }
        wanted = [n for n in top_files if n.lower().startswith(("licen", "copying"))]
        if not wanted:
            return NOASSERTION

        def read(name: str) -> str | None:
            return _run_git(self.top, "cat-file", "blob", top_files[name], check=False)

        return license_from_files(wanted, read)

    def describe(self) -> dict:
        return {
            **super().describe(),
            "repository": self.repository,
            "commit": self.commit,
            "license": self.license,
            "link": repository_link(self.remote),
        }

    def _documents(self) -> Iterator[Document]:
        cat = _CatFile(self.top)
        try:
            for mode, kind, sha, size, path in _ls_tree(self.top, self.commit):
                if kind != "blob":  # submodules
                    continue
                if any(skip_dir(part) for part in path.split("/")[:-1]):
                    continue
                language = language_for_path(path)
                if not language or mode == "120000":  # not code, or a symlink
                    self.skip_unsupported(path, "" if not language else "link")
                    continue
                if is_oversize(size, self.max_file_bytes):
                    self.skipped[SkipReasons.OVERSIZE] += 1
                    continue
                data = cat.read(sha)
                if data is None:
                    self.skipped[SkipReasons.UNREADABLE] += 1
                    continue
                text, reason = text_from_bytes(data, self.max_file_bytes)
                if reason:
                    self.skipped[reason] += 1
                    continue
                link, anchor = file_link(self.remote, self.commit, path)
                origin = Origin(
                    repository=self.repository,
                    path=path,
                    commit=self.commit,
                    license=self.license,
                    link=link,
                    line_anchor=anchor,
                )
                yield Document(text=text, origin=origin, language=language)
        finally:
            cat.close()
