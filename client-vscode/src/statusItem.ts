// The status bar item: whether Recitation is on for the active workspace folder and
// which index it uses. A click opens the Recitation menu.

import * as vscode from 'vscode';

import { statusView } from './format';
import type { StatusParams } from './protocol';
import { StatusByScope } from './statusScope';

export class StatusItem implements vscode.Disposable {
    private readonly item: vscode.StatusBarItem;
    private readonly statuses = new StatusByScope();
    private override: StatusParams | undefined;
    private readonly listener: vscode.Disposable;

    constructor() {
        this.item = vscode.window.createStatusBarItem('recitation.status', vscode.StatusBarAlignment.Right, 100);
        this.item.name = 'Recitation';
        this.item.command = 'recitation.statusMenu';
        this.listener = vscode.window.onDidChangeActiveTextEditor(() => this.render());
        this.render();
        this.item.show();
    }

    /** The server is (re)starting: forget what it said before. */
    reset(): void {
        this.statuses.clear();
        this.override = undefined;
        this.render();
    }

    /** A state that the extension itself knows (the server could not start). */
    setLocal(status: StatusParams): void {
        this.override = status;
        this.render();
    }

    update(status: StatusParams): void {
        this.override = undefined;
        this.statuses.set({ ...status, scopeUri: normalizeScope(status.scopeUri) });
        this.render();
    }

    /** The status that applies to the active editor's folder. */
    current(): StatusParams | undefined {
        if (this.override) {
            return this.override;
        }
        return this.statuses.pick(activeFolder()?.uri.toString());
    }

    private render(): void {
        const view = statusView(this.current());
        this.item.text = view.text;
        this.item.tooltip = new vscode.MarkdownString(
            view.tooltip.split('\n').map(escapeMarkdown).join('  \n') + '\n\n_Click for the Recitation menu._',
        );
        this.item.backgroundColor = view.level === 'error'
            ? new vscode.ThemeColor('statusBarItem.errorBackground')
            : view.level === 'warning'
                ? new vscode.ThemeColor('statusBarItem.warningBackground')
                : undefined;
    }

    dispose(): void {
        this.listener.dispose();
        this.item.dispose();
    }
}

export function activeFolder(): vscode.WorkspaceFolder | undefined {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const folder = uri ? vscode.workspace.getWorkspaceFolder(uri) : undefined;
    if (folder) {
        return folder;
    }
    const folders = vscode.workspace.workspaceFolders ?? [];
    return folders.length === 1 ? folders[0] : undefined;
}

/** The same URI spelled the way VS Code spells it (the server may encode it differently). */
function normalizeScope(scope: string | null | undefined): string | null {
    if (!scope) {
        return null;
    }
    try {
        return vscode.Uri.parse(scope).toString();
    } catch {
        return scope;
    }
}

function escapeMarkdown(text: string): string {
    return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => '\\' + c);
}
