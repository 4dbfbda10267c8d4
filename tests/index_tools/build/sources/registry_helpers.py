"""Real registry software on loopback for the package source tests, and the package files
the tests make (well-formed and hostile).

- `PypiServer`: pypiserver (a dev dependency) serving a folder of distribution files.
- `Verdaccio`: the npm registry verdaccio, installed by `scripts/registry-servers.sh` into
  `$RECITATION_VERDACCIO` (default `~/.cache/recitation-verdaccio`); packages are published
  to it over its HTTP API, as `npm publish` does.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path

VERDACCIO_HOME = Path(
    os.environ.get("RECITATION_VERDACCIO")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "recitation-verdaccio"
)
VERDACCIO_BIN = VERDACCIO_HOME / "node_modules" / ".bin" / "verdaccio"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer in {timeout:.0f} s")


class _Server:
    proc: subprocess.Popen | None = None
    log = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.log is not None:
            self.log.close()


class PypiServer(_Server):
    def __init__(self, root: Path) -> None:
        self.packages = root / "packages"
        self.packages.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/simple/"
        self.log = open(root / "pypiserver.log", "wb")  # noqa: SIM115
        cmd = [sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p",
               str(self.port), "-a", ".", "-P", ".", "--disable-fallback",
               "--backend", "simple-dir", str(self.packages)]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(self.url, self.proc)

    def add(self, filename: str, data: bytes) -> Path:
        path = self.packages / filename
        path.write_bytes(data)
        return path


class Verdaccio(_Server):
    def __init__(self, root: Path, *, private: bool = False) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        access = "$authenticated" if private else "$all"
        (root / "config.yaml").write_text(
            f"storage: {root / 'storage'}\n"
            f"auth:\n  htpasswd:\n    file: {root / 'htpasswd'}\n    max_users: 100\n"
            "uplinks: {}\n"
            f"packages:\n  '**':\n    access: {access}\n    publish: $all\n"
            "    unpublish: $all\n"
            "log: { type: stdout, format: pretty, level: warn }\n"
        )
        self.log = open(root / "verdaccio.log", "wb")  # noqa: SIM115
        cmd = [str(VERDACCIO_BIN), "--config", str(root / "config.yaml"), "--listen",
               f"127.0.0.1:{self.port}"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(self.url + "-/ping", self.proc)
        self.token = ""

    def add_user(self, name: str, password: str) -> str:
        body = json.dumps({"name": name, "password": password}).encode()
        req = urllib.request.Request(
            f"{self.url}-/user/org.couchdb.user:{name}", data=body, method="PUT",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(req, timeout=30) as r:
            self.token = json.loads(r.read())["token"]
        return self.token

    def publish(self, name: str, version: str, tarball: bytes, manifest: dict | None = None,
                *, integrity: str | None = None, tag: str = "latest") -> dict:  # fmt: skip
        """Publish a tarball as `npm publish` does; `integrity` overrides the real one."""
        sha512 = base64.b64encode(hashlib.sha512(tarball).digest()).decode()
        filename = f"{name.split('/')[-1]}-{version}.tgz"
        dist = {
            "integrity": integrity or f"sha512-{sha512}",
            "shasum": hashlib.sha1(tarball).hexdigest(),
            "tarball": f"{self.url}{name}/-/{filename}",
        }
        meta = {"name": name, "version": version, **(manifest or {}), "dist": dist,
                "_id": f"{name}@{version}"}  # fmt: skip
        doc = {
            "_id": name,
            "name": name,
            "dist-tags": {tag: version},
            "versions": {version: meta},
            "_attachments": {
                filename: {
                    "content_type": "application/octet-stream",
                    "data": base64.b64encode(tarball).decode(),
                    "length": len(tarball),
                }
            },
        }
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        encoded = name.replace("/", "%2f")
        req = urllib.request.Request(
            f"{self.url}{encoded}", data=json.dumps(doc).encode(), method="PUT", headers=headers
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            r.read()
        return dist


# ---------------------------------------------------------------- package files


def _add(tar: tarfile.TarFile, name: str, data: bytes = b"", **attrs) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1_700_000_000
    info.mode = 0o644
    for k, v in attrs.items():
        setattr(info, k, v)
    tar.addfile(info, io.BytesIO(data) if data and info.isreg() else None)


def tar_gz(entries: list[tuple]) -> bytes:
    """A .tar.gz of entries (name, data) or (name, data, {TarInfo attributes})."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
        for entry in entries:
            name, data, attrs = (*entry, {}) if len(entry) == 2 else entry
            _add(tar, name, data, **attrs)
    return buf.getvalue()


def pkg_info(name: str, version: str, *, license_expression: str = "MIT",
             project_urls: tuple[str, ...] = ()) -> bytes:  # fmt: skip
    lines = ["Metadata-Version: 2.4", f"Name: {name}", f"Version: {version}"]
    if license_expression:
        lines.append(f"License-Expression: {license_expression}")
    lines += [f"Project-URL: {u}" for u in project_urls]
    return ("\n".join(lines) + "\n\nA test package.\n").encode()


def sdist(name: str, version: str, files: dict[str, bytes], *, extra: list[tuple] = (),
          **meta) -> bytes:  # fmt: skip
    top = f"{name}-{version}"
    entries = [(f"{top}/PKG-INFO", pkg_info(name, version, **meta))]
    entries += [(f"{top}/{path}", data) for path, data in files.items()]
    return tar_gz(entries + list(extra))


def npm_tarball(manifest: dict, files: dict[str, bytes], *, extra: list[tuple] = ()) -> bytes:
    entries = [("package/package.json", json.dumps(manifest).encode())]
    entries += [(f"package/{path}", data) for path, data in files.items()]
    return tar_gz(entries + list(extra))


def have_verdaccio() -> bool:
    return VERDACCIO_BIN.exists() and shutil.which("node") is not None


@contextlib.contextmanager
def served(server):
    try:
        yield server
    finally:
        server.stop()
