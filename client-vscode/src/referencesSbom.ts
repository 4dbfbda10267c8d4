// The code references log as an SBOM (SPDX 2.3, CycloneDX 1.6): the log's JSON export is
// written to a temporary file and given to `recitation-index references`, run with the
// server's Python, so that the document comes from the same writer as `check --format
// spdx|cyclonedx`. No VS Code here, so that it is tested on its own.

import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import type { LaunchPlan } from './launch';

export interface SbomResult {
    /** The document. */
    text: string;
    /** What the command said on stderr: quotes left out (no longer in their file), counts. */
    notes: string[];
}

export class SbomExportError extends Error {
    constructor(message: string) {
        super(message);
        this.name = 'SbomExportError';
    }
}

/** Runs the plan made for a temporary copy of `logJson` in `cwd`; the document it prints. */
export function exportSbom(makePlan: (logFile: string) => LaunchPlan, logJson: string, cwd: string): Promise<SbomResult> {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'recitation-references-'));
    const logFile = path.join(folder, 'code-references.json');
    const cleanUp = () => fs.rmSync(folder, { recursive: true, force: true });
    try {
        fs.writeFileSync(logFile, logJson, 'utf8');
    } catch (err) {
        cleanUp();
        return Promise.reject(new SbomExportError(`cannot write ${logFile}: ${err instanceof Error ? err.message : String(err)}`));
    }
    const plan = makePlan(logFile);
    return new Promise<SbomResult>((resolve, reject) => {
        const child = spawn(plan.command, plan.args, { env: plan.env, cwd, windowsHide: true });
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        child.stdout.on('data', (data: Buffer) => out.push(data));
        child.stderr.on('data', (data: Buffer) => err.push(data));
        child.on('error', (e) => {
            cleanUp();
            reject(new SbomExportError(`cannot run ${plan.command}: ${e.message}`));
        });
        child.on('close', (code) => {
            cleanUp();
            const notes = Buffer.concat(err).toString('utf8').split(/\r?\n/).filter((l) => l.trim());
            if (code === 0) {
                resolve({ text: Buffer.concat(out).toString('utf8'), notes });
            } else {
                reject(new SbomExportError(notes[notes.length - 1] ?? `recitation-index exited with ${code}`));
            }
        });
    });
}
