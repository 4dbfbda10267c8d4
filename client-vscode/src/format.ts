// Text shown to the user: the status item and the code references log.
// Pure, so that it is tested without VS Code.

import type { IndexSummary, MatchParams, MatchSource, StatusParams, WatchFilesStatus } from './protocol';
import { busy, progressPercent, workspaceLines } from './workspaceIndex';

/** 7100000 → "7.1M", 12300 → "12.3k", 950 → "950". */
export function formatCount(n: number): string {
    if (!Number.isFinite(n) || n < 0) {
        return '?';
    }
    const units: [number, string][] = [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (const [size, suffix] of units) {
        if (n >= size) {
            const value = n / size;
            const text = value >= 100 ? value.toFixed(0) : value.toFixed(1).replace(/\.0$/, '');
            return text + suffix;
        }
    }
    return String(Math.round(n));
}

export function indexLabel(index: IndexSummary | null | undefined): string {
    if (!index) {
        return '';
    }
    const parts: string[] = [];
    if (index.name) {
        parts.push(String(index.name));
    }
    if (typeof index.words === 'number') {
        parts.push(`${formatCount(index.words)} words`);
    }
    return parts.join(' · ');
}

export interface StatusView {
    text: string;
    tooltip: string;
    /** 'error' and 'warning' colour the item. */
    level: 'normal' | 'warning' | 'error';
}

/** The status item for one server status; undefined status = the server is starting. */
export function statusView(status: StatusParams | undefined): StatusView {
    if (!status) {
        return { text: '$(sync~spin) Recitation: starting', tooltip: 'The Recitation server is starting.', level: 'normal' };
    }
    const message = status.message ?? '';
    const ws = status.workspaceIndex ?? null;
    const own = workspaceLines(ws);
    const percent = progressPercent(ws);
    switch (status.state) {
        case 'ready': {
            const label = ws?.inUse && ws.covers ? `Workspace index: ${ws.covers}` : indexLabel(status.index);
            let text = (busy(ws) ? '$(sync~spin)' : '$(shield)') + ' Recitation: on' + (label ? ` · ${label}` : '');
            if (ws?.state === 'building') {
                text += ' · indexing the workspace' + (percent !== undefined ? ` ${percent}%` : '');
            } else if (ws?.state === 'updating') {
                text += ' · updating';
            } else if (ws?.state === 'failed') {
                text += ' · workspace indexing failed';
            }
            const lines = ['Recitation is on for this workspace.'];
            if (status.index?.path) {
                lines.push(`Index: ${status.index.path}`);
            }
            if (typeof status.index?.documents === 'number') {
                lines.push(`${formatCount(status.index.documents)} files, ${formatCount(status.index.words ?? 0)} words`);
            }
            if (message && !own.includes(message)) {
                lines.push(message);
            }
            lines.push(...own, ...watchLines(status.watchFiles));
            return { text, tooltip: lines.join('\n'), level: ws?.state === 'failed' ? 'warning' : 'normal' };
        }
        case 'disabled':
            return {
                text: '$(circle-slash) Recitation: off',
                tooltip: message || 'Recitation is off for this workspace (recitation.enable).',
                level: 'normal',
            };
        case 'no-index':
            if (ws?.state === 'building') {
                return {
                    text: '$(sync~spin) Recitation: indexing the workspace' + (percent !== undefined ? ` ${percent}%` : ''),
                    tooltip: own.join('\n'),
                    level: 'normal',
                };
            }
            if (ws?.state === 'planning') {
                return { text: '$(sync~spin) Recitation: reading the workspace', tooltip: own.join('\n'), level: 'normal' };
            }
            if (ws && ws.state !== 'nothing') {
                return {
                    text: '$(warning) Recitation: no index',
                    tooltip: [...own, 'Click to index this workspace (or build the default index, or set recitation.indexPath); code entered meanwhile is checked once it is ready.'].join('\n'),
                    level: 'warning',
                };
            }
            return {
                text: '$(warning) Recitation: no index',
                // The standing offer (the notification comes once per session).
                tooltip: [message || 'No index of public code yet.',
                    'Click to build the default index (the Python standard library) or set recitation.indexPath; code entered meanwhile is checked once it is ready.'].join('\n'),
                level: 'warning',
            };
        case 'error':
        default:
            return {
                text: '$(error) Recitation: error',
                tooltip: message || 'The Recitation server reported an error: see the logs.',
                level: 'error',
            };
    }
}

/** What the tooltip says of watching the folder's code files. */
export function watchLines(watch: WatchFilesStatus | null | undefined): string[] {
    if (!watch) {
        return [];
    }
    if (watch.state !== 'on') {
        return ["Reading the workspace's code files, to check what is written outside the editor."];
    }
    const files = typeof watch.files === 'number'
        ? `${formatCount(watch.files)} code file${watch.files === 1 ? '' : 's'}`
        : 'the code files';
    const lines = [`Watching ${files}: code written outside the editor is checked.`];
    const last = watch.lastTakenAsKnown;
    if (last && typeof last.files === 'number') {
        const why = last.why.startsWith('git ') ? ` changed by ${last.why}` : ` (${last.why})`;
        lines.push(`${last.files} file${last.files === 1 ? '' : 's'}${why} ${last.files === 1 ? 'was' : 'were'} taken as ${last.files === 1 ? 'it is' : 'they are'}, not checked.`);
    }
    return lines;
}

/** "2026-11-22 09:30:12" in local time. */
export function formatTimestamp(date: Date): string {
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
        `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** A short one-or-few-line excerpt of the matched text, whitespace folded. */
export function excerpt(text: string, maxChars = 160): string {
    const folded = text.replace(/\s+/g, ' ').trim();
    return folded.length > maxChars ? folded.slice(0, maxChars - 1).trimEnd() + '…' : folded;
}

export function formatLines(source: MatchSource): string {
    const a = source.start_line;
    const b = source.end_line;
    if (typeof a !== 'number') {
        return '';
    }
    return typeof b === 'number' && b !== a ? `L${a}-L${b}` : `L${a}`;
}

function isHttpUrl(url: string | null | undefined): url is string {
    return typeof url === 'string' && /^https?:\/\//i.test(url);
}

export function formatSource(source: MatchSource): string {
    const license = source.license && source.license.trim() ? source.license.trim() : 'unknown license';
    const where = [source.repository, source.path, formatLines(source)].filter((p) => p && String(p).length > 0).join(' ');
    const parts = [`[${license}]`];
    if (where) {
        parts.push(where);
    }
    if (source.commit) {
        parts.push(`@ ${source.commit.slice(0, 12)}`);
    }
    if (typeof source.occurrences === 'number' && source.occurrences > 1) {
        parts.push(`(${source.occurrences} copies)`);
    }
    if (isHttpUrl(source.url)) {
        parts.push(source.url);
    }
    return parts.join(' ');
}

/** A workspace-relative path (or the URI) for the log. */
export type PathLabeler = (uri: string) => string;

/**
 * One match as a block of the code references log:
 *
 *     2026-11-22 09:30:12 [recitation] src/geo.py:12 · 87 words match public code · found in 132 files
 *         excerpt: def haversine(lat1, lon1, lat2, lon2): …
 *         [MIT] acme/widgets src/geo.py L5-L20 @ 1a2b3c4d5e6f https://…
 */
export function formatMatch(match: MatchParams, label: PathLabeler, now: Date = new Date()): string {
    const when = match.time ? new Date(match.time) : now;
    const time = Number.isNaN(when.getTime()) ? formatTimestamp(now) : formatTimestamp(when);
    const line = match.range.start.line + 1;
    const where = `${label(match.uri)}:${line}`;
    const files = typeof match.fileCount === 'number'
        ? ` · found in ${match.fileCountExact === false ? 'at least ' : ''}${match.fileCount} file${match.fileCount === 1 ? '' : 's'}`
        : '';
    const outside = match.outsideEditor ? ' · written outside the editor' : '';
    const head = `${time} [${match.kind}] ${where} · ${match.length} words match public code${files}${outside}`;
    const lines = [head];
    if (match.text) {
        lines.push(`    excerpt: ${excerpt(match.text)}`);
    }
    const sources = match.sources ?? [];
    if (sources.length === 0) {
        lines.push('    (no source recorded)');
    }
    for (const source of sources) {
        lines.push('    ' + formatSource(source));
    }
    return lines.join('\n');
}
