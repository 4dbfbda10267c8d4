"""The closing summary of `scripts/test.sh`: one block after all the noisy output, saying
what each step came to, how many tests passed, and every test skipped with the reason.

    python3 scripts/test_summary.py LOGS

LOGS is the folder test.sh writes to: `steps.tsv` (a step, its outcome, its seconds, one a
line, in the order they ran), `pytest.xml` (pytest's JUnit XML), and the output of the
Node test runs (`extension-unit.log`, `packaging.log`, `e2e.log`). Standard library only:
it runs when the set-up failed too. A missing file means the step did not run that far.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

# what test.sh runs, in order: (step name, log with the counts, how to read them)
STEPS = (
    ("setup", None),
    ("lint (ruff)", None),
    ("python tests", "pytest.xml"),
    ("extension lint", None),
    ("extension unit tests", "extension-unit.log"),
    ("packaging", "packaging.log"),
    ("VS Code end-to-end", "e2e.log"),
)

# node's test runner: TAP (`# pass 63`) when its output is not a terminal, spec (`ℹ pass
# 63`) when it is
_NODE_COUNT = re.compile(r"^(?:# |\u2139 )(tests|pass|fail|skipped|cancelled) (\d+)\s*$", re.M)
_E2E = re.compile(r"^vscode-e2e: (\d+) passed, (\d+) failed\s*$", re.M)


def _duration(seconds: int) -> str:
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def pytest_counts(path: Path) -> tuple[str, list[str]]:
    """('751 passed, 14 skipped', the skipped groups: count, reason, files)."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped: dict[str, list[str]] = defaultdict(list)
    for case in root.iter("testcase"):
        for skip in case.findall("skipped"):
            reason = (skip.get("message") or "no reason given").strip()
            reason = re.sub(r"^(?:Skipped|unconditional skip): ", "", reason)
            where = (case.get("classname") or "").split(".")
            module = "/".join(p for p in where if p and p[0].islower()) or "?"
            skipped[reason].append(f"{module}.py" if module != "?" else module)
    n_skipped = sum(len(v) for v in skipped.values())
    passed = total - failed - n_skipped
    text = f"{passed} passed, {n_skipped} skipped" + (f", {failed} failed" if failed else "")
    groups = []
    for reason, files in sorted(skipped.items(), key=lambda kv: -len(kv[1])):
        names = ", ".join(sorted(set(files)))
        groups.append(f"{len(files):>4} skipped: {reason} ({names})")
    return text, groups


def node_counts(path: Path) -> str:
    """'121 passed' (and failed, skipped) from the last counts node's runner printed."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if m := list(_E2E.finditer(text)):
        passed, failed = m[-1].groups()
        return f"{passed} passed" + (f", {failed} failed" if failed != "0" else "")
    counts: dict[str, str] = {}
    for key, value in _NODE_COUNT.findall(text):
        counts[key] = value  # the last run's counts win
    if not counts:
        return "no test counts in its output"
    out = f"{counts.get('pass', '0')} passed"
    for key in ("fail", "cancelled", "skipped"):
        if counts.get(key, "0") != "0":
            out += f", {counts[key]} {'failed' if key == 'fail' else key}"
    return out


def summary(logs: Path) -> tuple[str, bool]:
    """The block, and whether every step passed."""
    ran: dict[str, tuple[str, int]] = {}
    steps_file = logs / "steps.tsv"
    if steps_file.exists():
        for line in steps_file.read_text(encoding="utf-8").splitlines():
            name, outcome, seconds = (line.split("\t") + ["", "0"])[:3]
            ran[name] = (outcome, int(seconds or 0))
    lines = ["", "==> summary"]
    skipped_groups: list[str] = []
    ok = True
    for name, log in STEPS:
        if name not in ran:
            lines.append(f"  {name:<22} not run")
            ok = False
            continue
        outcome, seconds = ran[name]
        ok = ok and outcome == "ok"
        counts = ""
        if log and (logs / log).exists():
            try:
                if log.endswith(".xml"):
                    counts, skipped_groups = pytest_counts(logs / log)
                else:
                    counts = node_counts(logs / log)
            except (ET.ParseError, OSError, ValueError) as e:
                counts = f"(its counts cannot be read: {e})"
        lines.append(f"  {name:<22} {outcome:<8} {_duration(seconds):>7}  {counts}".rstrip())
    if skipped_groups:
        lines.append("  skipped python tests, and why:")
        lines += [f"  {g}" for g in skipped_groups]
    lines.append("all steps passed" if ok else "NOT all steps passed (see above)")
    return "\n".join(lines), ok


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: test_summary.py LOGS", file=sys.stderr)
        return 2
    text, _ = summary(Path(argv[1]))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
