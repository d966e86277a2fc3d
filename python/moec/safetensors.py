"""Writing a safetensors file from torch tensors or NumPy arrays (F32, BF16, F16, I8): how a
module's state_dict reaches moec's checkpoint reader (MoELayer.from_module). Reading is moec's
C++ reader (memory-mapped; moec.load_hf_weights)."""

import json
import struct

import numpy as np

_NUMPY = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int8"): "I8"}


def _record(value):
    """(dtype, shape, little-endian bytes) of one tensor."""
    try:
        import torch
        if isinstance(value, torch.Tensor):
            t = value.detach().cpu().contiguous()
            if t.dtype == torch.bfloat16:
                return "BF16", list(t.shape), t.view(torch.int16).numpy().astype("<i2").tobytes()
            value = t.numpy()
    except ImportError:  # pragma: no cover
        pass
    a = np.ascontiguousarray(value)
    if a.dtype not in _NUMPY:
        raise TypeError(f"safetensors here holds F32, BF16, F16 or I8, not {a.dtype}")
    return _NUMPY[a.dtype], list(a.shape), a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()


def save_file(tensors, path, metadata=None):
    """Writes {name: tensor} to `path`, the tensors back to back in the dict's order."""
    header = {"__metadata__": dict(metadata or {"format": "pt"})}
    chunks, offset = [], 0
    for name, value in tensors.items():
        dtype, shape, data = _record(value)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the data 8-byte aligned, as the safetensors library does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for chunk in chunks:
            f.write(chunk)
    return path
