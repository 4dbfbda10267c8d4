"""`serve` when the index goes bad under it, and when it cannot start: a file cut short
under a running service is answered 503 (the index is damaged), never a worker killed by
the bus error of reading past a map; a service whose workers cannot serve the index any
more stops with a non-zero exit naming why; a port already taken is one line, and nothing
says "serving" first."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from service_helpers import REPO, Service, corpus, snippet

from index_tools import BuildOptions, build_index
from index_tools.store import generations as store
from index_tools.store import shards as files

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and /proc")


@pytest.fixture
def index(tmp_path) -> Path:
    out = tmp_path / "idx"
    build_index(
        [corpus(tmp_path / "src", "alpha", "beta")], out, BuildOptions(jobs=1, progress=False)
    )
    return out


def shard_array(index: Path) -> Path:
    return index / store.current_name(index) / files.shard_file(0, "sa")


def cut_in_half(path: Path) -> None:
    """Truncated in place (the same file, as a failing disk or a careless copy leaves it)."""
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size // 2)


def workers_of(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if not children.exists():
        pytest.skip("no /proc children list here")
    out = []
    for child in map(int, children.read_text().split()):
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        if b"spawn_main" in cmdline:  # (not the resource tracker)
            out.append(child)
    return out


@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_cut_short_under_the_service_is_a_503_never_a_dead_worker(index, workers):
    with Service(index, "--workers", str(workers)) as s:
        status, answer = s.match(snippet("alpha"), min_tokens=20)
        assert status == 200 and answer["matches"]
        cut_in_half(shard_array(index))
        for _ in range(2 * workers):  # each worker's lookup
            status, answer = s.match(snippet("alpha"), min_tokens=20)
            assert status == 503, answer
            assert answer["reason"] == "index_error" and "damaged" in answer["error"]
        assert s.process.poll() is None  # still serving: health and stats answer
        assert s.get("/v1/health")[0] == 200


def test_a_service_whose_workers_cannot_serve_the_index_exits_non_zero(index):
    s = Service(index, "--workers", "2").start()
    try:
        cut_in_half(shard_array(index))  # a replacement worker refuses the index
        pids = workers_of(s.process.pid)
        assert len(pids) == 2
        os.kill(pids[0], signal.SIGKILL)
        code = s.process.wait(60)
    finally:
        s.stop()
    assert code not in (0, None), (code, s.output)
    last = [line for line in s.output.splitlines() if line.startswith("recitation-index:")]
    assert last and "damaged" in last[-1], s.output


def test_a_port_already_taken_is_one_line_and_nothing_says_serving(index):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        for workers in ("1", "2"):
            r = subprocess.run(
                [sys.executable, "-m", "index_tools.cli", "serve", str(index), "--port",
                 str(port), "--workers", workers],
                capture_output=True, text=True, timeout=60, cwd=REPO,
            )  # fmt: skip
            assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
            assert "serving" not in r.stdout
            (line,) = r.stderr.strip().splitlines()
            assert line.startswith(f"recitation-index: cannot listen on 127.0.0.1:{port}: ")
            assert "in use" in line


def test_a_stopped_service_exits_zero(index):
    """(A service asked to stop, with an index it can serve, ends as before.)"""
    s = Service(index, "--workers", "2").start()
    assert s.get("/v1/health")[0] == 200
    os.kill(s.process.pid, signal.SIGTERM)
    assert s.process.wait(60) == 0
    s.stop()


def test_serving_is_said_once_the_port_is_held(index):
    s = Service(index).start()
    try:
        first = s.process.stdout.readline().decode()
    finally:
        s.stop()
    assert first.startswith(f"serving {index}") and f":{s.port} " in first
