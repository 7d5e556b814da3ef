"""PyTorch zip checkpoint (`pytorch_model.bin`) -> `model.safetensors`, without torch.

Reads the checkpoint's pickled state dict with a restricted unpickler (only tensor rebuilds,
storages and OrderedDict are allowed; anything else is refused) and copies each tensor's bytes
unchanged into a safetensors file (the format: an 8-byte little-endian header length, a JSON
header of dtype / shape / data_offsets per tensor, the data). Contiguous tensors only.

    python3 tests/models/torch_to_safetensors.py pytorch_model.bin model.safetensors
"""
import collections
import json
import pickle
import struct
import sys
import zipfile

DTYPES = {
    "FloatStorage": ("F32", 4),
    "HalfStorage": ("F16", 2),
    "BFloat16Storage": ("BF16", 2),
    "DoubleStorage": ("F64", 8),
    "LongStorage": ("I64", 8),
    "IntStorage": ("I32", 4),
    "ByteStorage": ("U8", 1),
    "BoolStorage": ("BOOL", 1),
}


class Storage:
    def __init__(self, name):
        self.name = name


def rebuild_tensor(storage, offset, size, stride, *_):
    return {"storage": storage, "offset": offset, "size": tuple(size), "stride": tuple(stride)}


class Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return rebuild_tensor
        if module == "torch" and name in DTYPES:
            return Storage(name)
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        raise pickle.UnpicklingError(f"refused: {module}.{name}")

    def persistent_load(self, pid):
        _, storage, key, _location, _numel = pid
        return (storage.name, key)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    z = zipfile.ZipFile(src)
    pkl = next(n for n in z.namelist() if n.endswith("data.pkl"))
    prefix = pkl[: -len("data.pkl")]
    state = Unpickler(z.open(pkl)).load()
    storages, header, blobs, offset = {}, {}, [], 0
    for name, t in state.items():
        kind, key = t["storage"]
        dtype, width = DTYPES[kind]
        n = 1
        for s in t["size"]:
            n *= s
        contiguous, acc = [], 1
        for s in reversed(t["size"]):
            contiguous.insert(0, acc)
            acc *= s
        if n and tuple(contiguous) != t["stride"]:
            sys.exit(f"{name}: not contiguous (stride {t['stride']})")
        if key not in storages:
            storages[key] = z.read(f"{prefix}data/{key}")
        data = storages[key][t["offset"] * width : (t["offset"] + n) * width]
        if len(data) != n * width:
            sys.exit(f"{name}: storage too short")
        header[name] = {"dtype": dtype, "shape": list(t["size"]), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    print(f"{dst}: {len(state)} tensors, {offset} bytes of data")


if __name__ == "__main__":
    main()
