"""What a match comes to once the team's decisions are applied: shared by the editor and
`check`, so both give the same verdict on the same code.

In order: a dismissed quote, or one found in an allowed source, is not shown; a quote that
names its source nearby is `attributed` (a hint at most); a recitation takes the license
policy's action for its best source's license when the policy names it (by SPDX id, then
by category); everything else takes its kind's severity from the settings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..model import Match
from ..safe_text import printable
from .attribution import Attribution, find_region_attribution, quote_sources
from .decisions import ACTIONS, Action, CompletionAction, Decisions
from .license_categories import Category, license_category
from .quote_identity import QuoteIdentity

State = Literal["open", "attributed", "dismissed", "allowed", "baseline"]


@dataclass(frozen=True)
class Verdict:
    action: Action  # what is shown: off (nothing) .. error
    state: State
    reason: str  # one phrase: why this action ("policy for network-copyleft: error")
    license: str  # the license the policy looked at
    category: Category
    completion: CompletionAction | None = None  # the policy's word for the completion proxy
    attribution: Attribution | None = None
    dismissal_id: str = ""

    @property
    def suppressed(self) -> bool:
        return self.state in ("attributed", "dismissed", "allowed", "baseline")

    def to_dict(self) -> dict:
        return {
            "action": self.action,
            "state": self.state,
            "reason": self.reason,
            "license": self.license,
            "category": self.category,
            "completion": self.completion,
            "attribution_line": self.attribution.line if self.attribution else None,
            "dismissal": self.dismissal_id or None,
        }


def at_least(action: Action, threshold: Action) -> bool:
    return ACTIONS.index(action) >= ACTIONS.index(threshold)


_UNREAD = "its parts past the primary span could not be read"


def _allowed_by(decisions: Decisions, match: Match) -> str | None:
    """The allow pattern naming a source of the region's first quote, when a source of
    each of its quotes is allowed; None when one is not (the quotes read one at a time:
    a part reaching past the primary span only once the primary's sources are allowed)."""
    first = None
    for group in quote_sources(match):
        pattern = decisions.allowed_by(group)
        if pattern is None:
            return None
        first = first or pattern
    return first


def judge(
    match: Match,
    quote: QuoteIdentity,
    decisions: Decisions | None,
    kind_action: Callable[[str], Action],
    lines: Sequence[str] | None = None,
    first_line: int = 0,
    last_line: int = 0,
    lines_from: int = 0,
) -> Verdict:
    """The verdict on `match`, whose quoted words are `quote`, in a file whose `lines` are
    given (to find an attribution near `[first_line, last_line]`, 0-based indexes into
    `lines`); `lines[0]` is the file's line `lines_from` (0-based: a part of a large file),
    which the attribution's line counts from."""
    best = match.best_source
    license = best.license if best is not None else "NOASSERTION"
    category = license_category(license)
    decisions = decisions or Decisions()

    def verdict(action: Action, state: State, reason: str, **kw) -> Verdict:
        completion = decisions.policy.completion_action(license)
        return Verdict(
            action, state, reason, license, category, completion[0] if completion else None, **kw
        )

    dismissal = decisions.dismissal_for(quote)
    if dismissal is not None:
        return verdict("off", "dismissed", f"dismissed ({dismissal.id})", dismissal_id=dismissal.id)
    own = kind_action(match.kind)
    # allowed when every quote of the region is found in an allowed source, else attributed
    # when a line near names one of each (a region's parts, left for later by its lookup,
    # that cannot be made now: neither, and the reason says why)
    allowed = found = unread = None
    try:
        allowed = _allowed_by(decisions, match)
        if allowed is None and lines is not None:
            found = find_region_attribution(lines, first_line, last_line, match)
    except Exception as exc:  # (the index the parts are read from broken since)
        unread = f" ({_UNREAD}: {printable(str(exc), 200) or type(exc).__name__})"
    if allowed is not None:
        return verdict("off", "allowed", f"found in an allowed source ({allowed})")
    if found is not None:
        found = replace(found, line=found.line + lines_from)
        action: Action = "off" if own == "off" else "hint"
        return verdict(
            action, "attributed", f"attributed on line {found.line + 1}", attribution=found
        )
    if match.kind == "recitation":
        chosen = decisions.policy.editor_action(license)
        if chosen is not None:
            action, key = chosen
            return verdict(action, "open", f"license policy for {key}: {action}{unread or ''}")
    return verdict(own, "open", f"severity for {match.kind}: {own}{unread or ''}")
