// What each VS Code target platform's .vsix must hold: the binary format and CPU of its
// native code, the wheel platform tags and the file names of its extension modules.

import type { BinaryFormat, Cpu } from './binaries';

export interface TargetSpec {
    format: BinaryFormat;
    cpu: Cpu;
    /** The platform part of a wheel tag built for the target. */
    wheelPlatform: RegExp;
    /** An extension module's file name (with its ABI tag) for the target. */
    extensionModule: RegExp;
    /** Names of native files that belong to other platforms. */
    foreign: RegExp;
}

export const TARGETS: Record<string, TargetSpec> = {
    'linux-x64': {
        format: 'elf',
        cpu: 'x64',
        wheelPlatform: /^manylinux(1|2010|2014|_2_\d+)_x86_64$/,
        extensionModule: /(\.cpython-3\d+-x86_64-linux-gnu|\.abi3)?\.so$/,
        foreign: /\.(pyd|dll|dylib|exe)$|aarch64|darwin/,
    },
    'linux-arm64': {
        format: 'elf',
        cpu: 'arm64',
        wheelPlatform: /^manylinux(2014|_2_\d+)_aarch64$/,
        extensionModule: /(\.cpython-3\d+-aarch64-linux-gnu|\.abi3)?\.so$/,
        foreign: /\.(pyd|dll|dylib|exe)$|x86_64|darwin/,
    },
    'darwin-x64': {
        format: 'macho',
        cpu: 'x64',
        wheelPlatform: /^macosx_\d+_\d+_(x86_64|universal2|intel)$/,
        extensionModule: /(\.cpython-3\d+-darwin|\.abi3)?\.so$/,
        foreign: /\.(pyd|dll|exe)$|linux-gnu|\.so\.\d/,
    },
    'darwin-arm64': {
        format: 'macho',
        cpu: 'arm64',
        wheelPlatform: /^macosx_\d+_\d+_(arm64|universal2)$/,
        extensionModule: /(\.cpython-3\d+-darwin|\.abi3)?\.so$/,
        foreign: /\.(pyd|dll|exe)$|linux-gnu|\.so\.\d/,
    },
    'win32-x64': {
        format: 'pe',
        cpu: 'x64',
        wheelPlatform: /^win_amd64$/,
        extensionModule: /\.(cp3\d+-win_amd64\.)?pyd$/,
        foreign: /\.(so|dylib)$|\.so\.\d|win_arm64|win32\.pyd/,
    },
    'win32-arm64': {
        format: 'pe',
        cpu: 'arm64',
        wheelPlatform: /^win_arm64$/,
        extensionModule: /\.(cp3\d+-win_arm64\.)?pyd$/,
        foreign: /\.(so|dylib)$|\.so\.\d|win_amd64|win32\.pyd/,
    },
};

export const ALL_TARGETS = Object.keys(TARGETS);

/** Python packages that only some platforms need (a dependency marker), by platform prefix. */
export const PLATFORM_ONLY: Record<string, string> = { colorama: 'win32-' };

/**
 * Python packages one target leaves out for one Python version (a dependency marker in
 * pyproject.toml: a requirement of theirs publishes no wheel there), by target and version.
 */
export const VERSION_GAPS: Record<string, Record<string, string[]>> = {
    // spdx-tools (SPDX SBOMs) needs PyYAML, which has no CPython 3.11 wheel for Windows on Arm
    'win32-arm64': {
        '3.11': ['spdx_tools', 'beartype', 'click', 'ply', 'pyparsing', 'rdflib', 'semantic_version', 'uritools', 'xmltodict'],
    },
};
