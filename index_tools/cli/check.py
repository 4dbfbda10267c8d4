"""`recitation-index check`: scan files and folders in CI or a pre-commit hook, with the
same verdicts as the editor (attributions, the decisions file, the license policy).

Exit status: 0 when no open quote reaches `--fail-on` (default: warning), 1 when one does,
2 on bad usage, an unreadable decisions file or baseline, or a missing/damaged index.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from ..build.sources.languages import language_for_path
from ..judge.attribution import split_lines
from ..judge.decisions import ACTIONS, Action, DecisionsError
from ..judge.quote_identity import QuoteIdentity
from ..judge.verdict import Verdict, at_least, judge
from ..model import MATCH_JSON_VERSION, Match, describe_match
from ..safe_text import printable
from .scan import Baseline, DecisionsFinder, collect_files, display_path, read_code
from .text_report import match_details

# what each kind shows as unless told otherwise (the editor's defaults)
DEFAULT_KIND_ACTIONS: dict[str, Action] = {
    "recitation": "warning",
    "license": "hint",
    "repetitive": "hint",
    "inventory": "hint",
    "idiom": "hint",
}


class CheckUsageError(ValueError):
    pass


@dataclass
class CheckResult:
    path: Path
    shown: str  # the path as printed and in reports
    match: Match
    quote: QuoteIdentity
    verdict: Verdict

    @property
    def failing_at(self) -> Action:
        return self.verdict.action if self.verdict.state == "open" else "off"


def parse_severities(items: list[str]) -> dict[str, Action]:
    out = dict(DEFAULT_KIND_ACTIONS)
    for item in items:
        kind, _, action = item.partition("=")
        if kind not in out or action not in ACTIONS:
            raise CheckUsageError(
                f"--severity {item!r}: expected KIND=ACTION with KIND one of "
                f"{', '.join(out)} and ACTION one of {', '.join(ACTIONS)}"
            )
        out[kind] = action  # type: ignore[assignment]
    return out


def run_check(args, idx, version: str) -> int:
    from .sarif import sarif_report

    kind_actions = parse_severities(args.severity or [])
    try:
        files, skipped = collect_files(args.paths, args.exclude or [])
    except FileNotFoundError as e:
        raise CheckUsageError(str(e)) from None
    baseline = None
    if args.baseline and not args.update_baseline:
        try:
            baseline = Baseline.read(args.baseline)
        except ValueError as e:
            raise CheckUsageError(str(e)) from None
    finder = DecisionsFinder(args.decisions)
    results: list[CheckResult] = []
    for f in files:
        shown = display_path(f)
        try:
            text = read_code(f)
        except OSError as e:
            print(
                f"recitation-index: skipped {printable(shown)}: {e.strerror or e}", file=sys.stderr
            )
            continue
        if text is None:
            continue  # binary
        try:
            _, decisions = finder.for_file(f)
        except DecisionsError as e:
            raise CheckUsageError(str(e)) from None
        lines = split_lines(text)
        language = args.language or language_for_path(str(f))
        for m in idx.match(text, "", min_tokens=args.min_tokens, language=language):
            quote = QuoteIdentity.of_text(m.text)
            r = m.range
            verdict = judge(
                m, quote, decisions, kind_actions.__getitem__, lines, r.start.line, r.end.line
            )
            if baseline is not None and verdict.state == "open" and baseline.covers(f, quote):
                verdict = replace(verdict, state="baseline", reason="in the baseline")
            results.append(CheckResult(f, shown, m, quote, verdict))
    for s in skipped:
        print(f"recitation-index: skipped {printable(s.path)}: {s.why}", file=sys.stderr)

    if args.update_baseline:
        if not args.baseline:
            raise CheckUsageError("--update-baseline needs --baseline FILE")
        kept = [
            (r.path, r.quote, describe_match(r.match))
            for r in results
            if r.verdict.state == "open" and r.verdict.action != "off"
        ]
        Baseline.write(args.baseline, kept)
        print(f"wrote {len(kept)} quote(s) to the baseline {args.baseline}", file=sys.stderr)
        return 0

    shown = [r for r in results if r.verdict.action != "off" or r.verdict.suppressed]
    failing = [r for r in results if at_least(r.failing_at, args.fail_on)]
    if args.format == "json":
        print(
            json.dumps(
                {
                    "version": MATCH_JSON_VERSION,
                    "results": [
                        {"file": r.shown, **r.match.to_dict(), "verdict": r.verdict.to_dict()}
                        for r in shown
                    ],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    elif args.format == "sarif":
        report = sarif_report([(r.shown, r.match, r.verdict) for r in shown], version)
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        _print_text(shown, args.show_suppressed)
    _print_summary(results, failing, len(files))
    return 1 if failing else 0


def _print_text(results: list[CheckResult], show_suppressed: bool) -> None:
    for r in results:
        v = r.verdict
        if v.suppressed and not show_suppressed:
            continue
        start = r.match.range.start
        label = v.action if v.state == "open" else v.state
        # a file name can hold a newline or an escape sequence: one printable line
        print(
            f"{printable(r.shown, 1000)}:{start.line + 1}:{start.character + 1}: {label}: "
            f"{describe_match(r.match)}"
        )
        print(match_details(r.match, v.reason))


def _print_summary(results: list[CheckResult], failing: list[CheckResult], n_files: int) -> None:
    counts: dict[str, int] = {}
    for r in results:
        key = r.verdict.action if r.verdict.state == "open" else r.verdict.state
        if key != "off":
            counts[key] = counts.get(key, 0) + 1
    order = [*reversed(ACTIONS[1:]), "attributed", "dismissed", "allowed", "baseline"]
    detail = ", ".join(f"{counts[k]} {k}" for k in order if counts.get(k))
    n = len(failing)
    print(
        f"{n} quote{'s' if n != 1 else ''} to act on in {n_files} file(s)"
        + (f" ({detail})" if detail else ""),
        file=sys.stderr,
    )
