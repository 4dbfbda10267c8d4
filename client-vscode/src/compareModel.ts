// "Compare with source": what the `recitation/source` request carries and how the diff
// editor's two read-only documents are named and titled. Pure, so that it is tested
// without VS Code (compare.ts opens the view).

import type { LspPosition, MatchSource } from './protocol';
import type { ReferenceEntry } from './referencesStore';

export const SOURCE_REQUEST = 'recitation/source';
export const COMPARE_COMMAND = 'recitation.compareWithSource';
export const COMPARE_REFERENCE_COMMAND = 'recitation.compareReference';
/** The source's virtual documents, and the quoted code's (a snapshot of its lines). */
export const SOURCE_SCHEME = 'recitation-source';
export const QUOTE_SCHEME = 'recitation-quote';
export const CONTEXT_LINES = 3;

export interface LspRange {
    start: LspPosition;
    end: LspPosition;
}

/** One source a compare can show (the server lists them in the command's argument). */
export interface CompareChoice {
    label: string;
    description?: string;
    detail?: string;
    source: number;
    part?: number;
}

/** The argument of `recitation.compareWithSource` (quick fix, hover link). */
export interface CompareArgs {
    uri: string;
    id: string;
    choices?: CompareChoice[];
}

export interface SourceMark {
    range: LspRange;
    kind: 'same' | 'renamed';
}

/** The answer to `recitation/source` (docs/PROTOCOL.md). */
export interface SourceResult {
    status: 'ok' | 'removed';
    message?: string;
    generation?: string;
    requestedGeneration?: string | null;
    generationChanged?: boolean;
    source: {
        repository?: string;
        path?: string;
        commit?: string;
        license?: string;
        url?: string;
        language?: string;
        startLine?: number;
        endLine?: number;
        lineCount?: number;
    };
    title?: string;
    text?: string;
    firstLine?: number;
    truncated?: boolean;
    quoted?: LspRange;
    marks?: SourceMark[];
    exact?: boolean;
    renamed?: { from: string; to: string }[];
    alignedWords?: number;
    quoteWords?: number;
    yours?: {
        uri?: string | null;
        text: string;
        firstLine: number;
        quoted: LspRange;
        marks: SourceMark[];
    };
}

/** Characters a title or a virtual path never shows: controls, bidi and other format characters. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/** One printable line (the server sends printable metadata; this holds for any server). */
export function printable(text: string | null | undefined, max = 300): string {
    const line = String(text ?? '').replace(/\s+/g, ' ').replace(UNSAFE, '\ufffd').trim();
    return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

/** "L17–L38", "L5". */
export function lineSpan(first: number | undefined, last: number | undefined): string {
    if (!first) {
        return '';
    }
    return !last || last === first ? `L${first}` : `L${first}–L${last}`;
}

/**
 * A path for a virtual document: the file's own name last (so that VS Code picks its
 * language by extension), every segment printable, no `.`/`..`, `?` or `#`: it names
 * the document, never a place on disk.
 */
export function virtualPath(...parts: (string | null | undefined)[]): string {
    const segments: string[] = [];
    for (const part of parts) {
        for (const raw of String(part ?? '').split(/[\\/]+/)) {
            const segment = printable(raw, 120).replace(/[?#%]/g, '_');
            if (segment && segment !== '.' && segment !== '..') {
                segments.push(segment);
            }
        }
    }
    return '/' + (segments.length ? segments.join('/') : 'source');
}

/** The name of the quoted code's side: its file name and lines. */
export function yoursLabel(uri: string | null | undefined, firstLine: number, text: string): string {
    const name = (uri ?? '').split(/[\\/]/).pop() || 'your code';
    const lines = text.replace(/\r?\n$/, '').split(/\r\n|\r|\n/).length;
    let decoded = name;
    try {
        decoded = decodeURIComponent(name);
    } catch {
        // keep it encoded
    }
    return `${printable(decoded, 120)} ${lineSpan(firstLine, firstLine + lines - 1)}`;
}

/** The diff editor's title: the source (repository, path, lines, license) beside yours. */
export function diffTitle(result: SourceResult): string {
    const source = printable(result.title, 300) || 'source';
    const yours = result.yours ? yoursLabel(result.yours.uri, result.yours.firstLine, result.yours.text) : 'your code';
    const renamed = result.exact === false ? ' (renamed copy)' : '';
    return `${source}${renamed} ↔ ${yours}`;
}

/** Beyond this line, a side is shown from its own first line (numbers then start at 1). */
export const MAX_PADDING_LINES = 200_000;

/**
 * The text of one side with empty lines before it, so that the editor numbers its lines as
 * the file does (the source's line 224 is line 224 in the view); the diff pairs the empty
 * lines of both sides, and the view is scrolled to the quote.
 */
export function padded(text: string, firstLine: number | undefined): { text: string; shift: number } {
    const shift = firstLine && firstLine > 1 && firstLine <= MAX_PADDING_LINES ? firstLine - 1 : 0;
    return { text: '\n'.repeat(shift) + text, shift };
}

/** Where to scroll your side to (0-based, in the unpadded text): the first common word, else the quote. */
export function revealAt(yours: NonNullable<SourceResult['yours']>): LspPosition {
    const first = [...(yours.marks ?? [])].sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character)[0];
    return (first ?? { range: yours.quoted }).range.start;
}

/** What the view says besides the diff: the index changed, the source was removed, a partial quote. */
export function resultNote(result: SourceResult): string | undefined {
    const message = printable(result.message, 1000);
    return message || undefined;
}

/** The line of a choice in the quick pick. */
export function choiceItem(choice: CompareChoice): { label: string; description?: string; detail?: string } {
    return {
        label: printable(choice.label, 300) || 'indexed file',
        description: choice.description ? printable(choice.description, 120) : undefined,
        detail: choice.detail ? printable(choice.detail, 200) : undefined,
    };
}

/** The request for a match still flagged in a document. */
export function matchRequest(args: CompareArgs, choice: CompareChoice | undefined): Record<string, unknown> {
    const params: Record<string, unknown> = { uri: args.uri, id: args.id, source: choice?.source ?? 0, contextLines: CONTEXT_LINES };
    if (choice?.part !== undefined) {
        params.part = choice.part;
    }
    return params;
}

/**
 * The request for a logged match (the references log): its id first (it may still be
 * flagged), else the source and the quoted text as logged.
 */
export function referenceRequest(entry: ReferenceEntry, source: MatchSource): Record<string, unknown> {
    const params: Record<string, unknown> = {
        uri: entry.uri,
        source: {
            repository: source.repository ?? '',
            path: source.path ?? '',
            commit: source.commit ?? '',
            start_line: source.start_line ?? 0,
            end_line: source.end_line ?? 0,
        },
        text: (entry.text ?? '').replace(/…$/, ''),
        range: entry.range,
        contextLines: CONTEXT_LINES,
    };
    if (entry.id) {
        params.id = entry.id;
    }
    return params;
}

/** A logged match in the quick pick of the references log. */
export function referenceItem(entry: ReferenceEntry, label: (uri: string) => string): { label: string; description?: string; detail?: string } {
    const best = entry.sources[0];
    const where = best ? [best.repository, best.path, lineSpan(best.start_line ?? undefined, best.end_line ?? undefined)].filter(Boolean).join(' ') : '';
    const excerpt = (entry.text ?? '').replace(/\s+/g, ' ').trim();
    return {
        label: `${label(entry.uri)}:${entry.range.start.line + 1} · ${entry.length} words`,
        description: printable(where, 200) || undefined,
        detail: `${entry.time.replace('T', ' ').slice(0, 19)} · ${printable(excerpt, 120)}`,
    };
}

/** The choices of a logged match: each source it lists. */
export function referenceChoices(entry: ReferenceEntry): CompareChoice[] {
    return entry.sources.map((s, i) => ({
        label: printable([s.repository, s.path, lineSpan(s.start_line ?? undefined, s.end_line ?? undefined)].filter(Boolean).join(' '), 300),
        description: s.license ? printable(s.license, 120) : undefined,
        source: i,
    }));
}
