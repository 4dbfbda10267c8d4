// Which server status applies to the active editor: the one for its workspace folder,
// else the one without a folder, else the latest; and whether an offer to build an index
// still applies. Pure, so that it is tested without VS Code.

import type { StatusParams } from './protocol';

/** A scope URI as a map key: '' for none, no trailing slash. */
export function scopeKey(scope: string | null | undefined): string {
    if (!scope) {
        return '';
    }
    return scope.replace(/\/+$/, '');
}

export class StatusByScope {
    private readonly byScope = new Map<string, StatusParams>();
    private latest: StatusParams | undefined;

    clear(): void {
        this.byScope.clear();
        this.latest = undefined;
    }

    set(status: StatusParams): void {
        this.byScope.set(scopeKey(status.scopeUri), status);
        this.latest = status;
    }

    /** `folderUri`: the active editor's workspace folder, if any. */
    pick(folderUri: string | undefined): StatusParams | undefined {
        if (folderUri) {
            const own = this.byScope.get(scopeKey(folderUri));
            if (own) {
                return own;
            }
        }
        return this.byScope.get('') ?? this.latest;
    }
}

/** An index is there (or the folder is off): an offer to build one no longer applies. */
export function offerWithdrawn(status: StatusParams): boolean {
    return status.state === 'ready' || status.state === 'disabled';
}
