// The Recitation extension: starts the language server, shows its status, logs its
// matches (kept per workspace), lists the folder's decisions, shows a quote beside its
// source (Compare with Source), and offers the workspace toggle and the default index build.

import * as vscode from 'vscode';

import { CompareView } from './compare';
import { ReferencesLog } from './referencesLog';
import { REFERENCES_FILE, ReferencesStore } from './referencesStore';
import { RecitationServer } from './serverClient';
import { StatusItem } from './statusItem';
import { registerCommands } from './commands';

let server: RecitationServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const log = vscode.window.createOutputChannel('Recitation', { log: true });
    // Per workspace (never in the repository); the global storage when no folder is open.
    const storage = context.storageUri ?? context.globalStorageUri;
    const references = new ReferencesLog(new ReferencesStore(vscode.Uri.joinPath(storage, REFERENCES_FILE).fsPath), log);
    const status = new StatusItem();
    context.subscriptions.push(log, references, status);

    server = new RecitationServer(context, log, references, status);
    context.subscriptions.push(server);
    registerCommands(context, server, references, log, status);
    new CompareView(server, references, log).register(context);

    await server.start();
}

export async function deactivate(): Promise<void> {
    await server?.stop();
    server = undefined;
}
