// Checks what the linux-x64 .vsix carries: the bundled extension, the server and its
// Python libraries for every supported Python version, and nothing from development.
//
// RECITATION_VSIX: the .vsix to check (default: build/recitation-linux-x64.vsix at the repo root).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';

import { listZip, readZipEntry, type ZipEntry } from './zip';

const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');
const vsix = process.env.RECITATION_VSIX ?? path.join(repoRoot, 'build', 'recitation-linux-x64.vsix');

/** The third-party modules the server imports, per bundled Python version. */
const LIBRARIES = ['pygls', 'lsprotocol', 'cattrs', 'attrs', 'lmdb', 'xxhash', 'zstandard', 'numpy', 'platformdirs', 'tqdm', 'tree_sitter', 'tree_sitter_python'];
const BINARY = ['lmdb', 'xxhash', 'zstandard', 'numpy', 'tree_sitter', 'tree_sitter_python'];

describe('the .vsix', () => {
    let entries: ZipEntry[] = [];
    let names = new Set<string>();
    let manifest: { platform: string; pythons: string[] } = { platform: '', pythons: [] };

    before(() => {
        assert.ok(fs.existsSync(vsix), `${vsix} exists (run npm run package first)`);
        entries = listZip(vsix);
        names = new Set(entries.map((e) => e.name));
        const entry = entries.find((e) => e.name === 'extension/bundled/manifest.json');
        assert.ok(entry, 'the bundle manifest is in the .vsix');
        manifest = JSON.parse(readZipEntry(vsix, entry).toString('utf8')) as typeof manifest;
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
        assert.match(readZipEntry(vsix, entry).toString('utf8'), /TargetPlatform="linux-x64"/);
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
            'recitation.buildIndexFromOffer',
            'recitation.clearReferences',
            'recitation.exportReferences',
            'recitation.restart',
            'recitation.showDecisions',
            'recitation.showLogs',
            'recitation.showReferences',
            'recitation.statusMenu',
            'recitation.toggleWorkspace',
        ]);
    });

    it('starts the bundled server and index CLI with only the bundled libraries', () => {
        // Unpacks the .vsix's bundled/ for this machine's python3 and runs `--help` of both.
        const probe = spawnSync('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
        const version = probe.stdout.trim();
        if (probe.status !== 0 || !manifest.pythons.includes(version)) {
            assert.fail(`python3 (${version || 'missing'}) is not one of ${manifest.pythons.join(', ')}`);
        }
        const tag = 'cp' + version.replace('.', '');
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recitation-vsix-'));
        try {
            for (const e of entries) {
                const inside = e.name.startsWith(`extension/bundled/libs/${tag}/`) || e.name.startsWith('extension/bundled/tool/');
                if (!inside || e.name.endsWith('/')) {
                    continue;
                }
                const out = path.join(dir, e.name);
                fs.mkdirSync(path.dirname(out), { recursive: true });
                fs.writeFileSync(out, readZipEntry(vsix, e));
            }
            const bundled = path.join(dir, 'extension', 'bundled');
            const env = {
                PATH: process.env.PATH ?? '',
                HOME: dir,
                PYTHONNOUSERSITE: '1',
                PYTHONPATH: [path.join(bundled, 'libs', tag), path.join(bundled, 'tool')].join(path.delimiter),
            };
            // -I would drop PYTHONPATH; -s and a bare environment keep the user's packages out.
            for (const args of [['-s', '-m', 'server', '--help'], ['-s', '-m', 'index_tools.cli', '--help']]) {
                const run = spawnSync('python3', args, { encoding: 'utf8', env, cwd: dir, timeout: 120_000 });
                assert.equal(run.status, 0, `python3 ${args.join(' ')}: ${run.stderr}`);
            }
            const imports = spawnSync('python3', ['-s', '-c', 'import lmdb, numpy, xxhash, zstandard, pygls, lsprotocol, cattrs, tree_sitter, tree_sitter_python; print(numpy.__file__)'], {
                encoding: 'utf8', env, cwd: dir, timeout: 120_000,
            });
            assert.equal(imports.status, 0, imports.stderr);
            assert.ok(imports.stdout.startsWith(bundled), `numpy comes from the bundle: ${imports.stdout}`);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it('stays a reasonable download', () => {
        const size = fs.statSync(vsix).size;
        assert.ok(size < 150 * 1024 * 1024, `${(size / 1048576).toFixed(1)} MiB`);
    });
});
