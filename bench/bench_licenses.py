"""License identification measured on real license files: the LICENSE/COPYING files of the
installed packages, whose truth is the package's own metadata (`License-Expression`, or a
single license classifier), normalized to SPDX.

Compares our phrase matcher (`sources/licenses.py`), the SPDX-template matcher
(`spdx_matcher`) and the two layered (`licensing.identify_license_text`).

    .venv/bin/python bench/bench_licenses.py --out bench/results/licenses.md
"""

from __future__ import annotations

import argparse
import email
import sys
import sysconfig
import time
from pathlib import Path

from index_tools.build.sources.licenses import detect_license, license_from_classifiers
from index_tools.build.sources.licensing import (
    identify_license_text,
    match_license_text,
    normalize_expression,
)


def truth(dist: Path) -> str | None:
    meta = email.message_from_string((dist / "METADATA").read_text(errors="replace"))
    expr = meta.get("License-Expression")
    if expr:
        return normalize_expression(expr)
    found = license_from_classifiers(meta.get_all("Classifier") or [])
    return normalize_expression(found) if found else None


def cases() -> list[tuple[str, str, str]]:
    """(package, license file text, expected SPDX) for packages with one license file."""
    out = []
    roots = {Path(sysconfig.get_paths()["purelib"]), Path(sysconfig.get_paths()["platlib"])}
    for root in roots:
        for dist in sorted(root.glob("*.dist-info")):
            files = [
                p
                for p in dist.rglob("*")
                if p.is_file() and p.name.upper().startswith(("LICENSE", "COPYING", "LICENCE"))
            ]
            expected = truth(dist)
            if len(files) != 1 or not expected or " " in expected:
                continue  # expressions and several files: no single truth to compare
            out.append((dist.name, files[0].read_text(errors="replace"), expected))
    return out


def same(a: str | None, b: str) -> bool:
    if not a:
        return False
    strip = lambda s: s.replace("-only", "").replace("-or-later", "")  # noqa: E731
    return a == b or strip(a) == strip(b)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/results/licenses.md")
    args = ap.parse_args()
    detectors = {
        "phrase matcher (sources/licenses.py)": lambda t: normalize_expression(detect_license(t)),
        "SPDX templates (spdx_matcher)": match_license_text,
        "layered (identify_license_text)": identify_license_text,
    }
    rows = cases()
    lines = [
        "# License identification on real license files",
        "",
        "Command: `.venv/bin/python bench/bench_licenses.py --out bench/results/licenses.md`",
        "",
        f"{len(rows)} installed packages with one license file and a single-license metadata "
        "(`License-Expression` or one license classifier) taken as the truth. `-only` and "
        "`-or-later` count as the same license (metadata rarely says which).",
        "",
        "| detector | right | wrong | none | accuracy | seconds |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    details = []
    for name, detect in detectors.items():
        right = wrong = none = 0
        t0 = time.perf_counter()
        for pkg, text, expected in rows:
            got = detect(text)
            if got in (None, "NOASSERTION"):
                none += 1
                details.append(f"- {name}: {pkg}: none (expected {expected})")
            elif same(got, expected):
                right += 1
            else:
                wrong += 1
                details.append(f"- {name}: {pkg}: {got} (expected {expected})")
        secs = time.perf_counter() - t0
        acc = right / len(rows) if rows else 0.0
        lines.append(f"| {name} | {right} | {wrong} | {none} | {acc:.3f} | {secs:.1f} |")
    lines += ["", "## Misses", "", *details, ""]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
