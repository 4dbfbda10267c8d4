"""Real git repositories used as corpora by the engine tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

MIT = """MIT License

Copyright (c) 2021 Acme Widgets

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""

APACHE = """
                                 Apache License
                           Version 2.0, January 2004
                        http://www.apache.org/licenses/

   TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION

   Licensed under the Apache License, Version 2.0 (the "License");
   you may not use this file except in compliance with the License.
"""

HAVERSINE = '''def haversine(lat1, lon1, lat2, lon2):
    """Great-circle distance between two points on the earth, in kilometres."""
    lon1, lat1, lon2, lat2 = map(radians, [lon1, lat1, lon2, lat2])
    dlon = lon2 - lon1
    dlat = lat2 - lat1
    a = sin(dlat / 2) ** 2 + cos(lat1) * cos(lat2) * sin(dlon / 2) ** 2
    c = 2 * asin(sqrt(a))
    r = 6371
    return c * r
'''

GEO = f'''"""Geometry helpers for widgets."""
from math import asin, cos, radians, sin, sqrt

EARTH_RADIUS_KM = 6371


{HAVERSINE}

def bearing(lat1, lon1, lat2, lon2):
    dlon = radians(lon2 - lon1)
    y = sin(dlon) * cos(radians(lat2))
    x = cos(radians(lat1)) * sin(radians(lat2)) - sin(radians(lat1)) * cos(radians(lat2)) * cos(dlon)
    return (degrees(atan2(y, x)) + 360) % 360
'''

ROUTES = f"""import json
from math import asin, cos, radians, sin, sqrt


def load_routes(path):
    with open(path) as f:
        return json.load(f)


{HAVERSINE}

def route_length(points):
    return sum(haversine(*a, *b) for a, b in zip(points, points[1:]))
"""

REGEX_TABLE = (
    "import re\n\nROW = re.compile(r'"
    + r"\s+\d+" * 20
    + "')\n\n\ndef parse(line):\n    return ROW.match(line)\n"
)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com",
         "-c", "init.defaultBranch=main", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def make_repo(root: Path, files: dict[str, str], remote: str | None) -> tuple[Path, str]:
    """A git repository with `files` committed; returns (path, HEAD commit)."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    if remote:
        git(root, "remote", "add", "origin", remote)
    return root, git(root, "rev-parse", "HEAD")


def line_of(text: str, needle: str, last: bool = False) -> int:
    """1-based line where `needle` starts (or where it ends, with last=True)."""
    i = text.index(needle)
    if last:
        i += len(needle.rstrip("\n")) - 1
    return text.count("\n", 0, i) + 1


def make_corpus(tmp: Path) -> dict:
    """Three repositories: acme/widgets (MIT), other/fork (Apache-2.0, an identical copy of
    geo.py) and maps/routes (no license, haversine inside another file)."""
    acme, acme_sha = make_repo(
        tmp / "widgets",
        {"LICENSE": MIT, "src/geo.py": GEO, "src/regex_table.py": REGEX_TABLE},
        "git@github.com:acme/widgets.git",
    )
    fork, fork_sha = make_repo(
        tmp / "fork", {"LICENSE": APACHE, "lib/geo.py": GEO}, "https://github.com/other/fork.git"
    )
    routes, routes_sha = make_repo(tmp / "routes", {"routes.py": ROUTES}, None)
    return {
        "repos": [str(acme), str(fork), str(routes)],
        "acme_sha": acme_sha,
        "fork_sha": fork_sha,
        "routes_sha": routes_sha,
    }
