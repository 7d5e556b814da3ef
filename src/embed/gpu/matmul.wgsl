// Tiled matrix multiply with fused bias and optional GELU (erf form, gelu.wgsl, appended by the
// host):
//   out[M, N] = act(a[M, K] · W[K, N] + bias[N])
// a, out: row-major f32. W: the CPU path's packed layout (src/embed/gemm.rs), 16-column panels
// [ceil(N / 16)][K][16], so W[kk, c] = w[((c / 16) · K + kk) · 16 + c % 16] and both paths
// share one copy of the weights; bound as vec4s (a panel row is four of them).
// Dispatch: (ceil(N / BN), ceil(M / BM), 1) workgroups of (BN / 4) × (BM / 4) threads. Each workgroup computes a BM × BN output tile; each thread a 4 × 4
// block of it, from BK-wide K slices of `a` and `w` staged in workgroup memory. The block's 16
// sums are four vec4 registers (one per row), never a dynamically indexed private array, which
// drivers keep in local memory.
// Tile shapes (the host picks one per product, src/embed/gpu/kernels.rs): 64 × 64 with BK = 16
// (256 threads, 2 × 4 KiB staged) as written here; 32 × 32 with BK = 16 (64 threads, 2 × 2 KiB)
// for products whose 64 × 64 grid would leave most of the GPU idle (a batch of 8–32 sentences);
// 32 × 32 with BK = 64 (2 × 8 KiB) where even that grid is too small (1–8 sentences): too few
// workgroups to hide the latency of global loads behind each other, so a product's time is its
// K / BK round trips, and a 64-wide slice puts 8 loads per thread in flight at once.
// Precision: as written, f32 throughout. The f16 variant (`shader-f16`) binds W as vec4<f16>,
// stages both tiles as f16 and forms each 16-wide part of a slice's products and sums in f16 (`mul4`),
// adding every slice's sums into the f32 accumulators: half the staged bytes and twice the
// arithmetic rate on GPUs with packed f16, at ≥ 0.999 cosine to the golden vectors.

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

// The type of staged values and of the products within one K slice.
alias mul4 = vec4<f32>;
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
var<workgroup> a_t: array<mul4, BM * BK / 4u>;
// w tile: w_t[kk * TX + c / 4] holds columns c .. c + 3 at k0 + kk.
var<workgroup> w_t: array<mul4, BK * BN / 4u>;

// a[row, k], zero outside the matrix.
fn a_at(row: u32, k: u32) -> f32 {
    if (row < p.m && k < p.k) {
        return a[row * p.k + k];
    }
    return 0.0;
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
            a_t[ka * TY + r4] = mul4(vec4<f32>(a_at(r, k0 + ka), a_at(r + 1u, k0 + ka), a_at(r + 2u, k0 + ka), a_at(r + 3u, k0 + ka)));
            // w: 1 k × 4 columns per vec4 (a panel row is 16 contiguous, zero-padded columns).
            let kw = e / TX;
            let gc = col0 + 4u * (e % TX);
            var wv = mul4(0.0);
            if (k0 + kw < p.k && gc < p.n) {
                wv = mul4(w[((gc / 16u) * p.k + k0 + kw) * 4u + (gc % 16u) / 4u]);
            }
            w_t[kw * TX + e % TX] = wv;
        }
        workgroupBarrier();
        // Each 16-wide slice's sums in `mul4`, then into the f32 accumulators.
        for (var k1 = 0u; k1 < BK; k1 += 16u) {
            var s0 = mul4(0.0);
            var s1 = mul4(0.0);
            var s2 = mul4(0.0);
            var s3 = mul4(0.0);
            for (var kk = k1; kk < k1 + 16u; kk++) {
                let av = a_t[kk * TY + lid.y];
                let wv = w_t[kk * TX + lid.x];
                s0 = fma(mul4(av.x), wv, s0);
                s1 = fma(mul4(av.y), wv, s1);
                s2 = fma(mul4(av.z), wv, s2);
                s3 = fma(mul4(av.w), wv, s3);
            }
            acc0 += vec4<f32>(s0);
            acc1 += vec4<f32>(s1);
            acc2 += vec4<f32>(s2);
            acc3 += vec4<f32>(s3);
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
