import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { COMPARE_COMMAND, COMPARE_REFERENCE_COMMAND } from '../../src/compareModel';
import { decisionLines, undoneMessage, type DecisionLine, type DecisionsResult } from '../../src/decisions';

const full: DecisionsResult = {
    folder: 'file:///repo',
    file: 'file:///repo/.recitation.toml',
    exists: true,
    problem: null,
    dismissed: [{
        id: '3f2a9c0d1e4b5a6c', words: 408, quote: 'def copyfileobj(fsrc, fdst, length=0):',
        source: 'python/cpython Lib/shutil.py', license: 'PSF-2.0', date: '2026-11-23',
    }],
    allowed: ['acme/widgets', 'github.com/acme/*'],
    policy: { editor: { 'network-copyleft': 'error', 'GPL-3.0-only': 'warning' }, completions: { 'network-copyleft': 'block' } },
};

function ofKind<K extends DecisionLine['kind']>(lines: DecisionLine[], kind: K): Extract<DecisionLine, { kind: K }>[] {
    return lines.filter((l): l is Extract<DecisionLine, { kind: K }> => l.kind === kind);
}

describe('decisionLines', () => {
    it('lists the dismissed quotes with their source, license and date, undoable by id', () => {
        const [d] = ofKind(decisionLines(full), 'dismissed');
        assert.match(d.label, /def copyfileobj\(fsrc, fdst, length=0\):/);
        assert.equal(d.description, 'PSF-2.0');
        assert.equal(d.detail, 'python/cpython Lib/shutil.py · dismissed 2026-11-23 · 408 words · id 3f2a9c0d1e4b5a6c');
        assert.equal(d.id, '3f2a9c0d1e4b5a6c');
    });

    it('lists the allowed sources by pattern and the policy as read-only lines', () => {
        const lines = decisionLines(full);
        assert.deepEqual(ofKind(lines, 'allowed').map((l) => l.pattern), ['acme/widgets', 'github.com/acme/*']);
        const policy = ofKind(lines, 'policy').map((l) => `${l.label} (${l.description})`);
        assert.deepEqual(policy, [
            '$(law) network-copyleft → error (in the editor and in check)',
            '$(law) GPL-3.0-only → warning (in the editor and in check)',
            '$(law) network-copyleft → block (completion suggestions)',
        ]);
    });

    it('groups them under separators with counts, the file last', () => {
        const lines = decisionLines(full);
        assert.deepEqual(ofKind(lines, 'separator').map((l) => l.label), ['Dismissed quotes (1)', 'Allowed sources (2)', 'License policy', '']);
        assert.equal(lines[lines.length - 1].kind, 'open');
        assert.match(lines[lines.length - 1].label, /Open \.recitation\.toml/);
        assert.equal(ofKind(lines, 'problem').length, 0);
    });

    it('says what each empty group is for, and offers to create a missing file', () => {
        const lines = decisionLines({ folder: 'file:///repo', file: 'file:///repo/.recitation.toml', exists: false });
        assert.equal(ofKind(lines, 'empty').length, 3);
        assert.equal(ofKind(lines, 'dismissed').length + ofKind(lines, 'allowed').length + ofKind(lines, 'policy').length, 0);
        assert.match(lines[lines.length - 1].label, /Create \.recitation\.toml/);
    });

    it('puts a file with an error first, and falls back to the id for a quote without text', () => {
        const lines = decisionLines({ ...full, problem: '.recitation.toml line 3: expected "="', dismissed: [{ id: 'abc' }] });
        assert.equal(lines[0].kind, 'problem');
        assert.match(lines[0].label, /line 3: expected "="/);
        const [d] = ofKind(lines, 'dismissed');
        assert.match(d.label, /abc$/);
        assert.equal(d.description, '');
        assert.equal(d.detail, 'dismissed · id abc');
    });

    it('has nothing to open outside every folder', () => {
        const lines = decisionLines({ folder: null, file: null, exists: false, dismissed: [] });
        assert.equal(ofKind(lines, 'open').length, 0);
        assert.match(lines[lines.length - 1].label, /session only/);
    });
});

describe('undoneMessage', () => {
    it('says what comes back, or that nothing was there', () => {
        assert.match(undoneMessage({ kind: 'dismissed' }, true), /no longer dismissed/);
        assert.match(undoneMessage({ kind: 'allowed' }, true), /no longer allowed/);
        assert.match(undoneMessage({ kind: 'dismissed' }, false), /no longer in \.recitation\.toml/);
    });
});

describe('the commands in the manifest', () => {
    const root = path.join(__dirname, '..', '..', '..');
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
        contributes: { commands: { command: string; title: string }[] };
    };
    const source = fs.readFileSync(path.join(root, 'src', 'commands.ts'), 'utf8');
    const registered = [...source.matchAll(/register\('(recitation\.[A-Za-z]+)'/g)].map((m) => m[1]);
    // compare.ts registers its two by their constants
    const compare = fs.readFileSync(path.join(root, 'src', 'compare.ts'), 'utf8');
    for (const [name, id] of [['COMPARE_COMMAND', COMPARE_COMMAND], ['COMPARE_REFERENCE_COMMAND', COMPARE_REFERENCE_COMMAND]]) {
        if (compare.includes(`registerCommand(${name},`)) {
            registered.push(id);
        }
    }

    it('contributes every command the extension registers, and only those', () => {
        const contributed = manifest.contributes.commands.map((c) => c.command);
        assert.ok(registered.includes('recitation.showDecisions'));
        assert.ok(registered.includes('recitation.exportReferences'));
        assert.ok(registered.includes('recitation.clearReferences'));
        assert.deepEqual([...contributed].sort(), [...registered].sort());
    });
});
