import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
    InterpreterError,
    describeVersions,
    discoverInterpreter,
    isSupported,
    pathCommands,
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
        await assert.rejects(discoverInterpreter(['/usr/bin/python3.8'], probes), /3\.8\.0; Recitation needs Python 3\.10 or newer/);
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
            assert.match(err.message, /needs Python 3\.10 or newer and found none \(tried: \/usr\/bin\/python3\)/);
            assert.equal(err.problem, 'not-found');
            return true;
        });
    });

    it('on Windows asks the py launcher first, then python.exe', async () => {
        const probes = fakeProbes({
            path: { py: 'C:\\Windows\\py.exe', python: 'C:\\Users\\me\\AppData\\Local\\Microsoft\\WindowsApps\\python.exe' },
            versions: { 'C:\\Windows\\py.exe -3': info(3, 12, 'C:\\Python312\\python.exe') },
        });
        const found = await discoverInterpreter([], probes, { platform: 'win32' });
        assert.deepEqual(found.command, ['C:\\Windows\\py.exe', '-3']);
        assert.equal(found.info.executable, 'C:\\Python312\\python.exe');
    });

    it('on Windows falls back to python.exe when there is no py launcher (the Store alias that does not run is passed over)', async () => {
        const probes = fakeProbes({
            path: { python: 'C:\\Users\\me\\AppData\\Local\\Microsoft\\WindowsApps\\python.exe', python3: 'C:\\Py311\\python3.exe' },
            versions: { 'C:\\Py311\\python3.exe': info(3, 11, 'C:\\Py311\\python.exe') },
        });
        const found = await discoverInterpreter([], probes, { platform: 'win32' });
        assert.deepEqual(found.command, ['C:\\Py311\\python3.exe']);
        assert.deepEqual(probes.probed, ['C:\\Users\\me\\AppData\\Local\\Microsoft\\WindowsApps\\python.exe', 'C:\\Py311\\python3.exe']);
    });

    it('takes only the versions the package carries libraries for, asking py for each by name', async () => {
        const probes = fakeProbes({
            path: { py: 'C:\\Windows\\py.exe' },
            versions: {
                'C:\\Windows\\py.exe -3': info(3, 15, 'C:\\Python315\\python.exe'),
                'C:\\Windows\\py.exe -3.13': info(3, 13, 'C:\\Python313\\python.exe'),
            },
        });
        const found = await discoverInterpreter([], probes, { platform: 'win32', versions: ['3.11', '3.12', '3.13', '3.14'] });
        assert.deepEqual(found.command, ['C:\\Windows\\py.exe', '-3.13']);
        assert.deepEqual(probes.probed, ['C:\\Windows\\py.exe -3', 'C:\\Windows\\py.exe -3.14', 'C:\\Windows\\py.exe -3.13']);
    });

    it('finds python3.X on POSIX when python3 is too old', async () => {
        const probes = fakeProbes({
            path: { python3: '/usr/bin/python3', 'python3.12': '/usr/bin/python3.12' },
            versions: { '/usr/bin/python3': info(3, 9), '/usr/bin/python3.12': info(3, 12) },
        });
        const found = await discoverInterpreter([], probes, { platform: 'linux', versions: ['3.10', '3.11', '3.12'] });
        assert.deepEqual(found.command, ['/usr/bin/python3.12']);
    });

    it('says which versions fit and what to install when none does', async () => {
        const probes = fakeProbes({ path: {}, versions: {} });
        await assert.rejects(discoverInterpreter([], probes, { platform: 'win32', versions: ['3.11', '3.14'] }), (err: unknown) => {
            assert.ok(err instanceof InterpreterError);
            assert.equal(err.message, 'Recitation needs Python 3.11–3.14 and found none on the PATH. Install Python 3.11–3.14 (with the py launcher), or select one in the Python extension, or set recitation.interpreter.');
            return true;
        });
    });

    it('refuses a configured interpreter outside the carried versions', async () => {
        const probes = fakeProbes({ versions: { 'C:\\Py315\\python.exe': info(3, 15) } });
        await assert.rejects(discoverInterpreter(['C:\\Py315\\python.exe'], probes, { versions: ['3.10', '3.14'] }), (err: unknown) => {
            assert.ok(err instanceof InterpreterError);
            assert.equal(err.problem, 'configured');
            assert.match(err.message, /is 3\.15\.0; Recitation needs Python 3\.10–3\.14/);
            return true;
        });
    });
});

describe('pathCommands', () => {
    it('lists the launcher and the executables of each platform', () => {
        assert.deepEqual(pathCommands('win32', ['3.13', '3.14']), [['py', '-3'], ['py', '-3.14'], ['py', '-3.13'], ['python'], ['python3']]);
        assert.deepEqual(pathCommands('darwin', ['3.13', '3.14']), [['python3'], ['python'], ['python3.14'], ['python3.13']]);
    });

    it('describes a version range', () => {
        assert.equal(describeVersions(['3.10', '3.11', '3.14']), '3.10–3.14');
        assert.equal(describeVersions(undefined), '3.10 or newer');
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
