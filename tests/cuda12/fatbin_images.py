#!/usr/bin/env python3
"""Lists the GPU images that ELF files (objects, executables) carry in their .nv_fatbin sections:
one line per file, `FILE: sm_70 compute_70` (sm_XX a cubin, compute_XX PTX, sorted, unique).

The fatbin container is NVIDIA's, undocumented; the fields read here are those cuobjdump reports
(checked against the files cmake/cuda12/fatbinary.cpp writes): a 16-byte header (magic 0xBA55ED50,
version, header size, size of what follows), then entries, each with its kind (1 PTX, 2 cubin), the
size of its header and payload, and its architecture (e.g. 70) at byte 28 of its header. A linked
executable's section holds one container per translation unit, each 8-byte aligned."""
import struct
import subprocess
import sys
import tempfile

MAGIC = 0xBA55ED50


def section(path):
    with tempfile.NamedTemporaryFile() as out:
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", path, out.name], check=True)
        return open(out.name, "rb").read()


def images(data, path):
    found, at = set(), 0
    while at + 16 <= len(data):
        magic, _version, header, size = struct.unpack_from("<IHHQ", data, at)
        if magic != MAGIC:
            if data[at:at + 8] == bytes(8):  # padding between containers
                at += 8
                continue
            sys.exit(f"{path}: no fatbin container at byte {at} of .nv_fatbin")
        entry, end = at + header, at + header + size
        while entry + 32 <= end:
            kind, _flags, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            arch = struct.unpack_from("<I", data, entry + 28)[0]
            if kind not in (1, 2) or entry_header < 32:
                sys.exit(f"{path}: unknown fatbin entry (kind {kind}) at byte {entry}")
            found.add(("compute_" if kind == 1 else "sm_") + str(arch))
            entry += entry_header + payload
        at = (end + 7) & ~7
    return found


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: fatbin_images.py ELF...")
    for path in sys.argv[1:]:
        print(f"{path}: " + " ".join(sorted(images(section(path), path))))


if __name__ == "__main__":
    main()
