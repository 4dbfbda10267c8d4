// Running Python from the extension host: find programs on the PATH, probe an interpreter,
// ask the Python extension for the selected interpreter.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as vscode from 'vscode';

import { PROBE_SCRIPT, parseProbeOutput, type PythonInfo } from './interpreter';
import { findOnPath, thisHost } from './pathSearch';

/** A file that may be run: on Windows any file (its extension decides), elsewhere one with an executable bit. */
async function isProgram(file: string): Promise<boolean> {
    try {
        const stat = await fs.promises.stat(file);
        if (!stat.isFile()) {
            return false;
        }
        if (thisHost.platform !== 'win32') {
            await fs.promises.access(file, fs.constants.X_OK);
        }
        return true;
    } catch {
        return false;
    }
}

export function which(program: string): Promise<string | undefined> {
    return findOnPath(program, process.env, thisHost, isProgram);
}

export function probe(command: string[], env?: NodeJS.ProcessEnv): Promise<PythonInfo> {
    return new Promise((resolve, reject) => {
        const [program, ...lead] = command;
        const options = { timeout: 20_000, env: env ?? process.env, windowsHide: true };
        execFile(program, [...lead, '-c', PROBE_SCRIPT], options, (err, stdout, stderr) => {
            if (err) {
                reject(new Error((stderr || err.message).trim()));
                return;
            }
            try {
                resolve(parseProbeOutput(stdout));
            } catch (parseErr) {
                reject(parseErr instanceof Error ? parseErr : new Error(String(parseErr)));
            }
        });
    });
}

// The parts of the Python extension's API that are used here (ms-python.python).
interface PythonEnvironmentsApi {
    getActiveEnvironmentPath(resource?: vscode.Uri | vscode.WorkspaceFolder): { path: string; id?: string };
    resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
    environments?: PythonEnvironmentsApi;
    settings?: {
        getExecutionDetails?(resource?: vscode.Uri): { execCommand: string[] | undefined };
    };
}

const PYTHON_EXTENSION_ID = 'ms-python.python';

export function pythonExtensionInstalled(): boolean {
    return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

async function pythonApi(): Promise<PythonExtensionApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
    if (!extension) {
        return undefined;
    }
    if (!extension.isActive) {
        await extension.activate();
    }
    return extension.exports;
}

/** The interpreter the Python extension has selected for `resource`, if it is installed. */
export async function pythonExtensionInterpreter(resource?: vscode.Uri): Promise<string[] | undefined> {
    const api = await pythonApi();
    if (!api) {
        return undefined;
    }
    if (api.environments) {
        const active = api.environments.getActiveEnvironmentPath(resource);
        const resolved = await api.environments.resolveEnvironment(active);
        const exe = resolved?.executable.uri?.fsPath;
        if (exe) {
            return [exe];
        }
    }
    const details = api.settings?.getExecutionDetails?.(resource);
    return details?.execCommand && details.execCommand.length > 0 ? details.execCommand : undefined;
}

/** Calls `listener` when the Python extension's selected interpreter changes. */
export async function onPythonInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
    try {
        const api = await pythonApi();
        return api?.environments?.onDidChangeActiveEnvironmentPath(() => listener());
    } catch {
        return undefined;
    }
}
