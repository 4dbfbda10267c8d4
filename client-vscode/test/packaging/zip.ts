// Lists the entries of a zip file (a .vsix) from its central directory.

import * as fs from 'node:fs';
import * as zlib from 'node:zlib';

export interface ZipEntry {
    name: string;
    size: number;
    /** 0 stored, 8 deflated */
    method: number;
    compressedSize: number;
    localHeader: number;
    /** CRC-32 of the uncompressed content */
    crc32: number;
}

const cache = new Map<string, Buffer>();

function contents(file: string): Buffer {
    let data = cache.get(file);
    if (!data) {
        data = fs.readFileSync(file);
        cache.clear();
        cache.set(file, data);
    }
    return data;
}

export function listZip(file: string): ZipEntry[] {
    const data = contents(file);
    // End of central directory record: signature, then fixed fields, then a comment of up to 64 KiB.
    let eocd = -1;
    for (let i = data.length - 22; i >= Math.max(0, data.length - 22 - 0xffff); i--) {
        if (data.readUInt32LE(i) === 0x06054b50) {
            eocd = i;
            break;
        }
    }
    if (eocd < 0) {
        throw new Error(`${file}: not a zip file`);
    }
    let count = data.readUInt16LE(eocd + 10);
    let offset = data.readUInt32LE(eocd + 16);
    // Zip64: the counts and offset live in the zip64 end record.
    if (count === 0xffff || offset === 0xffffffff) {
        const locator = eocd - 20;
        if (data.readUInt32LE(locator) === 0x07064b50) {
            const record = Number(data.readBigUInt64LE(locator + 8));
            count = Number(data.readBigUInt64LE(record + 32));
            offset = Number(data.readBigUInt64LE(record + 48));
        }
    }
    const entries: ZipEntry[] = [];
    for (let n = 0; n < count; n++) {
        if (data.readUInt32LE(offset) !== 0x02014b50) {
            throw new Error(`${file}: bad central directory entry ${n}`);
        }
        const method = data.readUInt16LE(offset + 10);
        const crc32 = data.readUInt32LE(offset + 16);
        const compressedSize = data.readUInt32LE(offset + 20);
        const size = data.readUInt32LE(offset + 24);
        const localHeader = data.readUInt32LE(offset + 42);
        const nameLength = data.readUInt16LE(offset + 28);
        const extraLength = data.readUInt16LE(offset + 30);
        const commentLength = data.readUInt16LE(offset + 32);
        const name = data.toString('utf8', offset + 46, offset + 46 + nameLength);
        entries.push({ name, size, method, compressedSize, localHeader, crc32 });
        offset += 46 + nameLength + extraLength + commentLength;
    }
    return entries;
}

/** The content of one entry. */
export function readZipEntry(file: string, entry: ZipEntry): Buffer {
    const data = contents(file);
    const at = entry.localHeader;
    if (data.readUInt32LE(at) !== 0x04034b50) {
        throw new Error(`${file}: bad local header for ${entry.name}`);
    }
    const start = at + 30 + data.readUInt16LE(at + 26) + data.readUInt16LE(at + 28);
    const raw = data.subarray(start, start + entry.compressedSize);
    if (entry.method === 0) {
        return Buffer.from(raw);
    }
    if (entry.method === 8) {
        return zlib.inflateRawSync(raw);
    }
    throw new Error(`${entry.name}: compression method ${entry.method}`);
}
