// The extension's commands: the workspace toggle, the references log (open, export,
// clear), the folder's decisions, the default index build (with a progress notification,
// offered while no index exists and withdrawn once one does), the folder's own index
// (index it, update it, stop it: the server runs it), checking a whole folder, the logs and
// the status menu.

import { spawn } from 'child_process';
import * as vscode from 'vscode';

import {
    DECISIONS_FILE,
    DECISIONS_REQUEST,
    decisionLines,
    undoneMessage,
    type DecisionLine,
    type DecisionsParams,
    type DecisionsResult,
} from './decisions';
import { formatVersion } from './interpreter';
import { cancelSignal, parseProgress, parseProgressLabel, planBuildIndex } from './launch';
import { CHECK_FOLDER } from './protocol';
import type { ReferencesLog } from './referencesLog';
import type { RecitationServer } from './serverClient';
import { SECTION } from './settings';
import { activeFolder, type StatusItem } from './statusItem';
import { offerWithdrawn } from './statusScope';
import { STOP_WORKSPACE_INDEXING_COMMAND, defaultOfferApplies, menuEntries } from './workspaceIndex';
import { WorkspaceIndexUi } from './workspaceIndexUi';

export function registerCommands(
    context: vscode.ExtensionContext,
    server: RecitationServer,
    references: ReferencesLog,
    log: vscode.LogOutputChannel,
    status: StatusItem,
    workspaceIndex: WorkspaceIndexUi,
): void {
    const offer = new IndexOffer();
    const register = (id: string, fn: () => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
    register('recitation.toggleWorkspace', () => toggleWorkspace());
    register('recitation.showReferences', () => references.show());
    register('recitation.exportReferences', () => references.export());
    register('recitation.clearReferences', () => references.clear());
    register('recitation.showDecisions', () => showDecisions(server));
    register('recitation.showLogs', () => log.show());
    register('recitation.restart', () => server.restart());
    register('recitation.buildDefaultIndex', () => buildDefaultIndex(server, log, offer));
    register('recitation.buildIndexFromOffer', () => buildIndexFromOffer(server, log, offer, status));
    register('recitation.statusMenu', () => statusMenu(status));
    register('recitation.indexWorkspace', () => onWorkspaceIndex('Index which folder?', (uri) => workspaceIndex.build(uri)));
    register('recitation.stopWorkspaceIndexing', () => onWorkspaceIndex('Stop indexing which folder?', (uri) => workspaceIndex.cancel(uri)));
    register('recitation.checkThisFolder', () => onWorkspaceIndex('Check which folder?', (uri) => checkFolder(server, uri)));

    context.subscriptions.push(
        offer,
        server.onStatus.event((params) => {
            if (offerWithdrawn(params)) {
                offer.withdraw();
                return;
            }
            // (a folder that can have an index of its own gets that offer instead)
            if (params.state === 'no-index' && defaultOfferApplies(params) && server.takeIndexBuildOffer()) {
                offer.show(params.message ?? '');
            }
        }),
    );
}

/** "Index This Workspace" and "Stop Workspace Indexing": for the active editor's folder, the only one, or the user's pick. */
async function onWorkspaceIndex(placeHolder: string, act: (folderUri: string) => Promise<void>): Promise<void> {
    const folder = await WorkspaceIndexUi.pickFolder(placeHolder);
    if (!folder) {
        if ((vscode.workspace.workspaceFolders ?? []).length === 0) {
            void vscode.window.showInformationMessage('Recitation: open a folder to index the public code it depends on.');
        }
        return;
    }
    await act(folder.uri.toString());
}

/** "Check This Folder": every code file checked by the server on every core; what quotes indexed
 * code shows in the Problems panel, and the server says what it checked (or why it could not). */
async function checkFolder(server: RecitationServer, folderUri: string): Promise<void> {
    await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'Recitation: checking the folder' },
        async () => {
            try {
                await server.request('workspace/executeCommand', { command: CHECK_FOLDER, arguments: [folderUri] });
            } catch (err) {
                const text = err instanceof Error ? err.message : String(err);
                void vscode.window.showErrorMessage(`Recitation: checking the folder failed: ${text}`);
            }
        },
    );
}

/** Which folder the toggle acts on: the active editor's, the only one, or the user's pick. */
async function pickFolder(): Promise<vscode.WorkspaceFolder | undefined | null> {
    const folder = activeFolder();
    if (folder) {
        return folder;
    }
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length === 0) {
        return undefined;
    }
    const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Toggle Recitation for which folder?' });
    return picked ?? null;
}

/** Flips `recitation.enable` for the folder (or, with no folder open, for the user). */
export async function toggleWorkspace(): Promise<boolean | undefined> {
    const folder = await pickFolder();
    if (folder === null) {
        return undefined;
    }
    const config = vscode.workspace.getConfiguration(SECTION, folder?.uri);
    const next = !(config.get<boolean>('enable') ?? true);
    const target = folder ? vscode.ConfigurationTarget.WorkspaceFolder : vscode.ConfigurationTarget.Global;
    await config.update('enable', next, target);
    const where = folder ? `for ${folder.name}` : 'everywhere (no folder is open)';
    vscode.window.setStatusBarMessage(`Recitation is now ${next ? 'on' : 'off'} ${where}`, 4000);
    return next;
}

/**
 * The offer to build the default index, as a notification that closes itself once an
 * index is ready (VS Code closes no notification on request; a progress notification
 * closes when its task ends). The offer is a link in it; "Cancel" is "not now". Shown
 * once per session; the status item keeps offering the build through its menu.
 */
class IndexOffer implements vscode.Disposable {
    private close: (() => void) | undefined;

    show(message: string): void {
        if (this.close) {
            return;
        }
        const folder = activeFolder();
        const configured = (vscode.workspace.getConfiguration(SECTION, folder?.uri).get<string>('indexPath') ?? '').trim() !== '';
        const settingsLink = `command:workbench.action.openSettings?${encodeURIComponent(JSON.stringify(['recitation.indexPath']))}`;
        const text = configured
            ? `Recitation: the index set in [recitation.indexPath](${settingsLink}) cannot be opened. ${message}`.trim()
            : 'Recitation has no index of public code yet. [Build Index](command:recitation.buildIndexFromOffer) ' +
              `(the Python standard library, indexed locally in a minute or less) or set [recitation.indexPath](${settingsLink}).`;
        void vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, cancellable: true },
            (progress, token) => new Promise<void>((resolve) => {
                progress.report({ message: text });
                this.close = () => {
                    this.close = undefined;
                    resolve();
                };
                token.onCancellationRequested(() => this.close?.());
            }),
        );
    }

    /** Closes the offer if it is on screen. */
    withdraw(): void {
        this.close?.();
    }

    dispose(): void {
        this.withdraw();
    }
}

/** "Build Index" in the offer: only while there is still no index, else it says so. */
async function buildIndexFromOffer(
    server: RecitationServer,
    log: vscode.LogOutputChannel,
    offer: IndexOffer,
    status: StatusItem,
): Promise<boolean> {
    const current = status.current();
    if (current && offerWithdrawn(current)) {
        offer.withdraw();
        void vscode.window.showInformationMessage(
            current.state === 'ready' ? 'Recitation: an index is ready; nothing to build.' : 'Recitation is off for this folder.',
        );
        return false;
    }
    return buildDefaultIndex(server, log, offer);
}

let building: Promise<boolean> | undefined;

/**
 * Runs `python -m index_tools.cli build --default` under a progress notification, then asks
 * the server to look again: no restart, so the insertions it kept while there was no index
 * are checked against the new one.
 */
async function buildDefaultIndex(server: RecitationServer, log: vscode.LogOutputChannel, offer: IndexOffer): Promise<boolean> {
    if (building) {
        void vscode.window.showInformationMessage('Recitation: the default index is being built already.');
        return building;
    }
    offer.withdraw();
    building = runIndexBuild(server, log).finally(() => {
        building = undefined;
    });
    return building;
}

async function runIndexBuild(server: RecitationServer, log: vscode.LogOutputChannel): Promise<boolean> {
    let interpreter = server.python;
    if (!interpreter) {
        try {
            interpreter = await server.findInterpreter();
        } catch (err) {
            server.failToStart(err);
            return false;
        }
    }
    let plan;
    try {
        plan = planBuildIndex(interpreter.command, interpreter.info, server.layout, process.env);
    } catch (err) {
        server.failToStart(err);
        return false;
    }
    log.info(`Building the default index with Python ${formatVersion(interpreter.info)}: ${plan.command} ${plan.args.join(' ')}`);

    const ok = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Recitation: building the default index', cancellable: true },
        (progress, token) => new Promise<boolean>((resolve) => {
            const child = spawn(plan.command, plan.args, { env: plan.env, windowsHide: true });
            let reported = 0;
            let tail = '';
            token.onCancellationRequested(() => child.kill(cancelSignal(process.platform)));
            child.stdout.on('data', (data: Buffer) => log.info(`[index build] ${data.toString().trimEnd()}`));
            child.stderr.on('data', (data: Buffer) => {
                const text = data.toString();
                tail = (tail + text).slice(-4000);
                const percent = parseProgress(text);
                if (percent !== undefined && percent > reported) {
                    progress.report({ increment: percent - reported, message: `${parseProgressLabel(text) ?? 'indexing'} ${percent}%` });
                    reported = percent;
                }
                for (const line of text.split(/\r?\n/)) {
                    if (line.trim() && !line.includes('\r') && parseProgress(line) === undefined) {
                        log.info(`[index build] ${line}`);
                    }
                }
            });
            child.on('error', (err) => {
                log.error(`Index build failed to start: ${err.message}`);
                resolve(false);
            });
            child.on('close', (code) => {
                if (code !== 0) {
                    log.error(`Index build exited with ${code}: ${tail.split(/[\r\n]+/).slice(-5).join(' | ')}`);
                }
                resolve(code === 0);
            });
        }),
    );
    if (ok) {
        vscode.window.setStatusBarMessage('Recitation: the default index is built', 5000);
        log.info('The default index is built: the server opens it without a restart.');
        if (server.running) {
            await server.refresh();
        } else {
            await server.start();
        }
    } else {
        const choice = await vscode.window.showErrorMessage('Recitation: building the default index failed.', 'Show Logs');
        if (choice === 'Show Logs') {
            log.show();
        }
    }
    return ok;
}

async function statusMenu(status: StatusItem): Promise<void> {
    const folder = activeFolder();
    const enabled = vscode.workspace.getConfiguration(SECTION, folder?.uri).get<boolean>('enable') ?? true;
    const current = status.current();
    const noIndex = current?.state === 'no-index';
    const own = menuEntries(current?.workspaceIndex);
    const items: (vscode.QuickPickItem & { command: string })[] = [
        {
            label: enabled ? '$(circle-slash) Turn Off for This Workspace' : '$(check) Turn On for This Workspace',
            description: folder?.name,
            command: 'recitation.toggleWorkspace',
        },
        { label: '$(checklist) Decisions…', description: 'dismissed quotes, allowed sources, license policy', command: 'recitation.showDecisions' },
        { label: '$(references) Open Code References Log', command: 'recitation.showReferences' },
        { label: '$(diff) Compare a Logged Quote with Its Source…', description: 'offline, from the index', command: 'recitation.compareReference' },
        { label: '$(export) Export Code References…', description: 'CSV, JSON, SPDX or CycloneDX', command: 'recitation.exportReferences' },
        ...own,
        {
            label: '$(database) Build Default Index',
            description: noIndex && own.length === 0 ? 'no index yet: the Python standard library, in a minute or less' : undefined,
            command: 'recitation.buildDefaultIndex',
        },
        { label: '$(output) Show Logs', command: 'recitation.showLogs' },
        { label: '$(debug-restart) Restart Server', command: 'recitation.restart' },
    ];
    if (noIndex || own.some((e) => e.command === STOP_WORKSPACE_INDEXING_COMMAND)) {
        // What the status item is warning about (or busy with) comes first.
        const first = own.length > 0 ? own[0].command : 'recitation.buildDefaultIndex';
        items.unshift(...items.splice(items.findIndex((i) => i.command === first), 1));
    }
    const picked = await vscode.window.showQuickPick(items, { title: 'Recitation', placeHolder: 'Recitation' });
    if (picked) {
        await vscode.commands.executeCommand(picked.command);
    }
}

/** The folder whose decisions to show: the only one, else the user's pick (null: cancelled). */
async function pickDecisionsFolder(): Promise<vscode.WorkspaceFolder | undefined | null> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length <= 1) {
        return folders[0];
    }
    const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Show the Recitation decisions of which folder?' });
    return picked ?? null;
}

type DecisionPick = vscode.QuickPickItem & { line: DecisionLine };

/** "Recitation: Decisions…": the folder's dismissals, allowed sources and policy; undo one. */
export async function showDecisions(server: RecitationServer): Promise<void> {
    const folder = await pickDecisionsFolder();
    if (folder === null) {
        return;
    }
    const uri = folder?.uri.toString();
    let result: DecisionsResult;
    try {
        result = await server.request<DecisionsResult>(DECISIONS_REQUEST, uri ? { uri } : {});
    } catch (err) {
        void vscode.window.showErrorMessage(`Recitation cannot read the decisions: ${err instanceof Error ? err.message : String(err)}`);
        return;
    }
    const items: DecisionPick[] = decisionLines(result).map((line) => line.kind === 'separator'
        ? { label: line.label, kind: vscode.QuickPickItemKind.Separator, line }
        : { label: line.label, description: 'description' in line ? line.description : undefined, detail: 'detail' in line ? line.detail : undefined, line });
    const picked = await vscode.window.showQuickPick(items, {
        title: `Recitation: Decisions${folder ? ` of ${folder.name}` : ''} (${DECISIONS_FILE})`,
        placeHolder: 'Pick a dismissed quote or an allowed source to undo it',
        matchOnDescription: true,
        matchOnDetail: true,
    });
    const line = picked?.line;
    if (!line) {
        return;
    }
    if (line.kind === 'dismissed' || line.kind === 'allowed') {
        await undoDecision(server, uri, line);
    } else if (line.kind === 'open' || line.kind === 'policy' || line.kind === 'problem') {
        await openDecisionsFile(result);
    }
}

async function undoDecision(
    server: RecitationServer,
    uri: string | undefined,
    line: Extract<DecisionLine, { kind: 'dismissed' | 'allowed' }>,
): Promise<void> {
    const what = line.kind === 'dismissed' ? 'Show this quote again (remove the dismissal)' : 'Report this source again (remove it from the allowed sources)';
    const choice = await vscode.window.showQuickPick(
        [{ label: '$(discard) Undo', description: what, undo: true }, { label: '$(close) Keep', undo: false }],
        { title: line.label.replace(/^\$\([a-z-]+\)\s*/, ''), placeHolder: what },
    );
    if (!choice?.undo) {
        return;
    }
    const params: DecisionsParams = {
        ...(uri ? { uri } : {}),
        remove: line.kind === 'dismissed' ? { dismissed: line.id } : { allowed: line.pattern },
    };
    try {
        const result = await server.request<DecisionsResult>(DECISIONS_REQUEST, params);
        void vscode.window.showInformationMessage(undoneMessage(line, result.removed));
    } catch (err) {
        void vscode.window.showErrorMessage(`Recitation cannot change ${DECISIONS_FILE}: ${err instanceof Error ? err.message : String(err)}`);
    }
}

/** Opens the decisions file; a missing one opens as a new, unsaved file at its place. */
async function openDecisionsFile(result: DecisionsResult): Promise<void> {
    if (!result.file) {
        return;
    }
    const uri = vscode.Uri.parse(result.file);
    if (result.exists) {
        await vscode.window.showTextDocument(uri);
        return;
    }
    const doc = await vscode.workspace.openTextDocument(uri.with({ scheme: 'untitled' }));
    const editor = await vscode.window.showTextDocument(doc);
    if (doc.getText() === '') {
        await editor.edit((edit) => edit.insert(new vscode.Position(0, 0), NEW_DECISIONS_FILE));
    }
}

/** What a new decisions file starts with (the format: README, "Decisions"). */
const NEW_DECISIONS_FILE = `# Recitation's decisions for this folder, shared by the editor and \`recitation-index check\`.
# Commit this file. Format: see Recitation's README, "Decisions".
version = 1

[allow]
# Sources that are never a warning (our own code): "acme/widgets", "github.com/acme/*".
sources = []

[policy]
# A license category (permissive, weak-copyleft, strong-copyleft, network-copyleft,
# restricted, unknown) or an SPDX id = off, hint, information, warning or error.
`;
