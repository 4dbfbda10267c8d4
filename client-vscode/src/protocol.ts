// The server's own notifications (see server/ and DESIGN.md).

export const STATUS_NOTIFICATION = 'recitation/status';
export const MATCH_NOTIFICATION = 'recitation/match';

export type StatusState = 'ready' | 'disabled' | 'no-index' | 'error';

export interface IndexSummary {
    name?: string;
    words?: number;
    documents?: number;
    path?: string;
    [key: string]: unknown;
}

export interface StatusParams {
    state: StatusState;
    message?: string;
    scopeUri?: string | null;
    index?: IndexSummary | null;
}

export interface MatchSource {
    url?: string | null;
    repository?: string | null;
    path?: string | null;
    commit?: string | null;
    license?: string | null;
    start_line?: number | null;
    end_line?: number | null;
    occurrences?: number | null;
    words?: number | null;
}

export interface LspPosition {
    line: number;
    character: number;
}

export interface MatchParams {
    uri: string;
    id?: string;
    range: { start: LspPosition; end: LspPosition };
    kind: string;
    length: number;
    fileCount?: number;
    fileCountExact?: boolean;
    text?: string;
    sources?: MatchSource[];
    time?: string;
}
