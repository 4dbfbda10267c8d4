// The .vsix files under test, opened: their entries and bundle manifest.
//
// RECITATION_TARGETS: the targets to check, separated by spaces (default: all six)
// RECITATION_VSIX: the .vsix to check when one target is checked (default: build/recitation-TARGET.vsix)

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ALL_TARGETS } from './targets';
import { listZip, readZipEntry, type ZipEntry } from './zip';

export const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');
export const targets = (process.env.RECITATION_TARGETS ?? ALL_TARGETS.join(' ')).split(/\s+/).filter((t) => t);

export function vsixPath(target: string): string {
    if (targets.length === 1 && process.env.RECITATION_VSIX) {
        return process.env.RECITATION_VSIX;
    }
    return path.join(repoRoot, 'build', `recitation-${target}.vsix`);
}

export interface Manifest {
    platform: string;
    pythons: string[];
    missing: Record<string, string[]>;
}

export interface Bundle {
    vsix: string;
    entries: ZipEntry[];
    names: Set<string>;
    manifest: Manifest;
}

export function openBundle(target: string): Bundle {
    const vsix = vsixPath(target);
    assert.ok(fs.existsSync(vsix), `${vsix} exists (run npm run package first)`);
    const entries = listZip(vsix);
    const entry = entries.find((e) => e.name === 'extension/bundled/manifest.json');
    assert.ok(entry, 'the bundle manifest is in the .vsix');
    const manifest = JSON.parse(readZipEntry(vsix, entry).toString('utf8')) as Manifest;
    return { vsix, entries, names: new Set(entries.map((e) => e.name)), manifest };
}

/** Writes the bundle's `tool` and `libs/<tag>` into `dir`; returns the `bundled` folder. */
export function extractBundle(bundle: { vsix: string; entries: ZipEntry[] }, dir: string, tag: string): string {
    for (const e of bundle.entries) {
        const inside = e.name.startsWith(`extension/bundled/libs/${tag}/`) || e.name.startsWith('extension/bundled/tool/');
        if (!inside || e.name.endsWith('/')) {
            continue;
        }
        const out = path.join(dir, e.name);
        fs.mkdirSync(path.dirname(out), { recursive: true });
        fs.writeFileSync(out, readZipEntry(bundle.vsix, e));
    }
    return path.join(dir, 'extension', 'bundled');
}
