// Checks what the linux-x64 .vsix carries: the bundled extension, the server and its
// Python libraries for every supported Python version, and nothing from development.
//
// RECITATION_VSIX: the .vsix to check (default: build/recitation-linux-x64.vsix at the repo root).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';

import { listZip, type ZipEntry } from './zip';

const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');
const vsix = process.env.RECITATION_VSIX ?? path.join(repoRoot, 'build', 'recitation-linux-x64.vsix');

/** The third-party modules the server imports, per bundled Python version. */
const LIBRARIES = ['pygls', 'lsprotocol', 'cattrs', 'attrs', 'lmdb', 'xxhash', 'zstandard', 'numpy', 'platformdirs', 'tqdm'];
const BINARY = ['lmdb', 'xxhash', 'zstandard', 'numpy'];

describe('the .vsix', () => {
    let entries: ZipEntry[] = [];
    let names = new Set<string>();
    let manifest: { platform: string; pythons: string[] } = { platform: '', pythons: [] };

    before(() => {
        assert.ok(fs.existsSync(vsix), `${vsix} exists (run npm run package first)`);
        entries = listZip(vsix);
        names = new Set(entries.map((e) => e.name));
        const local = path.join(repoRoot, 'client-vscode', 'bundled', 'manifest.json');
        manifest = JSON.parse(fs.readFileSync(local, 'utf8')) as typeof manifest;
    });

    it('has the manifest, the bundled extension and the readme', () => {
        for (const name of ['extension.vsixmanifest', 'extension/package.json', 'extension/dist/extension.js', 'extension/readme.md', 'extension/bundled/manifest.json']) {
            assert.ok(names.has(name), name);
        }
    });

    it('targets linux-x64', () => {
        assert.equal(manifest.platform, 'linux-x64');
        const entry = entries.find((e) => e.name === 'extension.vsixmanifest');
        assert.ok(entry);
    });

    it('carries the server and index packages', () => {
        for (const name of [
            'extension/bundled/tool/server/__init__.py',
            'extension/bundled/tool/server/__main__.py',
            'extension/bundled/tool/index_tools/__init__.py',
            'extension/bundled/tool/index_tools/cli.py',
        ]) {
            assert.ok(names.has(name), name);
        }
    });

    it('carries the Python libraries for Python 3.10 to 3.14', () => {
        assert.deepEqual(manifest.pythons, ['3.10', '3.11', '3.12', '3.13', '3.14']);
        for (const version of manifest.pythons) {
            const tag = 'cp' + version.replace('.', '');
            const prefix = `extension/bundled/libs/${tag}/`;
            for (const lib of LIBRARIES) {
                assert.ok(
                    entries.some((e) => e.name.startsWith(`${prefix}${lib}/`)),
                    `${lib} for Python ${version}`,
                );
            }
            for (const lib of BINARY) {
                const native = entries.filter((e) => e.name.startsWith(`${prefix}${lib}/`) && e.name.endsWith('.so'));
                assert.ok(native.length > 0, `${lib} has native code for Python ${version}`);
                for (const so of native) {
                    assert.match(so.name, new RegExp(`(${tag}|abi3)[^/]*x86_64-linux-gnu\\.so$|/[^/]*\\.so$`), so.name);
                    if (/cpython-3\d+/.test(so.name)) {
                        assert.ok(so.name.includes(`cpython-${version.replace('.', '')}`), `${so.name} is built for ${version}`);
                    }
                }
            }
        }
    });

    it('leaves out sources, tests, caches and development files', () => {
        for (const e of entries) {
            assert.doesNotMatch(e.name, /__pycache__|\.pyc$/, e.name);
            assert.doesNotMatch(e.name, /^extension\/(src|test|out|node_modules)\//, e.name);
            assert.doesNotMatch(e.name, /\.ts$|\.map$|tsconfig|eslint|esbuild/, e.name);
            assert.doesNotMatch(e.name, /^extension\/bundled\/libs\/[^/]+\/bin\//, e.name);
        }
    });

    it('declares the extension entry point and every command it registers', () => {
        const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'client-vscode', 'package.json'), 'utf8')) as {
            main: string;
            contributes: { commands: { command: string }[] };
        };
        assert.equal(pkg.main, './dist/extension.js');
        const commands = pkg.contributes.commands.map((c) => c.command).sort();
        assert.deepEqual(commands, [
            'recitation.buildDefaultIndex',
            'recitation.restart',
            'recitation.showLogs',
            'recitation.showReferences',
            'recitation.statusMenu',
            'recitation.toggleWorkspace',
        ]);
    });

    it('stays a reasonable download', () => {
        const size = fs.statSync(vsix).size;
        assert.ok(size < 150 * 1024 * 1024, `${(size / 1048576).toFixed(1)} MiB`);
    });
});
