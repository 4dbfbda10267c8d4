import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import type { MatchParams } from '../../src/protocol';
import { MAX_SOURCES, MAX_TEXT_CHARS, ReferencesStore, toEntry } from '../../src/referencesStore';

function match(n: number, extra: Partial<MatchParams> = {}): MatchParams {
    return {
        uri: `file:///p/app${n}.py`,
        range: { start: { line: n, character: 0 }, end: { line: n + 3, character: 4 } },
        kind: 'recitation',
        length: 60 + n,
        fileCount: 1,
        fileCountExact: true,
        text: `def f${n}(): pass`,
        sources: [{ repository: 'acme/widgets', path: 'src/geo.py', license: 'MIT', url: 'https://example.org/x' }],
        time: `2026-11-22T09:30:${String(n % 60).padStart(2, '0')}.000+00:00`,
        ...extra,
    };
}

describe('ReferencesStore', () => {
    let dir = '';
    let file = '';
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refs-'));
        file = path.join(dir, 'storage', 'refs.jsonl');
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('starts empty without a file, and creates its folder on the first append', () => {
        const store = new ReferencesStore(file);
        assert.deepEqual(store.load(), []);
        store.append(toEntry(match(1)));
        assert.equal(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length, 1);
    });

    it('survives a restart: a new store on the same file reads the entries back in order', () => {
        const first = new ReferencesStore(file);
        first.load();
        for (let i = 0; i < 3; i++) {
            first.append(toEntry(match(i)));
        }
        const second = new ReferencesStore(file);
        const loaded = second.load();
        assert.equal(loaded.length, 3);
        assert.deepEqual(loaded.map((e) => e.uri), ['file:///p/app0.py', 'file:///p/app1.py', 'file:///p/app2.py']);
        assert.deepEqual(loaded[1], toEntry(match(1)));
    });

    it('keeps only the latest entries, in memory and on disk', () => {
        const store = new ReferencesStore(file, 10);
        store.load();
        for (let i = 0; i < 25; i++) {
            store.append(toEntry(match(i)));
        }
        assert.equal(store.entries.length, 10);
        assert.equal(store.entries[0].uri, 'file:///p/app15.py');
        const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
        assert.ok(lines <= 12, `the file is compacted (${lines} lines)`);
        const reloaded = new ReferencesStore(file, 10).load();
        assert.deepEqual(reloaded.map((e) => e.uri), store.entries.map((e) => e.uri));
    });

    it('trims a file written with a larger limit when it loads', () => {
        const big = new ReferencesStore(file, 100);
        big.load();
        for (let i = 0; i < 50; i++) {
            big.append(toEntry(match(i)));
        }
        const small = new ReferencesStore(file, 5);
        assert.equal(small.load().length, 5);
        assert.equal(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length, 5);
    });

    it('skips lines it cannot read (a torn write, another format) and keeps the rest', () => {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        const good = JSON.stringify(toEntry(match(7)));
        fs.writeFileSync(file, `${good}\n{"truncated": \n[1,2]\n{"uri": 3}\n${good}\n`);
        const store = new ReferencesStore(file);
        assert.equal(store.load().length, 2);
        assert.equal(store.skipped, 3);
        assert.equal(new ReferencesStore(file).load().length, 2);
    });

    it('clears the file and the entries', () => {
        const store = new ReferencesStore(file);
        store.load();
        store.append(toEntry(match(1)));
        store.clear();
        assert.equal(store.entries.length, 0);
        assert.equal(fs.existsSync(file), false);
        assert.deepEqual(new ReferencesStore(file).load(), []);
        store.append(toEntry(match(2)));
        assert.equal(new ReferencesStore(file).load().length, 1);
    });

    it('refuses a limit below one', () => {
        assert.throws(() => new ReferencesStore(file, 0), RangeError);
    });
});

describe('toEntry', () => {
    it('keeps the time the server gave, else now', () => {
        assert.equal(toEntry(match(1)).time, '2026-11-22T09:30:01.000+00:00');
        const now = new Date('2026-01-02T03:04:05.000Z');
        assert.equal(toEntry(match(1, { time: undefined }), now).time, now.toISOString());
        assert.equal(toEntry(match(1, { time: 'yesterday' }), now).time, now.toISOString());
    });

    it('bounds the quote text and the sources', () => {
        const sources = Array.from({ length: 30 }, (_, i) => ({ repository: `r/${i}` }));
        const entry = toEntry(match(1, { text: 'x'.repeat(MAX_TEXT_CHARS * 3), sources }));
        assert.equal(entry.text?.length, MAX_TEXT_CHARS + 1);
        assert.equal(entry.sources.length, MAX_SOURCES);
        assert.equal(entry.sources[0].repository, 'r/0');
    });

    it('keeps whether the code was written outside the editor', () => {
        assert.equal(toEntry(match(1, { outsideEditor: true })).outsideEditor, true);
        assert.equal('outsideEditor' in toEntry(match(1, { outsideEditor: false })), false);
        assert.equal('outsideEditor' in toEntry(match(1)), false);
    });

    it('keeps only the fields of the log, whatever else the notification carries', () => {
        const entry = toEntry({ ...match(1), id: 'abc', parts: [{ big: true }] } as MatchParams);
        assert.equal(entry.id, 'abc');
        assert.equal('parts' in entry, false);
    });
});
