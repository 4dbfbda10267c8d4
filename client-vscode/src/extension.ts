// The Recitation extension: starts the language server, shows its status, logs its
// matches (kept per workspace), lists the folder's decisions, shows a quote beside its
// source (Compare with Source), offers the workspace toggle and the default index build, and
// shows each folder's own index (offered, built and kept current by the server).

import * as vscode from 'vscode';

import { CompareView } from './compare';
import { planReferencesSbom } from './launch';
import { ReferencesLog } from './referencesLog';
import { exportSbom } from './referencesSbom';
import { REFERENCES_FILE, ReferencesStore } from './referencesStore';
import { RecitationServer } from './serverClient';
import { StatusItem } from './statusItem';
import { registerCommands } from './commands';
import { WorkspaceIndexUi } from './workspaceIndexUi';

let server: RecitationServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const log = vscode.window.createOutputChannel('Recitation', { log: true });
    // Per workspace (never in the repository); the global storage when no folder is open.
    const storage = context.storageUri ?? context.globalStorageUri;
    const references = new ReferencesLog(new ReferencesStore(vscode.Uri.joinPath(storage, REFERENCES_FILE).fsPath), log);
    const status = new StatusItem();
    context.subscriptions.push(log, references, status);

    const client = new RecitationServer(context, log, references, status);
    server = client;
    context.subscriptions.push(client);
    // SBOM exports of the log run `recitation-index references` with the server's Python
    references.setSbomWriter(async (logJson, format, root) => {
        const python = client.python ?? (await client.findInterpreter());
        const plan = (logFile: string) =>
            planReferencesSbom(python.command, python.info, client.layout, logFile, format, root, process.env);
        return exportSbom(plan, logJson, root);
    });
    const workspaceIndex = new WorkspaceIndexUi(client, log);
    context.subscriptions.push(workspaceIndex, client.onStarting.event(() => workspaceIndex.reset()));
    registerCommands(context, client, references, log, status, workspaceIndex);
    new CompareView(client, references, log).register(context);

    await client.start();
}

export async function deactivate(): Promise<void> {
    await server?.stop();
    server = undefined;
}
