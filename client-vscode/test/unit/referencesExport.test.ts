import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { CSV_COLUMNS, EXPORT_FILTERS, csvField, exportFormat, isSbom, referencesToCsv, referencesToJson, unwritableExportTarget } from '../../src/referencesExport';
import type { ReferenceEntry } from '../../src/referencesStore';

const label = (uri: string) => uri.replace('file:///p/', '');

function entry(extra: Partial<ReferenceEntry> = {}): ReferenceEntry {
    return {
        time: '2026-11-22T09:30:00.000+00:00',
        uri: 'file:///p/src/app.py',
        range: { start: { line: 11, character: 0 }, end: { line: 40, character: 3 } },
        kind: 'recitation',
        length: 219,
        fileCount: 3,
        fileCountExact: false,
        text: 'def f():\n    return "a, b"\n',
        sources: [
            { repository: 'acme/widgets', path: 'src/geo.py', license: 'MIT', commit: '4f2a9c1', start_line: 17, end_line: 38, url: 'https://github.com/acme/widgets/blob/4f2a9c1/src/geo.py#L17-L38' },
            { repository: 'other/copy', path: 'geo.py', license: 'GPL-3.0-only' },
        ],
        ...extra,
    };
}

/** A small RFC 4180 reader, to check that what is written reads back as it was meant. */
function parseCsv(text: string): string[][] {
    const rows: string[][] = [];
    let row: string[] = [];
    let field = '';
    let quoted = false;
    for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (quoted) {
            if (c === '"' && text[i + 1] === '"') {
                field += '"';
                i++;
            } else if (c === '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c === '"') {
            quoted = true;
        } else if (c === ',') {
            row.push(field);
            field = '';
        } else if (c === '\r' && text[i + 1] === '\n') {
            row.push(field);
            rows.push(row);
            row = [];
            field = '';
            i++;
        } else {
            field += c;
        }
    }
    assert.equal(field, '', 'the text ends with a line break');
    return rows;
}

describe('csvField', () => {
    it('leaves plain text and numbers alone', () => {
        assert.equal(csvField('MIT'), 'MIT');
        assert.equal(csvField(42), '42');
        assert.equal(csvField(-1), '-1');
        assert.equal(csvField(false), 'false');
        assert.equal(csvField(undefined), '');
        assert.equal(csvField(null), '');
    });

    it('quotes commas, quotes and line breaks, doubling the quotes', () => {
        assert.equal(csvField('a,b'), '"a,b"');
        assert.equal(csvField('say "hi"'), '"say ""hi"""');
        assert.equal(csvField('one\ntwo'), '"one\ntwo"');
        assert.equal(csvField('one\r\ntwo'), '"one\r\ntwo"');
    });

    it('neutralizes text a spreadsheet would run as a formula', () => {
        for (const evil of ['=HYPERLINK("http://x","y")', '+1+1', '-2+3', '@SUM(A1)', '\t=1', '\r=1', '  =1+1']) {
            const out = csvField(evil);
            const value = out.startsWith('"') ? out.slice(1, -1).replace(/""/g, '"') : out;
            assert.equal(value[0], "'", `${JSON.stringify(evil)} → ${out}`);
            assert.equal(value.slice(1), evil);
        }
        assert.equal(csvField('=1,2'), '"\'=1,2"');
    });
});

describe('referencesToCsv', () => {
    it('writes a header and one row per entry, with the best source and how many others', () => {
        const rows = parseCsv(referencesToCsv([entry(), entry({ sources: [], text: undefined, fileCount: undefined })], label));
        assert.deepEqual(rows[0], [...CSV_COLUMNS]);
        assert.equal(rows.length, 3);
        const row = Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, rows[1][i]]));
        assert.deepEqual(row, {
            time: '2026-11-22T09:30:00.000+00:00', file: 'src/app.py', line: '12', endLine: '41', kind: 'recitation',
            words: '219', fileCount: '3', fileCountExact: 'false', license: 'MIT', repository: 'acme/widgets', path: 'src/geo.py',
            sourceLines: 'L17-L38', commit: '4f2a9c1', url: 'https://github.com/acme/widgets/blob/4f2a9c1/src/geo.py#L17-L38',
            otherSources: '1', quote: 'def f():\n    return "a, b"\n', outsideEditor: 'false',
        });
        assert.equal(rows[2][CSV_COLUMNS.indexOf('license')], '');
        assert.equal(rows[2][CSV_COLUMNS.indexOf('otherSources')], '0');
        assert.ok(rows.every((r) => r.length === CSV_COLUMNS.length));
        const outside = parseCsv(referencesToCsv([entry({ outsideEditor: true })], label));
        assert.equal(outside[1][CSV_COLUMNS.indexOf('outsideEditor')], 'true');
    });

    it('keeps hostile corpus metadata from becoming formulas or breaking rows', () => {
        const hostile = entry({
            text: '=cmd|"/c calc"!A1',
            sources: [{ repository: '@evil/repo', path: '+x.py\n,"injected"', license: '-MIT', url: '=1' }],
        });
        const rows = parseCsv(referencesToCsv([hostile], label));
        assert.equal(rows.length, 2);
        for (const column of ['quote', 'repository', 'path', 'license', 'url'] as const) {
            const value = rows[1][CSV_COLUMNS.indexOf(column)];
            assert.equal(value[0], "'", `${column}: ${value}`);
        }
        assert.equal(rows[1][CSV_COLUMNS.indexOf('path')], '\'+x.py\n,"injected"');
    });

    it('writes only the header for an empty log', () => {
        assert.equal(referencesToCsv([], label), CSV_COLUMNS.join(',') + '\r\n');
    });
});

describe('referencesToJson', () => {
    it('writes every entry with its file label and 1-based line', () => {
        const now = new Date('2026-11-23T10:00:00.000Z');
        const doc = JSON.parse(referencesToJson([entry()], label, now)) as {
            format: string; version: number; exported: string; references: (ReferenceEntry & { file: string; line: number })[];
        };
        assert.equal(doc.format, 'recitation-code-references');
        assert.equal(doc.version, 1);
        assert.equal(doc.exported, '2026-11-23T10:00:00.000Z');
        assert.equal(doc.references.length, 1);
        assert.equal(doc.references[0].file, 'src/app.py');
        assert.equal(doc.references[0].line, 12);
        assert.deepEqual(doc.references[0].sources, entry().sources);
        assert.equal(doc.references[0].text, entry().text);
    });
});

describe('exportFormat', () => {
    it('is JSON for a .json file, else CSV', () => {
        assert.equal(exportFormat('/tmp/refs.json'), 'json');
        assert.equal(exportFormat('/tmp/refs.JSON'), 'json');
        assert.equal(exportFormat('/tmp/refs.csv'), 'csv');
        assert.equal(exportFormat('/tmp/refs'), 'csv');
    });

    it('is an SBOM for the SPDX and CycloneDX endings, each offered by the dialog', () => {
        assert.equal(exportFormat('/tmp/refs.spdx.json'), 'spdx');
        assert.equal(exportFormat('C:\\refs.SPDX.json'), 'spdx');
        assert.equal(exportFormat('/tmp/refs.spdx'), 'spdx-tv');
        assert.equal(exportFormat('/tmp/refs.cdx.json'), 'cyclonedx');
        assert.equal(exportFormat('/tmp/refs.cyclonedx.json'), 'cyclonedx');
        const endings = Object.values(EXPORT_FILTERS).flat();
        assert.deepEqual(endings.map((e) => exportFormat(`/tmp/refs.${e}`)), ['csv', 'json', 'spdx', 'spdx-tv', 'cyclonedx']);
        assert.ok(isSbom('cyclonedx') && !isSbom('json'));
    });
});

describe('unwritableExportTarget', { skip: process.platform === 'win32' }, () => {
    it('refuses what is no regular file and follows a link to one (the README\'s rule)', async () => {
        // an export to a link to /dev/null, a named pipe or a folder was written through
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'export-'));
        try {
            execFileSync('mkfifo', [path.join(dir, 'fifo')]);
            fs.mkdirSync(path.join(dir, 'folder'));
            fs.symlinkSync('/dev/null', path.join(dir, 'to-null'));
            fs.symlinkSync('missing.csv', path.join(dir, 'dangling'));
            fs.symlinkSync('loop', path.join(dir, 'loop'));
            fs.writeFileSync(path.join(dir, 'real.csv'), 'old');
            fs.symlinkSync('real.csv', path.join(dir, 'link.csv'));
            const server = net.createServer();
            await new Promise<void>((resolve) => server.listen(path.join(dir, 'socket'), resolve));
            const said = (name: string) => unwritableExportTarget(path.join(dir, name));
            try {
                assert.equal(said('socket'), 'a socket, not a regular file');
            } finally {
                server.close();
            }
            assert.equal(said('fifo'), 'a named pipe, not a regular file');
            assert.equal(said('folder'), 'a folder, not a regular file');
            assert.equal(said('to-null'), 'a link to a device, not a regular file');
            assert.equal(said('dangling'), 'a link to a missing file');
            assert.equal(said('loop'), 'a link loop');
            assert.equal(said('real.csv'), undefined);
            assert.equal(said('link.csv'), undefined);
            assert.equal(said('new.csv'), undefined);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
