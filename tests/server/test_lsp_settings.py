"""Per-folder settings, live changes, invalid values, status and progress."""

from __future__ import annotations

from lsprotocol import types
from server_helpers import (
    block,
    corpus_text,
    diagnostics_for,
    end_position,
    folder,
    insert,
    open_doc,
    start_session,
    wait_for,
)

HULL = block(corpus_text("geo.py"), "def convex_hull", "\n\ndef rotate_about")


def statuses_for(client, scope_uri: str | None) -> list[dict]:
    return [s for s in client.statuses if s["scopeUri"] == scope_uri]


async def rescan(client, uri: str) -> dict:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.rescan", arguments=[uri])
    )


def change_configuration(client) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))


async def test_two_folders_with_different_enable(client, fixture_index, workspace):
    a, b = workspace["a"], workspace["b"]
    client.set_configuration({"enable": False}, section="recitation", scope_uri=b.as_uri())
    await start_session(client, index=fixture_index, folders=[a, b])

    ready = await wait_for(lambda: statuses_for(client, a.as_uri()), what="status of alpha")
    assert ready[-1]["state"] == "ready"
    assert ready[-1]["index"]["files"] == 3 and ready[-1]["index"]["name"] == "corpus.jsonl"
    disabled = await wait_for(lambda: statuses_for(client, b.as_uri()), what="status of beta")
    assert disabled[-1]["state"] == "disabled", client.statuses
    assert disabled[-1]["index"] is None

    uri_a, uri_b = (a / "x.py").as_uri(), (b / "x.py").as_uri()
    for uri in (uri_b, uri_a):
        open_doc(client, uri, "")
        insert(client, uri, 2, types.Position(0, 0), HULL)
    await diagnostics_for(client, uri_a)
    assert await rescan(client, uri_b) == {"matches": 0}
    assert not client.diagnostics.get(uri_b)
    assert {n["uri"] for n in client.match_notes} == {uri_a}


async def test_live_configuration_change_clears_and_restores(client, fixture_index, workspace):
    a, b = workspace["a"], workspace["b"]
    await start_session(client, index=fixture_index, folders=[a, b])
    uri_a, uri_b = (a / "x.py").as_uri(), (b / "y.py").as_uri()
    for uri in (uri_a, uri_b):
        open_doc(client, uri, "")
        insert(client, uri, 2, types.Position(0, 0), HULL)
        await diagnostics_for(client, uri)
    published = len(client.published)

    client.set_configuration({"enable": False}, section="recitation", scope_uri=a.as_uri())
    change_configuration(client)
    await wait_for(lambda: len(client.diagnostics.get(uri_a, [1])) == 0, what="cleared")
    assert statuses_for(client, a.as_uri())[-1]["state"] == "disabled"
    # the other folder keeps its warning
    assert len(client.diagnostics[uri_b]) == 1
    assert all(p.uri != uri_b or p.diagnostics for p in client.published[published:])

    client.set_configuration({"enable": True}, section="recitation", scope_uri=a.as_uri())
    change_configuration(client)
    (restored,) = await diagnostics_for(client, uri_a, what="restored diagnostics")
    assert restored.range.start == types.Position(0, 0)
    await wait_for(
        lambda: statuses_for(client, a.as_uri())[-1]["state"] == "ready", what="ready again"
    )

    # severities apply live too, and "off" hides a kind
    client.set_configuration(
        {"severity": {"recitation": "error"}}, section="recitation", scope_uri=a.as_uri()
    )
    change_configuration(client)
    await wait_for(
        lambda: [
            d
            for d in client.diagnostics.get(uri_a, [])
            if d.severity == types.DiagnosticSeverity.Error
        ],
        what="error severity",
    )
    client.set_configuration(
        {"severity": {"recitation": "off"}}, section="recitation", scope_uri=a.as_uri()
    )
    change_configuration(client)
    await wait_for(lambda: len(client.diagnostics.get(uri_a, [1])) == 0, what="severity off")


async def test_invalid_settings_warn_and_fall_back_to_defaults(client, fixture_index, workspace):
    a = workspace["a"]
    client.set_configuration(
        {"minTokens": "many", "minInsertWords": 5, "severity": {"idiom": "loud"}},
        section="recitation",
        scope_uri=a.as_uri(),
    )
    await start_session(client, index=fixture_index, folders=[a])
    (message,) = await wait_for(lambda: client.messages, what="window/showMessage")
    assert message.type == types.MessageType.Warning
    assert "recitation.minTokens" in message.message
    assert "recitation.severity.idiom" in message.message
    assert "minInsertWords" not in message.message
    # the server runs with the defaults for the bad fields and the good ones applied
    uri = (a / "x.py").as_uri()
    open_doc(client, uri, "")
    insert(client, uri, 2, types.Position(0, 0), HULL)
    await diagnostics_for(client, uri)


async def test_flat_initialization_options_without_workspace_configuration(
    client, fixture_index, workspace
):
    a = workspace["a"]
    await start_session(
        client,
        index=fixture_index,
        folders=[a],
        settings={"minInsertWords": 500},
        capabilities=types.ClientCapabilities(),  # no workspace/configuration, no progress
        nested=False,
    )
    uri = (a / "x.py").as_uri()
    open_doc(client, uri, "")
    insert(client, uri, 2, types.Position(0, 0), HULL)  # 219 words < 500: not an insertion
    assert await rescan(client, uri) == {"matches": 1}
    assert len(client.match_notes) == 1

    # a client without workspace/configuration pushes its settings
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"recitation": {"enable": False}})
    )
    await wait_for(lambda: len(client.diagnostics.get(uri, [1])) == 0, what="pushed settings")


async def test_opening_the_index_reports_progress(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    await wait_for(lambda: client.statuses, what="status")
    reports = await wait_for(
        lambda: [r for r in client.progress_reports.values() if len(r) >= 2], what="progress"
    )
    kinds = [r.kind for r in reports[0]]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert reports[0][0].title == "Recitation: opening index"
    assert str(fixture_index) in reports[0][0].message


async def test_dynamic_registration_of_configuration_changes(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    await wait_for(lambda: len(client.registrations) == 4, what="registrations")
    configuration, watcher, manifests, code = client.registrations
    assert configuration.method == types.WORKSPACE_DID_CHANGE_CONFIGURATION
    # the decisions file is watched, so that edits to it apply at once
    assert watcher.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    assert watcher.register_options["watchers"][0]["globPattern"] == "**/.recitation.toml"
    # and the manifests and lock files that keep a folder's own index current
    assert manifests.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = [w["globPattern"] for w in manifests.register_options["watchers"]]
    assert "**/package-lock.json" in globs and "**/poetry.lock" in globs
    # and the code files, so that code written outside the editor is checked
    assert code.id == "recitation-files"
    globs = [w["globPattern"] for w in code.register_options["watchers"]]
    assert globs[0].startswith("**/*.{") and ",py," in globs[0] and ",rs," in globs[0]


async def test_scan_on_open(client, fixture_index, workspace):
    a = workspace["a"]
    client.set_configuration({"scanOnOpen": True}, section="recitation", scope_uri=a.as_uri())
    await start_session(client, index=fixture_index, folders=[a])
    await wait_for(lambda: client.statuses, what="status")
    uri = (a / "opened.py").as_uri()
    open_doc(client, uri, "# header\n" + HULL)
    (diag,) = await diagnostics_for(client, uri)
    assert diag.range.start == types.Position(1, 0)
    assert end_position("# header\n" + HULL.rstrip()) == diag.range.end


async def test_per_folder_settings_in_initialization_options(client, fixture_index, workspace):
    a, b = workspace["a"], workspace["b"]
    await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={
                "recitation": {"indexPath": str(fixture_index)},
                "folders": [{"uri": b.as_uri(), "name": "beta", "settings": {"enable": False}}],
            },
            workspace_folders=[folder(a), folder(b)],
        )
    )
    await wait_for(lambda: len(client.statuses) >= 2, what="statuses")
    states = {s["scopeUri"]: s["state"] for s in client.statuses}
    assert states == {a.as_uri(): "ready", b.as_uri(): "disabled"}
