"""Minimal safetensors writer (and reader, for self-checks) without the safetensors library.

File layout (https://github.com/huggingface/safetensors, format section):
  * 8 bytes: N, little-endian unsigned 64-bit, the length of the JSON header in bytes;
  * N bytes: UTF-8 JSON object {name: {"dtype": D, "shape": [...], "data_offsets": [b, e]}, ...,
    "__metadata__": {str: str}} padded with trailing spaces so that 8 + N is a multiple of 8;
  * the data section: each tensor's raw little-endian bytes, row-major, contiguous, in header
    order, with no holes; data_offsets are relative to the start of the data section.
"""

import json
import struct
from collections import OrderedDict

import numpy as np
import torch

# torch dtype -> (safetensors dtype string, little-endian numpy dtype)
_DTYPES = OrderedDict([
    (torch.float64, ("F64", "<f8")),
    (torch.float32, ("F32", "<f4")),
    (torch.float16, ("F16", "<f2")),
    (torch.bfloat16, ("BF16", "<u2")),  # numpy has no bfloat16: go through the raw 16-bit pattern
    (torch.int64, ("I64", "<i8")),
    (torch.int32, ("I32", "<i4")),
    (torch.int16, ("I16", "<i2")),
    (torch.int8, ("I8", "i1")),
    (torch.uint8, ("U8", "u1")),
    (torch.bool, ("BOOL", "?")),
])
_BY_NAME = {v[0]: (k, v[1]) for k, v in _DTYPES.items()}


def _tensor_bytes(t):
    t = t.detach().cpu().contiguous()
    _, npdt = _DTYPES[t.dtype]
    if t.dtype == torch.bfloat16:
        arr = t.view(torch.int16).numpy().view(np.uint16)
    else:
        arr = t.numpy()
    return np.ascontiguousarray(arr.astype(np.dtype(npdt), copy=False)).tobytes(order="C")


def write_safetensors(path, tensors, metadata=None):
    """Write `tensors` (a mapping or a list of (name, tensor) pairs, kept in that order).

    `metadata` is an optional {str: str} mapping stored under "__metadata__".
    """
    items = list(tensors.items()) if hasattr(tensors, "items") else list(tensors)
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        raise ValueError("duplicate tensor names")
    header = OrderedDict()
    blobs = []
    offset = 0
    for name, t in items:
        if name == "__metadata__":
            raise ValueError("reserved name")
        if t.dtype not in _DTYPES:
            raise TypeError(f"{name}: unsupported dtype {t.dtype}")
        data = _tensor_bytes(t)
        assert len(data) == t.numel() * t.element_size()
        header[name] = OrderedDict([
            ("dtype", _DTYPES[t.dtype][0]),
            ("shape", [int(s) for s in t.shape]),
            ("data_offsets", [offset, offset + len(data)]),
        ])
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = OrderedDict((str(k), str(v)) for k, v in metadata.items())
    hjson = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    hjson += b" " * ((-(8 + len(hjson))) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """Read a file written by write_safetensors (or any safetensors file with supported dtypes).

    Returns (OrderedDict name -> torch tensor, metadata dict). Checks the layout strictly:
    offsets contiguous in header order, no holes, file size exact.
    """
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"), object_pairs_hook=OrderedDict)
    base = 8 + n
    metadata = header.pop("__metadata__", {})
    out = OrderedDict()
    expect = 0
    for name, info in header.items():
        b, e = info["data_offsets"]
        if b != expect:
            raise ValueError(f"{name}: hole or overlap in data section")
        tdt, npdt = _BY_NAME[info["dtype"]]
        shape = info["shape"]
        numel = 1
        for s in shape:
            numel *= s
        arr = np.frombuffer(raw[base + b:base + e], dtype=np.dtype(npdt)).copy()
        if arr.size != numel:
            raise ValueError(f"{name}: size mismatch")
        if tdt == torch.bfloat16:
            t = torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
        else:
            t = torch.from_numpy(arr.astype(arr.dtype.newbyteorder("="), copy=False))
        out[name] = t.reshape(shape)
        expect = e
    if base + expect != len(raw):
        raise ValueError("trailing bytes after data section")
    return out, dict(metadata)
