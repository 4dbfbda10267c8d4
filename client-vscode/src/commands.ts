// The extension's commands: the workspace toggle, the references log, the default index
// build (with a progress notification), the logs and the status menu.

import { spawn } from 'child_process';
import * as vscode from 'vscode';

import { formatVersion } from './interpreter';
import { cancelSignal, parseProgress, parseProgressLabel, planBuildIndex } from './launch';
import type { ReferencesLog } from './referencesLog';
import type { RecitationServer } from './serverClient';
import { SECTION } from './settings';
import { activeFolder } from './statusItem';

export function registerCommands(
    context: vscode.ExtensionContext,
    server: RecitationServer,
    references: ReferencesLog,
    log: vscode.LogOutputChannel,
): void {
    const register = (id: string, fn: () => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
    register('recitation.toggleWorkspace', () => toggleWorkspace());
    register('recitation.showReferences', () => references.show());
    register('recitation.showLogs', () => log.show());
    register('recitation.restart', () => server.restart());
    register('recitation.buildDefaultIndex', () => buildDefaultIndex(server, log));
    register('recitation.statusMenu', () => statusMenu());

    context.subscriptions.push(
        server.onStatus.event((status) => {
            if (status.state !== 'no-index' || !server.takeIndexBuildOffer()) {
                return;
            }
            void offerIndexBuild(status.message ?? '');
        }),
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

async function offerIndexBuild(message: string): Promise<void> {
    const folder = activeFolder();
    const configured = vscode.workspace.getConfiguration(SECTION, folder?.uri).get<string>('indexPath') ?? '';
    if (configured.trim() !== '') {
        const choice = await vscode.window.showWarningMessage(
            `Recitation: the index set in recitation.indexPath cannot be opened. ${message}`.trim(),
            'Open Settings',
        );
        if (choice === 'Open Settings') {
            await vscode.commands.executeCommand('workbench.action.openSettings', 'recitation.indexPath');
        }
        return;
    }
    const choice = await vscode.window.showInformationMessage(
        'Recitation has no index of public code yet. Build the default index now? (The Python standard library, indexed locally in a minute or less.)',
        'Build Index',
        'Not Now',
    );
    if (choice === 'Build Index') {
        await vscode.commands.executeCommand('recitation.buildDefaultIndex');
    }
}

/** Runs `python -m index_tools.cli build --default` under a progress notification, then restarts the server. */
export async function buildDefaultIndex(server: RecitationServer, log: vscode.LogOutputChannel): Promise<boolean> {
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
        void vscode.window.showInformationMessage('Recitation: the default index is built.');
        await server.restart();
    } else {
        const choice = await vscode.window.showErrorMessage('Recitation: building the default index failed.', 'Show Logs');
        if (choice === 'Show Logs') {
            log.show();
        }
    }
    return ok;
}

async function statusMenu(): Promise<void> {
    const folder = activeFolder();
    const enabled = vscode.workspace.getConfiguration(SECTION, folder?.uri).get<boolean>('enable') ?? true;
    const items: (vscode.QuickPickItem & { command: string })[] = [
        {
            label: enabled ? '$(circle-slash) Turn Off for This Workspace' : '$(check) Turn On for This Workspace',
            description: folder?.name,
            command: 'recitation.toggleWorkspace',
        },
        { label: '$(references) Open Code References Log', command: 'recitation.showReferences' },
        { label: '$(database) Build Default Index', command: 'recitation.buildDefaultIndex' },
        { label: '$(output) Show Logs', command: 'recitation.showLogs' },
        { label: '$(debug-restart) Restart Server', command: 'recitation.restart' },
    ];
    const picked = await vscode.window.showQuickPick(items, { title: 'Recitation', placeHolder: 'Recitation' });
    if (picked) {
        await vscode.commands.executeCommand(picked.command);
    }
}
