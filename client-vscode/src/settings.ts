// Settings of the `recitation` section, resolved per workspace folder.
//
// Pure: reads through a small `ConfigReader` so that it is tested without VS Code.

export const SECTION = 'recitation';

export type Kind = 'recitation' | 'license' | 'repetitive' | 'inventory' | 'idiom';
export type SeverityName = 'error' | 'warning' | 'information' | 'hint' | 'off';
export type CompletionMode = 'warn' | 'block' | 'off';
export type AttributionStyle = 'comment' | 'spdx';
export type Underline = 'all' | 'firstLine';
/** A folder's own index of the public code it depends on: offered, built without asking, or neither. */
export type WorkspaceIndexMode = 'offer' | 'auto' | 'off';

export const KINDS: readonly Kind[] = ['recitation', 'license', 'repetitive', 'inventory', 'idiom'];
export const SEVERITIES: readonly SeverityName[] = ['error', 'warning', 'information', 'hint', 'off'];
export const COMPLETION_MODES: readonly CompletionMode[] = ['warn', 'block', 'off'];
export const ATTRIBUTION_STYLES: readonly AttributionStyle[] = ['comment', 'spdx'];
export const UNDERLINES: readonly Underline[] = ['all', 'firstLine'];
export const WORKSPACE_INDEX_MODES: readonly WorkspaceIndexMode[] = ['offer', 'auto', 'off'];

/** What the server reads per folder (camelCase keys, as in the settings). */
export interface ServerSettings {
    enable: boolean;
    indexPath: string;
    remoteIndex: string;
    minTokens: number;
    contextTokens: number;
    minInsertWords: number;
    scanOnOpen: boolean;
    severity: Record<Kind, SeverityName>;
    completionMode: CompletionMode;
    /** The preferred attribution quick fix: a comment line, or SPDX snippet tags. */
    attributionStyle: AttributionStyle;
    /** `firstLine`: a long quote is underlined on its first line only. */
    underline: Underline;
    /** The folder's own index (ignored while `indexPath` is set). */
    workspaceIndex: WorkspaceIndexMode;
    /** Code files written outside the editor (by an agent, a script) are checked too. */
    watchFiles: boolean;
}

/** What only the extension reads: how to start the server. */
export interface LaunchSettings {
    interpreter: string[];
    upstreamCommand: string[];
}

export const DEFAULTS: ServerSettings = {
    enable: true,
    indexPath: '',
    remoteIndex: '',
    minTokens: 60,
    contextTokens: 200,
    minInsertWords: 10,
    scanOnOpen: false,
    severity: { recitation: 'warning', license: 'hint', repetitive: 'hint', inventory: 'hint', idiom: 'hint' },
    completionMode: 'warn',
    attributionStyle: 'comment',
    underline: 'all',
    workspaceIndex: 'offer',
    watchFiles: true,
};

/** The subset of `vscode.WorkspaceConfiguration` used here. */
export interface ConfigReader {
    get<T>(key: string): T | undefined;
}

/** Where `${workspaceFolder}` and `~` point. */
export interface PathContext {
    workspaceFolder?: string;
    userHome: string;
}

/** Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. */
export function expandVariables(
    value: string,
    ctx: PathContext,
    env: Record<string, string | undefined> = process.env,
): string {
    let out = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
        if (name === 'workspaceFolder') {
            return ctx.workspaceFolder ?? whole;
        }
        if (name === 'userHome') {
            return ctx.userHome;
        }
        return env[envName ?? ''] ?? '';
    });
    if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) {
        out = ctx.userHome + out.slice(1);
    }
    return out;
}

function isAbsolutePath(p: string): boolean {
    return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}

function joinPath(base: string, rel: string): string {
    const sep = base.includes('\\') && !base.includes('/') ? '\\' : '/';
    const trimmed = rel.replace(/^\.[\\/]/, '');
    return base.replace(/[\\/]+$/, '') + sep + trimmed;
}

/** An index path as the server should see it: variables expanded, relative to the folder. */
/** `https://...` (or `http://` on loopback, as the server accepts): an index service. */
export function isServiceUrl(value: string): boolean {
    return /^https?:\/\//i.test(value.trim());
}

export function resolveIndexPath(value: string, ctx: PathContext): string {
    const raw = value.trim();
    if (raw === '') {
        return '';
    }
    if (isServiceUrl(raw)) {
        return raw; // an index service: a URL, not a path
    }
    const expanded = expandVariables(raw, ctx);
    if (!isAbsolutePath(expanded) && ctx.workspaceFolder) {
        return joinPath(ctx.workspaceFolder, expanded);
    }
    return expanded;
}

function asBool(value: unknown, fallback: boolean): boolean {
    return typeof value === 'boolean' ? value : fallback;
}

function asInt(value: unknown, fallback: number, min: number): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
        return fallback;
    }
    return Math.floor(value);
}

function asString(value: unknown, fallback: string): string {
    return typeof value === 'string' ? value : fallback;
}

function asStringArray(value: unknown): string[] {
    if (typeof value === 'string') {
        return value.trim() === '' ? [] : [value];
    }
    if (!Array.isArray(value)) {
        return [];
    }
    return value.filter((v): v is string => typeof v === 'string' && v.length > 0);
}

function asEnum<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
    return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

export function resolveSeverity(value: unknown): Record<Kind, SeverityName> {
    const out = { ...DEFAULTS.severity };
    if (value && typeof value === 'object' && !Array.isArray(value)) {
        const given = value as Record<string, unknown>;
        for (const kind of KINDS) {
            out[kind] = asEnum(given[kind], SEVERITIES, DEFAULTS.severity[kind]);
        }
    }
    return out;
}

/** The server settings of one folder; an invalid value falls back to its default. */
export function resolveServerSettings(config: ConfigReader, ctx: PathContext): ServerSettings {
    return {
        enable: asBool(config.get('enable'), DEFAULTS.enable),
        indexPath: resolveIndexPath(asString(config.get('indexPath'), DEFAULTS.indexPath), ctx),
        remoteIndex: asString(config.get('remoteIndex'), DEFAULTS.remoteIndex).trim(),
        minTokens: asInt(config.get('minTokens'), DEFAULTS.minTokens, 1),
        contextTokens: asInt(config.get('contextTokens'), DEFAULTS.contextTokens, 0),
        minInsertWords: asInt(config.get('minInsertWords'), DEFAULTS.minInsertWords, 1),
        scanOnOpen: asBool(config.get('scanOnOpen'), DEFAULTS.scanOnOpen),
        severity: resolveSeverity(config.get('severity')),
        completionMode: asEnum(config.get('completionMode'), COMPLETION_MODES, DEFAULTS.completionMode),
        attributionStyle: asEnum(config.get('attributionStyle'), ATTRIBUTION_STYLES, DEFAULTS.attributionStyle),
        underline: asEnum(config.get('underline'), UNDERLINES, DEFAULTS.underline),
        workspaceIndex: asEnum(config.get('workspaceIndex'), WORKSPACE_INDEX_MODES, DEFAULTS.workspaceIndex),
        watchFiles: asBool(config.get('watchFiles'), DEFAULTS.watchFiles),
    };
}

export function resolveLaunchSettings(config: ConfigReader, ctx: PathContext): LaunchSettings {
    return {
        interpreter: asStringArray(config.get('interpreter')).map((part) => expandVariables(part, ctx)),
        upstreamCommand: asStringArray(config.get('upstreamCommand')).map((part) => expandVariables(part, ctx)),
    };
}

/** One folder's entry in the initialization options. */
export interface FolderSettings {
    uri: string;
    name: string;
    settings: ServerSettings;
}

/**
 * The `initializationOptions` sent to the server: the settings of the window (or of the
 * only folder) under the section name, and each workspace folder's own (`folders`). The
 * server also pulls `workspace/configuration` per folder and hears
 * `workspace/didChangeConfiguration`.
 */
export interface InitializationOptions {
    /** Client-side commands the server may offer (`recitation.compareWithSource`). */
    clientCommands?: string[];
    /** What the extension shows itself: `workspaceIndex` (the offer and progress of a folder's own index). */
    clientFeatures?: string[];
    recitation: ServerSettings;
    folders: FolderSettings[];
}

/** Key names of the settings the server reads; a change to any of them is sent live. */
export const SERVER_KEYS: readonly (keyof ServerSettings)[] = [
    'enable', 'indexPath', 'remoteIndex', 'minTokens', 'contextTokens', 'minInsertWords', 'scanOnOpen', 'severity', 'completionMode',
    'attributionStyle', 'underline', 'workspaceIndex', 'watchFiles',
];

/**
 * Rewrites one `workspace/configuration` answer so that it carries resolved values
 * (expanded index path, defaults for invalid values). `section` is what the server
 * asked for: `recitation` or `recitation.<key>`.
 */
export function resolveConfigurationItem(section: string | undefined, raw: unknown, resolved: ServerSettings): unknown {
    if (section === SECTION) {
        const base = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
        return { ...base, ...resolved };
    }
    if (section?.startsWith(SECTION + '.')) {
        const key = section.slice(SECTION.length + 1) as keyof ServerSettings;
        if ((SERVER_KEYS as readonly string[]).includes(key)) {
            return resolved[key];
        }
    }
    return raw;
}
