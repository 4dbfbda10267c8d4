import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
    InterpreterError,
    discoverInterpreter,
    isSupported,
    parseProbeOutput,
    type DiscoveryProbes,
    type PythonInfo,
} from '../../src/interpreter';

function info(major: number, minor: number, executable = '/usr/bin/python3'): PythonInfo {
    return { version: [major, minor, 0], executable };
}

/** Probes over a fake machine: programs on the PATH and what each interpreter answers. */
function fakeProbes(opts: {
    pythonExtension?: string[] | undefined | Error;
    path?: Record<string, string>;
    versions?: Record<string, PythonInfo | Error>;
}): DiscoveryProbes & { probed: string[] } {
    const probed: string[] = [];
    return {
        probed,
        pythonExtension: () => (opts.pythonExtension instanceof Error
            ? Promise.reject(opts.pythonExtension)
            : Promise.resolve(opts.pythonExtension)),
        which: (program) => Promise.resolve(opts.path?.[program]),
        probe: (command) => {
            const key = command.join(' ');
            probed.push(key);
            const answer = opts.versions?.[key];
            if (!answer) {
                return Promise.reject(new Error(`${key}: not found`));
            }
            return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
        },
    };
}

describe('discoverInterpreter', () => {
    it('uses the setting first, with its leading arguments', async () => {
        const probes = fakeProbes({
            pythonExtension: ['/venv/bin/python'],
            path: { python3: '/usr/bin/python3' },
            versions: { '/opt/py/bin/python -X utf8': info(3, 12, '/opt/py/bin/python') },
        });
        const found = await discoverInterpreter(['/opt/py/bin/python', '-X', 'utf8'], probes);
        assert.deepEqual(found.command, ['/opt/py/bin/python', '-X', 'utf8']);
        assert.equal(found.source, 'setting');
        assert.deepEqual(probes.probed, ['/opt/py/bin/python -X utf8']);
    });

    it('reports a configured interpreter that does not run, instead of guessing another', async () => {
        const probes = fakeProbes({ path: { python3: '/usr/bin/python3' }, versions: { '/usr/bin/python3': info(3, 11) } });
        await assert.rejects(discoverInterpreter(['/nope/python'], probes), (err: unknown) => {
            assert.ok(err instanceof InterpreterError);
            assert.match(err.message, /recitation\.interpreter/);
            return true;
        });
    });

    it('reports a configured interpreter that is too old', async () => {
        const probes = fakeProbes({ versions: { '/usr/bin/python3.8': info(3, 8) } });
        await assert.rejects(discoverInterpreter(['/usr/bin/python3.8'], probes), /3\.8\.0; Recitation needs 3\.10/);
    });

    it('asks the Python extension next', async () => {
        const probes = fakeProbes({
            pythonExtension: ['/proj/.venv/bin/python'],
            path: { python3: '/usr/bin/python3' },
            versions: { '/proj/.venv/bin/python': info(3, 11), '/usr/bin/python3': info(3, 12) },
        });
        const found = await discoverInterpreter([], probes);
        assert.equal(found.source, 'python-extension');
        assert.deepEqual(found.command, ['/proj/.venv/bin/python']);
    });

    it('falls back to python3 on the PATH without the Python extension', async () => {
        const probes = fakeProbes({ path: { python3: '/usr/bin/python3' }, versions: { '/usr/bin/python3': info(3, 11) } });
        const found = await discoverInterpreter([], probes);
        assert.equal(found.source, 'path');
        assert.deepEqual(found.command, ['/usr/bin/python3']);
        assert.deepEqual(found.info.version, [3, 11, 0]);
    });

    it('falls through when the Python extension fails or selects a too old Python', async () => {
        for (const fromExtension of [new Error('extension not ready'), ['/old/python']]) {
            const probes = fakeProbes({
                pythonExtension: fromExtension,
                path: { python3: '/usr/bin/python3' },
                versions: { '/old/python': info(3, 7), '/usr/bin/python3': info(3, 13) },
            });
            const found = await discoverInterpreter([], probes);
            assert.equal(found.source, 'path');
        }
    });

    it('tries python after python3', async () => {
        const probes = fakeProbes({
            path: { python3: '/usr/bin/python3', python: '/usr/local/bin/python' },
            versions: { '/usr/bin/python3': info(3, 9), '/usr/local/bin/python': info(3, 10) },
        });
        const found = await discoverInterpreter([], probes);
        assert.deepEqual(found.command, ['/usr/local/bin/python']);
    });

    it('says what it tried when nothing fits', async () => {
        const probes = fakeProbes({ path: { python3: '/usr/bin/python3' }, versions: { '/usr/bin/python3': info(3, 6) } });
        await assert.rejects(discoverInterpreter([], probes), (err: unknown) => {
            assert.ok(err instanceof InterpreterError);
            assert.deepEqual(err.tried, ['/usr/bin/python3']);
            assert.match(err.message, /No Python 3\.10\+ found \(tried: \/usr\/bin\/python3\)/);
            return true;
        });
    });
});

describe('parseProbeOutput', () => {
    it('reads the version and the executable', () => {
        assert.deepEqual(parseProbeOutput('{"version": [3, 11, 7], "executable": "/usr/bin/python3"}\n'), {
            version: [3, 11, 7],
            executable: '/usr/bin/python3',
        });
    });

    it('takes the last line (a sitecustomize may print first)', () => {
        assert.deepEqual(parseProbeOutput('hello\n{"version": [3, 12, 1], "executable": "x"}').version, [3, 12, 1]);
    });

    it('rejects garbage', () => {
        assert.throws(() => parseProbeOutput('Python 3.11.7'));
        assert.throws(() => parseProbeOutput('{"version": "3.11"}'));
    });
});

describe('isSupported', () => {
    it('needs 3.10 or newer', () => {
        assert.equal(isSupported(info(3, 9)), false);
        assert.equal(isSupported(info(3, 10)), true);
        assert.equal(isSupported(info(3, 14)), true);
        assert.equal(isSupported(info(4, 0)), true);
        assert.equal(isSupported(info(2, 7)), false);
    });
});
