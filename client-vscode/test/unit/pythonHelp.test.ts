import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { InterpreterError } from '../../src/interpreter';
import { LaunchError } from '../../src/launch';
import { interpreterHelp } from '../../src/pythonHelp';

describe('interpreterHelp', () => {
    it('offers the download page and the Python extension when no Python fits', () => {
        const err = new InterpreterError('Recitation needs Python 3.10–3.14 and found none on the PATH. Install Python 3.10–3.14.', []);
        const help = interpreterHelp(err, false);
        assert.equal(help.message, err.message);
        assert.deepEqual(help.actions.map((a) => a.action), ['download-python', 'install-python-extension', 'open-settings']);
        assert.deepEqual(interpreterHelp(err, true).actions.map((a) => a.action), ['download-python', 'select-interpreter', 'open-settings']);
    });

    it('offers the same for a Python version the package has no libraries for', () => {
        const help = interpreterHelp(new LaunchError('runs on Python 3.11–3.14; the interpreter is 3.10'), true);
        assert.match(help.message, /^Recitation cannot start: runs on Python 3\.11–3\.14/);
        assert.equal(help.actions[0].action, 'download-python');
    });

    it('points to the setting and the logs when the configured interpreter fails', () => {
        const help = interpreterHelp(new InterpreterError('The Python set in recitation.interpreter does not run', ['x'], 'configured'), true);
        assert.deepEqual(help.actions.map((a) => a.action), ['open-settings', 'show-logs']);
    });
});
