import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { excerpt, formatCount, formatMatch, formatSource, formatTimestamp, indexLabel, statusView } from '../../src/format';
import type { MatchParams } from '../../src/protocol';

describe('formatCount', () => {
    it('abbreviates like the status item shows it', () => {
        assert.equal(formatCount(7_100_000), '7.1M');
        assert.equal(formatCount(7_000_000), '7M');
        assert.equal(formatCount(12_345), '12.3k');
        assert.equal(formatCount(950), '950');
        assert.equal(formatCount(0), '0');
        assert.equal(formatCount(2_500_000_000), '2.5G');
        assert.equal(formatCount(123_456_789), '123M');
        assert.equal(formatCount(-1), '?');
    });
});

describe('statusView', () => {
    it('shows on, the index name and its size when ready', () => {
        const view = statusView({
            state: 'ready',
            message: '',
            scopeUri: null,
            index: { name: 'stdlib 3.11', words: 7_100_000, documents: 1800, path: '/cache/recitation/index' },
        });
        assert.equal(view.text, '$(shield) Recitation: on · stdlib 3.11 · 7.1M words');
        assert.match(view.tooltip, /Index: \/cache\/recitation\/index/);
        assert.match(view.tooltip, /1\.8k files/);
        assert.equal(view.level, 'normal');
    });

    it('shows off, no index, error and starting', () => {
        assert.equal(statusView({ state: 'disabled', message: '' }).text, '$(circle-slash) Recitation: off');
        assert.equal(statusView({ state: 'no-index', message: 'no index at /x' }).text, '$(warning) Recitation: no index');
        assert.match(statusView({ state: 'no-index', message: 'no index at /x' }).tooltip, /^no index at \/x\nClick to build the default index/);
        assert.match(statusView({ state: 'no-index' }).tooltip, /^No index of public code yet\.\nClick to build/);
        assert.equal(statusView({ state: 'error', message: 'boom' }).level, 'error');
        assert.equal(statusView(undefined).text, '$(sync~spin) Recitation: starting');
    });

    it('says that files written outside the editor are checked', () => {
        const view = statusView({
            state: 'ready',
            index: { name: 'stdlib 3.11' },
            watchFiles: { state: 'on', how: 'client', files: 1234, checked: 2, lookups: 2, takenAsKnown: 500,
                lastTakenAsKnown: { files: 500, why: 'git checkout: moving from main to other' } },
        });
        assert.match(view.tooltip, /Watching 1\.2k code files: code written outside the editor is checked\./);
        assert.match(view.tooltip, /500 files changed by git checkout: moving from main to other were taken as they are, not checked\./);
        const starting = statusView({ state: 'ready', watchFiles: { state: 'starting', how: 'polling', files: 0 } });
        assert.match(starting.tooltip, /Reading the workspace's code files, to check what is written outside the editor\./);
        assert.doesNotMatch(statusView({ state: 'ready' }).tooltip, /outside the editor/);
        assert.match(statusView({ state: 'ready', watchFiles: { state: 'on', files: 1 } }).tooltip, /Watching 1 code file: /);
    });

    it('copes with an index summary without name or size', () => {
        assert.equal(statusView({ state: 'ready', index: null }).text, '$(shield) Recitation: on');
        assert.equal(indexLabel({ words: 1000 }), '1k words');
    });
});

describe('the code references log', () => {
    const match: MatchParams = {
        uri: 'file:///work/project/src/geo.py',
        range: { start: { line: 11, character: 0 }, end: { line: 30, character: 4 } },
        kind: 'recitation',
        length: 87,
        fileCount: 132,
        fileCountExact: true,
        text: 'def haversine(lat1, lon1,\n        lat2, lon2):\n    R = 6371.0',
        sources: [
            {
                url: 'https://example.org/acme/widgets/blob/1a2b3c4d5e6f7a8b/src/geo.py#L5-L20',
                repository: 'acme/widgets',
                path: 'src/geo.py',
                commit: '1a2b3c4d5e6f7a8b9c0d',
                license: 'MIT',
                start_line: 5,
                end_line: 20,
                occurrences: 3,
                words: 87,
            },
            { url: 'javascript:alert(1)', repository: 'other/repo', path: 'geo.py', license: null, start_line: 7, end_line: 7 },
        ],
        time: '2026-11-22T09:30:12Z',
    };

    it('writes time, file:line, kind, length and file count on the first line', () => {
        const text = formatMatch(match, () => 'src/geo.py');
        const first = text.split('\n')[0];
        assert.match(first, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \[recitation\] src\/geo\.py:12 · 87 words match public code · found in 132 files$/);
    });

    it('writes the excerpt on one line and every source with license and URL', () => {
        const lines = formatMatch(match, (uri) => uri).split('\n');
        assert.equal(lines[1], '    excerpt: def haversine(lat1, lon1, lat2, lon2): R = 6371.0');
        assert.equal(
            lines[2],
            '    [MIT] acme/widgets src/geo.py L5-L20 @ 1a2b3c4d5e6f (3 copies) https://example.org/acme/widgets/blob/1a2b3c4d5e6f7a8b/src/geo.py#L5-L20',
        );
        assert.equal(lines[3], '    [unknown license] other/repo geo.py L7');
        assert.equal(lines.length, 4);
    });

    it('marks code written outside the editor', () => {
        const first = formatMatch({ ...match, outsideEditor: true }, () => 'src/geo.py').split('\n')[0];
        assert.match(first, / · found in 132 files · written outside the editor$/);
        assert.doesNotMatch(formatMatch(match, () => 'a.py'), /outside the editor/);
    });

    it('marks a lower bound on the file count and a match without sources', () => {
        const text = formatMatch({ ...match, fileCount: 1000, fileCountExact: false, sources: [] }, () => 'a.py');
        assert.match(text, /found in at least 1000 files/);
        assert.match(text, /\(no source recorded\)/);
    });

    it('uses the time of the match, else now', () => {
        const now = new Date(2026, 0, 2, 3, 4, 5);
        const text = formatMatch({ ...match, time: undefined }, () => 'a.py', now);
        assert.ok(text.startsWith('2026-01-02 03:04:05 '));
        assert.equal(formatTimestamp(now), '2026-01-02 03:04:05');
    });

    it('shortens long excerpts', () => {
        const long = 'word '.repeat(100);
        const short = excerpt(long, 20);
        assert.equal(short.length, 20);
        assert.ok(short.endsWith('…'));
    });

    it('formats a source with only a URL', () => {
        assert.equal(formatSource({ url: 'https://example.org/x' }), '[unknown license] https://example.org/x');
    });
});
