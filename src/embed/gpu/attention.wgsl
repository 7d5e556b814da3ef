// Scaled dot-product attention over a packed batch of variable-length sequences (no padding):
//   ctx[t, h·d .. h·d+d] = softmax_j(scale · q_t · k_j) · v_j,  j over the tokens of t's sequence
// qkv: [T, 3H] row-major f32, each row Q | K | V with head h at columns h·d .. h·d+d (d = H / heads,
// at most 128); span: [T] (first token, length) of each token's sequence; ctx: [T, H].
// One invocation per (token, head), one pass over the keys with the online softmax (running max
// and sum, rescaling the accumulator). Dispatch: (ceil(T · heads / 64), 1, 1) workgroups of 64.

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

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = gid.x;
    if (idx >= p.tokens * p.heads) {
        return;
    }
    let t = idx / p.heads;
    let head = idx % p.heads;
    let d = p.hidden / p.heads;
    let row = 3u * p.hidden;
    let q0 = t * row + head * d;
    let s = span[t];
    var acc: array<f32, 128>;
    var m = -3.0e38;
    var l = 0.0;
    for (var j = 0u; j < s.y; j++) {
        let k0 = (s.x + j) * row + p.hidden + head * d;
        var dot = 0.0;
        for (var c = 0u; c < d; c++) {
            dot = fma(qkv[q0 + c], qkv[k0 + c], dot);
        }
        let sc = dot * p.scale;
        let m2 = max(m, sc);
        let corr = exp(m - m2);
        let pj = exp(sc - m2);
        l = l * corr + pj;
        let v0 = k0 + p.hidden;
        for (var c = 0u; c < d; c++) {
            acc[c] = fma(acc[c], corr, pj * qkv[v0 + c]);
        }
        m = m2;
    }
    let o = t * p.hidden + head * d;
    for (var c = 0u; c < d; c++) {
        ctx[o + c] = acc[c] / l;
    }
}
