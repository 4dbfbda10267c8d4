// Which Python runs the server: the `recitation.interpreter` setting, else the
// interpreter selected in the Python extension, else `python3` (or `python`) on the PATH.
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

export class InterpreterError extends Error {
    constructor(message: string, readonly tried: string[]) {
        super(message);
        this.name = 'InterpreterError';
    }
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

export function isSupported(info: PythonInfo, min: [number, number] = MIN_PYTHON): boolean {
    const [major, minor] = info.version;
    return major > min[0] || (major === min[0] && minor >= min[1]);
}

export function formatVersion(info: PythonInfo): string {
    return info.version.join('.');
}

/**
 * Finds the interpreter. A configured interpreter that fails is an error (the user asked
 * for it); the Python extension's choice falls through to the PATH when it is too old or
 * does not run.
 */
export async function discoverInterpreter(configured: string[], probes: DiscoveryProbes): Promise<Interpreter> {
    const tried: string[] = [];
    if (configured.length > 0) {
        let info: PythonInfo;
        try {
            info = await probes.probe(configured);
        } catch (err) {
            throw new InterpreterError(
                `The Python set in recitation.interpreter (${configured.join(' ')}) does not run: ${errorText(err)}`,
                [configured.join(' ')],
            );
        }
        if (!isSupported(info)) {
            throw new InterpreterError(
                `The Python set in recitation.interpreter is ${formatVersion(info)}; Recitation needs ${MIN_PYTHON.join('.')} or newer.`,
                [configured.join(' ')],
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
            if (isSupported(info)) {
                return { command: fromExtension, source: 'python-extension', info };
            }
        } catch {
            // fall through to the PATH
        }
    }

    for (const program of ['python3', 'python']) {
        const found = await probes.which(program);
        if (!found) {
            continue;
        }
        tried.push(found);
        try {
            const info = await probes.probe([found]);
            if (isSupported(info)) {
                return { command: [found], source: 'path', info };
            }
        } catch {
            // try the next one
        }
    }
    throw new InterpreterError(
        `No Python ${MIN_PYTHON.join('.')}+ found` + (tried.length ? ` (tried: ${tried.join(', ')})` : '') +
            '. Install Python 3.10 or newer, or set recitation.interpreter.',
        tried,
    );
}

function errorText(err: unknown): string {
    return err instanceof Error ? err.message : String(err);
}
