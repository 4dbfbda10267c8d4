"""Downloads from a registry that misbehaves (issue #37), against a PyPI simple index on
loopback served here: one that trickles a byte now and then is given up at the download's
deadline, one cut off is said to be cut off (not a digest mismatch), a redirect that fails
names the URL that failed (and the first), and an archive of sparse members is refused for
what it expands to. Every failure is one line, exit 2, the index unchanged."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import sys
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from registry_helpers import free_port, sdist

from index_tools.build.sources.archives import ArchiveLimitError, ArchiveLimits, iter_files
from index_tools.build.sources.packages import RegistryOptions
from index_tools.build.sources.pypi import open_pypi
from index_tools.build.sources.registry_http import RegistryError

REPO = Path(__file__).resolve().parents[4]
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
CODE = b"def double(x):\n    return 2 * x\n\n\ndef triple(x):\n    return 3 * x\n"


def sparse_tar_gz(count: int, size: int = 1 << 30) -> bytes:
    """`count` old-GNU sparse members (type S) of `size` bytes each, none of it stored."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
        info = tarfile.TarInfo("sparse-1.0/PKG-INFO")
        meta = b"Metadata-Version: 2.1\nName: sparse\nVersion: 1.0\n\n"
        info.size = len(meta)
        tar.addfile(info, io.BytesIO(meta))
        for i in range(count):
            member = tarfile.TarInfo(f"sparse-1.0/hole{i}.py")
            member.type = tarfile.GNUTYPE_SPARSE
            member.size = 1  # stored: the last byte
            header = bytearray(member.tobuf(tarfile.GNU_FORMAT))
            # one sparse region: `size` bytes of which the last 0 are stored, and the size
            header[386:398] = b"%011o\0" % (size - 1)
            header[398:410] = b"%011o\0" % 1
            header[483:495] = b"%011o\0" % size
            header[148:156] = b"        "
            header[148:156] = b"%06o\0 " % sum(header[:512])
            tar.fileobj.write(bytes(header[:512]) + b"\0" * 512)  # one stored byte, padded
            tar.offset += 1024
    return out.getvalue()


class Registry(BaseHTTPRequestHandler):
    """/simple/<project>/: one file; /files/<name>: as the project's behaviour says."""

    protocol_version = "HTTP/1.1"
    files: dict[str, bytes] = {}
    port = 0

    def do_GET(self):  # noqa: N802 - the handler's name
        parts = self.path.strip("/").split("/")
        if parts[0] == "simple" and len(parts) == 2:
            project = parts[1]
            if project == "slowmeta":
                return self._trickle(b'{"files": []}' + b" " * 100, SIMPLE_JSON)
            filename = f"{project}-1.0.tar.gz"
            data = self.files.get(project)
            if data is None:
                return self._send(404, b"{}", "application/json")
            doc = {
                "meta": {"api-version": "1.0"},
                "name": project,
                "files": [
                    {
                        "filename": filename,
                        "url": f"/files/{filename}",
                        "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                        "size": len(data),
                    }
                ],
            }
            return self._send(200, json.dumps(doc).encode(), SIMPLE_JSON)
        if parts[0] == "files":
            project = parts[1].rsplit("-", 1)[0]
            data = self.files[project]
            if project == "slow":
                return self._trickle(data, "application/octet-stream")
            if project == "cut":  # the whole length promised, half of it sent
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return None
            if project == "hop":
                return self._redirect(f"/gone/{parts[1]}")
            if project == "hopdown":
                return self._redirect(f"http://127.0.0.1:{free_port()}/files/{parts[1]}")
            return self._send(200, data, "application/octet-stream")
        return self._send(404, b"not here", "text/plain")

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, to: str) -> None:
        self.send_response(302)
        self.send_header("Location", to)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _trickle(self, body: bytes, ctype: str) -> None:
        """A byte every 0.2 s (each read well within the per-read timeout)."""
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.close_connection = True
        try:
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass  # the client gave up

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def registry():
    files = {
        name: sdist(name, "1.0", {f"{name}/core.py": CODE})
        for name in ("ok", "slow", "cut", "hop", "hopdown", "fifo")
    }
    files["sparse"] = sparse_tar_gz(2_000)
    Registry.served = files
    handler = type("Handler", (Registry,), {"files": files})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "index_tools.cli", *map(str, args)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )  # fmt: skip


@pytest.fixture(scope="module")
def built(registry, tmp_path_factory):
    root = tmp_path_factory.mktemp("downloads")
    out = root / "idx"
    r = cli("build", "pypi:ok", "--out", out, *registry_args(registry, root))
    assert r.returncode == 0, r.stderr
    return out, root


def registry_args(url: str, root: Path) -> list:
    return ["--pypi-url", f"{url}/simple/", "--package-cache", root / "cache", "--jobs", 1]


def fails_alone(built, registry, spec: str, *extra, env=None) -> tuple[str, float]:
    """`build SPEC` on the built index: exit 2, one line, the index unchanged."""
    out, root = built
    before = cli("stats", out, "--json").stdout
    started = time.monotonic()
    r = cli("add", out, spec, *registry_args(registry, root), *extra, env=env)
    took = time.monotonic() - started
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert cli("stats", out, "--json").stdout == before
    return lines[0], took


def test_a_registry_that_trickles_is_given_up_at_the_deadline(built, registry):
    url = f"{registry}/files/slow-1.0.tar.gz"
    line, took = fails_alone(built, registry, "pypi:slow", "--download-timeout", "2")
    assert line == f"recitation-index: pypi:slow: {url} did not finish in 2 s (--download-timeout)"
    assert took < 30
    # the environment sets it too; and a registry's answer (the index page) trickling
    env = {"RECITATION_DOWNLOAD_TIMEOUT": "1.5"}
    line, took = fails_alone(built, registry, "pypi:slowmeta", env=env)
    assert line == (
        f"recitation-index: pypi:slowmeta: {registry}/simple/slowmeta/ did not finish in "
        "1.5 s (--download-timeout)"
    )
    assert took < 30


@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf", "1e9", "soon"])
def test_a_download_timeout_that_is_no_number_of_seconds_is_refused(built, registry, value):
    out, root = built
    r = cli("add", out, "pypi:ok", *registry_args(registry, root), "--download-timeout", value)
    assert r.returncode == 2 and r.stderr.count("\n") <= 2, r.stderr
    assert "--download-timeout" in r.stderr and "Traceback" not in r.stderr
    r = cli("add", out, "pypi:ok", *registry_args(registry, root),
            env={"RECITATION_DOWNLOAD_TIMEOUT": value})  # fmt: skip
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "$RECITATION_DOWNLOAD_TIMEOUT" in r.stderr


def test_a_download_cut_off_is_said_to_be_cut_off_not_a_digest_mismatch(built, registry):
    size = len(Registry.files.get("cut", b"")) or len(sdist("cut", "1.0", {"cut/core.py": CODE}))
    line, _ = fails_alone(built, registry, "pypi:cut")
    assert line == (
        f"recitation-index: pypi:cut: the download of {registry}/files/cut-1.0.tar.gz was cut "
        f"off: {size // 2:,} of {size:,} bytes arrived"
    )
    assert "digest" not in line


def test_a_redirect_that_fails_names_the_url_that_failed_and_the_first(built, registry):
    first = f"{registry}/files/hop-1.0.tar.gz"
    line, _ = fails_alone(built, registry, "pypi:hop")
    assert line == (
        f"recitation-index: pypi:hop: not found: {registry}/gone/hop-1.0.tar.gz "
        f"(redirected from {first}) answered 404"
    )
    line, _ = fails_alone(built, registry, "pypi:hopdown")
    assert line.startswith("recitation-index: pypi:hopdown: cannot reach http://127.0.0.1:")
    assert line.endswith(
        f"/files/hopdown-1.0.tar.gz (redirected from {registry}/files/hopdown-1.0.tar.gz): "
        "connection refused"
    )


def test_sparse_members_count_for_their_full_size(built, registry, tmp_path):
    archive = tmp_path / "sparse.tar.gz"
    archive.write_bytes(sparse_tar_gz(30_000))
    assert archive.stat().st_size < 400_000
    from collections import Counter

    started = time.monotonic()
    with pytest.raises(ArchiveLimitError, match="expands past 1,073,741,824 bytes"):
        for _ in iter_files(str(archive), limits=ArchiveLimits(), skipped=Counter(),
                            want=lambda name: False, read_max=1 << 20):  # fmt: skip
            pass
    assert time.monotonic() - started < 2
    # members within the limit are read through as before
    small = tmp_path / "small.tar.gz"
    small.write_bytes(sparse_tar_gz(3, size=100_000))
    limits = ArchiveLimits(max_expanded_bytes=400_000)
    assert not list(iter_files(str(small), limits=limits, skipped=Counter(),
                               want=lambda name: False, read_max=4096))  # fmt: skip
    small.write_bytes(sparse_tar_gz(4, size=100_000))
    with pytest.raises(ArchiveLimitError, match="expands past 400,000 bytes"):
        list(iter_files(str(small), limits=limits, skipped=Counter(),
                        want=lambda name: False, read_max=4096))  # fmt: skip
    # through a build: refused in one line
    line, took = fails_alone(built, registry, "pypi:sparse", "--max-unpacked-mb", "64")
    assert line == "recitation-index: pypi:sparse: the archive expands past 67,108,864 bytes"
    assert took < 30


def test_the_deadline_holds_in_the_engine_too(registry, tmp_path):
    opts = RegistryOptions(
        pypi_url=f"{registry}/simple/", cache=str(tmp_path / "c"), progress=False,
        retries=1, download_timeout=1,
    )  # fmt: skip
    started = time.monotonic()
    with pytest.raises(RegistryError, match=r"^pypi:slow: .* did not finish in 1 s"):
        open_pypi("pypi:slow", "slow", options=opts, max_file_bytes=10**6)
    assert time.monotonic() - started < 10
    assert not list((tmp_path / "c").rglob("*.tar.gz"))  # nothing kept as if it were whole


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes: POSIX")
def test_a_special_file_in_the_package_cache_is_refused_never_read_nor_replaced(built, registry):
    """A named pipe where the archive is cached would block a read for ever and be replaced
    by the download: it is refused in one line, and left as it was."""
    out, root = built
    digest = hashlib.sha256(Registry.served["fifo"]).hexdigest()
    where = root / "cache" / "pypi" / digest[:2] / digest / "fifo-1.0.tar.gz"
    where.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(where)
    line, took = fails_alone(built, registry, "pypi:fifo")
    assert line.startswith("recitation-index: pypi:fifo: ") and "not a regular file" in line
    assert took < 60
    assert stat.S_ISFIFO(os.lstat(where).st_mode)
