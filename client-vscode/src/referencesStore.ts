// The code references log on disk: one JSON line per match, in the workspace's storage
// folder (never the repository), bounded to the latest entries. No VS Code here, so that
// it is tested on its own.

import * as fs from 'fs';
import * as path from 'path';

import type { MatchParams, MatchSource } from './protocol';

export const REFERENCES_FILE = 'code-references.jsonl';
export const DEFAULT_LIMIT = 5000;
/** Longest quote text kept per entry (the log is for finding the quote again, not a copy). */
export const MAX_TEXT_CHARS = 2000;
/** Sources kept per entry, best first. */
export const MAX_SOURCES = 10;

/** One logged match: the `recitation/match` notification, trimmed, with its time. */
export interface ReferenceEntry {
    time: string;
    uri: string;
    range: MatchParams['range'];
    kind: string;
    length: number;
    fileCount?: number;
    fileCountExact?: boolean;
    text?: string;
    sources: MatchSource[];
    id?: string;
    /** The code was written to the file outside the editor. */
    outsideEditor?: boolean;
}

export function toEntry(match: MatchParams, now: Date = new Date()): ReferenceEntry {
    const when = match.time && !Number.isNaN(new Date(match.time).getTime()) ? match.time : now.toISOString();
    const entry: ReferenceEntry = {
        time: when,
        uri: match.uri,
        range: match.range,
        kind: match.kind,
        length: match.length,
        sources: (match.sources ?? []).slice(0, MAX_SOURCES),
    };
    if (typeof match.fileCount === 'number') {
        entry.fileCount = match.fileCount;
    }
    if (typeof match.fileCountExact === 'boolean') {
        entry.fileCountExact = match.fileCountExact;
    }
    if (typeof match.text === 'string') {
        entry.text = match.text.length > MAX_TEXT_CHARS ? match.text.slice(0, MAX_TEXT_CHARS) + '…' : match.text;
    }
    if (typeof match.id === 'string') {
        entry.id = match.id;
    }
    if (match.outsideEditor === true) {
        entry.outsideEditor = true;
    }
    return entry;
}

function isEntry(value: unknown): value is ReferenceEntry {
    if (!value || typeof value !== 'object') {
        return false;
    }
    const v = value as Partial<ReferenceEntry>;
    return typeof v.time === 'string' && typeof v.uri === 'string' && typeof v.kind === 'string' &&
        typeof v.length === 'number' && !!v.range && typeof v.range.start?.line === 'number' && Array.isArray(v.sources);
}

/**
 * The entries in a file and the latest `limit` of them kept in memory. Appends go to the
 * end of the file; once it holds a fifth more than `limit` lines it is rewritten with the
 * latest `limit` (atomically: a temporary file renamed over it).
 */
export class ReferencesStore {
    private items: ReferenceEntry[] = [];
    private linesOnDisk = 0;
    /** Lines of the file that could not be read when it was loaded. */
    skipped = 0;

    constructor(readonly file: string, readonly limit: number = DEFAULT_LIMIT) {
        if (limit < 1) {
            throw new RangeError('limit must be at least 1');
        }
    }

    get entries(): readonly ReferenceEntry[] {
        return this.items;
    }

    /** Reads the file (a missing file is an empty log); unreadable lines are skipped. */
    load(): readonly ReferenceEntry[] {
        let text = '';
        try {
            text = fs.readFileSync(this.file, 'utf8');
        } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
                throw err;
            }
        }
        const entries: ReferenceEntry[] = [];
        this.skipped = 0;
        this.linesOnDisk = 0;
        for (const line of text.split('\n')) {
            if (!line.trim()) {
                continue;
            }
            this.linesOnDisk += 1;
            try {
                const value: unknown = JSON.parse(line);
                if (isEntry(value)) {
                    entries.push(value);
                    continue;
                }
            } catch {
                // counted below
            }
            this.skipped += 1;
        }
        this.items = entries.slice(-this.limit);
        if (this.linesOnDisk > this.limit || this.skipped > 0) {
            this.rewrite();
        }
        return this.items;
    }

    append(entry: ReferenceEntry): void {
        this.items.push(entry);
        if (this.items.length > this.limit) {
            this.items.splice(0, this.items.length - this.limit);
        }
        fs.mkdirSync(path.dirname(this.file), { recursive: true });
        fs.appendFileSync(this.file, JSON.stringify(entry) + '\n', 'utf8');
        this.linesOnDisk += 1;
        if (this.linesOnDisk > this.limit + Math.ceil(this.limit / 5)) {
            this.rewrite();
        }
    }

    clear(): void {
        this.items = [];
        this.linesOnDisk = 0;
        fs.rmSync(this.file, { force: true });
    }

    private rewrite(): void {
        fs.mkdirSync(path.dirname(this.file), { recursive: true });
        const tmp = `${this.file}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, this.items.map((e) => JSON.stringify(e) + '\n').join(''), 'utf8');
        fs.renameSync(tmp, this.file);
        this.linesOnDisk = this.items.length;
    }
}
