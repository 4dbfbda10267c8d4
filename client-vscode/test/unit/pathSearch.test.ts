import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { envValue, findOnPath, pathCandidates, windowsExtensions, type Host } from '../../src/pathSearch';

const win32: Host = { platform: 'win32', path: path.win32 };
const linux: Host = { platform: 'linux', path: path.posix };

describe('pathCandidates', () => {
    it('splits a Windows Path (any spelling) at ; and adds the runnable PATHEXT extensions', () => {
        const env = { Path: 'C:\\Windows;"C:\\Program Files\\Python312";', PATHEXT: '.COM;.EXE;.BAT;.CMD;.VBS' };
        assert.deepEqual(pathCandidates('py', env, win32), [
            'C:\\Windows\\py.com',
            'C:\\Windows\\py.exe',
            'C:\\Program Files\\Python312\\py.com',
            'C:\\Program Files\\Python312\\py.exe',
        ]);
    });

    it('keeps a program name that already has its extension', () => {
        assert.deepEqual(pathCandidates('python.exe', { PATH: 'C:\\Py' }, win32), ['C:\\Py\\python.exe']);
    });

    it('never tries .bat or .cmd shims, which cannot run without a shell', () => {
        assert.deepEqual(windowsExtensions({ PATHEXT: '.BAT;.CMD' }), ['.exe']);
        assert.deepEqual(windowsExtensions({}), ['.com', '.exe']);
    });

    it('splits a POSIX PATH at : and takes the name as it is', () => {
        assert.deepEqual(pathCandidates('python3', { PATH: '/usr/local/bin:/usr/bin' }, linux), ['/usr/local/bin/python3', '/usr/bin/python3']);
        assert.deepEqual(pathCandidates('python3', { Path: '/usr/bin' }, linux), [], 'names are case-sensitive on POSIX');
    });
});

describe('findOnPath', () => {
    it('returns the first candidate that is a program', async () => {
        const files = new Set(['C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Launcher\\py.exe']);
        const env = { PATH: 'C:\\Windows\\System32;C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Launcher' };
        const found = await findOnPath('py', env, win32, (f) => Promise.resolve(files.has(f)));
        assert.equal(found, 'C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Launcher\\py.exe');
        assert.equal(await findOnPath('python3', env, win32, (f) => Promise.resolve(files.has(f))), undefined);
    });
});

describe('envValue', () => {
    it('reads names case-insensitively on Windows only', () => {
        assert.equal(envValue({ Path: 'x' }, 'PATH', 'win32'), 'x');
        assert.equal(envValue({ Path: 'x' }, 'PATH', 'darwin'), undefined);
    });
});
