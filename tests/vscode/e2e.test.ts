// End to end in real VS Code: code-server in headless Chromium, driven by playwright-core.
//
// First, with the workspace open and nothing opened, a process writes a file holding a
// function of the corpus: the Problems panel lists its one warning within seconds, and the
// code references log has it, "written outside the editor".
//
// A fresh code-server gets only the packaged .vsix. A fixture index is built from
// fixtures/corpus (made a git repository with a public-looking remote, so that sources
// get links). The test opens a workspace that points `recitation.indexPath` at it, pastes
// one of the corpus functions into a file with the keyboard (Ctrl+V from the browser's
// clipboard, as a user pastes), and checks what the user sees: the squiggle, the Problems
// entry, the hover and its source link, the quick fixes, the status item, the code
// references log; then the decisions: the attribution quick fix and "Dismiss" clear the
// warning for good (a server restart rescans the file: `recitation.scanOnOpen`), the
// dismissal is written to .recitation.toml and undone from "Recitation: Decisions…", and
// editing that file by hand (license policy, allowed source) changes the verdicts live;
// the workspace toggle that clears the warning; code pasted while there is no index is
// flagged once the default index is built from the status menu, without a restart. Then, with
// `recitation.upstreamCommand` set to the repository's .venv/bin/pylsp, pylsp's hover reaches
// the editor through the proxy and the pasted function is still reported by Recitation. Last,
// a JavaScript workspace whose package-lock.json npm wrote against verdaccio on loopback (ms
// 2.1.2, tests/vscode/registry.py): at its first start the extension offers to index it (what
// was found, what it costs), the index is built, a pasted function of ms is underlined naming
// ms@2.1.2 and MIT; npm moves the lock file to ms 2.1.3 and the same warning names the new
// version, with no restart.
//
// Environment (scripts/vscode-e2e.sh sets it):
//   RECITATION_E2E_NODE         Node 24 binary that runs code-server
//   RECITATION_E2E_CODE_SERVER  the code-server package folder
//   RECITATION_VSIX             the .vsix to install
//   RECITATION_E2E_ARTIFACTS    where screenshots and logs go
//   RECITATION_E2E_PYTHON       Python that builds the fixture index from the work tree; default:
//                               python3 with the libraries bundled for the .vsix
//   RECITATION_E2E_INTERPRETER  optional: recitation.interpreter for the server
//   RECITATION_E2E_CHROMIUM     the browser (default /usr/bin/chromium)
//   RECITATION_TEST_PACKAGES    the real npm packages served (default ~/.cache/recitation-test-packages;
//                               scripts/registry-servers.sh fetches them and installs verdaccio)

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const corpus = path.join(repoRoot, 'tests', 'vscode', 'fixtures', 'corpus');
const env = process.env;
const nodeBin = required('RECITATION_E2E_NODE');
const codeServer = required('RECITATION_E2E_CODE_SERVER');
const vsix = required('RECITATION_VSIX');
const artifacts = env.RECITATION_E2E_ARTIFACTS ?? path.join(repoRoot, 'test-artifacts', 'vscode');
const chromiumPath = env.RECITATION_E2E_CHROMIUM ?? '/usr/bin/chromium';

const REMOTE = 'https://github.com/recitation-fixtures/geodesy-utils.git';
const LINK = /^https:\/\/github\.com\/recitation-fixtures\/geodesy-utils\/blob\/[0-9a-f]{40}\/geodesy\.py#L\d+-L\d+$/;
// Generous: the first start of the server imports numpy and opens the index.
const SERVER_READY_MS = 120_000;
const UI_MS = 60_000;

function required(name: string): string {
    const value = env[name];
    if (!value) {
        throw new Error(`${name} is not set: run the test through scripts/vscode-e2e.sh`);
    }
    return value;
}

function log(message: string): void {
    process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** The function the test pastes: `bounding_box` from the fixture corpus. */
function snippet(): string {
    const source = fs.readFileSync(path.join(corpus, 'geodesy.py'), 'utf8');
    const start = source.indexOf('def bounding_box(');
    assert.ok(start >= 0);
    return source.slice(start);
}

/** `bounding_box` with two of its names renamed, as a copy that hides its source would. */
function renamedSnippet(): string {
    const names: Record<string, string> = { angular: 'arc', delta: 'spread' };
    return snippet().replace(/\b\w+\b/g, (w) => names[w] ?? w);
}

/** A second quote from the fixture corpus: `wrap_paragraph`. */
function secondSnippet(): string {
    const source = fs.readFileSync(path.join(corpus, 'textwrap_utils.py'), 'utf8');
    const start = source.indexOf('def wrap_paragraph(');
    const end = source.indexOf('def table(');
    assert.ok(start >= 0 && end > start);
    return source.slice(start, end);
}

/** A function of the Python standard library (in the default index), as python3 has it. */
function stdlibSnippet(): string {
    return run('python3', ['-c', 'import inspect, textwrap; print(inspect.getsource(textwrap.dedent), end="")']) + '\n';
}

/** The real npm packages the registry serves (scripts/registry-servers.sh). */
function testPackages(): string {
    return env.RECITATION_TEST_PACKAGES ?? path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'recitation-test-packages');
}

/** ms's `parse` as a version of ms has it (the function a user pastes). */
function msParse(version: string): string {
    const code = run('tar', ['-xOzf', path.join(testPackages(), 'npm', `ms-${version}.tgz`), 'package/index.js']);
    const start = code.indexOf('function parse(str)');
    const end = code.indexOf('/**\n * Short format');
    assert.ok(start >= 0 && end > start);
    return code.slice(start, end).trimEnd() + '\n';
}

/** verdaccio on loopback with ms 2.1.2 and 2.1.3 (tests/vscode/registry.py); resolves to its URL. */
function startRegistry(dir: string): Promise<{ url: string; process: ChildProcess }> {
    const child = spawn('python3', [path.join(repoRoot, 'tests', 'vscode', 'registry.py'), dir], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
    });
    return new Promise((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (d: Buffer) => {
            out += d.toString();
            const line = out.split('\n')[0];
            if (out.includes('\n')) {
                resolve({ url: line.trim(), process: child });
            }
        });
        child.on('exit', (code) => reject(new Error(`the registry exited (${code}): ${err}`)));
    });
}

/** package.json and package-lock.json written by npm itself, against the test's registry. */
function npmLock(folder: string, registry: string, spec: string): void {
    run('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund', '--save-exact', '--ignore-scripts', spec], {
        cwd: folder,
        env: { ...env, npm_config_registry: registry, npm_config_cache: path.join(folder, '..', 'npm-cache') },
    });
}

/** The Python and its path that build the fixture index with the same code as the .vsix. */
function indexBuilder(): { python: string; pythonPath: string[] } {
    const bundled = path.join(repoRoot, 'client-vscode', 'bundled');
    if (env.RECITATION_E2E_PYTHON || !fs.existsSync(path.join(bundled, 'manifest.json'))) {
        return { python: env.RECITATION_E2E_PYTHON ?? 'python3', pythonPath: [repoRoot] };
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(bundled, 'manifest.json'), 'utf8')) as { pythons: string[] };
    const version = run('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])']).trim();
    assert.ok(manifest.pythons.includes(version), `python3 ${version} has bundled libraries (${manifest.pythons.join(', ')})`);
    return { python: 'python3', pythonPath: [path.join(bundled, 'libs', 'cp' + version.replace('.', '')), path.join(bundled, 'tool')] };
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
    const result = spawnSync(cmd, args, { ...opts, encoding: 'utf8', timeout: 180_000 });
    if (result.status !== 0) {
        throw new Error(`${cmd} ${args.join(' ')} failed (${result.status}): ${result.stderr || result.error?.message}`);
    }
    return result.stdout;
}

function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const address = srv.address();
            const port = typeof address === 'object' && address ? address.port : 0;
            srv.close(() => resolve(port));
        });
    });
}

async function waitForHttp(url: string, deadlineMs: number): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
        const ok = await new Promise<boolean>((resolve) => {
            const req = http.get(url, (res) => {
                res.resume();
                resolve((res.statusCode ?? 500) < 500);
            });
            req.on('error', () => resolve(false));
            req.setTimeout(2000, () => {
                req.destroy();
                resolve(false);
            });
        });
        if (ok) {
            return;
        }
        if (Date.now() > deadline) {
            throw new Error(`${url} did not answer in ${deadlineMs} ms`);
        }
        await new Promise((r) => setTimeout(r, 250));
    }
}

/** Polls `check` until it returns a value or the deadline passes. */
async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = UI_MS): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    for (;;) {
        try {
            const value = await check();
            if (value !== undefined && value !== false) {
                return value;
            }
        } catch (err) {
            lastError = err;
        }
        if (Date.now() > deadline) {
            throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}` + (lastError instanceof Error ? `: ${lastError.message}` : ''));
        }
        await new Promise((r) => setTimeout(r, 200));
    }
}

describe('Recitation in VS Code (code-server + Chromium)', { timeout: 15 * 60_000 }, () => {
    let tmp = '';
    let workspace = '';
    let fixtureIndex = '';
    let server: ChildProcess | undefined;
    let serverLog = '';
    let browser: Browser | undefined;
    let page: Page;
    let consoleLog: string[] = [];
    let shot = 0;
    let failed = false;
    let baseUrl = '';
    let registry: { url: string; process: ChildProcess } | undefined;

    async function screenshot(name: string): Promise<string> {
        shot += 1;
        const file = path.join(artifacts, `${String(shot).padStart(2, '0')}-${name}.png`);
        await page.screenshot({ path: file });
        log(`screenshot ${file}`);
        return file;
    }

    /** Runs a command from the palette; `opensPick`: it opens a quick pick of its own. */
    async function runCommand(title: string, opensPick = false): Promise<void> {
        await page.keyboard.press('Escape');
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible', timeout: UI_MS });
        await input.fill('>' + title);
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
        await row.waitFor({ state: 'visible', timeout: UI_MS });
        await page.keyboard.press('Enter');
        if (!opensPick) {
            await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: UI_MS });
        }
    }

    /** Picks the row of the open quick pick that holds `text`. */
    async function pick(text: string | RegExp): Promise<void> {
        const row = page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: text }).first();
        await row.waitFor({ state: 'visible', timeout: UI_MS });
        await row.click();
    }

    function squiggles(level: 'warning' | 'error' | 'hint'): Locator {
        return page.locator(`.part.editor .monaco-editor .squiggly-${level}`);
    }

    /** Opens the quick fixes at the first warning and runs the one whose text matches. */
    async function quickFix(which: RegExp): Promise<void> {
        const menu = page.locator('.action-widget');
        const row = menu.locator('.monaco-list-row', { hasText: which }).first();
        let seen: string[] = [];
        await until(`the quick fix ${which}`, async () => {
            await page.keyboard.press('Escape');
            // A line in the middle of the quote: the first one may sit at the top edge.
            const all = squiggles('warning');
            const box = await all.nth(Math.floor((await all.count()) / 2)).boundingBox();
            assert.ok(box);
            await page.mouse.click(box.x + Math.min(30, box.width / 2), box.y + box.height / 2 - 4);
            await page.keyboard.press('Control+.');
            await menu.locator('.monaco-list-row').first().waitFor({ state: 'visible', timeout: 5000 });
            seen = (await menu.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
            await row.waitFor({ state: 'visible', timeout: 1000 });
            return true;
        }).catch(async (err: unknown) => {
            log(`quick fixes seen: ${seen.join(' | ')}`);
            await screenshot('quick-fix-missing');
            throw err;
        });
        await row.click();
        await menu.waitFor({ state: 'hidden', timeout: UI_MS }).catch(() => undefined);
    }

    /** Recitation's entries in the Problems panel (hints are not listed there). */
    async function recitationProblemCount(): Promise<number> {
        if (!(await page.locator('.markers-panel').isVisible())) {
            await page.keyboard.press('Control+Shift+M');
            await page.locator('.markers-panel').waitFor({ state: 'visible', timeout: UI_MS });
        }
        const all = await page.locator('.markers-panel .monaco-list-row').allInnerTexts();
        return all.filter((t) => /recitation/i.test(t) && /words/.test(t)).length;
    }

    /** How many times the extension has started the server so far (its log says so each time). */
    function serverStarts(): number {
        const logs = path.join(tmp, 'user-data', 'logs');
        let n = 0;
        for (const f of fs.readdirSync(logs, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('Recitation.log'))) {
            n += fs.readFileSync(path.join(logs, f), 'utf8').split('\n').filter((l) => l.includes('Server started.')).length;
        }
        return n;
    }

    /** "Recitation: Restart Server", and the new server up. */
    async function restartServer(): Promise<void> {
        const before = serverStarts();
        await runCommand('Recitation: Restart Server');
        await until('the server to start again', () => Promise.resolve(serverStarts() > before), SERVER_READY_MS);
        await statusItem('Recitation: on').waitFor({ state: 'visible', timeout: SERVER_READY_MS });
    }

    /** Stays true for `ms` (a warning that must not come back). */
    async function holds(what: string, check: () => Promise<boolean>, ms = 3000): Promise<void> {
        const deadline = Date.now() + ms;
        while (Date.now() < deadline) {
            assert.ok(await check(), what);
            await new Promise((r) => setTimeout(r, 250));
        }
    }

    const decisionsFile = () => path.join(workspace, '.recitation.toml');

    /** Puts the cursor at the top or the end of the editor, so that those lines are drawn. */
    async function scrollEditor(where: 'top' | 'end'): Promise<void> {
        await page.locator('.part.editor .monaco-editor .view-lines').first().click();
        await page.keyboard.press(where === 'top' ? 'Control+Home' : 'Control+End');
    }

    function statusItem(text: string): Locator {
        return page.locator('.statusbar-item', { hasText: text });
    }

    async function editorText(): Promise<string> {
        return (await page.locator('.part.editor .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
    }

    /** Pastes a snippet (default: the fixture's) at the end of the active editor (Ctrl+V from the clipboard). */
    async function pasteSnippet(text: string = snippet()): Promise<void> {
        await page.locator('.part.editor .monaco-editor .view-lines').first().click();
        await page.keyboard.press('Control+End');
        await page.evaluate((t) => navigator.clipboard.writeText(t), text);
        await page.keyboard.press('Control+V');
        // Its last line: the cursor ends there, so it is in view even in a short editor.
        const lastLine = text.trimEnd().split('\n').pop()?.trim() ?? '';
        assert.ok(lastLine);
        await until('the pasted function in the editor', async () => (await editorText()).includes(lastLine), 15_000);
    }

    /** The Problems panel entry of Recitation for the fixture snippet. */
    async function recitationProblem(): Promise<string> {
        const rows = page.locator('.markers-panel .monaco-list-row');
        return until('a Problems entry from recitation', async () => {
            if (!(await page.locator('.markers-panel').isVisible())) {
                await page.keyboard.press('Control+Shift+M');
            }
            const all = await rows.allInnerTexts();
            return all.find((t) => /recitation/i.test(t) && /geodesy/i.test(t));
        });
    }

    /** Waits for a line of the extension's log (Recitation.log) that `match` accepts. */
    async function extensionLogLine(what: string, match: (line: string) => boolean, timeoutMs = UI_MS): Promise<string> {
        const logs = path.join(tmp, 'user-data', 'logs');
        return until(what, () => {
            const files = fs.readdirSync(logs, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('Recitation.log'));
            for (const f of files) {
                const hit = fs.readFileSync(path.join(logs, f), 'utf8').split('\n').find(match);
                if (hit) {
                    return Promise.resolve(hit);
                }
            }
            return Promise.resolve(undefined);
        }, timeoutMs);
    }

    before(async () => {
        fs.mkdirSync(artifacts, { recursive: true });
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'recitation-e2e-'));
        log(`temp folder ${tmp}`);

        // 1. The fixture index: the corpus as a git repository with a remote, so sources get links.
        const repo = path.join(tmp, 'geodesy-utils');
        fs.cpSync(corpus, repo, { recursive: true });
        const git = (...args: string[]) => run('git', ['-c', 'user.name=Fixture', '-c', 'user.email=fixture@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd: repo });
        git('init', '-q');
        git('add', '-A');
        git('commit', '-q', '-m', 'Geodesy helpers');
        git('remote', 'add', 'origin', REMOTE);
        const index = path.join(tmp, 'index');
        const builder = indexBuilder();
        run(builder.python, ['-s', '-m', 'index_tools.cli', 'build', repo, '--out', index, '--quiet'], {
            env: { ...env, PYTHONPATH: builder.pythonPath.join(path.delimiter), PYTHONNOUSERSITE: '1' },
        });
        log(`fixture index ${index}`);
        fixtureIndex = index;

        // 2. The workspace and a user profile of its own.
        workspace = path.join(tmp, 'workspace');
        fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
        fs.writeFileSync(path.join(workspace, 'zones.py'), '"""Delivery zones around our depots."""\n\nimport math\n\n\n');
        // scanOnOpen: a restarted server checks the open file again, so that "the warning
        // stays gone after a restart" is about the decisions, not about a server that forgot.
        fs.writeFileSync(path.join(workspace, '.vscode', 'settings.json'),
            JSON.stringify({ 'recitation.indexPath': index, 'recitation.scanOnOpen': true }, null, 2));
        const userData = path.join(tmp, 'user-data');
        const extensions = path.join(tmp, 'extensions');
        fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
        const userSettings: Record<string, unknown> = {
            'workbench.startupEditor': 'none',
            'workbench.tips.enabled': false,
            'workbench.enableExperiments': false,
            'workbench.colorTheme': 'Default Dark Modern',
            'security.workspace.trust.enabled': false,
            'telemetry.telemetryLevel': 'off',
            'extensions.autoCheckUpdates': false,
            'extensions.autoUpdate': false,
            'update.mode': 'none',
            'chat.disableAIFeatures': true,
            'window.restoreWindows': 'none',
            'files.hotExit': 'off',
            'editor.formatOnPaste': false,
            'editor.minimap.enabled': false,
            // Its header line would sit over the top of a long quote, in the way of clicks.
            'editor.stickyScroll.enabled': false,
            'workbench.secondarySideBar.defaultVisibility': 'hidden',
            'editor.hover.delay': 200,
            'recitation.trace.server': 'messages',
        };
        if (env.RECITATION_E2E_INTERPRETER) {
            userSettings['recitation.interpreter'] = [env.RECITATION_E2E_INTERPRETER];
        }
        fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify(userSettings, null, 2));

        const xdg = {
            XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'),
            XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
            // The default index is built here, never in the user's own cache folder.
            XDG_CACHE_HOME: path.join(tmp, 'xdg-cache'),
        };
        // The npm registry the workspace index of the last steps fetches from.
        registry = await startRegistry(path.join(tmp, 'verdaccio'));
        log(`npm registry ${registry.url}`);

        const entry = path.join(codeServer, 'out', 'node', 'entry.js');
        const common = ['--user-data-dir', userData, '--extensions-dir', extensions, '--config', path.join(tmp, 'config.yaml')];
        const csEnv: NodeJS.ProcessEnv = { ...env, ...xdg, RECITATION_NPM_REGISTRY: registry.url };
        delete csEnv.VSCODE_IPC_HOOK_CLI;
        delete csEnv.RECITATION_INDEX;

        // 3. Only the .vsix.
        const installed = run(nodeBin, [entry, ...common, '--install-extension', vsix], { env: csEnv });
        log(installed.trim().split('\n').pop() ?? '');

        // 4. code-server, in its own process group so that its watchers stop with it.
        const port = await freePort();
        server = spawn(nodeBin, [
            entry, ...common,
            '--bind-addr', `127.0.0.1:${port}`,
            '--auth', 'none',
            '--disable-telemetry',
            '--disable-update-check',
            '--disable-workspace-trust',
            '--disable-getting-started-override',
            workspace,
        ], { env: csEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        const collect = (data: Buffer) => {
            serverLog += data.toString();
        };
        server.stdout?.on('data', collect);
        server.stderr?.on('data', collect);
        await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60_000);
        log(`code-server on port ${port}`);

        // 5. The browser.
        browser = await chromium.launch({
            executablePath: chromiumPath,
            args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
                '--disable-component-update', '--disable-sync'],
            timeout: 60_000,
        });
        const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://127.0.0.1:${port}` });
        page = await context.newPage();
        page.setDefaultTimeout(UI_MS);
        consoleLog = [];
        page.on('console', (msg) => consoleLog.push(`[${msg.type()}] ${msg.text()}`));
        page.on('pageerror', (err) => consoleLog.push(`[pageerror] ${err.message}`));
        baseUrl = `http://127.0.0.1:${port}`;
        await page.goto(`${baseUrl}/?folder=${encodeURIComponent(workspace)}`, { timeout: 60_000 });
        await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
        log('workbench loaded');
    });

    after(async () => {
        try {
            if (browser && page && failed) {
                await screenshot('failure').catch(() => undefined);
            }
            fs.writeFileSync(path.join(artifacts, 'browser-console.log'), consoleLog.join('\n'));
            fs.writeFileSync(path.join(artifacts, 'code-server.log'), serverLog);
            // The extension's own logs (the Recitation channel with the server's stderr and trace).
            const logs = path.join(tmp, 'user-data', 'logs');
            if (fs.existsSync(logs)) {
                fs.cpSync(logs, path.join(artifacts, 'vscode-logs'), { recursive: true });
            }
        } finally {
            await browser?.close().catch(() => undefined);
            registry?.process.stdin?.end();
            registry?.process.kill();
            if (server?.pid) {
                try {
                    process.kill(-server.pid, 'SIGTERM');
                } catch {
                    // already gone
                }
            }
            if (tmp && !env.RECITATION_E2E_KEEP) {
                fs.rmSync(tmp, { recursive: true, force: true });
            }
        }
    });

    function step(name: string, fn: () => Promise<void>): void {
        it(name, async () => {
            try {
                await fn();
            } catch (err) {
                failed = true;
                throw err;
            }
        });
    }

    step('with nothing opened, a file another process writes is checked: one warning in the Problems panel, logged', async () => {
        await statusItem('Recitation: on').waitFor({ state: 'visible', timeout: SERVER_READY_MS });
        const on = await extensionLogLine('the server watching the code files', (l) => /Status: ready.* · watching \d+ code files?$/.test(l), SERVER_READY_MS);
        log(`status: ${on.trim()}`);
        // a coding agent in a terminal writes a new file holding a function of the corpus
        const file = path.join(workspace, 'surveyed.py');
        const written = Date.now();
        fs.writeFileSync(file, 'import textwrap\n\n\n' + secondSnippet());
        try {
            await writtenFileChecked(file, written);
        } finally {
            // removed, its warning goes (and the steps below start from an empty Problems panel)
            fs.rmSync(file, { force: true });
        }
        await page.keyboard.press('Control+Shift+M');
        await until('the warning withdrawn', async () => {
            if (!(await page.locator('.markers-panel').isVisible())) {
                await page.keyboard.press('Control+Shift+M');
            }
            return (await writtenFileEntries()).length === 0;
        });
    });

    const writtenFileEntries = async () => (await page.locator('.markers-panel .monaco-list-row').allInnerTexts())
        .filter((t) => /textwrap_utils/.test(t) && /words/.test(t));

    /** The Problems panel and the code references log, for a file written on disk and never opened. */
    async function writtenFileChecked(file: string, written: number): Promise<void> {
        const entries = writtenFileEntries;
        const name = path.basename(file);
        await page.keyboard.press('Control+Shift+M');
        await page.locator('.markers-panel').waitFor({ state: 'visible', timeout: UI_MS });
        const [entry] = await until('the written file\'s warning in the Problems panel', async () => {
            const found = await entries();
            return found.length > 0 ? found : undefined;
        }, 15_000);
        const ms = Date.now() - written;
        log(`written on disk → Problems entry in ${ms} ms: ${entry.replace(/\s+/g, ' ')}`);
        assert.ok(ms < 10_000, `listed ${ms} ms after the write`);
        assert.match(entry, /Quoted: recitation-fixtures\/geodesy-utils textwrap_utils\.py L\d+–L\d+ · MIT/);
        assert.ok((await page.locator('.markers-panel .monaco-list-row', { hasText: name }).count()) >= 1, 'the file is named');
        await holds('one warning, the file still not opened', async () =>
            (await entries()).length === 1 && (await page.locator('.tab', { hasText: name }).count()) === 0, 2000);
        await screenshot('written-outside-the-editor');

        // the code references log records it, marked as written outside the editor
        await runCommand('Recitation: Open Code References Log');
        const output = page.locator('.part.panel .monaco-editor .view-lines').first();
        const text = await until('the written file in the references log', async () => {
            const t = (await output.innerText()).replace(/\u00a0/g, ' ').replace(/\s+/g, '');
            return /surveyed\.py:\d+/.test(t) ? t : undefined;
        });
        log(`references log: ${text.slice(text.indexOf('[recitation]surveyed'), text.indexOf('[recitation]surveyed') + 120)}`);
        assert.match(text, /\[recitation\]surveyed\.py:4·\d+wordsmatchpubliccode·foundin1file·writtenoutsidetheeditor/);
    }

    step('starts the server from the .vsix and shows the index in the status item', async () => {
        const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'zones.py' });
        await row.waitFor({ state: 'visible', timeout: UI_MS });
        await row.click();
        await page.locator('.tab.active', { hasText: 'zones.py' }).waitFor({ state: 'visible' });
        await until('the editor to show zones.py', async () => (await editorText()).includes('Delivery zones'));
        const on = statusItem('Recitation: on');
        await on.waitFor({ state: 'visible', timeout: SERVER_READY_MS });
        log(`status item: ${(await on.innerText()).trim()}`);
        assert.match(await on.innerText(), /Recitation: on · .*words/);
    });

    step('pasting quoted code (Ctrl+V) underlines it', async () => {
        await pasteSnippet();
        const squiggle = page.locator('.part.editor .monaco-editor .squiggly-warning').first();
        await squiggle.waitFor({ state: 'visible', timeout: UI_MS });
        log(`squiggles: ${await page.locator('.part.editor .monaco-editor .squiggly-warning').count()}`);
    });

    step('lists the match in the Problems panel', async () => {
        await page.keyboard.press('Control+Shift+M');
        const text = await recitationProblem();
        log(`problem: ${text.replace(/\s+/g, ' ')}`);
        assert.match(text, /words/);
        await screenshot('problems');
    });

    step('hovering the warning shows the source with its link', async () => {
        const squiggle = page.locator('.part.editor .monaco-editor .squiggly-warning').first();
        const box = await squiggle.boundingBox();
        assert.ok(box, 'the squiggle has a position');
        const hover = page.locator('.monaco-hover-content', { hasText: 'geodesy' });
        await until('the hover', async () => {
            await page.mouse.move(box.x + Math.min(40, box.width / 2), box.y + box.height / 2 - 4);
            await page.mouse.move(box.x + Math.min(60, box.width / 2), box.y + box.height / 2 - 6);
            return hover.first().isVisible();
        });
        const link = hover.first().locator('a[data-href*="recitation-fixtures/geodesy-utils"], a[href*="recitation-fixtures/geodesy-utils"]').first();
        await link.waitFor({ state: 'attached' });
        const href = (await link.getAttribute('data-href')) ?? (await link.getAttribute('href')) ?? '';
        log(`hover link: ${href}`);
        assert.match(href, LINK);
        const hoverText = await hover.first().innerText();
        assert.match(hoverText, /MIT/);
        const file = await screenshot('hover');
        fs.copyFileSync(file, path.join(artifacts, 'screenshot-vscode.png'));
    });

    step('offers the quick fixes', async () => {
        const squiggle = page.locator('.part.editor .monaco-editor .squiggly-warning').first();
        const menu = page.locator('.action-widget');
        // Put the cursor in the quoted range and ask for quick fixes (Ctrl+.); again if a
        // hover or a late render swallowed the first try.
        const items = await until('the quick fix menu', async () => {
            await page.keyboard.press('Escape');
            const box = await squiggle.boundingBox();
            assert.ok(box);
            await page.mouse.click(box.x + Math.min(30, box.width / 2), box.y + box.height / 2 - 4);
            await page.keyboard.press('Control+.');
            await menu.locator('.monaco-list-row').first().waitFor({ state: 'visible', timeout: 5000 });
            const texts = await menu.locator('.monaco-list-row').allInnerTexts();
            return texts.length > 0 ? texts : undefined;
        });
        log(`quick fixes: ${items.map((t) => t.replace(/\s+/g, ' ')).join(' | ')}`);
        assert.ok(items.some((t) => /attribution/i.test(t)), 'an attribution quick fix');
        assert.ok(items.some((t) => /dismiss/i.test(t)), 'a dismiss quick fix');
        assert.ok(items.some((t) => /Compare with source: recitation-fixtures\/geodesy-utils geodesy\.py L\d+–L\d+/.test(t)), 'a compare quick fix');
        await screenshot('quick-fixes');
        await page.keyboard.press('Escape');
    });

    step('logs the match with its sources in the code references log', async () => {
        await runCommand('Recitation: Open Code References Log');
        const output = page.locator('.part.panel .monaco-editor .view-lines').first();
        const text = await until('the match in the references log', async () => {
            const t = (await output.innerText()).replace(/\u00a0/g, ' ');
            return /geodesy-utils/.test(t) && /zones\.py:\d+/.test(t) ? t : undefined;
        });
        log(`references log: ${text.split('\n').slice(0, 6).join(' / ')}`);
        // The output view may wrap long lines anywhere: compare without whitespace.
        const flat = text.replace(/\s+/g, '');
        assert.match(flat, /\[recitation\]zones\.py:\d+·\d+wordsmatchpubliccode·foundin1file/);
        assert.match(flat, /excerpt:defbounding_box\(lat,lon,distance_km/);
        assert.match(flat, /\[MIT\]recitation-fixtures\/geodesy-utilsgeodesy\.pyL\d+-L\d+@[0-9a-f]{12}/);
        assert.match(flat, /https:\/\/github\.com\/recitation-fixtures\/geodesy-utils\/blob\/[0-9a-f]{40}\/geodesy\.py#L\d+-L\d+/);
        await screenshot('references-log');

        // Exported as CSV through the save dialog (VS Code's own in the browser: a path to accept).
        await runCommand('Recitation: Export Code References…', true);
        const dialog = page.locator('.quick-input-widget input');
        await until('the save dialog with the default file name', async () => /code-references\.csv$/.test(await dialog.inputValue()));
        await page.keyboard.press('Enter');
        const csvFile = path.join(workspace, 'code-references.csv');
        const csv = await until('the exported CSV', () => Promise.resolve(fs.existsSync(csvFile) && fs.readFileSync(csvFile, 'utf8')));
        const rows = csv.trimEnd().split('\r\n');
        log(`exported: ${rows[0]} / ${rows[1]?.slice(0, 160)}`);
        assert.match(rows[0], /^time,file,line,/);
        assert.match(csv, /zones\.py,\d+,\d+,recitation,\d+,1,true,MIT,recitation-fixtures\/geodesy-utils,geodesy\.py,L\d+-L\d+,[0-9a-f]+,https:/);
        fs.rmSync(csvFile);
    });

    /** The diff editor "Compare with source" opened: its title, both sides' text, and how long it took. */
    async function compareView(started: number, what: string): Promise<{ title: string; original: string; modified: string; ms: number }> {
        const diff = page.locator('.part.editor .monaco-diff-editor').first();
        const original = diff.locator('.editor.original .view-lines').first();
        const modified = diff.locator('.editor.modified .view-lines').first();
        const text = async (l: Locator) => (await l.innerText()).replace(/\u00a0/g, ' ');
        await until(`the diff editor from ${what}`, async () =>
            (await diff.isVisible()) && /def bounding_box/.test(await text(original)) && /def bounding_box/.test(await text(modified)));
        const ms = Date.now() - started;
        const tab = page.locator('.tab.active').first();
        const title = ((await tab.getAttribute('aria-label')) ?? (await tab.innerText())).replace(/\s+/g, ' ');
        log(`compare (${what}): "${title}" in ${ms} ms`);
        return { title, original: await text(original), modified: await text(modified), ms };
    }

    /** Closes the diff editor, back to the file (zones.py). */
    async function closeCompare(file = 'zones.py'): Promise<void> {
        await page.keyboard.press('Escape');
        const tab = page.locator('.tab.active', { hasText: '↔' }).first();
        await tab.hover();
        await tab.locator('.tab-actions .action-label').first().click();
        await page.locator('.tab.active', { hasText: file }).waitFor({ state: 'visible', timeout: UI_MS });
        await until('no diff editor', async () => (await page.locator('.part.editor .monaco-diff-editor').count()) === 0 ||
            !(await page.locator('.part.editor .monaco-diff-editor').first().isVisible()));
    }

    const COMPARE_TITLE = /recitation-fixtures\/geodesy-utils geodesy\.py L(\d+)–L(\d+) · MIT ↔ zones\.py L\d+–L\d+/;

    step('"Compare with source" in the hover opens the diff editor beside the source, offline', async () => {
        await scrollEditor('end');
        const squiggle = squiggles('warning').first();
        const link = page.locator('.monaco-hover-content a', { hasText: 'Compare with source' }).first();
        await until('the hover with its Compare link', async () => {
            const box = await squiggle.boundingBox();
            assert.ok(box);
            await page.mouse.move(box.x + Math.min(40, box.width / 2), box.y + box.height / 2 - 4);
            await page.mouse.move(box.x + Math.min(60, box.width / 2), box.y + box.height / 2 - 6);
            return link.isVisible();
        });
        const started = Date.now();
        await link.click();
        const view = await compareView(started, 'the hover');
        const lines = COMPARE_TITLE.exec(view.title);
        assert.ok(lines, `the title names the source, its lines and license: ${view.title}`);
        // the source's side: its lines as the fixture file has them, read from the index
        const fixture = fs.readFileSync(path.join(corpus, 'geodesy.py'), 'utf8').split('\n');
        assert.equal(fixture[Number(lines[1]) - 1], 'def bounding_box(lat, lon, distance_km, radius=EARTH_RADIUS_KM):');
        assert.match(view.original, /def bounding_box\(lat, lon, distance_km, radius=EARTH_RADIUS_KM\):/);
        // both sides are read-only virtual documents, not files
        const uris = await page.locator('.part.editor .monaco-diff-editor .monaco-editor[data-uri]')
            .evaluateAll((els) => els.map((e) => e.getAttribute('data-uri') ?? ''));
        log(`compare documents: ${uris.join(' | ')}`);
        assert.ok(uris.some((u) => u.startsWith('recitation-source:/recitation-fixtures/geodesy-utils/geodesy.py')), uris.join(' '));
        assert.ok(uris.some((u) => u.startsWith('recitation-quote:/zones.py')), uris.join(' '));
        assert.ok(view.ms < 5000, `opened in ${view.ms} ms`);
        // numbered as the files are: the source's first quoted line is its line number
        const numbers = await page.locator('.part.editor .monaco-diff-editor .editor.original .line-numbers').allInnerTexts();
        assert.ok(numbers.map((n) => n.trim()).includes(lines[1]), `line ${lines[1]} in view: ${numbers.join(',')}`);
        await screenshot('compare-from-hover');
        await closeCompare();
    });

    step('"Compare with source" as a quick fix, and for a logged quote', async () => {
        await quickFix(/Compare with source/);
        let started = Date.now();
        const fromFix = await compareView(started, 'the quick fix');
        assert.match(fromFix.title, COMPARE_TITLE);
        await screenshot('compare-from-quick-fix');
        await closeCompare();

        await runCommand('Recitation: Compare a Logged Quote with Its Source…', true);
        await pick(/zones\.py:\d+ · \d+ words/);
        started = Date.now();
        const fromLog = await compareView(started, 'the references log');
        assert.match(fromLog.title, COMPARE_TITLE);
        await screenshot('compare-from-references-log');
        await closeCompare();
    });

    step('the attribution quick fix clears the warning, and it stays gone after a restart', async () => {
        await page.locator('.part.editor .monaco-editor .view-lines').first().click();
        assert.equal(await recitationProblemCount(), 1, 'one Recitation problem before');
        await quickFix(/Add attribution comment/);
        await until('the attribution comment in the editor', async () => /# Adapted from https:\/\/github\.com\/recitation-fixtures/.test(await editorText()));
        await until('the warning to go', async () => (await squiggles('warning').count()) === 0);
        await until('the Problems entry to go', async () => (await recitationProblemCount()) === 0);
        await screenshot('attributed');

        await restartServer();
        // The restarted server checks the file again (scanOnOpen): the quote is found, and attributed.
        await scrollEditor('top');
        await squiggles('hint').first().waitFor({ state: 'visible', timeout: SERVER_READY_MS });
        await holds('no warning after the restart', async () => (await squiggles('warning').count()) === 0 && (await recitationProblemCount()) === 0);
    });

    step('"Dismiss" writes .recitation.toml, lasts through a restart, and Decisions… undoes it', async () => {
        await pasteSnippet(secondSnippet());
        await squiggles('warning').first().waitFor({ state: 'visible', timeout: UI_MS });
        await until('one Recitation problem', async () => (await recitationProblemCount()) === 1);
        await quickFix(/Dismiss/);
        const recorded = await until('the dismissal in .recitation.toml', () => {
            const text = fs.existsSync(decisionsFile()) ? fs.readFileSync(decisionsFile(), 'utf8') : '';
            return Promise.resolve(/\[\[dismissed\]\]/.test(text) && /def wrap_paragraph/.test(text) ? text : undefined);
        });
        log(`.recitation.toml: ${recorded.split('\n').filter((l) => /^(id|quote|source|license) =/.test(l)).join(' | ')}`);
        await until('the warning to go', async () => (await squiggles('warning').count()) === 0 && (await recitationProblemCount()) === 0);

        await restartServer();
        // The attributed quote at the top is a hint again: the file was checked after the restart.
        await scrollEditor('top');
        await squiggles('hint').first().waitFor({ state: 'visible', timeout: SERVER_READY_MS });
        await holds('no warning after the restart', async () => (await squiggles('warning').count()) === 0 && (await recitationProblemCount()) === 0);

        await scrollEditor('end');
        await runCommand('Recitation: Decisions…', true);
        await page.locator('.quick-input-list .monaco-list-row', { hasText: 'def wrap_paragraph' }).first().waitFor({ state: 'visible', timeout: UI_MS });
        await screenshot('decisions');
        await pick('def wrap_paragraph');
        await screenshot('decisions-undo');
        await pick('Undo');
        await until('the Problems entry back', async () => (await recitationProblemCount()) === 1);
        await squiggles('warning').first().waitFor({ state: 'visible', timeout: UI_MS });
        assert.doesNotMatch(fs.readFileSync(decisionsFile(), 'utf8'), /def wrap_paragraph/);
        await screenshot('undone');
    });

    step('editing .recitation.toml by hand changes the verdicts live', async () => {
        const original = fs.readFileSync(decisionsFile(), 'utf8');
        assert.match(original, /^\[policy\]$/m);
        // A license policy: permissive licenses (the fixture is MIT) are errors.
        fs.writeFileSync(decisionsFile(), original.replace(/^\[policy\]$/m, '[policy]\npermissive = "error"'));
        await squiggles('error').first().waitFor({ state: 'visible', timeout: UI_MS });
        await until('the warning to become an error', async () => (await squiggles('warning').count()) === 0);
        await screenshot('policy-error');
        // Our own code: the fixture repository as an allowed source.
        const allowed = fs.readFileSync(decisionsFile(), 'utf8').replace(/^sources = \[[^\]]*\]/m, 'sources = ["recitation-fixtures/geodesy-utils"]');
        assert.match(allowed, /geodesy-utils"\]/);
        fs.writeFileSync(decisionsFile(), allowed);
        await until('no error nor warning once the source is allowed', async () =>
            (await squiggles('error').count()) === 0 && (await squiggles('warning').count()) === 0 && (await recitationProblemCount()) === 0);
        // And back.
        fs.writeFileSync(decisionsFile(), original);
        await squiggles('warning').first().waitFor({ state: 'visible', timeout: UI_MS });
    });

    step('toggling the workspace off clears the warning at once', async () => {
        await page.locator('.part.editor .monaco-editor .view-lines').first().click();
        await runCommand('Recitation: Toggle for This Workspace');
        await until('the squiggle to go', async () => (await page.locator('.part.editor .monaco-editor .squiggly-warning').count()) === 0, UI_MS);
        await statusItem('Recitation: off').waitFor({ state: 'visible', timeout: UI_MS });
        const settings = JSON.parse(fs.readFileSync(path.join(workspace, '.vscode', 'settings.json'), 'utf8')) as Record<string, unknown>;
        assert.equal(settings['recitation.enable'], false);
        await screenshot('toggled-off');
    });

    step('the status item opens the Recitation menu, which turns it on again', async () => {
        await statusItem('Recitation: off').click();
        const rows = page.locator('.quick-input-list .monaco-list-row');
        const expected = ['Turn On for This Workspace', 'Open Code References Log', 'Build Default Index', 'Show Logs'];
        let joined = '';
        // (the list draws its rows as it opens: until all of them are there)
        await until(`the menu with ${expected.join(', ')}`, async () => {
            joined = (await rows.allInnerTexts()).join(' | ');
            return expected.every((entry) => joined.includes(entry));
        }).catch((err: unknown) => {
            log(`menu rows seen: ${joined}`);
            throw err;
        });
        await screenshot('status-menu');
        await rows.filter({ hasText: 'Turn On for This Workspace' }).first().click();
        await statusItem('Recitation: on').waitFor({ state: 'visible', timeout: UI_MS });
        const settings = JSON.parse(fs.readFileSync(path.join(workspace, '.vscode', 'settings.json'), 'utf8')) as Record<string, unknown>;
        assert.equal(settings['recitation.enable'], true);
    });

    step('restarts the server on the interpreter set in recitation.interpreter', async () => {
        const executable = run('python3', ['-c', 'import sys; print(sys.executable)']).trim();
        // The workspace settings: VS Code picks up their change on disk at once.
        const settingsFile = path.join(workspace, '.vscode', 'settings.json');
        const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
        settings['recitation.interpreter'] = [executable];
        fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
        const line = await extensionLogLine('the server restarted on the configured interpreter', (l) => l.includes('(setting): ' + executable));
        log(line.trim());
        await statusItem('Recitation: on').waitFor({ state: 'visible', timeout: SERVER_READY_MS });
    });

    step('without an index: the offer, code pasted meanwhile is flagged once the index is built from the status menu, no restart', async () => {
        // The user clears recitation.indexPath: the default index (in the cache folder) does not exist yet.
        // (No index of the workspace's own: that one is offered to the JavaScript workspace below.)
        const settingsFile = path.join(workspace, '.vscode', 'settings.json');
        const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
        settings['recitation.indexPath'] = '';
        settings['recitation.workspaceIndex'] = 'off';
        fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
        // Focus back in the editor, away from the status bar, so that no tooltip of the
        // status item covers the notification.
        await page.locator('.part.editor .monaco-editor .view-lines').first().click();
        await page.keyboard.press('Escape');
        const offer = page.locator('.notification-toast', { hasText: 'no index of public code yet' });
        await offer.waitFor({ state: 'visible', timeout: UI_MS });
        await offer.locator('a', { hasText: 'Build Index' }).first().waitFor({ state: 'attached', timeout: UI_MS });
        await statusItem('Recitation: no index').waitFor({ state: 'visible', timeout: UI_MS });
        await screenshot('no-index-offer');

        // Code pasted while there is no index: nothing to check it against yet.
        const stdlib = stdlibSnippet();
        await pasteSnippet(stdlib);
        const starts = serverStarts();

        // Built from the status item's menu, not from the offer.
        await statusItem('Recitation: no index').click();
        await pick('Build Default Index');
        await page.locator('.notification-toast', { hasText: 'building the default index' }).waitFor({ state: 'visible', timeout: UI_MS });
        // The offer no longer applies: it is withdrawn.
        await offer.waitFor({ state: 'hidden', timeout: UI_MS });
        await screenshot('index-build-progress');
        const on = statusItem('Recitation: on');
        await on.waitFor({ state: 'visible', timeout: 5 * 60_000 });
        const text = (await on.innerText()).trim();
        log(`status item: ${text}`);
        assert.doesNotMatch(text, /geodesy/);
        assert.match(text, /words/);
        assert.ok(fs.existsSync(path.join(tmp, 'xdg-cache', 'recitation')), 'the index is in the cache folder');

        // The pasted standard library function is flagged by the new index, by the same server.
        const problem = await until('a Problems entry for the pasted textwrap.dedent', async () => {
            if (!(await page.locator('.markers-panel').isVisible())) {
                await page.keyboard.press('Control+Shift+M');
            }
            const all = await page.locator('.markers-panel .monaco-list-row').allInnerTexts();
            return all.find((t) => /recitation/i.test(t) && /textwrap\.py/.test(t));
        });
        log(`problem: ${problem.replace(/\s+/g, ' ')}`);
        assert.equal(serverStarts(), starts, 'the server was not restarted');
        assert.equal(await offer.count(), 0, 'no offer left on screen');
        await screenshot('default-index');
    });

    step('in front of pylsp (recitation.upstreamCommand): pylsp hovers and Recitation warns', async () => {
        const pylsp = path.join(repoRoot, '.venv', 'bin', 'pylsp');
        assert.ok(fs.existsSync(pylsp), `${pylsp} exists (python-lsp-server in the repository's .venv)`);
        // Only the new file open, so that every Recitation entry in Problems is about it.
        await page.locator('.part.editor .monaco-editor .view-lines').first().click();
        await page.keyboard.press('Control+S');
        await until('zones.py saved', async () => (await page.locator('.tab.dirty').count()) === 0);
        await runCommand('View: Close All Editors');
        await until('no editor open', async () => (await page.locator('.part.editor .tab').count()) === 0);
        fs.writeFileSync(path.join(workspace, 'labels.py'), 'import textwrap\n\ntextwrap.dedent("  depot")\n');

        // The workspace settings, changed on disk: the fixture index again, and pylsp behind the server.
        const settingsFile = path.join(workspace, '.vscode', 'settings.json');
        const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
        settings['recitation.indexPath'] = fixtureIndex;
        settings['recitation.upstreamCommand'] = [pylsp];
        fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
        const wrap = `-m server --wrap -- ${pylsp}`;
        const line = await extensionLogLine('the server restarted in front of pylsp', (l) => l.includes(wrap));
        log(line.trim());
        // The new server is up when the status item shows the fixture index again.
        const on = page.locator('.statusbar-item', { hasText: /Recitation: on · recitation-fixtures\/geodesy-utils/ });
        await on.waitFor({ state: 'visible', timeout: SERVER_READY_MS });
        log(`status item: ${(await on.innerText()).trim()}`);

        const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'labels.py' });
        await row.waitFor({ state: 'visible', timeout: UI_MS });
        await row.click();
        await page.locator('.tab.active', { hasText: 'labels.py' }).waitFor({ state: 'visible' });
        await until('the editor to show labels.py', async () => (await editorText()).includes('textwrap.dedent'));

        // (1) pylsp's hover on the stdlib `textwrap.dedent` (line 3, column 11), through the proxy.
        const hover = page.locator('.monaco-hover-content', { hasText: 'common leading whitespace' });
        const hoverText = await until('the hover of pylsp on textwrap.dedent', async () => {
            await page.locator('.part.editor .monaco-editor .view-lines').first().click();
            await page.keyboard.press('Control+Home');
            await page.keyboard.press('ArrowDown');
            await page.keyboard.press('ArrowDown');
            for (let i = 0; i < 10; i++) {
                await page.keyboard.press('ArrowRight');
            }
            await runCommand('Show or Focus Hover');
            await hover.first().waitFor({ state: 'visible', timeout: 5000 });
            return (await hover.first().innerText()).trim();
        }, SERVER_READY_MS);
        log(`pylsp hover: ${hoverText.replace(/\s+/g, ' ').slice(0, 120)}`);
        assert.match(hoverText.replace(/\s+/g, ' '), /Remove any common leading whitespace from every line/);
        await screenshot('pylsp-hover');
        await page.keyboard.press('Escape');

        // (2) Recitation's own warning on the pasted snippet, from the same server.
        await pasteSnippet();
        const problem = await recitationProblem();
        log(`problem: ${problem.replace(/\s+/g, ' ')}`);
        assert.match(problem, /words/);
        const files = await until('the Problems entries under labels.py only', async () => {
            const all = await page.locator('.markers-panel .monaco-list-row').allInnerTexts();
            return all.some((t) => t.includes('labels.py')) && !all.some((t) => t.includes('zones.py')) ? all : undefined;
        });
        log(`problems: ${files.map((t) => t.replace(/\s+/g, ' ')).join(' | ')}`);
        await screenshot('pylsp-recitation-problem');
    });

    step('the code references log is kept per workspace, outside it, across a reload of the window', async () => {
        const storage = path.join(tmp, 'user-data', 'User', 'workspaceStorage');
        const stored = fs.readdirSync(storage, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('code-references.jsonl'));
        assert.equal(stored.length, 1, `one log in the workspace storage: ${stored.join(', ')}`);
        const logFile = path.join(storage, stored[0]);
        const before = fs.readFileSync(logFile, 'utf8').trim().split('\n').length;
        assert.ok(before >= 4, `${before} entries logged`);
        assert.equal(fs.readdirSync(workspace, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes('code-references')).length, 0,
            'nothing in the workspace');

        const reloaded = page.waitForEvent('load', { timeout: UI_MS });
        await runCommand('Developer: Reload Window');
        await reloaded;
        await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
        await statusItem('Recitation: on').waitFor({ state: 'visible', timeout: SERVER_READY_MS });
        await runCommand('Recitation: Open Code References Log');
        const output = page.locator('.part.panel .monaco-editor .view-lines').first();
        const text = await until('the earlier references in the log', async () => {
            const t = (await output.innerText()).replace(/\u00a0/g, ' ');
            return /earlier references? of this workspace/.test(t) ? t : undefined;
        });
        const flat = text.replace(/\s+/g, ' ');
        log(`after the reload: ${flat.match(/\(\d+ earlier references? of this workspace[^)]*\)/)?.[0] ?? ''}`);
        // Every entry written before the reload is shown again; the save that the reload makes
        // can rescan the open file (scanOnOpen) and log one more before the window goes.
        const earlier = Number(/\((\d+) earlier references? of this workspace/.exec(flat)?.[1]);
        const onDisk = fs.readFileSync(logFile, 'utf8').trim().split('\n').length;
        assert.ok(earlier >= before && earlier <= onDisk, `${earlier} earlier entries shown, ${before} before the reload, ${onDisk} on disk now`);
        await screenshot('references-after-reload');
    });

    step('"Compare with source" on a renamed copy shows the renaming', async () => {
        const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'labels.py' });
        await row.click();
        await page.locator('.tab.active', { hasText: 'labels.py' }).waitFor({ state: 'visible' });
        await page.locator('.part.editor .monaco-editor .view-lines').first().click();
        await page.keyboard.press('Control+A');
        await page.keyboard.press('Delete');
        await pasteSnippet('import math\n\nEARTH_RADIUS_KM = 6371.0\n\n\n' + renamedSnippet());
        await squiggles('warning').first().waitFor({ state: 'visible', timeout: UI_MS });
        await quickFix(/Compare with source/);
        const started = Date.now();
        const view = await compareView(started, 'a renamed copy');
        assert.match(view.title, /geodesy\.py L\d+–L\d+ · MIT \(renamed copy\) ↔ labels\.py/);
        // the source's names on the left, the copy's on the right, each shown as a change
        assert.match(view.original, /angular = distance_km \/ radius/);
        assert.match(view.modified, /arc = distance_km \/ radius/);
        const changed = page.locator('.part.editor .monaco-diff-editor .char-delete, .part.editor .monaco-diff-editor .char-insert');
        await until('the renamed words marked as changes', async () => (await changed.count()) > 0);
        // the README's picture of the view (docs/screenshot-compare.png)
        const file = await screenshot('compare-renamed');
        fs.copyFileSync(file, path.join(artifacts, 'screenshot-compare.png'));
        await closeCompare('labels.py');
    });
    // -- a JavaScript workspace's own index ------------------------------------------------

    let jsWorkspace = '';

    /** The Problems entry of Recitation naming `what`. */
    async function problemNaming(what: RegExp, timeoutMs = UI_MS): Promise<string> {
        return until(`a Problems entry naming ${what}`, async () => {
            if (!(await page.locator('.markers-panel').isVisible())) {
                await page.keyboard.press('Control+Shift+M');
            }
            const all = await page.locator('.markers-panel .monaco-list-row').allInnerTexts();
            return all.find((t) => /recitation/i.test(t) && what.test(t));
        }, timeoutMs);
    }

    step('a JavaScript workspace: at its first start the extension offers to index it, saying what it found and what it costs', async () => {
        assert.ok(registry);
        jsWorkspace = path.join(tmp, 'clock-app');
        fs.mkdirSync(jsWorkspace);
        fs.writeFileSync(path.join(jsWorkspace, 'package.json'), JSON.stringify({ name: 'clock-app', version: '1.0.0' }, null, 2) + '\n');
        npmLock(jsWorkspace, registry.url, 'ms@2.1.2');
        fs.writeFileSync(path.join(jsWorkspace, 'durations.js'), "'use strict';\n\nconst ms = require('ms');\n\n");
        // The Python workspace's files saved, then this folder opened in the window.
        await runCommand('File: Save All');
        page.once('dialog', (d) => void d.accept());
        await page.goto(`${baseUrl}/?folder=${encodeURIComponent(jsWorkspace)}`, { timeout: 60_000 });
        await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
        const offer = page.locator('.notification-toast', { hasText: 'Recitation can index the public code clock-app depends on' });
        await offer.waitFor({ state: 'visible', timeout: SERVER_READY_MS });
        const text = (await offer.innerText()).replace(/\s+/g, ' ');
        log(`offer: ${text}`);
        assert.match(text, /1 npm package \(package-lock\.json\) — about \S+ words, \d+ MB, \d+ seconds/);
        assert.match(text, /never into the workspace/);
        await offer.locator('.monaco-button', { hasText: 'Not Now' }).waitFor({ state: 'visible' });
        await screenshot('workspace-index-offer');
    });

    step('indexed from the offer: a function of the dependency pasted meanwhile is underlined with ms@2.1.2 and MIT', async () => {
        const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'durations.js' });
        await row.waitFor({ state: 'visible', timeout: UI_MS });
        await row.click();
        await page.locator('.tab.active', { hasText: 'durations.js' }).waitFor({ state: 'visible' });
        // Pasted while the offer waits: the default index (the Python standard library) has none of it.
        await pasteSnippet(msParse('2.1.2'));
        await holds('no warning before the workspace is indexed', async () => (await squiggles('warning').count()) === 0, 2000);
        // The offer's button, on its toast or, once the toast has gone, in the notification center.
        const offerText = 'Recitation can index the public code clock-app depends on';
        const toast = page.locator('.notification-toast', { hasText: offerText });
        if (!(await toast.isVisible())) {
            await runCommand('Notifications: Show Notifications');
        }
        const button = page.locator('.notification-toast, .notifications-center .monaco-list-row', { hasText: offerText })
            .locator('.monaco-button', { hasText: 'Index This Workspace' }).first();
        await button.click();
        const problem = await problemNaming(/npm:ms@2\.1\.2/, 5 * 60_000);
        log(`problem: ${problem.replace(/\s+/g, ' ')}`);
        assert.match(problem, /MIT/);
        await squiggles('warning').first().waitFor({ state: 'visible', timeout: UI_MS });
        const on = statusItem('Workspace index: 1 npm');
        await on.waitFor({ state: 'visible', timeout: UI_MS });
        log(`status item: ${(await on.innerText()).trim()}`);
        const cache = path.join(tmp, 'xdg-cache', 'recitation', 'workspaces');
        assert.ok(fs.readdirSync(cache).some((f) => f.startsWith('clock-app-')), 'the index is in the cache folder');
        assert.deepEqual(fs.readdirSync(jsWorkspace).sort(), ['durations.js', 'package-lock.json', 'package.json'], 'nothing written in the workspace');
        await screenshot('workspace-index-warning');
    });

    step('npm moves the lock file to ms 2.1.3: the warning names the new version, with no restart', async () => {
        assert.ok(registry);
        const starts = serverStarts();
        npmLock(jsWorkspace, registry.url, 'ms@2.1.3');
        const problem = await problemNaming(/npm:ms@2\.1\.3/, 3 * 60_000);
        log(`problem: ${problem.replace(/\s+/g, ' ')}`);
        assert.match(problem, /MIT/);
        assert.equal(serverStarts(), starts, 'the server was not restarted');
        await statusItem('Workspace index: 1 npm').waitFor({ state: 'visible', timeout: UI_MS });
        await screenshot('workspace-index-updated');
    });
});
