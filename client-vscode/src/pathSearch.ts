// Finding a program on the PATH the way the platform does: `;` and PATHEXT on Windows
// (where the variable may be spelled `Path`), `:` and the executable bit elsewhere.
// Pure apart from the file check it is given, so that Windows is tested on any machine.

import * as path from 'path';

export interface Host {
    platform: NodeJS.Platform;
    /** `path.win32` or `path.posix` */
    path: path.PlatformPath;
}

export const thisHost: Host = { platform: process.platform, path };

/** An environment variable by name, case-insensitively on Windows. */
export function envValue(env: Record<string, string | undefined>, name: string, platform: NodeJS.Platform): string | undefined {
    if (platform !== 'win32') {
        return env[name];
    }
    const key = Object.keys(env).find((k) => k.toUpperCase() === name.toUpperCase());
    return key === undefined ? undefined : env[key];
}

/**
 * Extensions tried on Windows: PATHEXT's programs that run without a shell. `.bat` and
 * `.cmd` (e.g. shims of version managers) would need one, which mangles arguments.
 */
export function windowsExtensions(env: Record<string, string | undefined>): string[] {
    const pathext = (envValue(env, 'PATHEXT', 'win32') ?? '.COM;.EXE').split(';');
    const runnable = pathext.map((e) => e.trim().toLowerCase()).filter((e) => e === '.exe' || e === '.com');
    return runnable.length > 0 ? [...new Set(runnable)] : ['.exe'];
}

/** The candidate files for `program`, in the order the platform searches them. */
export function pathCandidates(program: string, env: Record<string, string | undefined>, host: Host): string[] {
    const dirs = (envValue(env, 'PATH', host.platform) ?? '')
        .split(host.path.delimiter)
        .map((d) => (host.platform === 'win32' ? d.replace(/^"(.*)"$/, '$1') : d))
        .filter((d) => d.trim());
    if (host.platform !== 'win32') {
        return dirs.map((d) => host.path.join(d, program));
    }
    const exts = windowsExtensions(env);
    const hasExt = exts.includes(host.path.extname(program).toLowerCase());
    return dirs.flatMap((d) => (hasExt ? [host.path.join(d, program)] : exts.map((e) => host.path.join(d, program + e))));
}

/** The full path of `program` on the PATH, or undefined. `isProgram` checks one file. */
export async function findOnPath(
    program: string,
    env: Record<string, string | undefined>,
    host: Host,
    isProgram: (file: string) => Promise<boolean>,
): Promise<string | undefined> {
    for (const candidate of pathCandidates(program, env, host)) {
        if (await isProgram(candidate)) {
            return candidate;
        }
    }
    return undefined;
}
