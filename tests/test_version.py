"""The version is declared once (server/__init__.py) and every copy agrees with it."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import server

ROOT = Path(__file__).resolve().parent.parent


def load_version_script():
    spec = importlib.util.spec_from_file_location("version_script", ROOT / "scripts" / "version.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pyproject_takes_the_version_from_the_server_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "server.__version__"}


def test_the_extension_carries_the_same_version():
    package = json.loads((ROOT / "client-vscode" / "package.json").read_text())
    assert package["version"] == server.__version__
    assert load_version_script().version() == server.__version__
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "version.py"), "--check"])
    assert check.returncode == 0


def test_check_names_a_copy_that_differs(tmp_path, monkeypatch, capsys):
    script = load_version_script()
    package = tmp_path / "package.json"
    package.write_text(json.dumps({"name": "recitation", "version": "0.0.9"}))
    monkeypatch.setattr(script, "PACKAGE_JSON", package)
    monkeypatch.setattr(script, "LOCK", tmp_path / "missing-lock.json")
    assert script.main(["--check"]) == 1
    assert "client-vscode/package.json has 0.0.9" in capsys.readouterr().err
    assert script.main(["--write", "--check"]) == 0
    assert json.loads(package.read_text())["version"] == server.__version__
