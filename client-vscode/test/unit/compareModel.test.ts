import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
    CONTEXT_LINES,
    MAX_PADDING_LINES,
    choiceItem,
    diffTitle,
    lineSpan,
    matchRequest,
    padded,
    printable,
    referenceChoices,
    referenceItem,
    referenceRequest,
    revealAt,
    virtualPath,
    yoursLabel,
    type SourceResult,
} from '../../src/compareModel';
import type { ReferenceEntry } from '../../src/referencesStore';

const RESULT: SourceResult = {
    status: 'ok',
    title: 'acme/widgets src/geo.py L17–L38 · MIT',
    source: { repository: 'acme/widgets', path: 'src/geo.py', license: 'MIT', startLine: 17, endLine: 38 },
    text: 'def convex_hull(points):\n',
    firstLine: 14,
    exact: true,
    yours: {
        uri: 'file:///home/me/project/my%20hull.py',
        text: 'import math\n\ndef convex_hull(points):\n    pass\n',
        firstLine: 1,
        quoted: { start: { line: 2, character: 0 }, end: { line: 3, character: 8 } },
        marks: [],
    },
};

const ENTRY: ReferenceEntry = {
    time: '2026-11-22T09:30:12.123+00:00',
    uri: 'file:///p/app.py',
    range: { start: { line: 4, character: 0 }, end: { line: 25, character: 3 } },
    kind: 'recitation',
    length: 219,
    text: 'def convex_hull(points):\n    unique = sorted(set(points))…',
    sources: [
        { repository: 'acme/widgets', path: 'src/geo.py', commit: '4f2a9c1', license: 'MIT', start_line: 17, end_line: 38, url: 'https://x' },
        { repository: 'other/fork', path: 'geo.py', license: 'Apache-2.0', start_line: 3, end_line: 24 },
    ],
    id: '3f1c2a9b0d4e',
};

describe('the diff title', () => {
    it('names the source with its lines and license beside your file and lines', () => {
        assert.equal(diffTitle(RESULT), 'acme/widgets src/geo.py L17–L38 · MIT ↔ my hull.py L1–L4');
    });

    it('says a renamed copy is one', () => {
        assert.equal(diffTitle({ ...RESULT, exact: false }), 'acme/widgets src/geo.py L17–L38 · MIT (renamed copy) ↔ my hull.py L1–L4');
    });

    it('keeps control and bidi characters out of it', () => {
        const title = diffTitle({ ...RESULT, title: 'evil\u001b[2J\u202erepo\nx.py L1 · MIT' });
        assert.equal(title, 'evil\ufffd[2J\ufffdrepo x.py L1 · MIT ↔ my hull.py L1–L4');
    });
});

describe('virtual documents', () => {
    it('are named by the source path, with its extension, never a place on disk', () => {
        assert.equal(virtualPath('acme/widgets', 'src/geo.py'), '/acme/widgets/src/geo.py');
        assert.equal(virtualPath('evil', '../../etc/passwd'), '/evil/etc/passwd');
        assert.equal(virtualPath('a?b#c%d', 'x\u202e.py'), '/a_b_c_d/x\ufffd.py');
        assert.equal(virtualPath('', ''), '/source');
        assert.equal(virtualPath('C:\\temp', '..\\x.js'), '/C:/temp/x.js');
    });

    it('label your side with the file name and the lines shown', () => {
        assert.equal(yoursLabel('file:///a/b/c.py', 10, 'x\ny\n'), 'c.py L10–L11');
        assert.equal(yoursLabel(null, 1, 'x'), 'your code L1');
    });

    it('spans lines as the diagnostics do', () => {
        assert.equal(lineSpan(17, 38), 'L17–L38');
        assert.equal(lineSpan(5, 5), 'L5');
        assert.equal(lineSpan(undefined, 3), '');
    });
});

describe('requests', () => {
    it('ask for a flagged match and the chosen source (or part)', () => {
        assert.deepEqual(matchRequest({ uri: 'file:///a.py', id: 'abc' }, undefined), {
            uri: 'file:///a.py', id: 'abc', source: 0, contextLines: CONTEXT_LINES,
        });
        assert.deepEqual(matchRequest({ uri: 'u', id: 'i' }, { label: 'x', source: 2, part: 1 }), {
            uri: 'u', id: 'i', source: 2, part: 1, contextLines: CONTEXT_LINES,
        });
    });

    it('ask for a logged match by its id, with its source and text for when it is gone', () => {
        assert.deepEqual(referenceRequest(ENTRY, ENTRY.sources[1]), {
            uri: 'file:///p/app.py',
            id: '3f1c2a9b0d4e',
            source: { repository: 'other/fork', path: 'geo.py', commit: '', start_line: 3, end_line: 24 },
            text: 'def convex_hull(points):\n    unique = sorted(set(points))',
            range: ENTRY.range,
            contextLines: CONTEXT_LINES,
        });
    });

    it('list a logged match and its sources', () => {
        const item = referenceItem(ENTRY, (uri) => uri.replace('file:///p/', ''));
        assert.equal(item.label, 'app.py:5 · 219 words');
        assert.equal(item.description, 'acme/widgets src/geo.py L17–L38');
        assert.match(item.detail ?? '', /^2026-11-22 09:30:12 · def convex_hull\(points\): unique/);
        assert.deepEqual(referenceChoices(ENTRY).map((c) => [c.label, c.description, c.source]), [
            ['acme/widgets src/geo.py L17–L38', 'MIT', 0],
            ['other/fork geo.py L3–L24', 'Apache-2.0', 1],
        ]);
        assert.deepEqual(choiceItem({ label: 'a\u0007b', source: 0 }), { label: 'a\ufffdb', description: undefined, detail: undefined });
        assert.equal(printable('x'.repeat(400)).length, 300);
    });
});

describe('the view', () => {
    it('numbers each side as its file does, up to a limit', () => {
        assert.deepEqual(padded('a\nb\n', 4), { text: '\n\n\na\nb\n', shift: 3 });
        assert.deepEqual(padded('a\n', 1), { text: 'a\n', shift: 0 });
        assert.deepEqual(padded('a\n', undefined), { text: 'a\n', shift: 0 });
        assert.equal(padded('a', MAX_PADDING_LINES + 1).shift, 0);
    });

    it('is scrolled to the first common word, else the quote', () => {
        const yours = RESULT.yours!;
        assert.deepEqual(revealAt(yours), { line: 2, character: 0 });
        const marks = [
            { range: { start: { line: 5, character: 4 }, end: { line: 6, character: 0 } }, kind: 'same' as const },
            { range: { start: { line: 3, character: 8 }, end: { line: 3, character: 9 } }, kind: 'renamed' as const },
        ];
        assert.deepEqual(revealAt({ ...yours, marks }), { line: 3, character: 8 });
    });
});
