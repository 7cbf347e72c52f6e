#!/usr/bin/python3
"""Independent reference for Kairos's static encoder: reads a static model folder's safetensors
file with numpy alone and embeds token id lists the way Model2Vec and sentence-transformers'
StaticEmbedding do (mean of the rows, times the per-token weight when the file has "weights",
rows through "mapping" when it has one, L2-normalised when asked, first DIM columns with DIM > 0).

  static_ref.py MODEL.safetensors IDS.txt OUT.txt NORMALIZE(0|1) DIM

IDS.txt: one text per line, space-separated token ids (an empty line: no token).
OUT.txt: one vector per line, space-separated floats ("%.9g"), float64 arithmetic.
"""
import json, struct, sys
import numpy as np

DT = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def load(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        lo, hi = h["data_offsets"]
        out[name] = np.frombuffer(data[lo:hi], dtype=np.dtype(DT[h["dtype"]]).newbyteorder("<")).reshape(h["shape"])
    return out


def main(model, ids_path, out_path, normalize, dim):
    t = load(model)
    emb = (t["embeddings"] if "embeddings" in t else t["embedding.weight"]).astype(np.float64)
    weights = t["weights"].astype(np.float64) if "weights" in t else None
    mapping = t.get("mapping")
    if dim > 0:
        emb = emb[:, :dim]
    with open(ids_path) as f, open(out_path, "w") as out:
        for line in f:
            ids = np.array([int(x) for x in line.split()], dtype=np.int64)
            if len(ids) == 0:
                v = np.zeros(emb.shape[1])
            else:
                rows = emb[mapping[ids] if mapping is not None else ids]
                if weights is not None:
                    rows = rows * weights[ids][:, None]
                v = rows.mean(axis=0)
                if normalize:
                    v = v / (np.linalg.norm(v) + 1e-32)
            out.write(" ".join("%.9g" % x for x in v) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", int(sys.argv[5]))
