"""The `initialize` result the editor sees: the wrapped server's capabilities plus ours.

The wrapped (upstream) server's capabilities are kept as they are; Recitation only adds what
it serves itself and widens what both serve:

- `textDocumentSync`: the upstream's change kind (the editor sends that kind to both; ours
  accepts full and incremental changes), with open/close and save notifications switched
  on, because our checks need them;
- `hoverProvider`, `codeActionProvider`: on when either serves them (the relay merges both
  answers); code action kinds are the union;
- `executeCommandProvider`: the union of both command lists;
- `experimental`: merged, the upstream's keys first;
- everything else (completion, inline completion, definition, ...): the upstream's, unchanged.

`serverInfo` stays the upstream's: clients may recognise it.
"""

from __future__ import annotations

from typing import Any

FULL, INCREMENTAL = 1, 2


def _sync_options(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, int):
        return {"openClose": value != 0, "change": value}
    return {}


def merge_sync(upstream: Any, ours: Any) -> Any:
    up = _sync_options(upstream)
    mine = _sync_options(ours)
    if not up:
        return ours
    merged = dict(up)
    if not merged.get("change"):
        merged["change"] = mine.get("change", INCREMENTAL)
    merged["openClose"] = True
    if not merged.get("save") and mine.get("save"):
        merged["save"] = mine["save"]
    return merged


def _kinds(value: Any) -> list[str] | None:
    """Code action kinds of a provider value; None means "any kind"."""
    if isinstance(value, dict):
        kinds = value.get("codeActionKinds")
        return list(kinds) if isinstance(kinds, list) else None
    return None


def merge_code_actions(upstream: Any, ours: Any) -> Any:
    if not upstream:
        return ours
    if not ours:
        return upstream
    if not isinstance(upstream, dict):
        return upstream  # `true`: every kind already
    up_kinds, our_kinds = _kinds(upstream), _kinds(ours)
    if up_kinds is None:
        return upstream
    merged = dict(upstream)
    merged["codeActionKinds"] = up_kinds + [k for k in our_kinds or [] if k not in up_kinds]
    return merged


def merge_commands(upstream: Any, ours: Any) -> Any:
    if not isinstance(upstream, dict):
        return ours
    if not isinstance(ours, dict):
        return upstream
    merged = dict(upstream)
    commands = list(upstream.get("commands") or [])
    commands += [c for c in ours.get("commands") or [] if c not in commands]
    merged["commands"] = commands
    return merged


def merge_capabilities(upstream: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    merged = dict(upstream)
    if "textDocumentSync" in ours or "textDocumentSync" in upstream:
        merged["textDocumentSync"] = merge_sync(
            upstream.get("textDocumentSync"), ours.get("textDocumentSync")
        )
    if upstream.get("hoverProvider") or ours.get("hoverProvider"):
        merged["hoverProvider"] = upstream.get("hoverProvider") or ours.get("hoverProvider")
    code_actions = merge_code_actions(
        upstream.get("codeActionProvider"), ours.get("codeActionProvider")
    )
    if code_actions:
        merged["codeActionProvider"] = code_actions
    commands = merge_commands(
        upstream.get("executeCommandProvider"), ours.get("executeCommandProvider")
    )
    if commands:
        merged["executeCommandProvider"] = commands
    if isinstance(ours.get("experimental"), dict):
        experimental = upstream.get("experimental")
        experimental = dict(experimental) if isinstance(experimental, dict) else {}
        for key, value in ours["experimental"].items():
            experimental.setdefault(key, value)
        merged["experimental"] = experimental
    for key, value in ours.items():
        if key not in merged and key != "positionEncoding":
            merged[key] = value
    return merged


def merge_initialize(upstream: dict[str, Any] | None, ours: dict[str, Any] | None) -> dict:
    """The merged InitializeResult; either side may be missing (it failed to start)."""
    if upstream is None:
        return dict(ours or {"capabilities": {}})
    if ours is None:
        return upstream
    result = dict(upstream)
    result["capabilities"] = merge_capabilities(
        upstream.get("capabilities") or {}, ours.get("capabilities") or {}
    )
    return result
