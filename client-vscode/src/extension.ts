// The Recitation extension: starts the language server, shows its status, logs its
// matches, and offers the workspace toggle and the default index build.

import * as vscode from 'vscode';

import { ReferencesLog } from './referencesLog';
import { RecitationServer } from './serverClient';
import { StatusItem } from './statusItem';
import { registerCommands } from './commands';

let server: RecitationServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const log = vscode.window.createOutputChannel('Recitation', { log: true });
    const references = new ReferencesLog();
    const status = new StatusItem();
    context.subscriptions.push(log, references, status);

    server = new RecitationServer(context, log, references, status);
    context.subscriptions.push(server);
    registerCommands(context, server, references, log);

    await server.start();
}

export async function deactivate(): Promise<void> {
    await server?.stop();
    server = undefined;
}
