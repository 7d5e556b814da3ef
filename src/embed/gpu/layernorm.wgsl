// Residual add + LayerNorm, in place over rows:
//   x[r, :] = (y − mean(y)) / sqrt(var(y) + eps) · gamma + beta,  y = x[r, :] + res[r, :]
// (res is skipped when `has_res` is 0; biased variance, as PyTorch). x, res: [rows, H] row-major
// f32; gamma, beta: [H]. Dispatch: (rows, 1, 1) workgroups of 128 threads, one row each.

struct Params {
    rows: u32,
    h: u32,
    eps: f32,
    has_res: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read> res: array<f32>;
@group(0) @binding(3) var<storage, read> gamma: array<f32>;
@group(0) @binding(4) var<storage, read> beta: array<f32>;

const T: u32 = 128u;
var<workgroup> part: array<f32, 128>;

fn reduce_sum(tid: u32, v: f32) -> f32 {
    part[tid] = v;
    workgroupBarrier();
    for (var s = T / 2u; s > 0u; s = s / 2u) {
        if (tid < s) {
            part[tid] = part[tid] + part[tid + s];
        }
        workgroupBarrier();
    }
    let total = part[0];
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wg.x;
    let tid = lid.x;
    let base = row * p.h;
    var sum = 0.0;
    for (var j = tid; j < p.h; j += T) {
        var v = x[base + j];
        if (p.has_res == 1u) {
            v = v + res[base + j];
            x[base + j] = v;
        }
        sum += v;
    }
    let mean = reduce_sum(tid, sum) / f32(p.h);
    var sq = 0.0;
    for (var j = tid; j < p.h; j += T) {
        let d = x[base + j] - mean;
        sq += d * d;
    }
    let inv = inverseSqrt(reduce_sum(tid, sq) / f32(p.h) + p.eps);
    for (var j = tid; j < p.h; j += T) {
        x[base + j] = (x[base + j] - mean) * inv * gamma[j] + beta[j];
    }
}
