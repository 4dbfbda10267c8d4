// The "Recitation: Code References" output channel: one block per match.

import * as vscode from 'vscode';

import { formatMatch } from './format';
import type { MatchParams } from './protocol';

export class ReferencesLog implements vscode.Disposable {
    readonly channel: vscode.OutputChannel;
    private count = 0;

    constructor() {
        this.channel = vscode.window.createOutputChannel('Recitation: Code References', 'log');
    }

    get matches(): number {
        return this.count;
    }

    add(match: MatchParams): void {
        if (this.count === 0) {
            this.channel.appendLine('Code that entered your documents and quotes indexed public code, with its sources.');
            this.channel.appendLine('');
        }
        this.count += 1;
        this.channel.appendLine(formatMatch(match, labelUri));
        this.channel.appendLine('');
    }

    show(): void {
        this.channel.show(true);
    }

    dispose(): void {
        this.channel.dispose();
    }
}

function labelUri(uri: string): string {
    try {
        return vscode.workspace.asRelativePath(vscode.Uri.parse(uri), (vscode.workspace.workspaceFolders?.length ?? 0) > 1);
    } catch {
        return uri;
    }
}
