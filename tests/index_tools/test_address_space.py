"""Building in a small address space (arm64 kernels with 39-bit addresses, emulators): the
writers map less than MAP_SIZE and the index is built all the same."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from index_tools.store.generations import MAP_SIZE

resource = pytest.importorskip("resource", reason="address space limits are POSIX")
REPO = Path(__file__).resolve().parents[2]
LIMIT = 48 << 30  # well below one writer's MAP_SIZE


def run_limited(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    prelude = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, {LIMIT}))\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )


def test_the_limit_is_below_a_full_map():
    assert LIMIT < MAP_SIZE


def test_build_and_query_with_an_address_space_smaller_than_the_map(tmp_path):
    (tmp_path / "corpus").mkdir()
    source = "def scale(values, factor):\n" + "".join(
        f"    values[{i}] = values[{i}] * factor + {i}\n" for i in range(20)
    )
    (tmp_path / "corpus" / "scale.py").write_text(source)
    (tmp_path / "suggestion.py").write_text(source)
    run = run_limited(
        """
        from index_tools import BuildOptions, build_index
        from index_tools.cli import main
        build_index(["corpus"], "idx", BuildOptions(jobs=1, progress=False))
        raise SystemExit(main(["check", "suggestion.py", "--index", "idx", "--min-tokens", "20", "--fail-on", "hint"]))
        """,
        tmp_path,
    )
    # `check` exits 1 when it finds quoted code
    assert run.returncode == 1, run.stderr
    assert "scale.py" in run.stdout
