import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { readBinaryHeader } from '../packaging/binaries';

function elf(machine: number, bigEndian = false): Buffer {
    const b = Buffer.alloc(64);
    b.writeUInt32BE(0x7f454c46, 0);
    b[4] = 2; // 64-bit
    b[5] = bigEndian ? 2 : 1;
    if (bigEndian) {
        b.writeUInt16BE(machine, 18);
    } else {
        b.writeUInt16LE(machine, 18);
    }
    return b;
}

function pe(machine: number, at = 0x80): Buffer {
    const b = Buffer.alloc(at + 24);
    b.write('MZ', 0, 'latin1');
    b.writeUInt32LE(at, 0x3c);
    b.write('PE\0\0', at, 'latin1');
    b.writeUInt16LE(machine, at + 4);
    return b;
}

function macho(cpu: number): Buffer {
    const b = Buffer.alloc(32);
    b.writeUInt32LE(0xfeedfacf, 0);
    b.writeUInt32LE(cpu, 4);
    return b;
}

function fat(cpus: number[], magic = 0xcafebabe): Buffer {
    const size = magic === 0xcafebabf ? 32 : 20;
    const b = Buffer.alloc(8 + cpus.length * size + 16);
    b.writeUInt32BE(magic, 0);
    b.writeUInt32BE(cpus.length, 4);
    cpus.forEach((cpu, i) => b.writeUInt32BE(cpu, 8 + i * size));
    return b;
}

describe('readBinaryHeader', () => {
    it('reads the machine of ELF files', () => {
        assert.deepEqual(readBinaryHeader(elf(62)), { format: 'elf', cpus: ['x64'] });
        assert.deepEqual(readBinaryHeader(elf(183)), { format: 'elf', cpus: ['arm64'] });
        assert.deepEqual(readBinaryHeader(elf(3)), { format: 'elf', cpus: ['x86'] });
        assert.deepEqual(readBinaryHeader(elf(183, true)), { format: 'elf', cpus: ['arm64'] });
        assert.deepEqual(readBinaryHeader(elf(243)), { format: 'elf', cpus: ['elf:243'] });
    });

    it('reads the machine of PE files through the DOS stub', () => {
        assert.deepEqual(readBinaryHeader(pe(0x8664)), { format: 'pe', cpus: ['x64'] });
        assert.deepEqual(readBinaryHeader(pe(0xaa64, 0xf8)), { format: 'pe', cpus: ['arm64'] });
        assert.deepEqual(readBinaryHeader(pe(0x14c)), { format: 'pe', cpus: ['x86'] });
        const stubOnly = pe(0x8664);
        stubOnly.write('XX', 0x80, 'latin1');
        assert.equal(readBinaryHeader(stubOnly), undefined);
    });

    it('reads the CPU type of Mach-O files, thin and fat', () => {
        assert.deepEqual(readBinaryHeader(macho(0x01000007)), { format: 'macho', cpus: ['x64'] });
        assert.deepEqual(readBinaryHeader(macho(0x0100000c)), { format: 'macho', cpus: ['arm64'] });
        assert.deepEqual(readBinaryHeader(fat([0x01000007, 0x0100000c])), { format: 'macho', cpus: ['x64', 'arm64'] });
        assert.deepEqual(readBinaryHeader(fat([0x0100000c], 0xcafebabf)), { format: 'macho', cpus: ['arm64'] });
    });

    it('leaves everything else alone', () => {
        assert.equal(readBinaryHeader(Buffer.from('import os\n')), undefined);
        assert.equal(readBinaryHeader(Buffer.alloc(0)), undefined);
        // A Java class file shares the fat magic; its version fields make no sane slice count.
        const javaClass = Buffer.alloc(16);
        javaClass.writeUInt32BE(0xcafebabe, 0);
        javaClass.writeUInt32BE(0x00000041, 4);
        assert.equal(readBinaryHeader(javaClass), undefined);
    });
});
