// The code references log exported to CSV (for a spreadsheet) or JSON (for tools); the
// SBOM formats are written from the JSON by `recitation-index references` (referencesSbom.ts).
// Corpus metadata (paths, licenses, quoted text) is untrusted: CSV fields are quoted as
// RFC 4180 says, and a field a spreadsheet would read as a formula is neutralized.

import * as fs from 'fs';

import { formatLines } from './format';
import type { ReferenceEntry } from './referencesStore';

export const CSV_COLUMNS = [
    'time', 'file', 'line', 'endLine', 'kind', 'words', 'fileCount', 'fileCountExact',
    'license', 'repository', 'path', 'sourceLines', 'commit', 'url', 'otherSources', 'quote', 'outsideEditor',
] as const;

/**
 * One CSV field: a text starting with `=`, `+`, `-`, `@`, a tab or a carriage return (after
 * any spaces) gets a leading `'` so that no spreadsheet evaluates it; a field holding a
 * comma, a quote or a line break is quoted, with its quotes doubled.
 */
export function csvField(value: string | number | boolean | null | undefined): string {
    if (value === null || value === undefined) {
        return '';
    }
    let text = String(value);
    if (typeof value === 'string' && /^[\s]*[=+\-@\t\r]/.test(text)) {
        text = "'" + text;
    }
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A workspace-relative path (or the URI) for the `file` column. */
export type PathLabeler = (uri: string) => string;

export function referencesToCsv(entries: readonly ReferenceEntry[], label: PathLabeler): string {
    const rows: string[] = [CSV_COLUMNS.join(',')];
    for (const e of entries) {
        const best = e.sources[0] ?? {};
        const row = [
            e.time,
            label(e.uri),
            e.range.start.line + 1,
            e.range.end.line + 1,
            e.kind,
            e.length,
            e.fileCount,
            e.fileCountExact,
            best.license ?? '',
            best.repository ?? '',
            best.path ?? '',
            formatLines(best),
            best.commit ?? '',
            best.url ?? '',
            Math.max(0, e.sources.length - 1),
            e.text ?? '',
            e.outsideEditor === true,
        ];
        rows.push(row.map(csvField).join(','));
    }
    return rows.join('\r\n') + '\r\n';
}

export function referencesToJson(entries: readonly ReferenceEntry[], label: PathLabeler, now: Date = new Date()): string {
    return JSON.stringify({
        format: 'recitation-code-references',
        version: 1,
        exported: now.toISOString(),
        references: entries.map((e) => ({ ...e, file: label(e.uri), line: e.range.start.line + 1 })),
    }, null, 2) + '\n';
}

/** What the log exports to: CSV and JSON here; SBOMs through `recitation-index references`. */
export type ExportFormat = 'csv' | 'json' | 'spdx' | 'spdx-tv' | 'cyclonedx';

/** The save dialog's choices, by file name ending (the name decides the format). */
export const EXPORT_FILTERS: Record<string, string[]> = {
    'CSV (spreadsheets)': ['csv'],
    JSON: ['json'],
    'SPDX 2.3 SBOM (JSON)': ['spdx.json'],
    'SPDX 2.3 SBOM (tag-value)': ['spdx'],
    'CycloneDX 1.6 SBOM (JSON)': ['cdx.json'],
};

/** By the chosen file name: `.spdx.json`, `.spdx`, `.cdx.json` are SBOMs, `.json` JSON, else CSV. */
export function exportFormat(fileName: string): ExportFormat {
    if (/\.spdx\.json$/i.test(fileName)) {
        return 'spdx';
    }
    if (/\.spdx$/i.test(fileName)) {
        return 'spdx-tv';
    }
    if (/\.(cdx|cyclonedx|bom)\.json$/i.test(fileName)) {
        return 'cyclonedx';
    }
    return /\.json$/i.test(fileName) ? 'json' : 'csv';
}

export function isSbom(format: ExportFormat): format is 'spdx' | 'spdx-tv' | 'cyclonedx' {
    return format === 'spdx' || format === 'spdx-tv' || format === 'cyclonedx';
}

function kindOf(st: fs.Stats): string {
    if (st.isDirectory()) {
        return 'a folder';
    }
    if (st.isFIFO()) {
        return 'a named pipe';
    }
    if (st.isCharacterDevice() || st.isBlockDevice()) {
        return 'a device';
    }
    return st.isSocket() ? 'a socket' : 'a special file';
}

/**
 * Why an export must not be written at `file` (a path on disk), or undefined when it may:
 * the rule of the Python tools (README, "Files the tools write"). Nothing but a regular file
 * is written through or replaced: a folder, named pipe, device or socket there, or a link to
 * one, to nothing or in a loop, is refused; a link to a regular file is followed.
 */
export function unwritableExportTarget(file: string): string | undefined {
    let st: fs.Stats;
    try {
        st = fs.lstatSync(file);
    } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        return code === 'ENOENT' ? undefined : (err as Error).message;
    }
    if (st.isFile()) {
        return undefined;
    }
    if (!st.isSymbolicLink()) {
        return `${kindOf(st)}, not a regular file`;
    }
    try {
        st = fs.statSync(file);
    } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        return code === 'ENOENT' ? 'a link to a missing file' : code === 'ELOOP' ? 'a link loop' : (err as Error).message;
    }
    return st.isFile() ? undefined : `a link to ${kindOf(st)}, not a regular file`;
}
