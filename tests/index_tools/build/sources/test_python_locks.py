"""Python lock files and manifests as package lists, read from files written by the real
tools (poetry, uv, pip-tools, pipenv, pdm: `fixtures/locks/pypi/regenerate.py`) and
fetched from pypiserver on loopback serving the very distributions they were locked
against."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest
from registry_helpers import PypiServer

from index_tools.build.sources.packages import RegistryOptions
from index_tools.build.sources.pypi import open_pypi
from index_tools.build.sources.registry_http import RegistryError

FIXTURES = Path(__file__).parent / "fixtures" / "locks" / "pypi"


def _distributions() -> dict[str, bytes]:
    spec = importlib.util.spec_from_file_location(
        "lock_distributions", FIXTURES / "distributions.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.distributions()


DISTRIBUTIONS = _distributions()


def sha256(filename: str) -> str:
    return hashlib.sha256(DISTRIBUTIONS[filename]).hexdigest()


def options(tmp_path, **kw) -> RegistryOptions:
    kw.setdefault("cache", str(tmp_path / "cache"))
    kw.setdefault("progress", False)
    kw.setdefault("retries", 1)
    kw.setdefault("timeout", 20)
    return RegistryOptions(**kw)


@pytest.fixture(scope="module")
def pypi(tmp_path_factory):
    server = PypiServer(tmp_path_factory.mktemp("pypiserver"))
    for filename, data in DISTRIBUTIONS.items():
        server.add(filename, data)
    yield server
    server.stop()


# ---------------------------------------------------------------- pins


def test_a_pin_list_of_a_release_s_files_holds_when_one_matches(pypi, tmp_path):
    """A lock lists the digests of every file of a release: the download must match one
    of them (pip's rule), not all."""
    req = tmp_path / "requirements.txt"
    req.write_text(
        "alpha==1.0.0 --hash=sha256:{} --hash=sha256:{}\n".format(
            sha256("alpha-1.0.0-py3-none-any.whl"), sha256("alpha-1.0.0.tar.gz")
        )
    )
    src = open_pypi("pypi:r", str(req), options=options(tmp_path, pypi_url=pypi.url),
                    max_file_bytes=10**6)  # fmt: skip
    assert [f.resolved.filename for f in src.fetched] == ["alpha-1.0.0.tar.gz"]


def test_the_file_the_pins_name_is_the_one_fetched(pypi, tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text(f"alpha==1.0.0 --hash=sha256:{sha256('alpha-1.0.0-py3-none-any.whl')}\n")
    src = open_pypi("pypi:r", str(req), options=options(tmp_path, pypi_url=pypi.url),
                    max_file_bytes=10**6)  # fmt: skip
    assert [f.resolved.filename for f in src.fetched] == ["alpha-1.0.0-py3-none-any.whl"]
    docs = {d.origin.path: d.origin for d in src.documents()}
    assert docs["alpha/__init__.py"].repository == "pypi:alpha==1.0.0"


def test_pins_that_name_no_file_of_the_release_still_fail(pypi, tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text(f"alpha==1.0.0 --hash=sha256:{'0' * 64} --hash=sha256:{'1' * 64}\n")
    with pytest.raises(RegistryError, match=r"digest mismatch: alpha-1\.0\.0\.tar\.gz"):
        open_pypi("pypi:r", str(req), options=options(tmp_path, pypi_url=pypi.url),
                  max_file_bytes=10**6)  # fmt: skip
