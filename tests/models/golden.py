"""Reference vectors of a BERT sentence encoder for `tests/golden.rs`.

Hugging Face transformers' BERT (FlaxBertModel, loaded from the folder's model.safetensors)
and its fast tokenizer (the folder's tokenizer.json): token ids, then the last hidden states
mean-pooled over the sequence and L2-normalised, fp32 on the CPU; sequences truncated to 256
ids as the engine truncates them ([CLS] + 254 + [SEP]).

    python tests/models/golden.py MODEL_DIR MODEL_ID OUT.json

Needs `pip install "jax[cpu]" flax "transformers==4.46.3" safetensors` (a venv; no torch).
"""
import hashlib
import json
import sys

import jax
import numpy as np
import transformers
from transformers import AutoTokenizer, FlaxBertModel

MAX_LEN = 256

SENTENCES = [
    "今天天气很好",
    "今天的天气非常不错",
    "我喜欢吃苹果",
    "股票市场今天大跌",
    "国务院常务会议部署进一步稳定经济增长的措施",
    "北京时间昨晚，中国女排以3比1战胜巴西队，晋级四强。",
    "新冠疫苗接种工作在全国有序推进，累计接种超过10亿剂次。",
    "记者从教育部获悉，2020年全国高考报名人数达1071万。",
    "the weather is nice today",
    "i like eating apples",
    "Hello World",
    "GDP增长6.5%，CPI上涨2.1%",
    "",
    "   ",
    "中" * 400,
    "a blue heron stands in the shallow water of the lake at dawn",
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def main():
    model_dir, model_id, out = sys.argv[1], sys.argv[2], sys.argv[3]
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = FlaxBertModel.from_pretrained(model_dir, from_pt=True)
    items = []
    for i, s in enumerate(SENTENCES):
        enc = tok(s, truncation=True, max_length=MAX_LEN, return_tensors="np")
        hidden = np.asarray(model(**enc).last_hidden_state[0], dtype=np.float64)
        v = hidden.mean(0)
        v = v / np.linalg.norm(v)
        items.append({"index": i, "text": s, "input_ids": enc["input_ids"][0].tolist(), "embedding": [round(float(x), 7) for x in v]})
    doc = {
        "model": model_id,
        "model_safetensors_sha256": sha256(f"{model_dir}/model.safetensors"),
        "tokenizer_json_sha256": sha256(f"{model_dir}/tokenizer.json"),
        "method": f"transformers FlaxBertModel (from model.safetensors) -> mean pooling over the sequence -> L2 normalize; fast tokenizer from tokenizer.json, truncation to {MAX_LEN}; fp32, CPU",
        "versions": {"transformers": transformers.__version__, "jax": jax.__version__, "numpy": np.__version__},
        "dim": len(items[0]["embedding"]),
        "items": items,
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
    print(f"{out}: {len(items)} items, dim {doc['dim']}")


if __name__ == "__main__":
    main()
