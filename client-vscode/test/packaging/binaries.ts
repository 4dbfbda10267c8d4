// What machine code a file holds, read from its header: ELF (Linux), PE (Windows DLLs and
// .pyd), Mach-O (macOS), including fat (universal) Mach-O files with one slice per CPU.

export type BinaryFormat = 'elf' | 'pe' | 'macho';
/** A CPU by the name VS Code's targets use (x64, arm64, x86, arm); others as `format:number`. */
export type Cpu = string;

export interface BinaryInfo {
    format: BinaryFormat;
    /** One CPU, or one per slice of a fat Mach-O file. */
    cpus: Cpu[];
}

const ELF_MACHINES: Record<number, Cpu> = { 3: 'x86', 40: 'arm', 62: 'x64', 183: 'arm64' };
const PE_MACHINES: Record<number, Cpu> = { 0x14c: 'x86', 0x1c4: 'arm', 0x8664: 'x64', 0xaa64: 'arm64' };
const MACHO_CPUS: Record<number, Cpu> = { 0x7: 'x86', 0x01000007: 'x64', 0xc: 'arm', 0x0100000c: 'arm64' };

const MH_MAGIC = 0xfeedface;
const MH_MAGIC_64 = 0xfeedfacf;
const FAT_MAGIC = 0xcafebabe;
const FAT_MAGIC_64 = 0xcafebabf;

function named(table: Record<number, Cpu>, format: BinaryFormat, value: number): Cpu {
    return table[value] ?? `${format}:${value}`;
}

function elf(data: Buffer): BinaryInfo | undefined {
    if (data.length < 20) {
        return undefined;
    }
    const bigEndian = data[5] === 2;
    const machine = bigEndian ? data.readUInt16BE(18) : data.readUInt16LE(18);
    return { format: 'elf', cpus: [named(ELF_MACHINES, 'elf', machine)] };
}

function pe(data: Buffer): BinaryInfo | undefined {
    if (data.length < 0x40) {
        return undefined;
    }
    const header = data.readUInt32LE(0x3c);
    if (header + 6 > data.length || data.readUInt32LE(header) !== 0x00004550) {
        return undefined; // an MZ stub without a PE header (old DOS programs)
    }
    return { format: 'pe', cpus: [named(PE_MACHINES, 'pe', data.readUInt16LE(header + 4))] };
}

function macho(data: Buffer): BinaryInfo | undefined {
    if (data.length < 8) {
        return undefined;
    }
    const le = data.readUInt32LE(0);
    if (le === MH_MAGIC || le === MH_MAGIC_64) {
        return { format: 'macho', cpus: [named(MACHO_CPUS, 'macho', data.readUInt32LE(4))] };
    }
    const be = data.readUInt32BE(0);
    if (be === MH_MAGIC || be === MH_MAGIC_64) {
        return { format: 'macho', cpus: [named(MACHO_CPUS, 'macho', data.readUInt32BE(4))] };
    }
    if (be === FAT_MAGIC || be === FAT_MAGIC_64) {
        // Fat header (big-endian): the slice count, then per slice its cputype first;
        // 20-byte entries, 32-byte ones in the 64-bit variant.
        const count = data.readUInt32BE(4);
        const size = be === FAT_MAGIC_64 ? 32 : 20;
        if (count === 0 || count > 16 || 8 + count * size > data.length) {
            return undefined; // also what a Java class file (same magic) looks like
        }
        const cpus: Cpu[] = [];
        for (let i = 0; i < count; i++) {
            cpus.push(named(MACHO_CPUS, 'macho', data.readUInt32BE(8 + i * size)));
        }
        return { format: 'macho', cpus };
    }
    return undefined;
}

/** The format and CPU(s) of a native binary, or undefined for anything else. */
export function readBinaryHeader(data: Buffer): BinaryInfo | undefined {
    if (data.length >= 4 && data.readUInt32BE(0) === 0x7f454c46) {
        return elf(data);
    }
    if (data.length >= 2 && data[0] === 0x4d && data[1] === 0x5a) {
        return pe(data);
    }
    return macho(data);
}
