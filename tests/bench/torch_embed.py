"""PyTorch reference for `webrag bench-embed`: the same BERT sentence embedder (forward pass, mean
pooling, L2 normalisation) on the same token ids and the same weights, timed the same way.

    python3 tests/bench/torch_embed.py JOB_JSON

JOB_JSON (written by `webrag bench-embed`):
    {"model_dir": ".../all-MiniLM-L6-v2", "ids": [[101, ...], ...], "batches": [1, 8, 32, 128, 256],
     "device": "cpu" | "cuda", "threads": 2, "sorted_from": 128, "check": [[0.01, ...], ...]}

model_dir holds config.json and model.safetensors (f32, f16 or bf16: upcast to f32). Each batch is
padded to its longest sequence with an attention mask (as sentence-transformers does); inputs are
padded up front; each batch's vectors are read back to the host. Sentences/s is the median of 3
passes over all the ids after one warm-up pass. Modes: fp32 with TF32 off (both devices), and on
CUDA fp32 with TF32 and fp16. Order: the given one at every batch size, and length-sorted (longest
first, as sentence-transformers' encode() does) from `sorted_from` up. On CUDA it also times a plain
8192 x 8192 x 8192 fp32 GEMM (TF32 off): the rate the card reaches, the yardstick for the kernels.

Prints one JSON object per line: {"kind": "embed", "mode", "order", "batch", "threads",
"sentences_per_s"}, {"kind": "gemm", "tflops"}, {"kind": "info", ...}, and {"kind": "check",
"min_cosine"}: this forward pass against webrag's vectors of the first ids (`check`), so both
sides are known to compute the same function. Needs torch and safetensors
only (the model is written out below, so transformers is not needed).
"""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from safetensors.torch import load_file


def load(model_dir, device, dtype):
    cfg = json.load(open(f"{model_dir}/config.json"))
    raw = load_file(f"{model_dir}/model.safetensors")
    prefix = "bert." if any(k.startswith("bert.embeddings.") for k in raw) else ""
    w = {k[len(prefix):]: v.float().to(device, dtype) for k, v in raw.items() if k.startswith(prefix) and v.is_floating_point()}
    return cfg, w


def forward(cfg, w, ids, mask):
    """Last hidden state [B, L, H] of a padded batch (BertModel, post-LayerNorm, GELU erf)."""
    h, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg.get("layer_norm_eps", 1e-12)
    d = h // heads
    b, length = ids.shape
    pos = torch.arange(length, device=ids.device)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][pos] + w["embeddings.token_type_embeddings.weight"][0]
    x = F.layer_norm(x, (h,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    attn_mask = mask[:, None, None, :].bool()
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        lin = lambda t, n: F.linear(t, w[p + n + ".weight"], w[p + n + ".bias"])
        split = lambda t: t.view(b, length, heads, d).transpose(1, 2)
        q, k, v = split(lin(x, "attention.self.query")), split(lin(x, "attention.self.key")), split(lin(x, "attention.self.value"))
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask).transpose(1, 2).reshape(b, length, h)
        x = F.layer_norm(x + lin(ctx, "attention.output.dense"), (h,), w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
        y = lin(F.gelu(lin(x, "intermediate.dense")), "output.dense")
        x = F.layer_norm(x + y, (h,), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return x


def padded(ids, order, batch):
    out = []
    for i in range(0, len(order), batch):
        seqs = [ids[j] for j in order[i:i + batch]]
        length = max(len(s) for s in seqs)
        inp = torch.zeros(len(seqs), length, dtype=torch.long)
        att = torch.zeros(len(seqs), length, dtype=torch.long)
        for r, s in enumerate(seqs):
            inp[r, :len(s)] = torch.tensor(s)
            att[r, :len(s)] = 1
        out.append((inp, att))
    return out


@torch.inference_mode()
def rate(cfg, w, ids, order, batch, device):
    pre = padded(ids, order, batch)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def once():
        sync()
        t = time.perf_counter()
        for inp, att in pre:
            inp, att = inp.to(device), att.to(device)
            x = forward(cfg, w, inp, att)
            m = att.unsqueeze(-1).to(x.dtype)
            v = F.normalize(((x * m).sum(1) / m.sum(1).clamp(min=1e-9)).float(), dim=-1)
            v.cpu()
        sync()
        return len(ids) / (time.perf_counter() - t)

    once()
    return statistics.median([once() for _ in range(3)])


def emit(**kv):
    print(json.dumps(kv), flush=True)


def main():
    job = json.load(open(sys.argv[1]))
    device, ids = job["device"], job["ids"]
    if device == "cpu":
        torch.set_num_threads(int(job["threads"]))
    emit(kind="info", torch=torch.__version__, device=torch.cuda.get_device_name(0) if device == "cuda" else "cpu", threads=torch.get_num_threads(), sentences=len(ids))
    modes = [("fp32", torch.float32, False)]
    if device == "cuda":
        modes += [("fp32+tf32", torch.float32, True), ("fp16", torch.float16, False)]
        torch.backends.cuda.matmul.allow_tf32 = False
        n = 8192
        a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
        a @ b
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(5):
            a @ b
        torch.cuda.synchronize()
        emit(kind="gemm", tflops=5 * 2 * n ** 3 / (time.perf_counter() - t) / 1e12)
        del a, b
    if job.get("check"):
        cfg, w = load(job["model_dir"], device, torch.float32)
        want = torch.tensor(job["check"])
        got = []
        with torch.inference_mode():
            for inp, att in padded(ids[:len(want)], list(range(len(want))), 8):
                x = forward(cfg, w, inp.to(device), att.to(device))
                m = att.to(device).unsqueeze(-1).float()
                got.append(F.normalize((x * m).sum(1) / m.sum(1), dim=-1).cpu())
        emit(kind="check", min_cosine=float((torch.cat(got) * want).sum(-1).min()))
    given = list(range(len(ids)))
    longest_first = sorted(given, key=lambda i: -len(ids[i]))
    for name, dtype, tf32 in modes:
        if device == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
        cfg, w = load(job["model_dir"], device, dtype)
        for batch in job["batches"]:
            for order, o in (("given", given), ("sorted", longest_first)):
                if order == "sorted" and batch < job.get("sorted_from", 128):
                    continue
                emit(kind="embed", mode=name, order=order, batch=batch, threads=torch.get_num_threads(), sentences_per_s=rate(cfg, w, ids, o, batch, device))


if __name__ == "__main__":
    main()
