import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { StatusParams } from '../../src/protocol';
import { StatusByScope, offerWithdrawn, scopeKey } from '../../src/statusScope';

const ready = (scopeUri: string | null): StatusParams => ({ state: 'ready', message: '', scopeUri, index: { name: 'stdlib', words: 10 } });
const off = (scopeUri: string | null): StatusParams => ({ state: 'disabled', message: 'off here', scopeUri, index: null });

describe('StatusByScope', () => {
    it("shows the active folder's own status", () => {
        const s = new StatusByScope();
        s.set(ready('file:///work/a'));
        s.set(off('file:///work/b'));
        assert.equal(s.pick('file:///work/a')?.state, 'ready');
        assert.equal(s.pick('file:///work/b')?.state, 'disabled');
    });

    it('matches folder URIs with or without a trailing slash', () => {
        const s = new StatusByScope();
        s.set(off('file:///work/b/'));
        assert.equal(s.pick('file:///work/b')?.state, 'disabled');
        assert.equal(scopeKey('file:///x//'), 'file:///x');
        assert.equal(scopeKey(null), '');
    });

    it('falls back to the status without a folder, then to the latest', () => {
        const s = new StatusByScope();
        s.set(off('file:///work/b'));
        assert.equal(s.pick('file:///work/c')?.state, 'disabled');
        s.set(ready(null));
        assert.equal(s.pick('file:///work/c')?.state, 'ready');
        assert.equal(s.pick(undefined)?.state, 'ready');
    });

    it('forgets everything when the server restarts', () => {
        const s = new StatusByScope();
        s.set(ready(null));
        s.clear();
        assert.equal(s.pick(undefined), undefined);
    });
});

describe('offerWithdrawn', () => {
    it('withdraws the index build offer once an index is ready or the folder is off, not before', () => {
        assert.equal(offerWithdrawn(ready('file:///p')), true);
        assert.equal(offerWithdrawn(off('file:///p')), true);
        assert.equal(offerWithdrawn({ state: 'no-index', scopeUri: 'file:///p' }), false);
        assert.equal(offerWithdrawn({ state: 'error', message: 'damaged', scopeUri: null }), false);
    });
});
