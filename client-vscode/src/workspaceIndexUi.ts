// A folder's own index on screen: the offer (what was found and what it costs, "Index This
// Workspace" / "Not Now"), a first build's progress notification with its cancel button, a
// word when it is done, an error when it failed. The server runs every build and keeps the
// index current; this only shows what `recitation/status` says and asks the server
// (`recitation.buildWorkspaceIndex`, `.declineWorkspaceIndex`, `.cancelWorkspaceIndex`).

import * as vscode from 'vscode';

import {
    BUILD_WORKSPACE_INDEX,
    CANCEL_WORKSPACE_INDEX,
    DECLINE_WORKSPACE_INDEX,
    type StatusParams,
    type WorkspaceIndexStatus,
} from './protocol';
import type { RecitationServer } from './serverClient';
import { activeFolder } from './statusItem';
import {
    INDEX_THIS,
    NOT_NOW,
    WorkspaceIndexTracker,
    folderName,
    offerText,
    progressPercent,
    progressText,
    type WorkspaceEvent,
} from './workspaceIndex';

interface Shown {
    report(ws: WorkspaceIndexStatus): void;
    close(): void;
}

export class WorkspaceIndexUi implements vscode.Disposable {
    private readonly tracker = new WorkspaceIndexTracker();
    private readonly progress = new Map<string, Shown>();
    private readonly listener: vscode.Disposable;

    constructor(
        private readonly server: RecitationServer,
        private readonly log: vscode.LogOutputChannel,
    ) {
        this.listener = server.onStatus.event((status) => this.onStatus(status));
    }

    /** The server restarted: its builds stopped with it. */
    reset(): void {
        this.tracker.reset();
        for (const shown of this.progress.values()) {
            shown.close();
        }
        this.progress.clear();
    }

    private onStatus(status: StatusParams): void {
        for (const event of this.tracker.update(status)) {
            this.show(event);
        }
        const scope = (status.scopeUri ?? '').replace(/\/+$/, '');
        const shown = this.progress.get(scope);
        const ws = status.workspaceIndex;
        if (shown) {
            if (ws?.state === 'building') {
                shown.report(ws);
            } else {
                shown.close();
            }
        }
    }

    private show(event: WorkspaceEvent): void {
        const name = this.nameOf(event.scope, event.ws);
        switch (event.kind) {
            case 'offer':
                void this.offer(event.scope, event.ws, name);
                break;
            case 'building':
                this.showProgress(event.scope, event.ws, name);
                break;
            case 'built':
                this.log.info(`The index of ${name} is built: its warnings come from it now.`);
                vscode.window.setStatusBarMessage(`Recitation: ${name} is indexed`, 6000);
                break;
            case 'failed': {
                const text = event.first
                    ? `Recitation could not index ${name}: ${event.ws.error ?? 'see the logs'}`
                    : `Recitation could not update the index of ${name}: ${event.ws.error ?? 'see the logs'} (the index built before stays in use)`;
                this.log.error(text);
                void vscode.window.showErrorMessage(text, 'Try Again', 'Show Logs').then((choice) => {
                    if (choice === 'Try Again') {
                        void this.build(event.scope);
                    } else if (choice === 'Show Logs') {
                        this.log.show();
                    }
                });
                break;
            }
        }
    }

    private async offer(scope: string, ws: WorkspaceIndexStatus, name: string): Promise<void> {
        const choice = await vscode.window.showInformationMessage(offerText(ws, name), INDEX_THIS, NOT_NOW);
        if (choice === INDEX_THIS) {
            await this.build(scope);
        } else if (choice === NOT_NOW) {
            await this.ask(DECLINE_WORKSPACE_INDEX, scope);
        }
    }

    /** Build (or update) the folder's own index: the server runs it. */
    async build(scope: string): Promise<void> {
        await this.ask(BUILD_WORKSPACE_INDEX, scope);
    }

    async cancel(scope: string): Promise<void> {
        await this.ask(CANCEL_WORKSPACE_INDEX, scope);
    }

    private async ask(command: string, scope: string): Promise<void> {
        try {
            await this.server.request('workspace/executeCommand', { command, arguments: [scope] });
        } catch (err) {
            const text = err instanceof Error ? err.message : String(err);
            this.log.error(`${command}: ${text}`);
            void vscode.window.showErrorMessage(`Recitation: ${text}`);
        }
    }

    /** A first build's progress, as a notification with a cancel button. */
    private showProgress(scope: string, ws: WorkspaceIndexStatus, name: string): void {
        if (this.progress.has(scope)) {
            return;
        }
        void vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: `Recitation: indexing ${name}`, cancellable: true },
            (progress, token) => new Promise<void>((resolve) => {
                let reported = 0;
                const shown: Shown = {
                    report: (now) => {
                        const percent = progressPercent(now);
                        const increment = percent !== undefined && percent > reported ? percent - reported : undefined;
                        if (increment !== undefined) {
                            reported = percent ?? reported;
                        }
                        progress.report({ message: now.cancelling ? 'stopping…' : progressText(now) || undefined, increment });
                    },
                    close: () => {
                        this.progress.delete(scope);
                        resolve();
                    },
                };
                this.progress.set(scope, shown);
                progress.report({ message: ws.plan?.summary });
                token.onCancellationRequested(() => {
                    shown.close();
                    void this.cancel(scope);
                });
            }),
        );
    }

    private nameOf(scope: string, ws: WorkspaceIndexStatus): string {
        try {
            const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(scope));
            if (folder) {
                return folder.name;
            }
        } catch {
            // not a URI VS Code reads: the status' own path names it
        }
        return folderName(ws);
    }

    /** The folder the palette command acts on: the active editor's, the only one, or the user's pick. */
    static async pickFolder(placeHolder: string): Promise<vscode.WorkspaceFolder | undefined> {
        const folder = activeFolder();
        if (folder) {
            return folder;
        }
        return vscode.window.showWorkspaceFolderPick({ placeHolder });
    }

    dispose(): void {
        this.listener.dispose();
        this.reset();
    }
}
