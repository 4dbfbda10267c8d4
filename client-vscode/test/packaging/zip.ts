// Lists the entries of a zip file (a .vsix) from its central directory.

import * as fs from 'node:fs';

export interface ZipEntry {
    name: string;
    size: number;
}

export function listZip(file: string): ZipEntry[] {
    const data = fs.readFileSync(file);
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
        const size = data.readUInt32LE(offset + 24);
        const nameLength = data.readUInt16LE(offset + 28);
        const extraLength = data.readUInt16LE(offset + 30);
        const commentLength = data.readUInt16LE(offset + 32);
        const name = data.toString('utf8', offset + 46, offset + 46 + nameLength);
        entries.push({ name, size });
        offset += 46 + nameLength + extraLength + commentLength;
    }
    return entries;
}
