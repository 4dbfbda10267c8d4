import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
    ATTRIBUTION_STYLES,
    COMPLETION_MODES,
    DEFAULTS,
    KINDS,
    SERVER_KEYS,
    UNDERLINES,
    expandVariables,
    resolveConfigurationItem,
    resolveIndexPath,
    resolveLaunchSettings,
    resolveServerSettings,
    type ConfigReader,
} from '../../src/settings';

function reader(values: Record<string, unknown>): ConfigReader {
    return { get: <T>(key: string) => values[key] as T | undefined };
}

const ctx = { workspaceFolder: '/work/project', userHome: '/home/ada' };

describe('resolveServerSettings', () => {
    it('gives the defaults when nothing is set', () => {
        assert.deepEqual(resolveServerSettings(reader({}), ctx), DEFAULTS);
    });

    it('takes the values that are set for the folder', () => {
        const settings = resolveServerSettings(
            reader({
                enable: false, minTokens: 40, contextTokens: 0, minInsertWords: 5, scanOnOpen: true, completionMode: 'block',
                attributionStyle: 'spdx', underline: 'firstLine', workspaceIndex: 'auto', watchFiles: false,
            }),
            ctx,
        );
        assert.equal(settings.workspaceIndex, 'auto');
        assert.equal(settings.watchFiles, false);
        assert.equal(settings.enable, false);
        assert.equal(settings.minTokens, 40);
        assert.equal(settings.contextTokens, 0);
        assert.equal(settings.minInsertWords, 5);
        assert.equal(settings.scanOnOpen, true);
        assert.equal(settings.completionMode, 'block');
        assert.equal(settings.attributionStyle, 'spdx');
        assert.equal(settings.underline, 'firstLine');
    });

    it('falls back to the default for invalid values, never throws', () => {
        const settings = resolveServerSettings(
            reader({
                enable: 'yes', minTokens: -3, contextTokens: Number.NaN, minInsertWords: '10', completionMode: 'loud', severity: 'warning',
                attributionStyle: 'SPDX', underline: 'first', workspaceIndex: 'always', watchFiles: 'no',
            }),
            ctx,
        );
        assert.equal(settings.workspaceIndex, 'offer');
        assert.equal(settings.watchFiles, true);
        assert.equal(settings.enable, true);
        assert.equal(settings.minTokens, 60);
        assert.equal(settings.contextTokens, 200);
        assert.equal(settings.minInsertWords, 10);
        assert.equal(settings.completionMode, 'warn');
        assert.deepEqual(settings.severity, DEFAULTS.severity);
        assert.equal(settings.attributionStyle, 'comment');
        assert.equal(settings.underline, 'all');
    });

    it('merges a partial severity map over the defaults, per kind', () => {
        const settings = resolveServerSettings(reader({ severity: { recitation: 'error', license: 'off', idiom: 'loud' } }), ctx);
        assert.deepEqual(settings.severity, { recitation: 'error', license: 'off', repetitive: 'hint', inventory: 'hint', idiom: 'hint' });
    });

    it('rounds fractional numbers down', () => {
        assert.equal(resolveServerSettings(reader({ minTokens: 61.7 }), ctx).minTokens, 61);
    });
});

describe('index paths', () => {
    it('keeps an empty path empty (the default index)', () => {
        assert.equal(resolveIndexPath('', ctx), '');
        assert.equal(resolveIndexPath('   ', ctx), '');
    });

    it('expands ${workspaceFolder}, ${userHome} and ~', () => {
        assert.equal(resolveIndexPath('${workspaceFolder}/.index', ctx), '/work/project/.index');
        assert.equal(resolveIndexPath('${userHome}/indexes/py', ctx), '/home/ada/indexes/py');
        assert.equal(resolveIndexPath('~/idx', ctx), '/home/ada/idx');
    });

    it('works with Windows folders: ~\\, backslashes, drive letters', () => {
        const win = { workspaceFolder: 'C:\\Users\\ada\\proj', userHome: 'C:\\Users\\ada' };
        assert.equal(resolveIndexPath('~\\indexes\\py', win), 'C:\\Users\\ada\\indexes\\py');
        assert.equal(resolveIndexPath('~/indexes', win), 'C:\\Users\\ada/indexes');
        assert.equal(resolveIndexPath('.recitation\\index', win), 'C:\\Users\\ada\\proj\\.recitation\\index');
        assert.equal(resolveIndexPath('.\\idx', win), 'C:\\Users\\ada\\proj\\idx');
        assert.equal(resolveIndexPath('D:\\idx', win), 'D:\\idx');
        assert.equal(resolveIndexPath('\\\\server\\share\\idx', win), '\\\\server\\share\\idx');
    });

    it('takes a relative path from the workspace folder', () => {
        assert.equal(resolveIndexPath('.recitation/index', ctx), '/work/project/.recitation/index');
        assert.equal(resolveIndexPath('./idx', ctx), '/work/project/idx');
    });

    it('leaves a relative path alone without a folder, and absolute paths always', () => {
        assert.equal(resolveIndexPath('idx', { userHome: '/home/ada' }), 'idx');
        assert.equal(resolveIndexPath('/srv/index', ctx), '/srv/index');
        assert.equal(resolveIndexPath('C:\\index', ctx), 'C:\\index');
    });

    it('leaves an index service URL as it is', () => {
        assert.equal(resolveIndexPath(' https://index.example/recitation ', ctx), 'https://index.example/recitation');
        assert.equal(resolveIndexPath('http://127.0.0.1:8765', ctx), 'http://127.0.0.1:8765');
        const settings = resolveServerSettings(reader({ remoteIndex: 'https://index.example' }), ctx);
        assert.equal(settings.remoteIndex, 'https://index.example');
        assert.ok(SERVER_KEYS.includes('remoteIndex'));
    });

    it('expands ${env:NAME} and leaves ${workspaceFolder} without a folder as it is', () => {
        assert.equal(expandVariables('${env:IDX}/a', { userHome: '/h' }, { IDX: '/data' }), '/data/a');
        assert.equal(expandVariables('${workspaceFolder}/a', { userHome: '/h' }), '${workspaceFolder}/a');
    });
});

describe('resolveLaunchSettings', () => {
    it('accepts an array, a single string, or nothing for the interpreter', () => {
        assert.deepEqual(resolveLaunchSettings(reader({ interpreter: ['~/venv/bin/python', '-X', 'utf8'] }), ctx).interpreter, [
            '/home/ada/venv/bin/python', '-X', 'utf8',
        ]);
        assert.deepEqual(resolveLaunchSettings(reader({ interpreter: '/usr/bin/python3' }), ctx).interpreter, ['/usr/bin/python3']);
        assert.deepEqual(resolveLaunchSettings(reader({}), ctx).interpreter, []);
        assert.deepEqual(resolveLaunchSettings(reader({ interpreter: [1, '', 'py'] }), ctx).interpreter, ['py']);
    });

    it('reads the upstream command', () => {
        assert.deepEqual(resolveLaunchSettings(reader({ upstreamCommand: ['pylsp', '-v'] }), ctx).upstreamCommand, ['pylsp', '-v']);
    });
});

describe('resolveConfigurationItem', () => {
    const resolved = resolveServerSettings(reader({ indexPath: 'idx' }), ctx);

    it('answers the whole section with resolved values', () => {
        const answer = resolveConfigurationItem('recitation', { indexPath: 'idx', interpreter: [] }, resolved) as Record<string, unknown>;
        assert.equal(answer.indexPath, '/work/project/idx');
        assert.deepEqual(answer.interpreter, []);
        assert.equal(answer.minTokens, 60);
    });

    it('answers one key', () => {
        assert.equal(resolveConfigurationItem('recitation.indexPath', 'idx', resolved), '/work/project/idx');
        assert.deepEqual(resolveConfigurationItem('recitation.interpreter', ['x'], resolved), ['x']);
    });

    it('leaves other sections alone', () => {
        assert.deepEqual(resolveConfigurationItem('python', { a: 1 }, resolved), { a: 1 });
        assert.equal(resolveConfigurationItem(undefined, 5, resolved), 5);
    });
});

describe('the manifest', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
        contributes: { configuration: { properties: Record<string, { default?: unknown; scope?: string; properties?: object }> } };
        engines: { vscode: string };
        devDependencies: Record<string, string>;
    };
    const props = manifest.contributes.configuration.properties;

    it('contributes every server setting with the same default, scoped per folder', () => {
        for (const key of SERVER_KEYS) {
            const prop = props[`recitation.${key}`];
            assert.ok(prop, `recitation.${key} is contributed`);
            assert.deepEqual(prop.default, DEFAULTS[key], `default of recitation.${key}`);
            assert.equal(prop.scope, 'resource', `scope of recitation.${key}`);
        }
    });

    it('contributes the launch settings and the trace level', () => {
        for (const key of ['recitation.interpreter', 'recitation.upstreamCommand', 'recitation.trace.server']) {
            assert.ok(props[key], key);
        }
    });

    it('offers exactly the values the server accepts for the enumerations', () => {
        const enumOf = (key: string) => (props[`recitation.${key}`] as { enum?: string[] }).enum;
        assert.deepEqual(enumOf('attributionStyle'), [...ATTRIBUTION_STYLES]);
        assert.deepEqual(enumOf('underline'), [...UNDERLINES]);
        assert.deepEqual(enumOf('completionMode'), [...COMPLETION_MODES]);
    });

    it('lists every kind under severity', () => {
        assert.deepEqual(Object.keys(props['recitation.severity'].properties ?? {}).sort(), [...KINDS].sort());
    });

    it('does not use a newer VS Code API than engines.vscode allows', () => {
        const engine = manifest.engines.vscode.replace(/^\^/, '');
        assert.equal(manifest.devDependencies['@types/vscode'], engine);
    });
});
