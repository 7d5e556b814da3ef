#!/usr/bin/env bash
# Runs the embedding comparison on a GPU machine, from the repository root, with .gpu/ made by
# tests/bench/gpu-pack.sh. Writes every log to $OUT (or .gpu/out) and prints the tables last:
#   1. bench-embed: webrag's GPU path (f32 and f16 weights) and CPU path (1, 2 and all cores)
#      against PyTorch on the same ids and weights, ratios, kernel split, matmul TFLOP/s, and
#      PyTorch's plain 8192³ fp32 GEMM rate on the card;
#   2. the 17,364-page CRUD site indexed with --vectors chunks on the GPU (--device gpu), build time;
#   before 1, where gpu-pack.sh packed a build before (BEFORE=<commit>), that build's GPU rows.
#
#   bash .gpu/run.sh [--no-site]
#
# A lease is short: CPU_SENTENCES (default 256; 0 leaves the CPU rows out), GPU_SENTENCES
# (default 0: all 1,000) and SITE_TIMEOUT (seconds for the site step, default none) bound the run.
set -uo pipefail
out="${OUT:-.gpu/out}"
mkdir -p "$out"
# The Vulkan loader, when the machine lacks it.
if ! ldconfig -p | grep -q libvulkan.so.1 && ls .gpu/gl/*.deb >/dev/null 2>&1; then
  for f in .gpu/gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; fi
done
bin=$(mktemp -d)/webrag
xz -dc .gpu/webrag.xz > "$bin" && chmod +x "$bin"
model=$(mktemp -d)
cp .gpu/model/*.json "$model/" && xz -dc .gpu/model/model.safetensors.xz > "$model/model.safetensors"
{ command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$out/gpu.txt" 2>&1
lscpu | grep -E 'Model name|^CPU\(s\)' >> "$out/gpu.txt" || true

# The build before (gpu-pack.sh with BEFORE=): its GPU rows and kernel split, first, in the same run.
if [ -f .gpu/webrag-before.xz ]; then
  before="$bin-before"
  xz -dc .gpu/webrag-before.xz > "$before" && chmod +x "$before"
  "$before" --model "$model" bench-embed --shared .gpu/shared --cpu-sentences 0 --gpu-sentences "${GPU_SENTENCES:-0}" --no-torch \
    > "$out/bench-embed-before.md" 2> "$out/bench-embed-before.log"
  echo "bench-embed, build before: exit $?" >> "$out/gpu.txt"
fi

"$bin" --model "$model" bench-embed --shared .gpu/shared --threads "1,2,$(nproc)" \
  --cpu-sentences "${CPU_SENTENCES:-256}" --gpu-sentences "${GPU_SENTENCES:-0}" > "$out/bench-embed.md" 2> "$out/bench-embed.log"
echo "bench-embed: exit $?" >> "$out/gpu.txt"

if [ "${1:-}" != "--no-site" ] && [ -f .gpu/site.tar.xz ]; then
  site=$(mktemp -d)
  tar -C "$site" -xJf .gpu/site.tar.xz
  start=$(date +%s)
  ${SITE_TIMEOUT:+timeout "$SITE_TIMEOUT"} "$bin" --model "$model" index "$site/crud-site-gpu" --out "$site/crud-site-gpu/webrag" --vectors chunks --device gpu \
    > "$out/index-site.txt" 2> "$out/index-site.log"
  echo "index --vectors chunks --device gpu: exit $?, $(( $(date +%s) - start )) s wall" >> "$out/gpu.txt"
fi
cat "$out/gpu.txt"
[ -f "$out/bench-embed-before.md" ] && { echo "== the build before"; cat "$out/bench-embed-before.md"; echo "== this build"; }
cat "$out/bench-embed.md" "$out/index-site.txt" 2>/dev/null
