// The "Recitation: Code References" output channel: one block per match. The matches are
// also kept on disk (ReferencesStore, in the workspace's storage folder): the channel
// shows the earlier sessions' entries at activation, and the log exports to CSV or JSON, or
// to an SBOM (SPDX 2.3, CycloneDX 1.6) through the Python CLI (setSbomWriter).

import * as vscode from 'vscode';

import { formatMatch } from './format';
import type { MatchParams } from './protocol';
import { EXPORT_FILTERS, exportFormat, isSbom, referencesToCsv, referencesToJson, unwritableExportTarget } from './referencesExport';
import type { SbomResult } from './referencesSbom';
import { toEntry, type ReferenceEntry, type ReferencesStore } from './referencesStore';

/** Writes the log's JSON export as an SBOM (`recitation-index references`), run in `root`. */
export type SbomWriter = (logJson: string, format: 'spdx' | 'spdx-tv' | 'cyclonedx', root: string) => Promise<SbomResult>;

const HEADER = 'Code that entered your documents and quotes indexed public code, with its sources.\n' +
    'To see one beside its source: "Recitation: Compare a Logged Quote with Its Source".';

export class ReferencesLog implements vscode.Disposable {
    readonly channel: vscode.OutputChannel;
    private written = 0;
    private sbomWriter?: SbomWriter;

    constructor(private readonly store: ReferencesStore, private readonly log?: vscode.LogOutputChannel) {
        this.channel = vscode.window.createOutputChannel('Recitation: Code References', 'log');
        let earlier: readonly ReferenceEntry[] = [];
        try {
            earlier = store.load();
            if (store.skipped > 0) {
                log?.warn(`Code references log: ${store.skipped} unreadable line(s) in ${store.file} skipped.`);
            }
        } catch (err) {
            log?.error(`Code references log: cannot read ${store.file}: ${err instanceof Error ? err.message : String(err)}`);
        }
        for (const entry of earlier) {
            this.write(entry);
        }
        if (earlier.length > 0) {
            this.channel.appendLine(`(${earlier.length} earlier reference${earlier.length === 1 ? '' : 's'} of this workspace above; this session below)`);
            this.channel.appendLine('');
        }
    }

    get matches(): number {
        return this.store.entries.length;
    }

    /** The logged matches, oldest first. */
    get entries(): readonly ReferenceEntry[] {
        return this.store.entries;
    }

    add(match: MatchParams): void {
        const entry = toEntry(match);
        try {
            this.store.append(entry);
        } catch (err) {
            this.log?.error(`Code references log: cannot write ${this.store.file}: ${err instanceof Error ? err.message : String(err)}`);
        }
        this.write(entry);
    }

    private write(entry: ReferenceEntry): void {
        if (this.written === 0) {
            this.channel.appendLine(HEADER);
            this.channel.appendLine('');
        }
        this.written += 1;
        this.channel.appendLine(formatMatch(entry, labelUri));
        this.channel.appendLine('');
    }

    /** How SBOMs are written (the extension gives the server's Python). */
    setSbomWriter(writer: SbomWriter): void {
        this.sbomWriter = writer;
    }

    show(): void {
        this.channel.show(true);
    }

    /** Asks where, then writes the log as CSV, JSON or an SBOM (by the file name's ending). */
    async export(): Promise<vscode.Uri | undefined> {
        const entries = this.store.entries;
        if (entries.length === 0) {
            void vscode.window.showInformationMessage('Recitation: the code references log is empty; nothing to export.');
            return undefined;
        }
        const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
        const target = await vscode.window.showSaveDialog({
            title: 'Export Code References',
            saveLabel: 'Export',
            defaultUri: folder ? vscode.Uri.joinPath(folder, 'code-references.csv') : undefined,
            filters: EXPORT_FILTERS,
        });
        if (!target) {
            return undefined;
        }
        const refused = target.scheme === 'file' ? unwritableExportTarget(target.fsPath) : undefined;
        if (refused) {
            void vscode.window.showErrorMessage(`Recitation: not exported: ${target.fsPath} is ${refused}.`);
            return undefined;
        }
        const format = exportFormat(target.path);
        let text: string;
        let note = '';
        if (isSbom(format)) {
            const result = await this.sbom(entries, format, folder ?? vscode.Uri.joinPath(target, '..'));
            if (!result) {
                return undefined;
            }
            text = result.text;
            const left = result.notes.filter((n) => n.startsWith('left out of the SBOM:')).length;
            note = left > 0 ? ` (${left} left out: no longer in their files, see the Recitation log)` : '';
        } else {
            text = format === 'json' ? referencesToJson(entries, labelUri) : referencesToCsv(entries, labelUri);
        }
        await vscode.workspace.fs.writeFile(target, Buffer.from(text, 'utf8'));
        void vscode.window.showInformationMessage(
            `Recitation: ${entries.length} code reference${entries.length === 1 ? '' : 's'} exported to ${target.fsPath || target.toString()}${note}.`,
        );
        return target;
    }

    /** The SBOM of the entries, or undefined after saying why not. */
    private async sbom(entries: readonly ReferenceEntry[], format: 'spdx' | 'spdx-tv' | 'cyclonedx', root: vscode.Uri): Promise<SbomResult | undefined> {
        if (!this.sbomWriter) {
            void vscode.window.showErrorMessage('Recitation: SBOMs are written by the language server\'s Python, which is not set up yet.');
            return undefined;
        }
        const writer = this.sbomWriter;
        try {
            const result = await vscode.window.withProgress(
                { location: vscode.ProgressLocation.Notification, title: 'Recitation: writing the SBOM' },
                () => writer(referencesToJson(entries, labelUri), format, root.fsPath),
            );
            for (const line of result.notes) {
                this.log?.info(`[SBOM export] ${line}`);
            }
            return result;
        } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            this.log?.error(`SBOM export failed: ${message}`);
            void vscode.window.showErrorMessage(`Recitation: the SBOM could not be written: ${message}`);
            return undefined;
        }
    }

    /** Empties the log, on disk too, after asking. */
    async clear(): Promise<boolean> {
        const n = this.store.entries.length;
        const choice = await vscode.window.showWarningMessage(
            `Clear the code references log of this workspace (${n} entr${n === 1 ? 'y' : 'ies'})? Export it first to keep a copy.`,
            { modal: true },
            'Clear',
        );
        if (choice !== 'Clear') {
            return false;
        }
        this.store.clear();
        this.channel.clear();
        this.written = 0;
        vscode.window.setStatusBarMessage('Recitation: code references log cleared', 4000);
        return true;
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
