"""`textDocument/publishDiagnostics` from both servers, merged per document.

Each server replaces its own set for a document when it publishes; the editor receives
the upstream's diagnostics followed by ours, each diagnostic unchanged (so each keeps its
`source`). The version is sent when both sets refer to the same one (or only one set is
there); otherwise it is left out rather than claim a version one of them was not computed on.
"""

from __future__ import annotations

from typing import Any

UPSTREAM, OURS = "upstream", "ours"


class DiagnosticsMerge:
    def __init__(self) -> None:
        self._sets: dict[str, dict[str, tuple[list[Any], Any]]] = {}

    def publish(self, who: str, params: Any) -> dict[str, Any] | None:
        """Record `who`'s set; the merged params to send to the editor."""
        if not isinstance(params, dict) or not isinstance(params.get("uri"), str):
            return None
        uri = params["uri"]
        diagnostics = params.get("diagnostics")
        entry = self._sets.setdefault(uri, {})
        entry[who] = (
            list(diagnostics) if isinstance(diagnostics, list) else [],
            params.get("version"),
        )
        return self.merged(uri)

    def merged(self, uri: str) -> dict[str, Any]:
        entry = self._sets.get(uri, {})
        diagnostics: list[Any] = []
        versions = set()
        for who in (UPSTREAM, OURS):
            if who in entry:
                diagnostics += entry[who][0]
                if entry[who][0] or len(entry) == 1:
                    versions.add(entry[who][1])
        if not any(entry[w][0] for w in entry):
            del self._sets[uri]
        out: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics}
        if len(versions) == 1 and (version := versions.pop()) is not None:
            out["version"] = version
        return out

    def forget(self, who: str) -> list[dict[str, Any]]:
        """Drop every set of `who` (it stopped); the republished params of each document."""
        out = []
        for uri in list(self._sets):
            if self._sets[uri].pop(who, None) is not None:
                out.append(self.merged(uri))
        return out
