// Checks what the .vsix of each target platform carries: the bundled extension, the server
// and its Python libraries for every supported Python version, native code of the target's
// binary format and CPU only (read from each file's header), wheel tags of the target, the
// same pure-Python files on every target, and nothing from development.
//
// RECITATION_TARGETS: the targets to check, separated by spaces (default: all six)
// RECITATION_VSIX: the .vsix to check when one target is checked (default: build/recitation-TARGET.vsix)

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';

import { readBinaryHeader } from './binaries';
import { extractBundle, openBundle, repoRoot, targets, type Bundle } from './bundle';
import { ALL_TARGETS, PLATFORM_ONLY, TARGETS, VERSION_GAPS, type TargetSpec } from './targets';
import { readZipEntry } from './zip';


/** The supported Python versions; a target may leave one out only where it is known to lack wheels. */
const PYTHONS = ['3.10', '3.11', '3.12', '3.13', '3.14'];
const KNOWN_GAPS: Record<string, string[]> = { 'win32-arm64': ['3.10'] };

/** The third-party modules the server imports, per bundled Python version. */
const LIBRARIES = ['pygls', 'lsprotocol', 'cattrs', 'attrs', 'lmdb', 'xxhash', 'zstandard', 'numpy', 'platformdirs', 'tqdm', 'tree_sitter', 'tree_sitter_python'];
const BINARY = ['lmdb', 'xxhash', 'zstandard', 'numpy', 'tree_sitter', 'tree_sitter_python'];
/** Files that are text by their name; every other file of the bundle has its header read. */
const TEXT = /\.(py|pyi|pxd|pyx|txt|md|rst|json|toml|cfg|typed|h|c|cpp|hpp|csv|npz|npy|f90|f|def|lib|a|in|ini|html|css|js|yaml|yml|sh|bat)$|\/(RECORD|METADATA|WHEEL|INSTALLER|REQUESTED|LICEN[CS]E[^/]*|COPYING[^/]*|AUTHORS[^/]*|NOTICE[^/]*|entry_points\.txt)$/;
const NATIVE_NAME = /\.(so|pyd|dll|dylib|exe)$|\.so\.\d/;
const KERNEL = /\/libkernel-[^/]*$/;

const libsPrefix = (version: string): string => `extension/bundled/libs/cp${version.replace('.', '')}/`;

/** `cpXY-cpXY-platform` tags of a WHEEL file, and whether it is pure Python. */
function wheelTags(text: string): { tags: string[]; pure: boolean } {
    const tags = [...text.matchAll(/^Tag: *(\S+)$/gm)].map((m) => m[1]);
    return { tags, pure: /^Root-Is-Purelib: *true$/m.test(text) };
}

function tagFits(tag: string, version: string, spec: TargetSpec): boolean {
    const [interpreter, abi, platform] = tag.split('-');
    const cp = `cp${version.replace('.', '')}`;
    if (platform === 'any') {
        return abi === 'none' && /^py3|^py2\.py3$/.test(interpreter);
    }
    if (!spec.wheelPlatform.test(platform)) {
        return false;
    }
    if (abi === 'abi3') {
        const m = /^cp3(\d+)$/.exec(interpreter);
        return m !== null && Number(m[1]) <= Number(version.split('.')[1]);
    }
    return interpreter === cp && abi === cp;
}

/** Folder name → distribution info (pure or not, and the files of it, from its RECORD). */
function distributions(bundle: Bundle, version: string): Map<string, { pure: boolean; files: string[]; tags: string[] }> {
    const prefix = libsPrefix(version);
    const out = new Map<string, { pure: boolean; files: string[]; tags: string[] }>();
    for (const e of bundle.entries) {
        const m = new RegExp(`^${prefix}([^/]+)\\.dist-info/WHEEL$`).exec(e.name);
        if (!m) {
            continue;
        }
        const { tags, pure } = wheelTags(readZipEntry(bundle.vsix, e).toString('utf8'));
        const record = bundle.entries.find((r) => r.name === `${prefix}${m[1]}.dist-info/RECORD`);
        assert.ok(record, `${m[1]} has a RECORD`);
        const files = readZipEntry(bundle.vsix, record)
            .toString('utf8')
            .split(/\r?\n/)
            .map((line) => line.split(',')[0])
            .filter((f) => f && !f.startsWith('..') && !f.endsWith('.pyc'))
            .map((f) => prefix + f);
        out.set(m[1].split('-')[0].toLowerCase(), { pure, files, tags });
    }
    return out;
}

for (const target of targets) {
    const spec = TARGETS[target];
    describe(`the ${target} .vsix`, () => {
        let bundle: Bundle;

        before(() => {
            assert.ok(spec, `${target} is one of ${ALL_TARGETS.join(', ')}`);
            bundle = openBundle(target);
        });

        it('has the manifest, the bundled extension, the readme, license, changelog and icon', () => {
            for (const name of [
                'extension.vsixmanifest',
                'extension/package.json',
                'extension/dist/extension.js',
                'extension/readme.md',
                'extension/LICENSE.txt',
                'extension/changelog.md',
                'extension/resources/icon.png',
                'extension/bundled/manifest.json',
            ]) {
                assert.ok(bundle.names.has(name), name);
            }
        });

        it('shows the screenshots on the marketplace page, from the repository', () => {
            const readme = bundle.entries.find((e) => e.name === 'extension/readme.md');
            assert.ok(readme);
            const images = [...readZipEntry(bundle.vsix, readme).toString('utf8').matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]);
            assert.ok(images.length > 0, 'the readme shows an image');
            for (const image of images) {
                // An absolute URL; the browser resolves the `..` out of the package's folder.
                const shown = /\/raw\/HEAD\/docs\/(screenshot-(?:vscode|compare)\.png)$/.exec(new URL(image).pathname);
                assert.ok(shown, image);
                assert.ok(fs.existsSync(path.join(repoRoot, 'docs', shown[1])), shown[1]);
            }
        });

        it("carries the search kernel built for its target, and no other", () => {
            const kernels = bundle.entries.filter((e) => KERNEL.test(e.name)).map((e) => e.name);
            const suffix = target.startsWith('win32') ? 'dll' : target.startsWith('darwin') ? 'dylib' : 'so';
            assert.deepEqual(kernels, [`extension/bundled/tool/index_tools/match/libkernel-${target}.${suffix}`]);
        });

        it(`targets ${target}`, () => {
            assert.equal(bundle.manifest.platform, target);
            const entry = bundle.entries.find((e) => e.name === 'extension.vsixmanifest');
            assert.ok(entry);
            assert.match(readZipEntry(bundle.vsix, entry).toString('utf8'), new RegExp(`TargetPlatform="${target}"`));
        });

        it('carries the server and index packages', () => {
            for (const name of [
                'extension/bundled/tool/server/__init__.py',
                'extension/bundled/tool/server/__main__.py',
                'extension/bundled/tool/index_tools/__init__.py',
                'extension/bundled/tool/index_tools/cli/__main__.py',
                'extension/bundled/tool/index_tools/build/sources/__init__.py',
                'extension/bundled/tool/index_tools/data/vocabulary.txt',
            ]) {
                assert.ok(bundle.names.has(name), name);
            }
        });

        it('carries the Python libraries for every supported Python that has wheels', () => {
            const gaps = KNOWN_GAPS[target] ?? [];
            assert.deepEqual(bundle.manifest.pythons, PYTHONS.filter((v) => !gaps.includes(v)));
            assert.deepEqual(Object.keys(bundle.manifest.missing).sort(), gaps);
            for (const version of bundle.manifest.pythons) {
                const prefix = libsPrefix(version);
                for (const lib of LIBRARIES) {
                    assert.ok(bundle.entries.some((e) => e.name.startsWith(`${prefix}${lib}/`)), `${lib} for Python ${version}`);
                }
                for (const lib of BINARY) {
                    const modules = bundle.entries.filter((e) => e.name.startsWith(`${prefix}${lib}/`) && spec.extensionModule.test(e.name));
                    assert.ok(modules.length > 0, `${lib} has extension modules for Python ${version}`);
                }
            }
            const folders = new Set(bundle.entries.map((e) => /^extension\/bundled\/libs\/([^/]+)\//.exec(e.name)?.[1]).filter((f) => f));
            assert.deepEqual([...folders].sort(), bundle.manifest.pythons.map((v) => 'cp' + v.replace('.', '')).sort());
        });

        it(`holds native code for ${spec?.format ?? '?'} ${spec?.cpu ?? '?'} only, by each file's header`, () => {
            let native = 0;
            for (const e of bundle.entries) {
                if (!e.name.startsWith('extension/bundled/') || e.name.endsWith('/') || (TEXT.test(e.name) && !NATIVE_NAME.test(e.name))) {
                    continue;
                }
                const info = readBinaryHeader(readZipEntry(bundle.vsix, e));
                if (NATIVE_NAME.test(e.name)) {
                    assert.ok(info, `${e.name} is a native binary`);
                }
                if (!info) {
                    continue;
                }
                native++;
                assert.equal(info.format, spec.format, e.name);
                if (info.cpus.length === 1) {
                    assert.equal(info.cpus[0], spec.cpu, e.name);
                } else {
                    assert.ok(info.cpus.includes(spec.cpu), `${e.name} has a ${spec.cpu} slice (${info.cpus.join(', ')})`);
                }
                assert.doesNotMatch(e.name, spec.foreign, `${e.name} is named for another platform`);
            }
            assert.ok(native > 0, 'native code found');
        });

        it('names extension modules for the Python version of their folder', () => {
            for (const version of bundle.manifest.pythons) {
                const prefix = libsPrefix(version);
                const digits = version.replace('.', '');
                for (const e of bundle.entries.filter((x) => x.name.startsWith(prefix) && /\.(so|pyd)$/.test(x.name))) {
                    if (/\.libs\/|\.dylibs\//.test(e.name)) {
                        continue; // vendored shared libraries, not modules
                    }
                    assert.match(e.name, spec.extensionModule, e.name);
                    const tag = /(?:cpython-|\.cp)(3\d+)/.exec(path.basename(e.name));
                    if (tag) {
                        assert.equal(tag[1], digits, `${e.name} is built for ${version}`);
                    }
                }
            }
        });

        it('has wheel tags of the target and the Python version of each folder', () => {
            for (const version of bundle.manifest.pythons) {
                const dists = distributions(bundle, version);
                assert.ok(dists.size >= LIBRARIES.length, `dist-info for Python ${version}`);
                for (const [name, dist] of dists) {
                    // A wheel's tags are alternatives (py2-none-any, py3-none-any): none may name another
                    // platform, and one must fit the folder's Python on this target.
                    for (const tag of dist.tags) {
                        const platform = tag.split('-')[2];
                        assert.ok(platform === 'any' || spec.wheelPlatform.test(platform), `${name} for Python ${version}: ${tag}`);
                    }
                    assert.ok(dist.tags.some((tag) => tagFits(tag, version, spec)), `${name} for Python ${version}: ${dist.tags.join(' ')}`);
                    assert.equal(dist.pure, dist.tags.every((t) => t.endsWith('-any')), `${name}: Root-Is-Purelib agrees with its tags`);
                    const platformOnly = PLATFORM_ONLY[name];
                    if (platformOnly) {
                        assert.ok(target.startsWith(platformOnly), `${name} is only for ${platformOnly}*`);
                    }
                }
            }
        });

        it('leaves out sources, tests, caches, local paths and development files', () => {
            for (const e of bundle.entries) {
                assert.doesNotMatch(e.name, /__pycache__|\.pyc$/, e.name);
                assert.doesNotMatch(e.name, /^extension\/(src|test|out|node_modules|scripts)\//, e.name);
                assert.doesNotMatch(e.name, /\.ts$|\.map$|tsconfig|eslint|esbuild/, e.name);
                assert.doesNotMatch(e.name, /^extension\/bundled\/libs\/[^/]+\/bin\//, e.name);
                assert.doesNotMatch(e.name, /direct_url\.json$/, e.name);
            }
        });

        it('stays a reasonable download', () => {
            const size = fs.statSync(bundle.vsix).size;
            assert.ok(size < 150 * 1024 * 1024, `${(size / 1048576).toFixed(1)} MiB`);
        });
    });
}

describe('the pure-Python parts', () => {
    it('are the same files in every target', (t) => {
        if (targets.length < 2) {
            t.skip('one target checked: nothing to compare');
            return;
        }
        const bundles = new Map(targets.map((target) => [target, openBundle(target)] as const));
        const [first, ...others] = targets;
        const reference = bundles.get(first)!;
        const crcs = (b: Bundle, names: Iterable<string>) => new Map([...names].map((n) => [n, b.entries.find((e) => e.name === n)?.crc32]));
        // the same Python everywhere; the search kernel is each target's own (checked above)
        const tool = (b: Bundle) => b.entries.filter((e) => e.name.startsWith('extension/bundled/tool/') && !KERNEL.test(e.name)).map((e) => e.name).sort();
        for (const other of others) {
            const b = bundles.get(other)!;
            assert.deepEqual(crcs(b, tool(b)), crcs(reference, tool(reference)), `bundled/tool of ${other} and ${first}`);
            for (const version of PYTHONS.filter((v) => reference.manifest.pythons.includes(v) && b.manifest.pythons.includes(v))) {
                const mine = distributions(reference, version);
                const theirs = distributions(b, version);
                const gaps = new Set([...(VERSION_GAPS[first]?.[version] ?? []), ...(VERSION_GAPS[other]?.[version] ?? [])]);
                const pure = (d: typeof mine) => [...d].filter(([name, x]) => x.pure && !PLATFORM_ONLY[name] && !gaps.has(name)).map(([name]) => name).sort();
                assert.deepEqual(pure(theirs), pure(mine), `pure libraries for Python ${version} in ${other} and ${first}`);
                for (const name of pure(mine)) {
                    const files = mine.get(name)!.files;
                    assert.deepEqual(crcs(b, files), crcs(reference, files), `${name} for Python ${version} in ${other} and ${first}`);
                }
            }
        }
    });
});

describe('the bundled server on this machine', () => {
    it('starts with only the bundled libraries (linux-x64)', (t) => {
        // Unpacks the .vsix's bundled/ for this machine's python3 and runs `--help` of both.
        if (!targets.includes('linux-x64') || process.platform !== 'linux' || process.arch !== 'x64') {
            t.skip('the linux-x64 .vsix on a linux-x64 machine only');
            return;
        }
        const bundle = openBundle('linux-x64');
        const probe = spawnSync('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
        const version = probe.stdout.trim();
        if (probe.status !== 0 || !bundle.manifest.pythons.includes(version)) {
            assert.fail(`python3 (${version || 'missing'}) is not one of ${bundle.manifest.pythons.join(', ')}`);
        }
        const tag = 'cp' + version.replace('.', '');
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recitation-vsix-'));
        try {
            const bundled = extractBundle(bundle, dir, tag);
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
            const search = spawnSync('python3', ['-s', '-c', 'from index_tools.match import kernel; print(kernel.status())'], {
                encoding: 'utf8', env, cwd: dir, timeout: 120_000,
            });
            assert.match(search.stdout, /^native \(libkernel-linux-x64\.so[;)]/, `the compiled search runs: ${search.stdout}${search.stderr}`);
            assert.ok(imports.stdout.startsWith(bundled), `numpy comes from the bundle: ${imports.stdout}`);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
