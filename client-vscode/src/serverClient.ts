// The language client: finds the interpreter, starts `python -m server` with the bundled
// libraries, sends the resolved settings, and restarts when the interpreter changes.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
    DidChangeConfigurationNotification,
    LanguageClient,
    RevealOutputChannelOn,
    State,
    type ExecutableOptions,
    type LanguageClientOptions,
    type ServerOptions,
} from 'vscode-languageclient/node';

import { COMPARE_COMMAND } from './compareModel';
import { discoverInterpreter, formatVersion, type Interpreter } from './interpreter';
import { planServer, type BundleManifest, type Layout } from './launch';
import { MATCH_NOTIFICATION, STATUS_NOTIFICATION, type MatchParams, type StatusParams } from './protocol';
import { onPythonInterpreterChange, probe, pythonExtensionInstalled, pythonExtensionInterpreter, which } from './python';
import { PYTHON_DOWNLOAD_URL, interpreterHelp, type HelpAction } from './pythonHelp';
import type { ReferencesLog } from './referencesLog';
import {
    SECTION,
    resolveConfigurationItem,
    resolveLaunchSettings,
    resolveServerSettings,
    type InitializationOptions,
    type PathContext,
    type ServerSettings,
} from './settings';
import { activeFolder, type StatusItem } from './statusItem';

const RESTART_DELAY_MS = 500;

export class RecitationServer implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private interpreter: Interpreter | undefined;
    private readonly disposables: vscode.Disposable[] = [];
    private restartTimer: NodeJS.Timeout | undefined;
    private starting: Promise<void> | undefined;
    private offeredIndexBuild = false;
    /** Listeners for each status the server sends (the index build prompt). */
    readonly onStatus = new vscode.EventEmitter<StatusParams>();
    /** Fired when the server (re)starts: what the previous one said no longer holds. */
    readonly onStarting = new vscode.EventEmitter<void>();

    constructor(
        private readonly context: vscode.ExtensionContext,
        readonly log: vscode.LogOutputChannel,
        private readonly references: ReferencesLog,
        private readonly status: StatusItem,
    ) {
        this.disposables.push(
            this.onStatus,
            this.onStarting,
            vscode.workspace.onDidChangeConfiguration((e) => {
                if (e.affectsConfiguration(`${SECTION}.interpreter`) || e.affectsConfiguration(`${SECTION}.upstreamCommand`)) {
                    this.log.info('Interpreter or upstream command changed: restarting the server.');
                    this.scheduleRestart();
                }
            }),
        );
        void onPythonInterpreterChange(() => {
            if (resolveLaunchSettings(launchConfig(), pathContext(undefined)).interpreter.length === 0) {
                this.log.info('The Python extension selected another interpreter: restarting the server.');
                this.scheduleRestart();
            }
        }).then((d) => d && this.disposables.push(d));
    }

    /** The interpreter the server runs on (known once it started). */
    get python(): Interpreter | undefined {
        return this.interpreter;
    }

    get layout(): Layout {
        return detectLayout(this.context.extensionPath);
    }

    /** Finds the interpreter again (used by the index build when the server did not start). */
    async findInterpreter(): Promise<Interpreter> {
        const folder = activeFolder() ?? vscode.workspace.workspaceFolders?.[0];
        const launch = resolveLaunchSettings(launchConfig(folder?.uri), pathContext(folder));
        const layout = this.layout;
        return discoverInterpreter(
            launch.interpreter,
            {
                pythonExtension: () => pythonExtensionInterpreter(folder?.uri),
                which,
                probe: (command) => probe(command),
            },
            // With bundled libraries only their Python versions fit.
            { versions: layout.kind === 'bundled' ? layout.manifest.pythons : undefined },
        );
    }

    start(): Promise<void> {
        if (!this.starting) {
            this.starting = this.doStart().finally(() => {
                this.starting = undefined;
            });
        }
        return this.starting;
    }

    private async doStart(): Promise<void> {
        this.status.reset();
        this.onStarting.fire();
        const folder = activeFolder() ?? vscode.workspace.workspaceFolders?.[0];
        const launch = resolveLaunchSettings(launchConfig(folder?.uri), pathContext(folder));
        let interpreter: Interpreter;
        try {
            interpreter = await this.findInterpreter();
        } catch (err) {
            this.failToStart(err);
            return;
        }
        this.interpreter = interpreter;
        this.log.info(`Python ${formatVersion(interpreter.info)} (${interpreter.source}): ${interpreter.command.join(' ')}`);

        const layout = this.layout;
        let plan;
        try {
            plan = planServer(interpreter.command, interpreter.info, layout, launch.upstreamCommand, process.env);
        } catch (err) {
            this.failToStart(err);
            return;
        }
        this.log.info(`Layout: ${layout.kind}; server: ${plan.command} ${plan.args.join(' ')}`);
        if (plan.env.PYTHONPATH) {
            this.log.debug(`PYTHONPATH=${plan.env.PYTHONPATH}`);
        }

        // Passed on to child_process.spawn as they are; windowsHide keeps a console window
        // from opening for the server on Windows (not in the client's declared options).
        const spawnOptions: ExecutableOptions & { windowsHide: boolean } = {
            env: plan.env,
            cwd: folder?.uri.fsPath ?? os.homedir(),
            windowsHide: true,
        };
        const serverOptions: ServerOptions = { command: plan.command, args: plan.args, options: spawnOptions };
        const clientOptions: LanguageClientOptions = {
            documentSelector: [
                { scheme: 'file' },
                { scheme: 'untitled' },
                { scheme: 'vscode-notebook-cell' },
                { scheme: 'vscode-remote' },
                { scheme: 'vscode-vfs' },
            ],
            outputChannel: this.log,
            traceOutputChannel: this.log,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            // the hover's "Compare with source" link runs this command, and no other
            markdown: { isTrusted: { enabledCommands: [COMPARE_COMMAND] } },
            synchronize: { configurationSection: SECTION },
            initializationOptions: initializationOptions(),
            connectionOptions: { maxRestartCount: 4 },
            middleware: {
                workspace: {
                    configuration: async (params, token, next) => {
                        const answer = await next(params, token);
                        if (!Array.isArray(answer)) {
                            return answer;
                        }
                        return params.items.map((item, i) => {
                            const folderOf = item.scopeUri ? vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(item.scopeUri)) : undefined;
                            const resource = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
                            const resolved = serverSettings(resource, folderOf);
                            return resolveConfigurationItem(item.section, answer[i], resolved);
                        });
                    },
                },
            },
        };

        const client = new LanguageClient(SECTION, 'Recitation', serverOptions, clientOptions);
        client.onNotification(STATUS_NOTIFICATION, (params: StatusParams) => {
            const watch = params.watchFiles;
            const files = watch?.files ?? 0;
            const watching = watch
                ? (watch.state === 'on' ? ` · watching ${files} code file${files === 1 ? '' : 's'}` : ' · reading the code files')
                : '';
            this.log.info(`Status: ${params.state}${params.message ? ' — ' + params.message : ''}${watching}`);
            this.status.update(params);
            this.onStatus.fire(params);
        });
        client.onNotification(MATCH_NOTIFICATION, (params: MatchParams) => this.references.add(params));
        client.onDidChangeState((e) => {
            if (e.newState === State.Stopped && this.client === client) {
                this.status.setLocal({ state: 'error', message: 'The Recitation server stopped. See the logs.' });
            }
        });
        this.client = client;
        try {
            await client.start();
            this.log.info('Server started.');
        } catch (err) {
            this.fail(`The Recitation server did not start: ${errorText(err)}`);
        }
    }

    async stop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client) {
            try {
                await client.stop(5000);
            } catch (err) {
                this.log.warn(`Stopping the server: ${errorText(err)}`);
            }
        }
    }

    async restart(): Promise<void> {
        await this.starting;
        await this.stop();
        await this.start();
    }

    scheduleRestart(): void {
        if (this.restartTimer) {
            clearTimeout(this.restartTimer);
        }
        this.restartTimer = setTimeout(() => {
            this.restartTimer = undefined;
            void this.restart();
        }, RESTART_DELAY_MS);
    }

    /** Whether the server process is up and initialized. */
    get running(): boolean {
        return this.client?.isRunning() ?? false;
    }

    /** Sends a request to the running server; throws when it is not running. */
    async request<R>(method: string, params: unknown): Promise<R> {
        await this.starting;
        const client = this.client;
        if (!client || !client.isRunning()) {
            throw new Error('the Recitation server is not running (see Recitation: Show Logs)');
        }
        return client.sendRequest<R>(method, params);
    }

    /**
     * Asks the server to look at its settings and indexes again (a newly built index is
     * opened at once, the insertions it kept meanwhile are checked, and a status follows).
     * No restart: the server keeps its documents and matches.
     */
    async refresh(): Promise<void> {
        const client = this.client;
        if (client?.isRunning()) {
            await client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
        }
    }

    /** True once per session: the first `no-index` status offers the default index build. */
    takeIndexBuildOffer(): boolean {
        if (this.offeredIndexBuild) {
            return false;
        }
        this.offeredIndexBuild = true;
        return true;
    }

    /** No interpreter fits: one message that says what to install, with buttons that help. */
    failToStart(err: unknown): void {
        const help = interpreterHelp(err, pythonExtensionInstalled());
        this.log.error(help.message);
        this.status.setLocal({ state: 'error', message: help.message });
        void vscode.window.showErrorMessage(help.message, ...help.actions.map((a) => a.title)).then((choice) => {
            const picked = help.actions.find((a) => a.title === choice);
            if (picked) {
                void this.helpWith(picked.action);
            }
        });
    }

    private async helpWith(action: HelpAction): Promise<void> {
        switch (action) {
            case 'download-python':
                await vscode.env.openExternal(vscode.Uri.parse(PYTHON_DOWNLOAD_URL));
                break;
            case 'install-python-extension':
                await vscode.commands.executeCommand('workbench.extensions.search', 'ms-python.python');
                break;
            case 'select-interpreter':
                await vscode.commands.executeCommand('python.setInterpreter');
                break;
            case 'open-settings':
                await vscode.commands.executeCommand('workbench.action.openSettings', 'recitation.interpreter');
                break;
            case 'show-logs':
                this.log.show();
                break;
        }
    }

    private fail(message: string): void {
        this.log.error(message);
        this.status.setLocal({ state: 'error', message });
        void vscode.window.showErrorMessage(message, 'Show Logs', 'Open Settings').then((choice) => {
            if (choice === 'Show Logs') {
                this.log.show();
            } else if (choice === 'Open Settings') {
                void vscode.commands.executeCommand('workbench.action.openSettings', 'recitation.interpreter');
            }
        });
    }

    dispose(): void {
        if (this.restartTimer) {
            clearTimeout(this.restartTimer);
        }
        for (const d of this.disposables) {
            d.dispose();
        }
        void this.stop();
    }
}

export function detectLayout(extensionPath: string): Layout {
    const manifestPath = path.join(extensionPath, 'bundled', 'manifest.json');
    if (fs.existsSync(manifestPath)) {
        const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as BundleManifest;
        return { kind: 'bundled', manifest, root: path.join(extensionPath, 'bundled') };
    }
    const checkout = path.dirname(extensionPath);
    if (fs.existsSync(path.join(checkout, 'server', '__init__.py')) && fs.existsSync(path.join(checkout, 'index_tools', '__init__.py'))) {
        return { kind: 'checkout', root: checkout };
    }
    return { kind: 'environment' };
}

function launchConfig(resource?: vscode.Uri): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration(SECTION, resource);
}

export function pathContext(folder: vscode.WorkspaceFolder | undefined): PathContext {
    return { workspaceFolder: folder?.uri.fsPath, userHome: os.homedir() };
}

function serverSettings(resource: vscode.Uri | undefined, folder: vscode.WorkspaceFolder | undefined): ServerSettings {
    return resolveServerSettings(vscode.workspace.getConfiguration(SECTION, resource ?? folder?.uri), pathContext(folder));
}

function initializationOptions(): InitializationOptions {
    const folders = vscode.workspace.workspaceFolders ?? [];
    return {
        // commands the extension runs itself, which the server may offer (hover, quick fix)
        clientCommands: [COMPARE_COMMAND],
        // the offer and progress of a folder's own index are shown by the extension
        clientFeatures: ['workspaceIndex'],
        recitation: serverSettings(folders.length === 1 ? folders[0].uri : undefined, folders.length === 1 ? folders[0] : undefined),
        folders: folders.map((folder) => ({
            uri: folder.uri.toString(),
            name: folder.name,
            settings: serverSettings(folder.uri, folder),
        })),
    };
}

function errorText(err: unknown): string {
    return err instanceof Error ? err.message : String(err);
}
