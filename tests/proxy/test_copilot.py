"""`@github/copilot-language-server` (npm) behind the proxy: the initialize handshake passes
and its inline completion capability reaches the client. Completing needs a sign-in; the
handshake does not.

Install (outside the work tree, reused by every clone; scripts/test.sh does it):
npm install --prefix ~/.cache/recitation-copilot-ls @github/copilot-language-server
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from proxy_helpers import RawClient, proxy

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
PREFIX = Path(os.environ.get("RECITATION_COPILOT_LS") or CACHE / "recitation-copilot-ls")
ENTRY = (
    PREFIX / "node_modules" / "@github" / "copilot-language-server" / "dist" / "language-server.js"
)
INSTALL = f"npm install --prefix {PREFIX} @github/copilot-language-server"


def copilot_command() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Copilot language server runs on Node.js")
    if not ENTRY.exists():
        pytest.skip(f"the Copilot language server is not installed; run `{INSTALL}`")
    return [node, str(ENTRY), "--stdio"]


async def test_copilot_handshake_and_inline_completion_capability(tmp_path, widgets_index):
    command = copilot_command()
    folder = tmp_path / "ws"
    folder.mkdir()
    client = RawClient()
    await client.start(proxy(*command))
    try:
        options = {
            "editorInfo": {"name": "recitation-tests", "version": "1.0"},
            "editorPluginInfo": {"name": "recitation-proxy-test", "version": "1.0"},
            "recitation": {"indexPath": str(widgets_index)},
        }
        caps = {
            "textDocument": {"inlineCompletion": {"dynamicRegistration": False}},
            "workspace": {"configuration": True, "workspaceFolders": True},
            "window": {"showDocument": {"support": True}, "workDoneProgress": True},
        }
        init = await client.initialize(folder, options, caps)
        assert "error" not in init, init
        result = init["result"]
        # InlineCompletionOptions: `{}` is a valid "yes"
        assert result["capabilities"].get("inlineCompletionProvider") not in (None, False)
        assert "recitation.dismiss" in result["capabilities"]["executeCommandProvider"]["commands"]
        assert "copilot" in result.get("serverInfo", {}).get("name", "").lower()
        assert not [m for m in client.notes("window/showMessage") if m["type"] == 1]
    finally:
        await client.stop()
