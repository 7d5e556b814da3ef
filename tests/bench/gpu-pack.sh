#!/usr/bin/env bash
# Packs what the embedding comparison needs on a lent GPU machine into .gpu/ (ignored by git),
# within the 64 MiB such a machine accepts (docs/benchmarks.md#on-a-gpu-machine):
#   .gpu/webrag.xz        the release CLI, stripped and xz-compressed (3.7 MB)
#   .gpu/webrag-before.xz with BEFORE=<commit>: that commit's CLI, for a before/after
#                         comparison of the embedder in one run (docs/benchmarks.md)
#   .gpu/model/           all-MiniLM-L6-v2 with f16 weights (45 MB, 41 MB xz-compressed: both
#                         sides read this file), config.json, tokenizer.json
#   .gpu/shared/          embeddings/: bench_sentences.json and the golden vectors
#   .gpu/site.tar.xz      the 17,364-page CRUD news site (tests/site/gen-crud-site.mjs)
#   .gpu/gl/*.deb         the Vulkan loader and GL dispatch libraries (amd64), in case the
#                         machine's driver comes without them
#   .gpu/run.sh           tests/bench/gpu-run.sh
# Then: run `bash .gpu/run.sh` there with .gpu carried (device tool: carry [".gpu"]). It runs
# bench-embed with threads 1, 2 and every core against PyTorch on CUDA and on the CPU, then
# indexes the whole 17,364-page site with --vectors chunks --device gpu, and writes every log to
# $OUT (or .gpu/out); `bash .gpu/run.sh --no-site` leaves the site step out.
#
# A lease of the device tool is short (15 minutes of device time per session, its start
# included), so bound the run with run.sh's environment variables:
#   CPU_SENTENCES=0 GPU_SENTENCES=256 SITE_TIMEOUT=470 bash .gpu/run.sh
# (no CPU rows; GPU rows over the first 256 bench sentences; the site step stopped after 470 s if
# not done). CPU_SENTENCES defaults to 256 (0 leaves the CPU rows out), GPU_SENTENCES to 0 (all
# 1,000), SITE_TIMEOUT to none. The embedding tables in docs/benchmarks.md were taken this way
# (the H100's with --no-site).
#
# Before quoting figures, read $OUT/gpu.txt: the card and driver version (nvidia-smi), the host
# CPU (lscpu) and each step's exit status; quote the card, driver and host with the figures. If
# the kind asked for (e.g. an H100) is not free, the device tool may lend another (an H200): say
# which card gave each number, and compare timings only within one card.
#
# The working tree travels too (about 12 MB): with the site the whole is about 66 of the 67.1 MB
# allowed, so pack a before/after comparison (BEFORE=) with --no-site. The script prints the sum.
#
#   bash tests/bench/gpu-pack.sh [--no-site]
#   BEFORE=<commit> bash tests/bench/gpu-pack.sh --no-site
#   bash tests/bench/gpu-pack.sh --help    prints this text
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | cut -c3-; exit 0;; esac
cd "$(dirname "$0")/../.."
site=1
[ "${1:-}" = "--no-site" ] && site=0
rm -rf .gpu && mkdir -p .gpu/model .gpu/shared/embeddings .gpu/gl
grep -qx '/.gpu' .gitignore || echo '/.gpu' >> .gitignore

if [ -n "${BEFORE:-}" ]; then
  # That commit's CLI, built from a temporary worktree into the same target directory (the
  # dependencies are shared; webrag itself is rebuilt, then rebuilt again from this checkout).
  wt=$(mktemp -d)/before
  git worktree add --detach "$wt" "$BEFORE" >/dev/null
  CARGO_TARGET_DIR="$PWD/target" cargo build --release --bin webrag --manifest-path "$wt/Cargo.toml"
  strip -o .gpu/webrag-before target/release/webrag
  xz -9 .gpu/webrag-before
  git worktree remove --force "$wt"
fi
cargo build --release --bin webrag
strip -o .gpu/webrag target/release/webrag
xz -9 .gpu/webrag

# f16 weights: half the bytes; the golden tests still pass with them (cosine > 0.9999).
venv=target/gpu-venv
[ -x $venv/bin/python ] || { python3 -m venv $venv && $venv/bin/pip install -q numpy safetensors; }
$venv/bin/python - <<'EOF'
import numpy as np
from safetensors.numpy import load_file, save_file
t = load_file(".models/all-MiniLM-L6-v2/model.safetensors")
save_file({k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in t.items()}, ".gpu/model/model.safetensors")
EOF
xz -6 -T0 .gpu/model/model.safetensors
cp .models/all-MiniLM-L6-v2/config.json .models/all-MiniLM-L6-v2/tokenizer.json .gpu/model/
cp ../shared/embeddings/bench_sentences.json ../shared/embeddings/all-MiniLM-L6-v2.golden.json .gpu/shared/embeddings/

if [ $site = 1 ]; then
  node tests/site/gen-crud-site.mjs target/crud-site-gpu
  tar -C target -cJf .gpu/site.tar.xz crud-site-gpu
fi

(cd .gpu/gl && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null 2>&1) ||
  echo "apt-get download failed: .gpu/gl is empty (fine when the machine has a Vulkan loader)"
cp tests/bench/gpu-run.sh .gpu/run.sh
du -sh .gpu/* | sort -h
pack=$(du -sb .gpu | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
echo ".gpu: $pack bytes; with the working tree ($tree): $((pack + tree)) bytes (limit 67108864)"
