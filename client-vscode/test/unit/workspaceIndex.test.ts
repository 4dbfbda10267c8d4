import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { statusView } from '../../src/format';
import type { StatusParams, WorkspaceIndexStatus } from '../../src/protocol';
import {
    INDEX_WORKSPACE_COMMAND,
    STOP_WORKSPACE_INDEXING_COMMAND,
    WorkspaceIndexTracker,
    defaultOfferApplies,
    folderName,
    menuEntries,
    offerText,
    progressPercent,
    progressText,
} from '../../src/workspaceIndex';

const SUMMARY = '143 npm packages (package-lock.json), 12 PyPI packages (requirements.txt), Python 3.11\'s standard library — about 90M words, 1 GB, 4 minutes';

function ws(state: WorkspaceIndexStatus['state'], more: Partial<WorkspaceIndexStatus> = {}): WorkspaceIndexStatus {
    return {
        state,
        folder: '/home/ada/src/shop',
        path: '/home/ada/.cache/recitation/workspaces/shop-1f2e',
        inUse: false,
        exists: false,
        plan: { summary: SUMMARY, notIndexed: [{ file: 'tools/go.mod', ecosystem: 'Go modules', reason: 'Go modules dependencies are not fetched yet' }] },
        ...more,
    };
}

function status(state: StatusParams['state'], own: WorkspaceIndexStatus | null, scopeUri = 'file:///home/ada/src/shop'): StatusParams {
    return { state, message: '', scopeUri, index: state === 'ready' ? { name: 'stdlib', words: 7_100_000 } : null, workspaceIndex: own };
}

describe('the offer', () => {
    it('says what was found, what it costs, where it goes, and what is not indexed', () => {
        const text = offerText(ws('offered'));
        assert.match(text, /^Recitation can index the public code shop depends on, to recognise code quoted from it: 143 npm packages/);
        assert.ok(text.includes('about 90M words, 1 GB, 4 minutes.'));
        assert.ok(text.includes('into your cache folder (never into the workspace)'));
        assert.ok(text.endsWith('Not indexed: tools/go.mod (Go modules dependencies are not fetched yet).'));
        assert.equal(folderName(ws('offered')), 'shop');
        assert.equal(folderName({ state: 'offered' }), 'this workspace');
    });

    it('replaces the default index offer where the folder can have its own', () => {
        assert.equal(defaultOfferApplies(status('no-index', null)), true);
        assert.equal(defaultOfferApplies(status('no-index', ws('nothing'))), true);
        for (const state of ['planning', 'offered', 'declined', 'building', 'failed', 'cancelled'] as const) {
            assert.equal(defaultOfferApplies(status('no-index', ws(state))), false, state);
        }
    });
});

describe('WorkspaceIndexTracker', () => {
    it('offers once a folder, shows a first build and says when it ends', () => {
        const t = new WorkspaceIndexTracker();
        assert.deepEqual(t.update(status('no-index', ws('planning'))), []);
        assert.deepEqual(t.update(status('no-index', ws('offered'))).map((e) => e.kind), ['offer']);
        assert.deepEqual(t.update(status('no-index', ws('offered'))), []);
        assert.deepEqual(t.update(status('no-index', ws('building', { progress: { stage: 'fetching npm', done: 3, total: 143 } }))).map((e) => e.kind), ['building']);
        assert.deepEqual(t.update(status('no-index', ws('building', { progress: { stage: 'fetching npm', done: 9, total: 143 } }))), []);
        const [built] = t.update(status('ready', ws('ready', { inUse: true, exists: true, covers: '143 npm' })));
        assert.equal(built.kind, 'built');
        assert.equal(built.scope, 'file:///home/ada/src/shop');
        // an update that fails says so, and that the index built before stays
        t.update(status('ready', ws('updating', { inUse: true, exists: true })));
        const [failed] = t.update(status('ready', ws('failed', { inUse: true, exists: true, error: 'cannot read package-lock.json' })));
        assert.equal(failed.kind, 'failed');
        assert.equal(failed.kind === 'failed' && failed.first, false);
        // a restarted server offers again only what was not offered yet
        t.reset();
        assert.deepEqual(t.update(status('no-index', ws('offered'))), []);
        assert.deepEqual(t.update(status('no-index', ws('offered'), 'file:///home/ada/src/other')).map((e) => e.kind), ['offer']);
        assert.equal(t.current('file:///home/ada/src/other/')?.state, 'offered');
    });

    it('keeps each folder apart (multi-root)', () => {
        const t = new WorkspaceIndexTracker();
        t.update(status('no-index', ws('building'), 'file:///a'));
        assert.deepEqual(t.update(status('ready', ws('ready'), 'file:///b')), []);
        assert.deepEqual(t.update(status('ready', ws('ready'), 'file:///a')).map((e) => e.kind), ['built']);
    });
});

describe('the status item with a folder\'s own index', () => {
    it('names what the index covers', () => {
        const view = statusView({
            ...status('ready', ws('ready', { inUse: true, exists: true, covers: '143 npm, 12 PyPI, Python 3.11 stdlib' })),
            message: 'Workspace index: 143 npm, 12 PyPI, Python 3.11 stdlib',
        });
        assert.equal(view.text, '$(shield) Recitation: on · Workspace index: 143 npm, 12 PyPI, Python 3.11 stdlib');
        assert.equal(view.tooltip.split('Workspace index: 143 npm').length, 2, 'said once');
        assert.match(view.tooltip, /Kept in \/home\/ada\/\.cache\/recitation\/workspaces\/shop-1f2e/);
        assert.match(view.tooltip, /Not indexed: tools\/go\.mod \(Go modules dependencies are not fetched yet\)/);
        const left = statusView(status('ready', ws('ready', { inUse: true, exists: true, covers: '2 npm (7 left out)', leftOut: Array.from({ length: 7 }, (_, i) => `@acme/private-${i}: not found`) })));
        assert.match(left.tooltip, /Left out: @acme\/private-0: not found/);
        assert.match(left.tooltip, /\(2 more left out: `recitation-index stats` lists them\)/);
        assert.equal(view.level, 'normal');
    });

    it('shows a build under way, with or without an index meanwhile', () => {
        const building = ws('building', { progress: { stage: 'fetching npm', done: 36, total: 143, text: 'fetching npm 36/143' } });
        assert.equal(statusView(status('no-index', building)).text, '$(sync~spin) Recitation: indexing the workspace 25%');
        assert.match(statusView(status('no-index', building)).tooltip, /fetching npm 36\/143\. Code entered meanwhile is checked once it is ready/);
        assert.equal(statusView(status('ready', building)).text, '$(sync~spin) Recitation: on · stdlib · 7.1M words · indexing the workspace 25%');
        const updating = ws('updating', { inUse: true, exists: true, covers: '143 npm' });
        assert.equal(statusView(status('ready', updating)).text, '$(sync~spin) Recitation: on · Workspace index: 143 npm · updating');
        assert.equal(statusView(status('no-index', ws('planning'))).text, '$(sync~spin) Recitation: reading the workspace');
    });

    it('warns of a failure and offers what was declined', () => {
        const failed = statusView(status('ready', ws('failed', { inUse: true, exists: true, covers: '143 npm', error: 'registry unreachable' })));
        assert.equal(failed.level, 'warning');
        assert.match(failed.text, / · workspace indexing failed$/);
        assert.match(failed.tooltip, /Indexing this workspace failed: registry unreachable \(the index built before stays in use\)/);
        const declined = statusView(status('no-index', ws('declined')));
        assert.equal(declined.text, '$(warning) Recitation: no index');
        assert.match(declined.tooltip, /not to index this workspace for now[\s\S]*Click to index this workspace/);
        // nothing to index: the default index offer, as before
        assert.match(statusView(status('no-index', ws('nothing'))).tooltip, /Click to build the default index/);
    });
});

describe('the status menu and progress', () => {
    it('offers to index, update or stop, as the state calls for', () => {
        assert.deepEqual(menuEntries(null), []);
        assert.deepEqual(menuEntries(ws('planning')), []);
        const [index] = menuEntries(ws('offered'));
        assert.equal(index.command, INDEX_WORKSPACE_COMMAND);
        assert.equal(index.label, '$(package) Index This Workspace');
        assert.equal(index.description, SUMMARY);
        assert.equal(menuEntries(ws('ready', { exists: true, covers: '3 npm' }))[0].label, '$(sync) Update Workspace Index');
        const [stop] = menuEntries(ws('updating', { exists: true, progress: { stage: 'indexing', done: 5, total: 10 } }));
        assert.equal(stop.command, STOP_WORKSPACE_INDEXING_COMMAND);
        assert.equal(stop.description, 'indexing 5/10');
    });

    it('reads the build\'s progress line', () => {
        assert.equal(progressText(ws('building', { progress: { stage: 'fetching npm', done: 3, total: 143, text: 'fetching npm 3/143' } })), 'fetching npm 3/143');
        assert.equal(progressText(ws('building', { progress: { stage: 'reading' } })), 'reading');
        assert.equal(progressText(ws('building')), '');
        assert.equal(progressPercent(ws('building', { progress: { stage: 's', done: 143, total: 143 } })), 100);
        assert.equal(progressPercent(ws('building', { progress: { stage: 's', done: 3, total: null } })), undefined);
    });
});
