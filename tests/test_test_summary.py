"""The README's test command ends with one summary after the noisy packaging output: each
step's outcome, the counts, and every skipped test with the reason (`scripts/test.sh` runs
`scripts/test_summary.py` on its logs, also when a step failed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite
 name="pytest" errors="0" failures="1" skipped="3" tests="6">
<testcase classname="tests.server.test_lsp_snippets" name="test_a"><skipped type="pytest.skip"
 message="the seed data set is not beside the checkout (/x/shared/data/matched_snippets.csv)"
 >...</skipped></testcase>
<testcase classname="tests.index_tools.test_words" name="test_b"><skipped type="pytest.skip"
 message="the seed data set is not beside the checkout (/x/shared/data/matched_snippets.csv)"
 >...</skipped></testcase>
<testcase classname="tests.index_tools.test_store.TestC" name="test_c"><skipped
 type="pytest.skip" message="root ignores permissions">...</skipped></testcase>
<testcase classname="tests.index_tools.test_store" name="test_d"><failure message="x"/></testcase>
<testcase classname="tests.index_tools.test_store" name="test_e"/>
<testcase classname="tests.index_tools.test_store" name="test_f"/>
</testsuite></testsuites>"""


def summarise(logs: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "test_summary.py"), str(logs)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_summary_names_each_step_its_counts_and_every_skip_with_the_reason(tmp_path):
    (tmp_path / "steps.tsv").write_text(
        "setup\tok\t130\nlint (ruff)\tok\t5\npython tests\tok\t1082\nextension lint\tok\t20\n"
        "extension unit tests\tok\t9\npackaging\tok\t200\nVS Code end-to-end\tok\t95\n"
    )
    (tmp_path / "pytest.xml").write_text(JUNIT)
    (tmp_path / "extension-unit.log").write_text("TAP version 13\n# tests 121\n# pass 121\n")
    noise = "".join(f"  client-vscode/bundled/file{i}.py\n" for i in range(1000))
    (tmp_path / "packaging.log").write_text(f"{noise}\u2139 tests 63\n\u2139 pass 63\n")
    (tmp_path / "e2e.log").write_text("vscode-e2e: 18 passed, 0 failed\n")
    r = summarise(tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1:] == [
        "==> summary",
        "  setup                  ok         2m10s",
        "  lint (ruff)            ok            5s",
        "  python tests           ok        18m02s  2 passed, 3 skipped, 1 failed",
        "  extension lint         ok           20s",
        "  extension unit tests   ok            9s  121 passed",
        "  packaging              ok         3m20s  63 passed",
        "  VS Code end-to-end     ok         1m35s  18 passed",
        "  skipped python tests, and why:",
        "     2 skipped: the seed data set is not beside the checkout "
        "(/x/shared/data/matched_snippets.csv) (tests/index_tools/test_words.py, "
        "tests/server/test_lsp_snippets.py)",
        "     1 skipped: root ignores permissions (tests/index_tools/test_store.py)",
        "all steps passed",
    ]


def test_a_step_that_failed_and_the_steps_not_run_are_said(tmp_path):
    (tmp_path / "steps.tsv").write_text("setup\tok\t3\nlint (ruff)\tFAILED\t4\n")
    r = summarise(tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "  lint (ruff)            FAILED        4s" in lines
    assert "  python tests           not run" in lines
    assert lines[-1] == "NOT all steps passed (see above)"


def test_the_test_command_prints_the_summary_last():
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert "trap finish EXIT" in script and "scripts/test_summary.py" in script
    assert '--junitxml="$LOGS/pytest.xml"' in script
    for log in ("extension-unit.log", "packaging.log", "e2e.log"):
        assert f'tee "$LOGS/{log}"' in script
