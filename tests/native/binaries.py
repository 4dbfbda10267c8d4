"""What a built library is, read from its header: the format, the processor and the exported
functions of a Mach-O (macOS) or PE (Windows) file, for the targets no emulator runs here."""

from __future__ import annotations

import struct
from dataclasses import dataclass

MACHO_CPUS = {0x01000007: "x86_64", 0x0100000C: "arm64"}
PE_MACHINES = {0x8664: "x86_64", 0xAA64: "arm64"}
LC_SYMTAB, LC_CODE_SIGNATURE = 0x2, 0x1D


@dataclass
class Binary:
    format: str  # "mach-o" or "pe"
    arch: str
    exports: set[str]
    signed: bool = False  # Mach-O: carries a code signature (arm64 macOS runs no other)
    dll: bool = False


def read_macho(data: bytes) -> Binary:
    magic, cpu, _sub, filetype, ncmds, _size, _flags, _res = struct.unpack_from("<IiiIIIII", data)
    if magic != 0xFEEDFACF:
        raise ValueError("not a 64-bit Mach-O file")
    if filetype != 6:  # MH_DYLIB
        raise ValueError(f"Mach-O file type {filetype}, not a dynamic library")
    at, exports, signed = 32, set(), False
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, at)
        if cmd == LC_SYMTAB:
            symoff, nsyms, stroff, _strsize = struct.unpack_from("<IIII", data, at + 8)
            for i in range(nsyms):
                strx, ntype, _sect, _desc, _value = struct.unpack_from(
                    "<IBBHQ", data, symoff + 16 * i
                )
                if ntype & 0x01 and ntype & 0x0E == 0x0E:  # external, defined in a section
                    end = data.index(b"\0", stroff + strx)
                    exports.add(data[stroff + strx : end].decode().removeprefix("_"))
        elif cmd == LC_CODE_SIGNATURE:
            signed = True
        at += size
    return Binary("mach-o", MACHO_CPUS.get(cpu & 0xFFFFFFFF, hex(cpu)), exports, signed)


def read_pe(data: bytes) -> Binary:
    if data[:2] != b"MZ":
        raise ValueError("not a PE file")
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe : pe + 4] != b"PE\0\0":
        raise ValueError("no PE header")
    machine, nsections, _t, _p, _n, opt_size, characteristics = struct.unpack_from(
        "<HHIIIHH", data, pe + 4
    )
    opt = pe + 24
    if struct.unpack_from("<H", data, opt)[0] != 0x20B:
        raise ValueError("not a PE32+ (64-bit) file")
    export_rva = struct.unpack_from("<I", data, opt + 112)[0]  # data directory 0
    sections = []
    for i in range(nsections):
        at = opt + opt_size + 40 * i
        vsize, vaddr, _rawsize, rawptr = struct.unpack_from("<IIII", data, at + 8)
        sections.append((vaddr, max(vsize, _rawsize), rawptr))

    def offset(rva: int) -> int:
        for vaddr, size, raw in sections:
            if vaddr <= rva < vaddr + size:
                return rva - vaddr + raw
        raise ValueError(f"RVA {rva:#x} in no section")

    exports = set()
    if export_rva:
        d = offset(export_rva)
        nnames = struct.unpack_from("<I", data, d + 24)[0]
        names_rva = struct.unpack_from("<I", data, d + 32)[0]
        for i in range(nnames):
            name_at = offset(struct.unpack_from("<I", data, offset(names_rva) + 4 * i)[0])
            exports.add(data[name_at : data.index(b"\0", name_at)].decode())
    return Binary("pe", PE_MACHINES.get(machine, hex(machine)), exports,
                  dll=bool(characteristics & 0x2000))  # fmt: skip


def read(data: bytes) -> Binary:
    return read_pe(data) if data[:2] == b"MZ" else read_macho(data)
