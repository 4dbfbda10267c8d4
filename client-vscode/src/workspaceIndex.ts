// A folder's own index, as the extension shows it: the offer's text, what the status item
// and its menu say, and which statuses call for a notification (an offer, a first build's
// progress, a build done or failed). The server runs every build; the extension only asks
// it (`recitation.buildWorkspaceIndex`, ...). Pure, so that it is tested without VS Code.

import type { StatusParams, WorkspaceIndexStatus } from './protocol';
import { scopeKey } from './statusScope';

/** The extension's own commands for it (the palette and the status menu). */
export const INDEX_WORKSPACE_COMMAND = 'recitation.indexWorkspace';
export const STOP_WORKSPACE_INDEXING_COMMAND = 'recitation.stopWorkspaceIndexing';

export const INDEX_THIS = 'Index This Workspace';
export const NOT_NOW = 'Not Now';

/** A build or an update runs. */
export function busy(ws: WorkspaceIndexStatus | null | undefined): boolean {
    return ws?.state === 'building' || ws?.state === 'updating';
}

/** The folder's name from its path (the status says the path). */
export function folderName(ws: WorkspaceIndexStatus | null | undefined, fallback = 'this workspace'): string {
    const parts = (ws?.folder ?? '').split(/[\\/]+/).filter((p) => p);
    return parts.length > 0 ? parts[parts.length - 1] : fallback;
}

/** The offer: what was found and what it costs, and where it goes. */
export function offerText(ws: WorkspaceIndexStatus, name: string = folderName(ws)): string {
    const summary = ws.plan?.summary ?? 'the packages its lock files name';
    let text = `Recitation can index the public code ${name} depends on, to recognise code quoted from it: ${summary}. ` +
        'It is built in the background into your cache folder (never into the workspace) and kept current when a lock file changes.';
    const left = (ws.plan?.notIndexed ?? []).slice(0, 3).map((n) => `${n.file || n.ecosystem} (${n.reason})`);
    if (left.length > 0) {
        text += ` Not indexed: ${left.join('; ')}.`;
    }
    return text;
}

/**
 * Whether the default index's offer applies to a folder with no index: only where the
 * folder gets no index of its own (none applies, or there is nothing in it to index), so
 * that one offer is made, never two.
 */
export function defaultOfferApplies(status: StatusParams): boolean {
    const ws = status.workspaceIndex;
    return !ws || ws.state === 'nothing';
}

/** "fetching npm 3/143", or what the build is at. */
export function progressText(ws: WorkspaceIndexStatus | null | undefined): string {
    const p = ws?.progress;
    if (!p) {
        return '';
    }
    if (p.text) {
        return p.text;
    }
    if (typeof p.done === 'number' && typeof p.total === 'number' && p.total > 0) {
        return `${p.stage} ${p.done}/${p.total}`;
    }
    return p.stage;
}

/** The progress bar's share, when the build's stage says how far it is. */
export function progressPercent(ws: WorkspaceIndexStatus | null | undefined): number | undefined {
    const p = ws?.progress;
    if (p && typeof p.done === 'number' && typeof p.total === 'number' && p.total > 0) {
        return Math.max(0, Math.min(100, Math.floor((100 * p.done) / p.total)));
    }
    return undefined;
}

/** What the status item's tooltip says of the folder's own index. */
export function workspaceLines(ws: WorkspaceIndexStatus | null | undefined): string[] {
    if (!ws) {
        return [];
    }
    const lines: string[] = [];
    switch (ws.state) {
        case 'planning':
            lines.push('Reading the workspace\'s lock files and manifests…');
            break;
        case 'offered':
            lines.push(`This workspace can have an index of its own: ${ws.plan?.summary ?? ''}`.trim());
            break;
        case 'declined':
            lines.push('You chose not to index this workspace for now.');
            break;
        case 'nothing':
            lines.push('No dependencies and no standard library found in this workspace.');
            break;
        case 'building':
            lines.push(`Indexing this workspace: ${progressText(ws) || 'starting'}. Code entered meanwhile is checked once it is ready.`);
            break;
        case 'updating':
            lines.push(`Updating the workspace index (a lock file changed): ${progressText(ws) || 'starting'}.`);
            break;
        case 'failed':
            lines.push(`Indexing this workspace failed: ${ws.error ?? 'see the logs'}` + (ws.exists ? ' (the index built before stays in use).' : ''));
            break;
        case 'cancelled':
            lines.push(ws.exists ? 'The last update of the workspace index was stopped: it may not follow the lock files.' : 'Indexing this workspace was stopped.');
            break;
        case 'ready':
            break;
    }
    if (ws.inUse && ws.covers) {
        lines.push(`Workspace index: ${ws.covers}`);
    }
    if (ws.exists && ws.path) {
        lines.push(`Kept in ${ws.path}`);
    }
    for (const n of (ws.plan?.notIndexed ?? []).slice(0, 5)) {
        lines.push(`Not indexed: ${n.file || n.ecosystem} (${n.reason})`);
    }
    const left = ws.leftOut ?? [];
    for (const line of left.slice(0, 5)) {
        lines.push(`Left out: ${line}`);
    }
    if (left.length > 5) {
        lines.push(`(${left.length - 5} more left out: \`recitation-index stats\` lists them)`);
    }
    return lines;
}

/** An entry of the status menu about the folder's own index. */
export interface MenuEntry {
    label: string;
    description?: string;
    command: string;
}

/** What the status menu offers for the folder's own index (none where none applies). */
export function menuEntries(ws: WorkspaceIndexStatus | null | undefined): MenuEntry[] {
    if (!ws || ws.state === 'planning') {
        return [];
    }
    if (busy(ws)) {
        return [{ label: '$(debug-stop) Stop Workspace Indexing', description: progressText(ws) || undefined, command: STOP_WORKSPACE_INDEXING_COMMAND }];
    }
    if (ws.exists) {
        return [{ label: '$(sync) Update Workspace Index', description: ws.covers ?? undefined, command: INDEX_WORKSPACE_COMMAND }];
    }
    return [{ label: '$(package) Index This Workspace', description: ws.plan?.summary ?? 'the public code it depends on', command: INDEX_WORKSPACE_COMMAND }];
}

/** A status that calls for something on screen. */
export type WorkspaceEvent =
    | { kind: 'offer'; scope: string; ws: WorkspaceIndexStatus }
    | { kind: 'building'; scope: string; ws: WorkspaceIndexStatus }
    | { kind: 'built'; scope: string; ws: WorkspaceIndexStatus }
    | { kind: 'failed'; scope: string; ws: WorkspaceIndexStatus; first: boolean };

/**
 * Follows each folder's own index across statuses: an offer once per folder in a session,
 * a first build's start (its progress notification), its end (done or failed).
 */
export class WorkspaceIndexTracker {
    private readonly last = new Map<string, WorkspaceIndexStatus | null>();
    private readonly offered = new Set<string>();

    /** The server restarted: what it said is forgotten, what was offered stays offered. */
    reset(): void {
        this.last.clear();
    }

    update(status: StatusParams): WorkspaceEvent[] {
        const scope = scopeKey(status.scopeUri);
        const ws = status.workspaceIndex ?? null;
        const before = this.last.get(scope) ?? null;
        this.last.set(scope, ws);
        if (!ws || !scope) {
            return [];
        }
        const events: WorkspaceEvent[] = [];
        if (ws.state === 'offered' && !this.offered.has(scope)) {
            this.offered.add(scope);
            events.push({ kind: 'offer', scope, ws });
        }
        if (ws.state === 'building' && before?.state !== 'building') {
            events.push({ kind: 'building', scope, ws });
        }
        if (ws.state === 'ready' && before?.state === 'building') {
            events.push({ kind: 'built', scope, ws });
        }
        if (ws.state === 'failed' && busy(before)) {
            events.push({ kind: 'failed', scope, ws, first: before?.state === 'building' });
        }
        return events;
    }

    /** The latest status of the folder's own index. */
    current(scope: string | null | undefined): WorkspaceIndexStatus | null {
        return this.last.get(scopeKey(scope)) ?? null;
    }
}
