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

/** What a folder's own index is doing (docs/PROTOCOL.md, "A folder's own index"). */
export type WorkspaceIndexState =
    | 'planning' | 'offered' | 'declined' | 'nothing' | 'building' | 'updating' | 'ready' | 'failed' | 'cancelled';

export interface WorkspaceIndexProgress {
    stage: string;
    done?: number | null;
    total?: number | null;
    unit?: string;
    /** "fetching npm 3/143" */
    text?: string;
}

export interface WorkspaceIndexPlan {
    /** "143 npm packages (package-lock.json), ... — about 90M words, 1 GB, 4 minutes" */
    summary?: string;
    ecosystems?: { ecosystem: string; packages: number; files: string[] }[];
    stdlibs?: { language: string; spec: string; version: string }[];
    notIndexed?: { file: string; ecosystem: string; reason: string }[];
    problems?: string[];
}

export interface WorkspaceIndexStatus {
    state: WorkspaceIndexState;
    /** The folder's path. */
    folder?: string;
    /** Where its index lives (the user cache folder). */
    path?: string;
    /** The folder's warnings come from it. */
    inUse?: boolean;
    /** It is on disk (an update failed or was stopped: the one built before). */
    exists?: boolean;
    /** "143 npm, 12 PyPI, Python 3.11 stdlib" while it is in use */
    covers?: string | null;
    plan?: WorkspaceIndexPlan | null;
    /** What the index in use left out, and why (a package that could not be fetched, ...). */
    leftOut?: string[];
    progress?: WorkspaceIndexProgress | null;
    cancelling?: boolean;
    error?: string | null;
    updated?: string | null;
}

/** What watching the folder's code files does (docs/PROTOCOL.md, "Code written outside the editor"). */
export interface WatchFilesStatus {
    /** `starting`: its files are being read; `on`: what changes on disk is checked. */
    state: 'starting' | 'on';
    /** Whose watcher reports the changes: the editor's, or the server's polling. */
    how?: 'client' | 'polling';
    /** Code files watched. */
    files?: number;
    /** Files checked since the server started, and the lookups that took. */
    checked?: number;
    lookups?: number;
    /** Files changed at once or by git (a checkout, a pull...): taken as they are, not checked. */
    takenAsKnown?: number;
    lastTakenAsKnown?: { files: number; why: string } | null;
}

export interface StatusParams {
    state: StatusState;
    message?: string;
    scopeUri?: string | null;
    index?: IndexSummary | null;
    /** The folder's own index, when one applies. */
    workspaceIndex?: WorkspaceIndexStatus | null;
    /** Watching the folder's code files, when it is on. */
    watchFiles?: WatchFilesStatus | null;
}

/** The server's commands for a folder's own index (argument: the folder URI). */
export const BUILD_WORKSPACE_INDEX = 'recitation.buildWorkspaceIndex';
export const CHECK_FOLDER = 'recitation.checkFolder';
export const DECLINE_WORKSPACE_INDEX = 'recitation.declineWorkspaceIndex';
export const CANCEL_WORKSPACE_INDEX = 'recitation.cancelWorkspaceIndex';

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
    /** Found in code written to the file outside the editor (by another program). */
    outsideEditor?: boolean;
    time?: string;
}
