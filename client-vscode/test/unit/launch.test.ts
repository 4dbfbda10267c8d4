import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
    LaunchError,
    libsFolder,
    parseProgress,
    parseProgressLabel,
    planBuildIndex,
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
            (err: unknown) => err instanceof LaunchError && /3\.10, 3\.11, 3\.12/.test(err.message) && /3\.13/.test(err.message),
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

describe('planBuildIndex', () => {
    it('runs the index CLI with the same libraries', () => {
        const plan = planBuildIndex(['/usr/bin/python3.11'], py311, bundled, {});
        assert.deepEqual(plan.args, ['-m', 'index_tools.cli', 'build', '--default']);
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
