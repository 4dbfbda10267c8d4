// "Compare with source": VS Code's diff editor between the source's lines (from the index,
// offline: the `recitation/source` request) and the quoted code, both read-only virtual
// documents, titled with the source's repository, path, lines and license, and scrolled to
// the quote. Run from the quick fix and the hover link (with the match), the command
// palette (the warning under the cursor) and the references log (a logged match).

import * as vscode from 'vscode';

import {
    COMPARE_COMMAND,
    COMPARE_REFERENCE_COMMAND,
    QUOTE_SCHEME,
    SOURCE_REQUEST,
    SOURCE_SCHEME,
    choiceItem,
    diffTitle,
    matchRequest,
    padded,
    referenceChoices,
    referenceItem,
    referenceRequest,
    resultNote,
    revealAt,
    virtualPath,
    type CompareArgs,
    type CompareChoice,
    type SourceResult,
} from './compareModel';
import type { ReferencesLog } from './referencesLog';
import type { RecitationServer } from './serverClient';

/** Virtual documents kept (each compare makes two). */
const KEEP_DOCUMENTS = 40;

/** The texts of the virtual documents, by URI; the oldest are forgotten. */
class VirtualDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
    private readonly texts = new Map<string, string>();
    private counter = 0;
    private readonly registrations: vscode.Disposable[];

    constructor() {
        this.registrations = [
            vscode.workspace.registerTextDocumentContentProvider(SOURCE_SCHEME, this),
            vscode.workspace.registerTextDocumentContentProvider(QUOTE_SCHEME, this),
        ];
    }

    add(scheme: string, path: string, text: string): vscode.Uri {
        this.counter += 1;
        const uri = vscode.Uri.from({ scheme, path, query: `v${this.counter}` });
        this.texts.set(uri.toString(), text);
        while (this.texts.size > KEEP_DOCUMENTS) {
            const oldest = this.texts.keys().next().value as string;
            this.texts.delete(oldest);
        }
        return uri;
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.texts.get(uri.toString()) ?? '(this view is closed: run Compare with Source again)';
    }

    dispose(): void {
        for (const r of this.registrations) {
            r.dispose();
        }
        this.texts.clear();
    }
}

export class CompareView implements vscode.Disposable {
    private readonly documents = new VirtualDocuments();

    constructor(
        private readonly server: RecitationServer,
        private readonly references: ReferencesLog,
        private readonly log: vscode.LogOutputChannel,
    ) {}

    register(context: vscode.ExtensionContext): void {
        context.subscriptions.push(
            this,
            vscode.commands.registerCommand(COMPARE_COMMAND, (args?: CompareArgs) => this.compareMatch(args)),
            vscode.commands.registerCommand(COMPARE_REFERENCE_COMMAND, () => this.compareReference()),
        );
    }

    /** From the quick fix or the hover (with the match), or the palette (the warning at the cursor). */
    async compareMatch(args?: CompareArgs): Promise<SourceResult | undefined> {
        const target = args && typeof args.uri === 'string' && typeof args.id === 'string' ? args : matchAtCursor();
        if (!target) {
            void vscode.window.showInformationMessage('Recitation: put the cursor on a quote Recitation flagged to compare it with its source.');
            return undefined;
        }
        const choice = await pickChoice(target.choices ?? []);
        if (choice === null) {
            return undefined;
        }
        return this.open(matchRequest(target, choice));
    }

    /** "Compare a Logged Quote with Its Source…": a match of the references log, then one of its sources. */
    async compareReference(): Promise<SourceResult | undefined> {
        const entries = [...this.references.entries].reverse().filter((e) => e.sources.length > 0);
        if (entries.length === 0) {
            void vscode.window.showInformationMessage('Recitation: the code references log has no quote with a source yet.');
            return undefined;
        }
        const label = (uri: string) => {
            try {
                return vscode.workspace.asRelativePath(vscode.Uri.parse(uri), false);
            } catch {
                return uri;
            }
        };
        const picked = await vscode.window.showQuickPick(
            entries.map((entry) => ({ ...referenceItem(entry, label), entry })),
            { title: 'Recitation: Compare a Logged Quote with Its Source', placeHolder: 'Pick a quote of the code references log', matchOnDescription: true, matchOnDetail: true },
        );
        if (!picked) {
            return undefined;
        }
        const choice = await pickChoice(referenceChoices(picked.entry));
        if (choice === null) {
            return undefined;
        }
        return this.open(referenceRequest(picked.entry, picked.entry.sources[choice?.source ?? 0]));
    }

    /** Asks the server, then opens the diff (or says why not). */
    private async open(params: Record<string, unknown>): Promise<SourceResult | undefined> {
        const started = Date.now();
        let result: SourceResult;
        try {
            result = await this.server.request<SourceResult>(SOURCE_REQUEST, params);
        } catch (err) {
            void vscode.window.showErrorMessage(`Recitation cannot show the source: ${err instanceof Error ? err.message : String(err)}`);
            return undefined;
        }
        this.log.info(`Compare with source: ${result.status} in ${Date.now() - started} ms${result.generationChanged ? ' (index changed since the match)' : ''}`);
        const note = resultNote(result);
        if (result.status !== 'ok' || result.text === undefined || !result.yours) {
            void vscode.window.showWarningMessage(`Recitation: ${note ?? 'the source is not in the index.'}`);
            return result;
        }
        const source = result.source;
        // both sides numbered as their files are: the source's lines, your document's lines
        const theirs = padded(result.text, result.firstLine);
        const yours = padded(result.yours.text, result.yours.firstLine);
        const left = this.documents.add(SOURCE_SCHEME, virtualPath(source.repository, source.path), theirs.text);
        const yoursName = (result.yours.uri ?? '').split(/[\\/]/).pop() ?? '';
        const right = this.documents.add(QUOTE_SCHEME, virtualPath(decodeSafe(yoursName) || 'quote'), yours.text);
        const at = revealAt(result.yours);
        const position = new vscode.Position(at.line + yours.shift, at.character);
        await vscode.commands.executeCommand('vscode.diff', left, right, diffTitle(result), {
            preview: true,
            selection: new vscode.Range(position, position),
        } satisfies vscode.TextDocumentShowOptions);
        // scrolled to the quote: its first common line at the top (the lines before it, and
        // the empty ones that number both sides as their files, are above)
        const editor = vscode.window.activeTextEditor;
        if (editor && editor.document.uri.toString() === right.toString()) {
            editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.AtTop);
        }
        if (note) {
            void vscode.window.showInformationMessage(`Recitation: ${note}`);
        }
        return result;
    }

    dispose(): void {
        this.documents.dispose();
    }
}

function decodeSafe(text: string): string {
    try {
        return decodeURIComponent(text);
    } catch {
        return text;
    }
}

/** The choice among several sources (a quick pick); undefined: the only one; null: cancelled. */
async function pickChoice(choices: CompareChoice[]): Promise<CompareChoice | undefined | null> {
    if (choices.length <= 1) {
        return choices[0];
    }
    const picked = await vscode.window.showQuickPick(
        choices.map((choice) => ({ ...choiceItem(choice), choice })),
        { title: 'Recitation: Compare with Source', placeHolder: 'Which source?', matchOnDescription: true },
    );
    return picked ? picked.choice : null;
}

/** The flagged match under the cursor of the active editor, from its diagnostic's data. */
function matchAtCursor(): CompareArgs | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        return undefined;
    }
    const at = editor.selection.active;
    for (const diagnostic of vscode.languages.getDiagnostics(editor.document.uri)) {
        const data = (diagnostic as vscode.Diagnostic & { data?: { id?: unknown; sources?: { repository?: string; path?: string; start_line?: number; end_line?: number; license?: string }[] } }).data;
        if (diagnostic.source !== 'recitation' || !diagnostic.range.contains(at) || typeof data?.id !== 'string') {
            continue;
        }
        const choices = (data.sources ?? []).map((s, i) => ({
            label: [s.repository, s.path, s.start_line ? `L${s.start_line}–L${s.end_line ?? s.start_line}` : ''].filter(Boolean).join(' '),
            description: s.license,
            source: i,
        }));
        return { uri: editor.document.uri.toString(), id: data.id, choices };
    }
    return undefined;
}
