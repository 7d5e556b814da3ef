// Mean pooling over each sequence's tokens, then L2 normalisation:
//   out[b, :] = m / max(‖m‖, 1e-12),  m = mean of x[t, :] for t in span[b] = (first, length)
// x: [T, H] f32; span: [B] vec2<u32>; out: [B, H]. Dispatch: (B, 1, 1) workgroups of 128.

struct Params {
    seqs: u32,
    hidden: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> span: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const T: u32 = 128u;
var<workgroup> part: array<f32, 128>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let b = wg.x;
    let tid = lid.x;
    let s = span[b];
    let inv_len = 1.0 / f32(max(s.y, 1u));
    var sq = 0.0;
    for (var j = tid; j < p.hidden; j += T) {
        var sum = 0.0;
        for (var t = 0u; t < s.y; t++) {
            sum += x[(s.x + t) * p.hidden + j];
        }
        let mean = sum * inv_len;
        out[b * p.hidden + j] = mean;
        sq += mean * mean;
    }
    part[tid] = sq;
    workgroupBarrier();
    for (var k = T / 2u; k > 0u; k = k / 2u) {
        if (tid < k) {
            part[tid] = part[tid] + part[tid + k];
        }
        workgroupBarrier();
    }
    let inv_norm = 1.0 / max(sqrt(part[0]), 1e-12);
    for (var j = tid; j < p.hidden; j += T) {
        out[b * p.hidden + j] = out[b * p.hidden + j] * inv_norm;
    }
}
