// Scaled dot-product attention over a packed batch of variable-length sequences (no padding):
//   ctx[t, h·d .. h·d+d] = softmax_j(scale · q_t · k_j) · v_j,  j over the tokens of t's sequence
// qkv: [T, 3H] row-major f32, each row Q | K | V with head h at columns h·d .. h·d+d, where
// d = H / heads is a multiple of 16 and at most 64; span: [B] (first token, length) of each
// sequence; ctx: [T, H].
//
// Tiled (flash-attention style): one workgroup of 64 threads per (16-query tile, head, sequence).
// The query tile (pre-scaled) stays in workgroup memory; 16-key tiles of K and V are staged there
// one after another; each tile's 16 × 16 scores go through workgroup memory, and each query keeps
// a running max and sum (online softmax), rescaling its accumulator. Four threads share a query,
// each owning d / 4 output columns in at most four vec4 registers (never a dynamically indexed
// private array). Workgroup memory: 3 × 4 KiB + 1 KiB.
// Dispatch: (ceil(longest sequence / 16), heads, sequences); tiles past a sequence's end return.

struct Params {
    tokens: u32,
    hidden: u32,
    heads: u32,
    scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;
@group(0) @binding(2) var<storage, read> span: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> ctx: array<f32>;

const TILE: u32 = 16u;
// vec4s per staged row (64 floats: the largest head dimension).
const ROW4: u32 = 16u;
const NEG: f32 = -3.0e38;

var<workgroup> q_s: array<vec4<f32>, 256>;
var<workgroup> k_s: array<vec4<f32>, 256>;
var<workgroup> v_s: array<vec4<f32>, 256>;
var<workgroup> s_s: array<f32, 256>;

// Reads 4 floats of qkv from `o`.
fn load4(o: u32) -> vec4<f32> {
    return vec4<f32>(qkv[o], qkv[o + 1u], qkv[o + 2u], qkv[o + 3u]);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let s = span[wg.z];
    let q0 = wg.x * TILE;
    if (q0 >= s.y) {
        return;
    }
    let head = wg.y;
    let tid = lid.x;
    let d = p.hidden / p.heads;
    let d4 = d / 4u;
    let row = 3u * p.hidden;
    let col = head * d;
    // The query tile, scaled; rows past the end are zero.
    for (var e = tid; e < TILE * d4; e += 64u) {
        let r = e / d4;
        let c = e % d4;
        var v = vec4<f32>(0.0);
        if (q0 + r < s.y) {
            v = load4((s.x + q0 + r) * row + col + 4u * c) * p.scale;
        }
        q_s[r * ROW4 + c] = v;
    }
    // This thread's query and its vec4 columns part·nv .. part·nv + nv.
    let qi = tid / 4u;
    let nv = d4 / 4u;
    let c0 = (tid % 4u) * nv;
    var m = NEG;
    var l = 0.0;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    for (var k0 = 0u; k0 < s.y; k0 += TILE) {
        for (var e = tid; e < TILE * d4; e += 64u) {
            let r = e / d4;
            let c = e % d4;
            var kv = vec4<f32>(0.0);
            var vv = vec4<f32>(0.0);
            if (k0 + r < s.y) {
                let o = (s.x + k0 + r) * row + col + 4u * c;
                kv = load4(o + p.hidden);
                vv = load4(o + 2u * p.hidden);
            }
            k_s[r * ROW4 + c] = kv;
            v_s[r * ROW4 + c] = vv;
        }
        workgroupBarrier();
        // Scores of the tile: 256 entries, 4 per thread; keys past the end are masked.
        for (var i = 0u; i < 4u; i++) {
            let e = tid + i * 64u;
            let qr = e / TILE;
            let kc = e % TILE;
            var sc = 0.0;
            for (var c = 0u; c < d4; c++) {
                sc += dot(q_s[qr * ROW4 + c], k_s[kc * ROW4 + c]);
            }
            if (k0 + kc >= s.y) {
                sc = NEG;
            }
            s_s[e] = sc;
        }
        workgroupBarrier();
        // Online softmax over the tile's 16 scores of query qi.
        var mt = m;
        for (var j = 0u; j < TILE; j++) {
            mt = max(mt, s_s[qi * TILE + j]);
        }
        let corr = exp(m - mt);
        l *= corr;
        acc0 *= corr;
        acc1 *= corr;
        acc2 *= corr;
        acc3 *= corr;
        for (var j = 0u; j < TILE; j++) {
            let pj = exp(s_s[qi * TILE + j] - mt);
            l += pj;
            let vb = j * ROW4 + c0;
            acc0 = fma(vec4<f32>(pj), v_s[vb], acc0);
            if (nv > 1u) {
                acc1 = fma(vec4<f32>(pj), v_s[vb + 1u], acc1);
            }
            if (nv > 2u) {
                acc2 = fma(vec4<f32>(pj), v_s[vb + 2u], acc2);
            }
            if (nv > 3u) {
                acc3 = fma(vec4<f32>(pj), v_s[vb + 3u], acc3);
            }
        }
        m = mt;
        workgroupBarrier();
    }
    if (q0 + qi < s.y) {
        let o = (s.x + q0 + qi) * p.hidden + col + 4u * c0;
        let inv = 1.0 / l;
        store4(o, acc0 * inv);
        if (nv > 1u) {
            store4(o + 4u, acc1 * inv);
        }
        if (nv > 2u) {
            store4(o + 8u, acc2 * inv);
        }
        if (nv > 3u) {
            store4(o + 12u, acc3 * inv);
        }
    }
}

fn store4(o: u32, v: vec4<f32>) {
    ctx[o] = v.x;
    ctx[o + 1u] = v.y;
    ctx[o + 2u] = v.z;
    ctx[o + 3u] = v.w;
}
