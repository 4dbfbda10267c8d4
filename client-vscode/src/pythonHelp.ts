// What the user is told when no Python can run the server, and the buttons that help:
// the download page, the Python extension (to install it or select an interpreter), the
// setting. Pure: the caller shows it and carries out the chosen action.

import { InterpreterError } from './interpreter';
import { LaunchError } from './launch';

export type HelpAction = 'download-python' | 'install-python-extension' | 'select-interpreter' | 'open-settings' | 'show-logs';

export interface InterpreterHelp {
    message: string;
    /** Button titles, in order, with what each does. */
    actions: { title: string; action: HelpAction }[];
}

export const PYTHON_DOWNLOAD_URL = 'https://www.python.org/downloads/';

/** The message and buttons for an error met while finding or starting the interpreter. */
export function interpreterHelp(err: unknown, pythonExtensionInstalled: boolean): InterpreterHelp {
    const text = err instanceof Error ? err.message : String(err);
    const fixable = (err instanceof InterpreterError && err.problem === 'not-found') || err instanceof LaunchError;
    if (!fixable) {
        return {
            message: `Recitation cannot start: ${text}`,
            actions: [
                { title: 'Open Settings', action: 'open-settings' },
                { title: 'Show Logs', action: 'show-logs' },
            ],
        };
    }
    return {
        message: err instanceof InterpreterError ? text : `Recitation cannot start: ${text}`,
        actions: [
            { title: 'Download Python', action: 'download-python' },
            pythonExtensionInstalled
                ? { title: 'Select Interpreter', action: 'select-interpreter' }
                : { title: 'Install Python Extension', action: 'install-python-extension' },
            { title: 'Open Settings', action: 'open-settings' },
        ],
    };
}
