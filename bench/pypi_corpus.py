"""A real multi-repository corpus: the source of popular PyPI packages, one folder each.

Downloads each package's newest source distribution (its whole repository snapshot: code,
tests, docs; a wheel where no sdist exists) with `pip download --no-deps`, unpacks it into
`.cache/bench/pypi/<package>/` and keeps it there (reused by later runs). Packages vendor
each other (pip's `_vendor`, setuptools' `_vendor`, six, typing_extensions...), copy license
headers and templates: the duplication of public code, not a synthetic mix.

    .venv/bin/python bench/pypi_corpus.py            # fetch the default list (~40M words)
    .venv/bin/python bench/pypi_corpus.py --list     # show the packages and what is cached
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "bench" / "pypi"

PACKAGES = [
    "django",
    "flask",
    "werkzeug",
    "jinja2",
    "click",
    "itsdangerous",
    "markupsafe",
    "requests",
    "urllib3",
    "idna",
    "certifi",
    "charset-normalizer",
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    "sniffio",
    "starlette",
    "fastapi",
    "pydantic",
    "uvicorn",
    "sqlalchemy",
    "alembic",
    "mako",
    "psycopg2",
    "pymysql",
    "redis",
    "celery",
    "kombu",
    "billiard",
    "vine",
    "amqp",
    "numpy",
    "scipy",
    "pandas",
    "sympy",
    "mpmath",
    "networkx",
    "matplotlib",
    "pillow",
    "scikit-learn",
    "joblib",
    "threadpoolctl",
    "statsmodels",
    "patsy",
    "seaborn",
    "bokeh",
    "plotly",
    "dash",
    "tornado",
    "twisted",
    "pytest",
    "pluggy",
    "iniconfig",
    "hypothesis",
    "coverage",
    "tox",
    "virtualenv",
    "nox",
    "pip",
    "setuptools",
    "wheel",
    "packaging",
    "pyparsing",
    "six",
    "attrs",
    "cattrs",
    "more-itertools",
    "toolz",
    "cytoolz",
    "boltons",
    "docutils",
    "sphinx",
    "pygments",
    "babel",
    "alabaster",
    "snowballstemmer",
    "imagesize",
    "black",
    "isort",
    "flake8",
    "pycodestyle",
    "pyflakes",
    "mccabe",
    "pylint",
    "astroid",
    "mypy",
    "mypy-extensions",
    "typing-extensions",
    "tomli",
    "tomlkit",
    "pyyaml",
    "ruamel.yaml",
    "simplejson",
    "ujson",
    "orjson",
    "msgpack",
    "cryptography",
    "pyopenssl",
    "paramiko",
    "bcrypt",
    "pynacl",
    "rsa",
    "pyasn1",
    "oauthlib",
    "requests-oauthlib",
    "boto3",
    "botocore",
    "s3transfer",
    "jmespath",
    "python-dateutil",
    "pytz",
    "tzdata",
    "arrow",
    "pendulum",
    "aiohttp",
    "yarl",
    "multidict",
    "frozenlist",
    "aiosignal",
    "async-timeout",
    "websockets",
    "lxml",
    "beautifulsoup4",
    "soupsieve",
    "html5lib",
    "bleach",
    "markdown",
    "mistune",
    "nbformat",
    "nbconvert",
    "jupyter-core",
    "jupyter-client",
    "ipython",
    "traitlets",
    "prompt-toolkit",
    "parso",
    "jedi",
    "wcwidth",
    "rich",
    "textual",
    "typer",
    "tqdm",
    "colorama",
    "tabulate",
    "prettytable",
    "gunicorn",
    "gevent",
    "greenlet",
    "eventlet",
    "scrapy",
    "parsel",
    "w3lib",
    "marshmallow",
    "wtforms",
    "flask-sqlalchemy",
    "flask-login",
    "peewee",
    "pony",
    "tortoise-orm",
]


def fetch(name: str, work: Path) -> Path | None:
    """The unpacked package folder (cached), or None when it cannot be downloaded."""
    dest = CACHE / name
    if dest.exists():
        return dest
    dl = work / name
    dl.mkdir()
    for fmt in (["--no-binary", ":all:"], ["--only-binary", ":all:"]):
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-build-isolation",
               "-q", "-d", str(dl), *fmt, name]  # fmt: skip
        if subprocess.run(cmd, capture_output=True).returncode == 0 and any(dl.iterdir()):
            break
        shutil.rmtree(dl)
        dl.mkdir()
    files = list(dl.iterdir())
    if not files:
        return None
    tmp = work / f"{name}.unpacked"
    archive = files[0]
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp)
    else:
        with tarfile.open(archive) as t:
            t.extractall(tmp, filter="data")
    tmp.rename(dest)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--list", action="store_true", help="show the packages and what is cached")
    args = ap.parse_args()
    if args.list:
        for name in PACKAGES:
            print(("cached  " if (CACHE / name).exists() else "missing ") + name)
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    missing = []
    with tempfile.TemporaryDirectory() as work:
        for i, name in enumerate(PACKAGES, 1):
            got = fetch(name, Path(work))
            print(f"[{i}/{len(PACKAGES)}] {name}: {'ok' if got else 'not available'}", flush=True)
            if got is None:
                missing.append(name)
    print(f"{len(PACKAGES) - len(missing)} packages in {CACHE}; not available: {missing}")


if __name__ == "__main__":
    main()
