// The folder's decisions (`.recitation.toml`, read through `recitation/decisions`) as the
// lines of the "Recitation: Decisions…" list. Pure, so that it is tested without VS Code.

import { excerpt } from './format';

export const DECISIONS_REQUEST = 'recitation/decisions';
export const DECISIONS_FILE = '.recitation.toml';

export interface Dismissal {
    id: string;
    words?: number;
    quote?: string;
    source?: string;
    license?: string;
    date?: string;
}

export interface DecisionsPolicy {
    editor?: Record<string, string>;
    completions?: Record<string, string>;
}

/** The answer to `recitation/decisions` (docs/PROTOCOL.md). */
export interface DecisionsResult {
    folder?: string | null;
    file?: string | null;
    exists?: boolean;
    problem?: string | null;
    dismissed?: Dismissal[];
    allowed?: string[];
    policy?: DecisionsPolicy;
    removed?: boolean;
}

export interface DecisionsParams {
    uri?: string;
    remove?: { dismissed: string } | { allowed: string };
}

/**
 * One line of the list. `dismissed` and `allowed` lines can be undone; `policy` and
 * `problem` lines are read-only (picking them opens the file); `open` opens the file.
 */
export type DecisionLine =
    | { kind: 'separator'; label: string }
    | { kind: 'dismissed'; label: string; description: string; detail: string; id: string }
    | { kind: 'allowed'; label: string; description: string; pattern: string }
    | { kind: 'policy'; label: string; description: string }
    | { kind: 'problem'; label: string; description: string }
    | { kind: 'empty'; label: string }
    | { kind: 'open'; label: string; description: string };

function plural(n: number, word: string): string {
    return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The lines of the decisions list, grouped: dismissed quotes, allowed sources, policy, the file. */
export function decisionLines(result: DecisionsResult): DecisionLine[] {
    const lines: DecisionLine[] = [];
    if (result.problem) {
        lines.push({
            kind: 'problem',
            label: `$(error) ${DECISIONS_FILE} has an error: ${excerpt(result.problem, 200)}`,
            description: 'the decisions below are the ones in force',
        });
    }

    const dismissed = result.dismissed ?? [];
    lines.push({ kind: 'separator', label: `Dismissed quotes (${dismissed.length})` });
    if (dismissed.length === 0) {
        lines.push({ kind: 'empty', label: 'No dismissed quote: “Dismiss” in a warning’s quick fixes records one here.' });
    }
    for (const d of dismissed) {
        // The quote and its license on the line; where it comes from and when, below.
        const detail = [
            d.source && d.source.trim() ? d.source.trim() : '',
            d.date ? `dismissed ${d.date}` : 'dismissed',
            typeof d.words === 'number' && d.words > 0 ? plural(d.words, 'word') : '',
            `id ${d.id}`,
        ].filter(Boolean).join(' · ');
        lines.push({
            kind: 'dismissed',
            label: `$(eye-closed) ${excerpt(d.quote ?? '', 60) || d.id}`,
            description: d.license && d.license.trim() ? d.license.trim() : '',
            detail,
            id: d.id,
        });
    }

    const allowed = result.allowed ?? [];
    lines.push({ kind: 'separator', label: `Allowed sources (${allowed.length})` });
    if (allowed.length === 0) {
        lines.push({ kind: 'empty', label: 'No allowed source: “Allow … in this workspace” records your own repositories here.' });
    }
    for (const pattern of allowed) {
        lines.push({ kind: 'allowed', label: `$(pass) ${pattern}`, description: 'never a warning', pattern });
    }

    const editor = Object.entries(result.policy?.editor ?? {});
    const completions = Object.entries(result.policy?.completions ?? {});
    lines.push({ kind: 'separator', label: 'License policy' });
    if (editor.length === 0 && completions.length === 0) {
        lines.push({ kind: 'empty', label: 'No license policy: every quote shows with the severity of its kind.' });
    }
    for (const [license, action] of editor) {
        lines.push({ kind: 'policy', label: `$(law) ${license} → ${action}`, description: 'in the editor and in check' });
    }
    for (const [license, action] of completions) {
        lines.push({ kind: 'policy', label: `$(law) ${license} → ${action}`, description: 'completion suggestions' });
    }

    lines.push({ kind: 'separator', label: '' });
    if (!result.file) {
        lines.push({ kind: 'empty', label: 'No folder is open: dismissals last for this session only.' });
        return lines;
    }
    lines.push({
        kind: 'open',
        label: result.exists ? `$(go-to-file) Open ${DECISIONS_FILE}` : `$(new-file) Create ${DECISIONS_FILE}`,
        description: result.exists ? 'edit the policy and the allowed sources by hand' : 'the folder has no decisions file yet',
    });
    return lines;
}

/** The message after an undo. */
export function undoneMessage(line: { kind: 'dismissed' | 'allowed' }, removed: boolean | undefined): string {
    if (!removed) {
        return `Recitation: that decision was no longer in ${DECISIONS_FILE}.`;
    }
    return line.kind === 'dismissed'
        ? `Recitation: the quote is no longer dismissed (removed from ${DECISIONS_FILE}); it is reported again.`
        : `Recitation: the source is no longer allowed (removed from ${DECISIONS_FILE}); its quotes are reported again.`;
}
