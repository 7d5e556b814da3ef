// Tiled matrix multiply with fused bias and optional GELU (erf form):
//   out[M, N] = act(a[M, K] · W[K, N] + bias[N])
// a, out: row-major f32. W: the CPU path's packed layout (src/embed/gemm.rs), 16-column panels
// [ceil(N / 16)][K][16], so W[kk, c] = w[((c / 16) · K + kk) · 16 + c % 16] and both paths
// share one copy of the weights; bound as vec4s (a panel row is four of them).
// Dispatch: (ceil(N / BN), ceil(M / BM), 1) workgroups of (BN / 4) × (BM / 4) threads. Each workgroup computes a BM × BN output tile; each thread a 4 × 4
// block of it, from 16-wide K slices of `a` and `w` staged in workgroup memory. The block's 16
// sums are four vec4 registers (one per row), never a dynamically indexed private array, which
// drivers keep in local memory.
// Tile shapes (the host picks one per product, src/embed/gpu/mod.rs): 64 × 64 (256 threads,
// 2 × 4 KiB staged) as written here, and 32 × 32 (64 threads, 2 × 2 KiB) for products whose
// 64 × 64 grid would leave most of the GPU idle (a query batch of 10–80 rows).

struct Params {
    m: u32,
    n: u32,
    k: u32,
    // 0: identity, 1: GELU (erf form)
    act: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 16u;
// Threads along N and M, threads per workgroup, staged vec4s of each tile per thread (BM = BN).
const TX: u32 = BN / 4u;
const TY: u32 = BM / 4u;
const THREADS: u32 = TX * TY;
const LOADS: u32 = BM * BK / 4u / THREADS;

// Both tiles are held as vec4s, so the inner loop reads a thread's 4 rows and 4 columns with two
// loads. a tile, transposed: a_t[kk * TY + r / 4] holds rows r .. r + 3 at k0 + kk.
var<workgroup> a_t: array<vec4<f32>, BM * BK / 4u>;
// w tile: w_t[kk * TX + c / 4] holds columns c .. c + 3 at k0 + kk.
var<workgroup> w_t: array<vec4<f32>, BK * BN / 4u>;

// a[row, k], zero outside the matrix.
fn a_at(row: u32, k: u32) -> f32 {
    if (row < p.m && k < p.k) {
        return a[row * p.k + k];
    }
    return 0.0;
}

// erf(x) = x · P(x²) / Q(x²), x clamped to [-4, 4]; the same fit as the CPU path
// (src/embed/ops.rs), max abs error 4.2e-7.
fn erf(x0: f32) -> f32 {
    let x = clamp(x0, -4.0, 4.0);
    let z = x * x;
    let num = 1.1283787 + z * (0.21392831 + z * (0.052431476 + z * (0.0042924302 + z * (0.00015552716 + z * (-1.9904234e-6 + z * 1.9220128e-8)))));
    let den = 1.0 + z * (0.5229167 + z * (0.120792996 + z * (0.015549804 + z * 0.001097903)));
    return x * num / den;
}

fn gelu(x: f32) -> f32 {
    return 0.5 * x * (1.0 + erf(x * 0.70710678));
}

// Writes one row of a thread's block: out[r, c0 .. c0 + 4] = act(v + bias), within bounds.
fn store_row(r: u32, c0: u32, v: vec4<f32>) {
    if (r >= p.m) {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        let c = c0 + j;
        if (c < p.n) {
            var x = v[j] + bias[c];
            if (p.act == 1u) {
                x = gelu(x);
            }
            out[r * p.n + c] = x;
        }
    }
}

@compute @workgroup_size(TX, TY)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let tid = lid.y * TX + lid.x;
    let row0 = wg.y * BM;
    let col0 = wg.x * BN;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        for (var i = 0u; i < LOADS; i++) {
            let e = tid + i * THREADS;
            // a: 4 rows × 1 k per vec4; consecutive threads read consecutive k of a row.
            let r4 = e / BK;
            let ka = e % BK;
            let r = row0 + 4u * r4;
            a_t[ka * TY + r4] = vec4<f32>(a_at(r, k0 + ka), a_at(r + 1u, k0 + ka), a_at(r + 2u, k0 + ka), a_at(r + 3u, k0 + ka));
            // w: 1 k × 4 columns per vec4 (a panel row is 16 contiguous, zero-padded columns).
            let kw = e / TX;
            let gc = col0 + 4u * (e % TX);
            var wv = vec4<f32>(0.0);
            if (k0 + kw < p.k && gc < p.n) {
                wv = w[((gc / 16u) * p.k + k0 + kw) * 4u + (gc % 16u) / 4u];
            }
            w_t[kw * TX + e % TX] = wv;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk++) {
            let av = a_t[kk * TY + lid.y];
            let wv = w_t[kk * TX + lid.x];
            acc0 = fma(vec4<f32>(av.x), wv, acc0);
            acc1 = fma(vec4<f32>(av.y), wv, acc1);
            acc2 = fma(vec4<f32>(av.z), wv, acc2);
            acc3 = fma(vec4<f32>(av.w), wv, acc3);
        }
        workgroupBarrier();
    }
    let r = row0 + lid.y * 4u;
    let c0 = col0 + lid.x * 4u;
    store_row(r, c0, acc0);
    store_row(r + 1u, c0, acc1);
    store_row(r + 2u, c0, acc2);
    store_row(r + 3u, c0, acc3);
}
