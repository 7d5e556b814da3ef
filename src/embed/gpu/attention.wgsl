// Scaled dot-product attention over a packed batch of variable-length sequences (no padding):
//   ctx[t, h·d .. h·d+d] = softmax_j(scale · q_t · k_j) · v_j,  j over the tokens of t's sequence
// qkv: [T, 3H] row-major f32, each row Q | K | V with head h at columns h·d .. h·d+d, where
// d = H / heads is a multiple of 16 and at most 64; span: [B] (first token, length) of each
// sequence; ctx: [T, H]. Both are bound as vec4s (every head starts at a multiple of 16 floats),
// so each global read and write moves 16 bytes.
//
// Tiled (flash-attention style): one workgroup of 64 threads per (16-query tile, head, sequence).
// The query tile (pre-scaled) stays in workgroup memory; 16-key tiles of K and V are staged there
// one after another; each tile's 16 × 16 scores go through workgroup memory, and each query keeps
// a running max and sum (online softmax), rescaling its accumulator. Four threads share a query,
// each owning d / 4 output columns in at most four vec4 registers (never a dynamically indexed
// private array). Staged rows are 17 vec4s apart and score rows 17 floats apart: with a 16-vec4
// stride, the 8 keys that a quarter-warp reads at once in the score loop all fell in the same 4
// of 32 memory banks (8-way conflicts); one vec4 of padding spreads them over all 32.
// Workgroup memory: 3 × 4.25 KiB + 1.06 KiB.
// Dispatch: (ceil(longest sequence / 16), heads, sequences); tiles past a sequence's end return.

struct Params {
    tokens: u32,
    hidden: u32,
    heads: u32,
    scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> span: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> ctx: array<vec4<f32>>;

const TILE: u32 = 16u;
// vec4s between staged rows: 16 (64 floats, the largest head dimension) and one of padding.
const ROW4: u32 = 17u;
// Floats between score rows: 16 and one of padding.
const SROW: u32 = 17u;
const NEG: f32 = -3.0e38;

var<workgroup> q_s: array<vec4<f32>, 272>;
var<workgroup> k_s: array<vec4<f32>, 272>;
var<workgroup> v_s: array<vec4<f32>, 272>;
var<workgroup> s_s: array<f32, 272>;

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
    // In vec4s: a qkv row, the head's first column, K's and V's offsets within a row.
    let row = 3u * p.hidden / 4u;
    let col = head * d4;
    let h4 = p.hidden / 4u;
    // The query tile, scaled; rows past the end are zero.
    for (var e = tid; e < TILE * d4; e += 64u) {
        let r = e / d4;
        let c = e % d4;
        var v = vec4<f32>(0.0);
        if (q0 + r < s.y) {
            v = qkv[(s.x + q0 + r) * row + col + c] * p.scale;
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
                let o = (s.x + k0 + r) * row + col + c;
                kv = qkv[o + h4];
                vv = qkv[o + 2u * h4];
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
            s_s[qr * SROW + kc] = sc;
        }
        workgroupBarrier();
        // Online softmax over the tile's 16 scores of query qi.
        var mt = m;
        for (var j = 0u; j < TILE; j++) {
            mt = max(mt, s_s[qi * SROW + j]);
        }
        let corr = exp(m - mt);
        l *= corr;
        acc0 *= corr;
        acc1 *= corr;
        acc2 *= corr;
        acc3 *= corr;
        for (var j = 0u; j < TILE; j++) {
            let pj = exp(s_s[qi * SROW + j] - mt);
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
        let o = (s.x + q0 + qi) * h4 + col + c0;
        let inv = 1.0 / l;
        ctx[o] = acc0 * inv;
        if (nv > 1u) {
            ctx[o + 1u] = acc1 * inv;
        }
        if (nv > 2u) {
            ctx[o + 2u] = acc2 * inv;
        }
        if (nv > 3u) {
            ctx[o + 3u] = acc3 * inv;
        }
    }
}
