// Runs the linux-arm64 .vsix for real on an x64 machine: its bundled server under qemu's
// user-mode emulation, with the Python of an arm64 Debian root (scripts/arm64-root.sh).
// The bundled index CLI builds a small index there, and the server answers `initialize`
// and reports the quote in a document that copies the indexed file.
//
// Skipped when linux-arm64 is not among the targets checked, or when qemu-aarch64-static
// or the root is missing, unless RECITATION_ARM64_REQUIRED=1 (then that fails).
// RECITATION_ARM64_ROOT: the root (default: ~/.cache/recitation-arm64-root)

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it, type TestContext } from 'node:test';

import { extractBundle, openBundle, targets } from './bundle';
import { LspStdio } from './lspStdio';

const QEMU = 'qemu-aarch64-static';
const root = process.env.RECITATION_ARM64_ROOT ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'recitation-arm64-root');
const python = path.join(root, 'usr', 'bin', 'python3');

/** A function distinctive enough to be found, and long enough to be reported (over 40 words). */
const QUOTED = `def merge_intervals(intervals):
    """Merge overlapping closed intervals given as (start, end) pairs."""
    ordered = sorted(intervals, key=lambda pair: (pair[0], pair[1]))
    merged = []
    for start, end in ordered:
        if merged and start <= merged[-1][1]:
            last_start, last_end = merged[-1]
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged
`;

function whyNot(): string | undefined {
    if (!targets.includes('linux-arm64')) {
        return 'linux-arm64 is not among the targets checked';
    }
    if (process.platform !== 'linux' || process.arch !== 'x64') {
        return 'emulation is set up for linux-x64 machines';
    }
    if (spawnSync(QEMU, ['--version']).status !== 0) {
        return `${QEMU} is not installed (apt-get install qemu-user-static; bash scripts/arm64-root.sh)`;
    }
    if (!fs.existsSync(path.join(root, '.recitation-ready'))) {
        return `no arm64 root at ${root} (bash scripts/arm64-root.sh makes it)`;
    }
    return undefined;
}

function skipOrFail(t: TestContext, reason: string): void {
    if (process.env.RECITATION_ARM64_REQUIRED === '1') {
        assert.fail(`RECITATION_ARM64_REQUIRED=1, but ${reason}`);
    }
    t.skip(reason);
}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s`)), ms);
    });
    return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

describe('the linux-arm64 .vsix under emulation', () => {
    it('builds an index and finds a quote with the bundled server on arm64 Python', async (t) => {
        const reason = whyNot();
        if (reason) {
            skipOrFail(t, reason);
            return;
        }
        const started = Date.now();
        const run = (args: string[], env: NodeJS.ProcessEnv, cwd: string) =>
            spawnSync(QEMU, ['-L', root, python, ...args], { encoding: 'utf8', env, cwd, timeout: 600_000 });

        const version = run(['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { PATH: process.env.PATH }, os.tmpdir());
        assert.equal(version.status, 0, version.stderr);
        const minor = version.stdout.trim();
        const bundle = openBundle('linux-arm64');
        assert.ok(bundle.manifest.pythons.includes(minor), `the root's Python ${minor} has bundled libraries`);

        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recitation-arm64-'));
        let server: ChildProcessWithoutNullStreams | undefined;
        try {
            const tag = 'cp' + minor.replace('.', '');
            const bundled = extractBundle(bundle, dir, tag);
            const env = {
                PATH: process.env.PATH ?? '',
                HOME: dir,
                XDG_CACHE_HOME: path.join(dir, 'cache'),
                PYTHONNOUSERSITE: '1',
                PYTHONPATH: [path.join(bundled, 'libs', tag), path.join(bundled, 'tool')].join(path.delimiter),
            };

            const machine = run(['-s', '-c', 'import platform, numpy; from index_tools.match import kernel; print(platform.machine(), numpy.__file__, kernel.status().search)'], env, dir);
            assert.equal(machine.status, 0, machine.stderr);
            assert.match(machine.stdout, /^aarch64 /);
            assert.match(machine.stdout, / native\n?$/, `the compiled search runs under emulation: ${machine.stdout}`);
            assert.ok(machine.stdout.split(' ')[1].startsWith(bundled), `numpy comes from the bundle: ${machine.stdout}`);

            const corpus = path.join(dir, 'corpus');
            fs.mkdirSync(corpus);
            fs.writeFileSync(path.join(corpus, 'intervals.py'), QUOTED);
            const index = path.join(dir, 'index');
            const build = run(['-s', '-m', 'index_tools.cli', 'build', corpus, '--out', index, '--jobs', '1'], env, dir);
            assert.equal(build.status, 0, `index build: ${build.stderr}`);
            t.diagnostic(`index built under emulation after ${((Date.now() - started) / 1000).toFixed(1)} s`);

            server = spawn(QEMU, ['-L', root, python, '-s', '-m', 'server'], { env, cwd: dir });
            let stderr = '';
            server.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
            const lsp = new LspStdio(server);
            const init = (await withDeadline(
                lsp.request('initialize', {
                    processId: process.pid,
                    rootUri: pathToFileURL(dir).href,
                    capabilities: { textDocument: { publishDiagnostics: {} } },
                    initializationOptions: { recitation: { indexPath: index, scanOnOpen: true, minTokens: 30 } },
                }),
                300_000,
                `initialize (${stderr})`,
            )) as { serverInfo?: { name?: string }; capabilities?: object };
            assert.ok(init.capabilities, 'initialize answered with capabilities');
            assert.match(init.serverInfo?.name ?? '', /recitation/i);
            t.diagnostic(`initialize answered after ${((Date.now() - started) / 1000).toFixed(1)} s`);
            lsp.notify('initialized', {});

            const uri = pathToFileURL(path.join(dir, 'work', 'mine.py')).href;
            const text = 'import sys\n\n\n' + QUOTED + '\n\nprint(merge_intervals([(1, 3), (2, 4)]))\n';
            lsp.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
            const published = await withDeadline(
                lsp.waitFor((m) => {
                    const p = m.params as { uri?: string; diagnostics?: unknown[] } | undefined;
                    return m.method === 'textDocument/publishDiagnostics' && p?.uri === uri && (p.diagnostics?.length ?? 0) > 0;
                }),
                300_000,
                `diagnostics (${stderr})`,
            );
            const diagnostics = (published.params as { diagnostics: { range: { start: { line: number }; end: { line: number } }; message: string }[] }).diagnostics;
            const quote = diagnostics[0];
            assert.ok(quote.range.start.line <= 4 && quote.range.end.line >= 12, `the quote spans the copied function: ${JSON.stringify(quote.range)}`);
            assert.match(JSON.stringify(diagnostics), /intervals\.py/);
            t.diagnostic(`quote found after ${((Date.now() - started) / 1000).toFixed(1)} s`);

            await withDeadline(lsp.request('shutdown', null), 60_000, 'shutdown');
            lsp.notify('exit', null);
        } finally {
            server?.kill();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
