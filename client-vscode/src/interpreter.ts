// Which Python runs the server: the `recitation.interpreter` setting, else the
// interpreter selected in the Python extension, else one on the PATH: on Windows the `py`
// launcher and `python.exe`, elsewhere `python3`, `python` and `python3.X`.
//
// Pure apart from the probes it is given, so that it is tested without VS Code.

export type InterpreterSource = 'setting' | 'python-extension' | 'path';

export interface PythonInfo {
    /** major, minor, micro */
    version: [number, number, number];
    executable: string;
}

export interface Interpreter {
    /** The command and its leading arguments, e.g. `["/usr/bin/python3"]`. */
    command: string[];
    source: InterpreterSource;
    info: PythonInfo;
}

export const MIN_PYTHON: [number, number] = [3, 10];

export interface DiscoveryProbes {
    /** The interpreter that the Python extension has selected for this folder, if it is installed. */
    pythonExtension(): Promise<string[] | undefined>;
    /** The full path of a program on the PATH, or undefined. */
    which(program: string): Promise<string | undefined>;
    /** Runs the interpreter to learn its version; rejects when it does not run. */
    probe(command: string[]): Promise<PythonInfo>;
}

/** `configured`: the setting's interpreter does not fit; `not-found`: no Python fits. */
export type InterpreterProblem = 'configured' | 'not-found';

export class InterpreterError extends Error {
    constructor(
        message: string,
        readonly tried: string[],
        readonly problem: InterpreterProblem = 'not-found',
    ) {
        super(message);
        this.name = 'InterpreterError';
    }
}

export interface DiscoveryOptions {
    /** Default: this machine's. */
    platform?: NodeJS.Platform;
    /** Python minor versions the server can run on (the bundled libraries), newest last. Default: MIN_PYTHON or newer. */
    versions?: string[];
}

/** "3.10–3.14", "3.10 or newer" */
export function describeVersions(versions: string[] | undefined): string {
    if (!versions || versions.length === 0) {
        return `${MIN_PYTHON.join('.')} or newer`;
    }
    return versions.length === 1 ? versions[0] : `${versions[0]}–${versions[versions.length - 1]}`;
}

/** The programs (with leading arguments) tried on the PATH, in order. */
export function pathCommands(platform: NodeJS.Platform, versions: string[] = []): string[][] {
    const newestFirst = [...versions].reverse();
    if (platform === 'win32') {
        // The py launcher picks the newest Python 3, or the one asked for with -3.X.
        return [['py', '-3'], ...newestFirst.map((v) => ['py', `-${v}`]), ['python'], ['python3']];
    }
    return [['python3'], ['python'], ...newestFirst.map((v) => [`python${v}`])];
}

/** The Python snippet that prints the interpreter's version and path as JSON. */
export const PROBE_SCRIPT = 'import json, sys; print(json.dumps({"version": list(sys.version_info[:3]), "executable": sys.executable}))';

/** Parses the output of PROBE_SCRIPT. */
export function parseProbeOutput(stdout: string): PythonInfo {
    const line = stdout.trim().split(/\r?\n/).pop() ?? '';
    const data = JSON.parse(line) as { version?: unknown; executable?: unknown };
    const version = data.version;
    if (!Array.isArray(version) || version.length < 2 || !version.every((v) => typeof v === 'number')) {
        throw new Error(`unexpected interpreter answer: ${line}`);
    }
    return {
        version: [version[0], version[1], version[2] ?? 0],
        executable: typeof data.executable === 'string' ? data.executable : '',
    };
}

export function isSupported(info: PythonInfo, min: [number, number] = MIN_PYTHON, versions?: string[]): boolean {
    const [major, minor] = info.version;
    if (versions && versions.length > 0) {
        return versions.includes(`${major}.${minor}`);
    }
    return major > min[0] || (major === min[0] && minor >= min[1]);
}

export function formatVersion(info: PythonInfo): string {
    return info.version.join('.');
}

/**
 * Finds the interpreter. A configured interpreter that fails is an error (the user asked
 * for it); the Python extension's choice falls through to the PATH when it does not fit
 * or does not run.
 */
export async function discoverInterpreter(
    configured: string[],
    probes: DiscoveryProbes,
    options: DiscoveryOptions = {},
): Promise<Interpreter> {
    const platform = options.platform ?? process.platform;
    const wanted = describeVersions(options.versions);
    const fits = (info: PythonInfo) => isSupported(info, MIN_PYTHON, options.versions);
    const tried: string[] = [];
    if (configured.length > 0) {
        let info: PythonInfo;
        try {
            info = await probes.probe(configured);
        } catch (err) {
            throw new InterpreterError(
                `The Python set in recitation.interpreter (${configured.join(' ')}) does not run: ${errorText(err)}`,
                [configured.join(' ')],
                'configured',
            );
        }
        if (!fits(info)) {
            throw new InterpreterError(
                `The Python set in recitation.interpreter is ${formatVersion(info)}; Recitation needs Python ${wanted}.`,
                [configured.join(' ')],
                'configured',
            );
        }
        return { command: configured, source: 'setting', info };
    }

    let fromExtension: string[] | undefined;
    try {
        fromExtension = await probes.pythonExtension();
    } catch {
        fromExtension = undefined;
    }
    if (fromExtension && fromExtension.length > 0) {
        tried.push(fromExtension.join(' '));
        try {
            const info = await probes.probe(fromExtension);
            if (fits(info)) {
                return { command: fromExtension, source: 'python-extension', info };
            }
        } catch {
            // fall through to the PATH
        }
    }

    for (const [program, ...lead] of pathCommands(platform, options.versions)) {
        const found = await probes.which(program);
        if (!found) {
            continue;
        }
        const command = [found, ...lead];
        tried.push(command.join(' '));
        try {
            const info = await probes.probe(command);
            if (fits(info)) {
                return { command, source: 'path', info };
            }
        } catch {
            // try the next one
        }
    }
    throw new InterpreterError(
        `Recitation needs Python ${wanted} and found none` + (tried.length ? ` (tried: ${tried.join(', ')})` : ' on the PATH') +
            `. Install Python ${wanted}${platform === 'win32' ? ' (with the py launcher)' : ''}, ` +
            'or select one in the Python extension, or set recitation.interpreter.',
        tried,
    );
}

function errorText(err: unknown): string {
    return err instanceof Error ? err.message : String(err);
}
