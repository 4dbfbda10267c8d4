import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
    LaunchError,
    cancelSignal,
    libsFolder,
    parseProgress,
    parseProgressLabel,
    planBuildIndex,
    planReferencesSbom,
    planServer,
    serverArgs,
    type Layout,
} from '../../src/launch';
import type { PythonInfo } from '../../src/interpreter';

const py311: PythonInfo = { version: [3, 11, 7], executable: '/usr/bin/python3.11' };
const bundled: Layout = {
    kind: 'bundled',
    root: '/ext/bundled',
    manifest: { platform: 'linux-x64', pythons: ['3.10', '3.11', '3.12'] },
};

describe('planServer', () => {
    it('runs python -m server with the bundled libraries of the interpreter version', () => {
        const plan = planServer(['/usr/bin/python3.11'], py311, bundled, [], { PATH: '/usr/bin', PYTHONPATH: '/mine' });
        assert.equal(plan.command, '/usr/bin/python3.11');
        assert.deepEqual(plan.args, ['-m', 'server']);
        assert.equal(plan.env.PYTHONPATH, '/ext/bundled/libs/cp311:/ext/bundled/tool');
        assert.equal(plan.env.PYTHONNOUSERSITE, '1');
        assert.equal(plan.env.PATH, '/usr/bin');
    });

    it('keeps leading interpreter arguments before -m', () => {
        const plan = planServer(['uv', 'run', 'python'], py311, bundled, [], {});
        assert.equal(plan.command, 'uv');
        assert.deepEqual(plan.args, ['run', 'python', '-m', 'server']);
    });

    it('refuses a Python version the package carries no libraries for', () => {
        assert.throws(
            () => planServer(['python3.13'], { version: [3, 13, 0], executable: '/usr/bin/python3.13' }, bundled, [], {}),
            (err: unknown) => err instanceof LaunchError && /runs on Python 3\.10–3\.12/.test(err.message) && /is 3\.13/.test(err.message),
        );
    });

    it('says which libraries have no build for a version the package leaves out', () => {
        const arm: Layout = {
            kind: 'bundled',
            root: 'C:\\ext\\bundled',
            manifest: { platform: 'win32-arm64', pythons: ['3.11', '3.12'], missing: { '3.10': ['zstandard>=0.22', 'numpy>=1.24'] } },
        };
        assert.throws(
            () => planServer(['py', '-3.10'], { version: [3, 10, 4], executable: '' }, arm, [], {}, { platform: 'win32', path: path.win32 }),
            /\(win32-arm64\) runs on Python 3\.11–3\.12; the interpreter is 3\.10 \(zstandard, numpy publish no build of it for win32-arm64\)/,
        );
    });

    it('runs from a source checkout by putting it on the path', () => {
        const plan = planServer(['python3'], py311, { kind: 'checkout', root: '/repo' }, [], { PYTHONPATH: '/x' });
        assert.equal(plan.env.PYTHONPATH, '/repo:/x');
        assert.equal(plan.env.PYTHONNOUSERSITE, undefined);
    });

    it('relies on the environment when nothing is bundled', () => {
        const plan = planServer(['python3'], py311, { kind: 'environment' }, [], {});
        assert.equal(plan.env.PYTHONPATH, undefined);
        assert.equal(plan.env.PYTHONUNBUFFERED, '1');
    });

    it('wraps an upstream language server', () => {
        assert.deepEqual(serverArgs(['pylsp', '-v']), ['-m', 'server', '--wrap', '--', 'pylsp', '-v']);
    });
});

describe('on Windows', () => {
    const win32 = { platform: 'win32' as const, path: path.win32 };
    const winBundle: Layout = {
        kind: 'bundled',
        root: 'C:\\Users\\me\\.vscode\\extensions\\recitation.recitation-0.1.0-win32-x64\\bundled',
        manifest: { platform: 'win32-x64', pythons: ['3.11', '3.12'] },
    };
    const py312: PythonInfo = { version: [3, 12, 1], executable: 'C:\\Python312\\python.exe' };

    it('joins the bundled folders with backslashes and ; and keeps the py launcher arguments', () => {
        const plan = planServer(['C:\\Windows\\py.exe', '-3.12'], py312, winBundle, [], { Path: 'C:\\Windows' }, win32);
        assert.equal(plan.command, 'C:\\Windows\\py.exe');
        assert.deepEqual(plan.args, ['-3.12', '-m', 'server']);
        assert.equal(
            plan.env.PYTHONPATH,
            'C:\\Users\\me\\.vscode\\extensions\\recitation.recitation-0.1.0-win32-x64\\bundled\\libs\\cp312;' +
                'C:\\Users\\me\\.vscode\\extensions\\recitation.recitation-0.1.0-win32-x64\\bundled\\tool',
        );
        assert.equal(plan.env.Path, 'C:\\Windows', 'Path keeps its spelling');
    });

    it('replaces a variable spelled in another case instead of adding a second one', () => {
        const plan = planServer(['python.exe'], py312, winBundle, [], { PythonPath: 'C:\\mine', PythonNoUserSite: '' }, win32);
        assert.equal(plan.env.PythonPath, undefined);
        assert.equal(plan.env.PythonNoUserSite, undefined);
        assert.equal(plan.env.PYTHONNOUSERSITE, '1');
        assert.match(plan.env.PYTHONPATH, /^C:\\Users\\.*\\libs\\cp312;.*\\tool$/);
    });

    it('puts a checkout in front of a PYTHONPATH of any spelling', () => {
        const plan = planServer(['python.exe'], py312, { kind: 'checkout', root: 'D:\\src\\recitation' }, [], { PythonPath: 'C:\\mine' }, win32);
        assert.equal(plan.env.PYTHONPATH, 'D:\\src\\recitation;C:\\mine');
    });

    it('stops the index build without POSIX signals', () => {
        assert.equal(cancelSignal('win32'), undefined);
        assert.equal(cancelSignal('linux'), 'SIGINT');
        assert.equal(cancelSignal('darwin'), 'SIGINT');
    });
});

describe('planBuildIndex', () => {
    it('runs the index CLI with the same libraries', () => {
        const plan = planBuildIndex(['/usr/bin/python3.11'], py311, bundled, {});
        assert.deepEqual(plan.args, ['-m', 'index_tools.cli', 'build', '--default']);
        assert.equal(plan.env.PYTHONPATH, '/ext/bundled/libs/cp311:/ext/bundled/tool');
    });
});

describe('planReferencesSbom', () => {
    it('runs the references command of the index CLI with the same libraries', () => {
        const plan = planReferencesSbom(['/usr/bin/python3.11'], py311, bundled, '/tmp/r/log.json', 'cyclonedx', '/p', {});
        assert.deepEqual(plan.args, ['-m', 'index_tools.cli', 'references', '/tmp/r/log.json', '--format', 'cyclonedx', '--root', '/p']);
        assert.equal(plan.env.PYTHONPATH, '/ext/bundled/libs/cp311:/ext/bundled/tool');
    });
});

describe('progress of the index build', () => {
    it('reads the last percentage of a progress bar chunk', () => {
        const chunk = '\rindexing:  10%|█         | 10/100 [00:01<00:09]\rindexing:  42%|████▏     | 42/100 [00:02<00:03]';
        assert.equal(parseProgress(chunk), 42);
        assert.equal(parseProgressLabel(chunk), 'indexing');
        assert.equal(parseProgress('collecting files\n'), undefined);
        assert.equal(parseProgress('100%|██████████| 5/5'), 100);
    });

    it('names the bundled folders by ABI tag', () => {
        assert.equal(libsFolder('3.10'), 'cp310');
        assert.equal(libsFolder('3.14'), 'cp314');
    });
});
