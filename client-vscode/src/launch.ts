// How the server process is started: which Python path to add (the libraries bundled
// in the .vsix for the interpreter's version, or a source checkout), and the arguments.
// Pure, so that it is tested without VS Code.

import { describeVersions, type PythonInfo } from './interpreter';
import { thisHost, type Host } from './pathSearch';

/** `bundled/manifest.json`, written when the .vsix is packaged. */
export interface BundleManifest {
    /** e.g. "linux-x64" */
    platform: string;
    /** Python minor versions with libraries, e.g. ["3.10", "3.11"] */
    pythons: string[];
    /** Python versions left out, with the requirements that publish no build for them. */
    missing?: Record<string, string[]>;
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
export function pythonPathFor(layout: Layout, info: PythonInfo, host: Host = thisHost): string[] {
    switch (layout.kind) {
        case 'bundled': {
            const version = minorVersion(info);
            if (!layout.manifest.pythons.includes(version)) {
                const missing = layout.manifest.missing?.[version];
                throw new LaunchError(
                    `This Recitation package (${layout.manifest.platform}) runs on Python ${describeVersions(layout.manifest.pythons)}; ` +
                        `the interpreter ${info.executable ? info.executable + ' ' : ''}is ${version}` +
                        (missing ? ` (${missing.map((r) => r.split(/[<>=!~ ]/)[0]).join(', ')} publish no build of it for ${layout.manifest.platform})` : '') +
                        '. Install one of those versions, or set recitation.interpreter to it.',
                );
            }
            return [host.path.join(layout.root, 'libs', libsFolder(version)), host.path.join(layout.root, 'tool')];
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

/** Sets a variable, replacing any other spelling of its name on Windows (names are case-insensitive there). */
function setVariable(env: Record<string, string>, name: string, value: string, platform: NodeJS.Platform): void {
    if (platform === 'win32') {
        for (const key of Object.keys(env)) {
            if (key !== name && key.toUpperCase() === name) {
                delete env[key];
            }
        }
    }
    env[name] = value;
}

export function pythonEnv(
    layout: Layout,
    info: PythonInfo,
    base: Record<string, string | undefined>,
    host: Host = thisHost,
): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(base)) {
        if (value !== undefined) {
            env[key] = value;
        }
    }
    const entries = pythonPathFor(layout, info, host);
    if (entries.length > 0) {
        const delimiter = host.path.delimiter;
        const current = Object.keys(env).find((k) => (host.platform === 'win32' ? k.toUpperCase() : k) === 'PYTHONPATH');
        const existing = layout.kind === 'bundled' || !current ? [] : env[current].split(delimiter).filter((p) => p);
        setVariable(env, 'PYTHONPATH', [...entries, ...existing].join(delimiter), host.platform);
    }
    if (layout.kind === 'bundled') {
        // The bundled libraries must win over anything in the user's site-packages.
        setVariable(env, 'PYTHONNOUSERSITE', '1', host.platform);
    }
    setVariable(env, 'PYTHONUNBUFFERED', '1', host.platform);
    setVariable(env, 'PYTHONIOENCODING', 'utf-8', host.platform);
    return env;
}

/** The full command for the server. `interpreter` may carry leading arguments. */
export function planServer(
    interpreter: string[],
    info: PythonInfo,
    layout: Layout,
    upstreamCommand: string[],
    baseEnv: Record<string, string | undefined>,
    host: Host = thisHost,
): LaunchPlan {
    const [command, ...lead] = interpreter;
    return {
        command,
        args: [...lead, ...serverArgs(upstreamCommand)],
        env: pythonEnv(layout, info, baseEnv, host),
    };
}

export function planBuildIndex(
    interpreter: string[],
    info: PythonInfo,
    layout: Layout,
    baseEnv: Record<string, string | undefined>,
    host: Host = thisHost,
): LaunchPlan {
    const [command, ...lead] = interpreter;
    return { command, args: [...lead, ...buildIndexArgs()], env: pythonEnv(layout, info, baseEnv, host) };
}

/** `-m index_tools.cli references LOG --format F --root DIR`: the references log as an SBOM. */
export function referencesSbomArgs(logFile: string, format: string, root: string): string[] {
    return ['-m', 'index_tools.cli', 'references', logFile, '--format', format, '--root', root];
}

export function planReferencesSbom(
    interpreter: string[],
    info: PythonInfo,
    layout: Layout,
    logFile: string,
    format: string,
    root: string,
    baseEnv: Record<string, string | undefined>,
    host: Host = thisHost,
): LaunchPlan {
    const [command, ...lead] = interpreter;
    return { command, args: [...lead, ...referencesSbomArgs(logFile, format, root)], env: pythonEnv(layout, info, baseEnv, host) };
}

/**
 * How to stop the index build: SIGINT on POSIX so that Python cleans up what it began (it
 * raises KeyboardInterrupt); Windows has no signals for that, and Node ends the process.
 */
export function cancelSignal(platform: NodeJS.Platform): NodeJS.Signals | undefined {
    return platform === 'win32' ? undefined : 'SIGINT';
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
