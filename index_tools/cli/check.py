"""`recitation-index check`: scan files and folders in CI or a pre-commit hook, with the
same verdicts as the editor (attributions, the decisions file, the license policy).

Exit status: 0 when no open quote reaches `--fail-on` (default: warning), 1 when one does,
2 on bad usage, an unreadable decisions file or baseline, or a missing/damaged index, 3 when
files could not be checked (binary, unreadable, links out of the repository...) and leaving
them out was not allowed (`--allow-skipped`, `allow-skipped` under [check] in the decisions
file). Every file not checked is listed with the reason, in every format.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from ..judge.attribution import split_lines
from ..judge.decisions import ACTIONS, Action, DecisionsError
from ..judge.quote_identity import QuoteIdentity
from ..judge.verdict import Verdict, at_least, judge
from ..model import MATCH_JSON_VERSION, Match, describe_match
from ..safe_text import printable
from .check_work import FileEnd, FileStart, WindowRead, check_jobs, matched, read_files
from .code_files import (
    MARGIN_CHARS,
    WINDOW_CHARS,
    Window,
)
from .output import json_text
from .scan import (
    Baseline,
    DecisionsFinder,
    Skipped,
    collect_files,
    real_parent,
    relative_path,
)
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


@dataclass(frozen=True)
class NotChecked:
    """A file found and not checked, and whether the user said that is fine."""

    skipped: Skipped
    allowed: bool

    def to_dict(self) -> dict:
        return {"file": self.skipped.shown, "reason": self.skipped.why, "allowed": self.allowed}


def run_check(args, idx, version: str, location=None, token: str | None = None) -> int:
    """Check the files of `args` against `idx`; with `location` (where `idx` was opened,
    with `token`), on `args.jobs` cores (0: every core)."""
    from .sarif import sarif_report

    kind_actions = parse_severities(args.severity or [])
    if args.format in ("spdx", "spdx-tv", "cyclonedx"):
        _sbom_options(args, version)  # bad options fail before the files are read
    if args.update_baseline:
        if not args.baseline:
            raise CheckUsageError("--update-baseline needs --baseline FILE")
        try:  # a baseline that cannot be written there fails before the files are read
            Baseline.check_writable(args.baseline)
        except ValueError as e:
            raise CheckUsageError(str(e)) from None
    try:
        collected = collect_files(args.paths, args.exclude or [])
    except FileNotFoundError as e:
        raise CheckUsageError(str(e)) from None
    baseline = None
    if args.baseline and not args.update_baseline:
        try:
            baseline = Baseline.read(args.baseline)
        except ValueError as e:
            raise CheckUsageError(str(e)) from None
    finder = DecisionsFinder(args.decisions)
    # the same windows for an index service: its client sends each in requests under the
    # service's limit and puts the matches back in the window (service/remote_windows.py),
    # so that word offsets are the window's as a local index gives them
    sizes = (WINDOW_CHARS, MARGIN_CHARS)
    results: list[CheckResult] = []
    skipped = list(collected.skipped)
    n_checked = 0
    jobs = check_jobs(getattr(args, "jobs", 0), collected.files)
    events = read_files(collected.files, finder, args.language, sizes)
    found: list[CheckResult] = []
    for event, matches in matched(events, idx, args.min_tokens, jobs, location, token):
        if isinstance(event, FileStart):
            f, shown, decisions = event.path, event.shown, event.decisions
        elif isinstance(event, WindowRead):
            window = event.window
            lines = split_lines(window.context + window.text) if matches else []
            for m in matches:
                found.append(_judged(f, shown, window, lines, m, decisions, kind_actions))
        elif isinstance(event, FileEnd):
            if event.why is None:
                n_checked += 1
            else:  # what was read before is reported too
                skipped.append(Skipped(f, shown, event.why))
            for r in found:
                if (
                    baseline is not None
                    and r.verdict.state == "open"
                    and baseline.covers(f, r.quote)
                ):
                    r.verdict = replace(r.verdict, state="baseline", reason="in the baseline")
            results += found
            found = []
        else:
            raise CheckUsageError(str(event.error)) from None
    not_checked = [NotChecked(s, _skipping_allowed(args, finder, s)) for s in skipped]

    if args.update_baseline:
        kept = [
            (r.path, r.quote, describe_match(r.match))
            for r in results
            if r.verdict.state == "open" and r.verdict.action != "off"
        ]
        try:
            Baseline.write(args.baseline, kept)
        except ValueError as e:
            raise CheckUsageError(str(e)) from None
        for n in not_checked:
            print(_not_checked_line(n), file=sys.stderr)
        print(f"wrote {len(kept)} quote(s) to the baseline {args.baseline}", file=sys.stderr)
        return 0

    shown = [r for r in results if r.verdict.action != "off" or r.verdict.suppressed]
    failing = [r for r in results if at_least(r.failing_at, args.fail_on)]
    refused = [n for n in not_checked if not n.allowed]
    if args.format == "json":
        print(
            json_text(
                {
                    "version": MATCH_JSON_VERSION,
                    "results": [
                        {"file": r.shown, **r.match.to_dict(), "verdict": r.verdict.to_dict()}
                        for r in shown
                    ],
                    "files_checked": n_checked,
                    "not_checked": [n.to_dict() for n in not_checked],
                    "untracked": [
                        {"folder": folder, "files": count} for folder, count in collected.untracked
                    ],
                }
            )
        )
    elif args.format == "sarif":
        report = sarif_report(  # each file's URI from its name's own bytes
            [(relative_path(r.path), r.match, r.verdict) for r in shown],
            version,
            not_checked=[
                (relative_path(n.skipped.path), n.skipped.why, n.allowed) for n in not_checked
            ],
            notes=[_untracked_line(folder, count) for folder, count in collected.untracked],
        )
        print(json_text(report))
    elif args.format in ("spdx", "spdx-tv", "cyclonedx"):
        _print_sbom(args, shown, version, n_checked, not_checked, collected.untracked)
    else:
        _print_text(shown, args.show_suppressed)
        for n in not_checked:
            print(_not_checked_line(n))
    _print_summary(results, failing, n_checked, not_checked)
    for folder, count in collected.untracked:
        print(_untracked_line(folder, count), file=sys.stderr)
    if failing:
        return 1
    return EXIT_NOT_CHECKED if refused else 0


EXIT_NOT_CHECKED = 3


def _sbom_options(args, version: str, notes: list[str] = ()):
    from .sbom import SbomError, SbomOptions, pinned_namespace, project_name, project_root

    try:
        return SbomOptions(
            # named after the checked project, wherever the check is run from
            project=args.sbom_name or project_name(project_root(args.paths)),
            tool_version=version,
            namespace=pinned_namespace(args.sbom_namespace),
            notes=tuple(notes),
        )
    except SbomError as e:
        raise CheckUsageError(str(e)) from None


def _print_sbom(args, shown, version, n_checked, not_checked, untracked) -> None:
    """The SBOM of the quotes shown (suppressed ones marked), with what was not checked."""
    from .sbom import Quoted, SbomError, write_sbom

    notes = [f"{n_checked} file(s) checked."]
    notes += [_not_checked_line(n) for n in not_checked]
    notes += [_untracked_line(folder, count) for folder, count in untracked]
    options = _sbom_options(args, version, notes)
    try:
        text, left_out = write_sbom(
            (Quoted(r.shown, r.path, r.match, r.verdict) for r in shown), args.format, options
        )
    except SbomError as e:
        raise CheckUsageError(str(e)) from None
    sys.stdout.write(text)
    for line in left_out:
        print(f"left out of the SBOM: {line}", file=sys.stderr)


def _judged(
    f: Path, shown: str, window: Window, lines: list[str], m: Match, decisions, kind_actions
) -> CheckResult:
    """A match found in a window, judged with the lines around it (`lines` of the window's
    context and text), placed in the file."""
    first = window.context_lines
    quote = QuoteIdentity.of_text(m.text)
    r = m.range
    verdict = judge(
        m, quote, decisions, kind_actions.__getitem__, lines, r.start.line + first,
        r.end.line + first, lines_from=window.line - first,
    )  # fmt: skip
    return CheckResult(f, shown, window.placed(m), quote, verdict)


def _skipping_allowed(args, finder: DecisionsFinder, s: Skipped) -> bool:
    """--allow-skipped, or `allow-skipped` in the decisions file that applies to the file
    (true, or a glob matching its path relative to that file's folder)."""
    if args.allow_skipped:
        return True
    try:
        where, decisions = finder.for_file(s.path)
    except DecisionsError as e:
        raise CheckUsageError(str(e)) from None
    if decisions is None or where is None:
        return False
    try:
        relative = real_parent(s.path).relative_to(real_parent(where).parent).as_posix()
    except ValueError:
        relative = s.path.name
    return decisions.check.allows_skipping(relative)


def _not_checked_line(n: NotChecked) -> str:
    allowed = " (allowed)" if n.allowed else ""
    return f"{printable(n.skipped.shown, 1000)}: not checked{allowed}: {n.skipped.why}"


def _untracked_line(folder: str, count: int) -> str:
    files = "file" if count == 1 else "files"
    return (
        f"{count} untracked {files} under {printable(folder, 1000)} left out: in a git work "
        "tree check reads the files git tracks; `git add` them (or name them) to check them"
    )


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


def _print_summary(
    results: list[CheckResult],
    failing: list[CheckResult],
    n_files: int,
    not_checked: list[NotChecked] = (),
) -> None:
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
    refused = sum(1 for x in not_checked if not x.allowed)
    allowed = len(not_checked) - refused
    if refused:
        print(
            f"{refused} file(s) could not be checked (listed, with the reason): the check "
            "fails; if that is fine, pass --allow-skipped or set `allow-skipped` under [check] "
            "in .recitation.toml (true, or globs)"
            + (f"; {allowed} more allowed to be left out" if allowed else ""),
            file=sys.stderr,
        )
    elif allowed:
        print(f"{allowed} file(s) not checked, as allowed (listed)", file=sys.stderr)
