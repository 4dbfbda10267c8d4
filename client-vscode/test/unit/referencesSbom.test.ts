import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { describe, it } from 'node:test';

import type { LaunchPlan } from '../../src/launch';
import { SbomExportError, exportSbom } from '../../src/referencesSbom';

/** A stand-in for `python -m index_tools.cli references LOG`: node running `script`. */
function fakeCli(script: string, seen: string[]): (logFile: string) => LaunchPlan {
    return (logFile) => {
        seen.push(logFile);
        return { command: process.execPath, args: ['-e', script, logFile], env: { ...process.env } as Record<string, string> };
    };
}

const log = JSON.stringify({ format: 'recitation-code-references', version: 1, references: [{ uri: 'file:///p/a.py' }] });

describe('exportSbom', () => {
    it('gives the command a copy of the log and returns what it prints, the notes apart', async () => {
        const seen: string[] = [];
        const script = [
            "const fs = require('fs');",
            "const refs = JSON.parse(fs.readFileSync(process.argv[1], 'utf8')).references;",
            "process.stdout.write('{\"spdxVersion\": \"SPDX-2.3\", \"n\": ' + refs.length + ', \"cwd\": ' + JSON.stringify(process.cwd()) + '}');",
            "console.error('left out of the SBOM: a.py: the logged quote (entry 1) is no longer in the file');",
        ].join('\n');
        const cwd = fs.realpathSync(os.tmpdir());
        const result = await exportSbom(fakeCli(script, seen), log, cwd);
        assert.deepEqual(JSON.parse(result.text), { spdxVersion: 'SPDX-2.3', n: 1, cwd });
        assert.deepEqual(result.notes, ['left out of the SBOM: a.py: the logged quote (entry 1) is no longer in the file']);
        assert.equal(fs.existsSync(seen[0]), false, 'the temporary copy is removed');
    });

    it('fails with the command\'s last line when it fails', async () => {
        const seen: string[] = [];
        const script = "console.error('recitation-index: LOG: not a code references log'); process.exit(2);";
        await assert.rejects(exportSbom(fakeCli(script, seen), log, os.tmpdir()), (err: unknown) => {
            assert.ok(err instanceof SbomExportError);
            assert.equal(err.message, 'recitation-index: LOG: not a code references log');
            return true;
        });
        assert.equal(fs.existsSync(seen[0]), false);
    });

    it('says when the interpreter cannot be started', async () => {
        const plan = () => ({ command: '/nonexistent/python3', args: [], env: {} });
        await assert.rejects(exportSbom(plan, log, os.tmpdir()), /cannot run \/nonexistent\/python3/);
    });
});
