// How the server process is started: which Python path to add (the libraries bundled
// in the .vsix for the interpreter's version, or a source checkout), and the arguments.
// Pure, so that it is tested without VS Code.

import * as path from 'path';

import type { PythonInfo } from './interpreter';

/** `bundled/manifest.json`, written when the .vsix is packaged. */
export interface BundleManifest {
    /** e.g. "linux-x64" */
    platform: string;
    /** Python minor versions with libraries, e.g. ["3.10", "3.11"] */
    pythons: string[];
}

export type Layout =
    | { kind: 'bundled'; manifest: BundleManifest; root: string }
    | { kind: 'checkout'; root: string }
    | { kind: 'environment' };

export interface LaunchPlan {
    command: string;
    args: string[];
    env: Record<string, string>;
}

export class LaunchError extends Error {
    constructor(message: string) {
        super(message);
        this.name = 'LaunchError';
    }
}

export function minorVersion(info: PythonInfo): string {
    return `${info.version[0]}.${info.version[1]}`;
}

/** Folder of the bundled libraries for one Python version: `libs/cp311`. */
export function libsFolder(version: string): string {
    return 'cp' + version.replace('.', '');
}

/** The PYTHONPATH entries for this layout and interpreter. */
export function pythonPathFor(layout: Layout, info: PythonInfo): string[] {
    switch (layout.kind) {
        case 'bundled': {
            const version = minorVersion(info);
            if (!layout.manifest.pythons.includes(version)) {
                throw new LaunchError(
                    `This Recitation package carries its Python libraries for Python ${layout.manifest.pythons.join(', ')} ` +
                        `(${layout.manifest.platform}); the interpreter ${info.executable || ''} is ${version}. ` +
                        'Set recitation.interpreter to one of those versions.',
                );
            }
            return [path.join(layout.root, 'libs', libsFolder(version)), path.join(layout.root, 'tool')];
        }
        case 'checkout':
            return [layout.root];
        case 'environment':
            return [];
    }
}

/** `-m server`, or `-m server --wrap -- CMD...` to run in front of another language server. */
export function serverArgs(upstreamCommand: string[]): string[] {
    const args = ['-m', 'server'];
    if (upstreamCommand.length > 0) {
        args.push('--wrap', '--', ...upstreamCommand);
    }
    return args;
}

/** `-m index_tools.cli build --default`: builds the default index in the user cache folder. */
export function buildIndexArgs(): string[] {
    return ['-m', 'index_tools.cli', 'build', '--default'];
}

export function pythonEnv(
    layout: Layout,
    info: PythonInfo,
    base: Record<string, string | undefined>,
    delimiter: string = path.delimiter,
): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(base)) {
        if (value !== undefined) {
            env[key] = value;
        }
    }
    const entries = pythonPathFor(layout, info);
    if (entries.length > 0) {
        const existing = layout.kind === 'bundled' ? [] : (env.PYTHONPATH ?? '').split(delimiter).filter((p) => p);
        env.PYTHONPATH = [...entries, ...existing].join(delimiter);
    }
    if (layout.kind === 'bundled') {
        // The bundled libraries must win over anything in the user's site-packages.
        env.PYTHONNOUSERSITE = '1';
    }
    env.PYTHONUNBUFFERED = '1';
    env.PYTHONIOENCODING = 'utf-8';
    return env;
}

/** The full command for the server. `interpreter` may carry leading arguments. */
export function planServer(
    interpreter: string[],
    info: PythonInfo,
    layout: Layout,
    upstreamCommand: string[],
    baseEnv: Record<string, string | undefined>,
): LaunchPlan {
    const [command, ...lead] = interpreter;
    return {
        command,
        args: [...lead, ...serverArgs(upstreamCommand)],
        env: pythonEnv(layout, info, baseEnv),
    };
}

export function planBuildIndex(
    interpreter: string[],
    info: PythonInfo,
    layout: Layout,
    baseEnv: Record<string, string | undefined>,
): LaunchPlan {
    const [command, ...lead] = interpreter;
    return { command, args: [...lead, ...buildIndexArgs()], env: pythonEnv(layout, info, baseEnv) };
}

/** The percentage in the last progress-bar update of a chunk of stderr, if any. */
export function parseProgress(chunk: string): number | undefined {
    const updates = chunk.split(/[\r\n]+/).filter((l) => l.trim());
    for (let i = updates.length - 1; i >= 0; i--) {
        const m = /(\d{1,3})%\|/.exec(updates[i]) ?? /(\d{1,3})%/.exec(updates[i]);
        if (m) {
            const n = Number(m[1]);
            if (n >= 0 && n <= 100) {
                return n;
            }
        }
    }
    return undefined;
}

/** The short description in a progress-bar line (tqdm's `desc: 42%|…`), if any. */
export function parseProgressLabel(chunk: string): string | undefined {
    const updates = chunk.split(/[\r\n]+/).filter((l) => l.trim());
    for (let i = updates.length - 1; i >= 0; i--) {
        const m = /^\s*([^:|]{1,60}):\s+\d{1,3}%\|/.exec(updates[i]);
        if (m) {
            return m[1].trim();
        }
    }
    return undefined;
}
