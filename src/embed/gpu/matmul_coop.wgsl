// Matrix multiply on cooperative matrices (tensor cores), natively only: wgpu's
// EXPERIMENTAL_COOPERATIVE_MATRIX over VK_KHR_cooperative_matrix. Same bindings, layout and result
// as matmul.wgsl with f16 weights, and GELU from gelu.wgsl (appended by the host):
//   out[M, N] = act(a[M, K] · W[K, N] + bias[N])
// a, out: row-major f32. W: f16 in the 16-column panel layout [ceil(N / 16)][K][16], so the
// 16 × 16 block of panel j at rows k0 .. k0 + 16 is a row-major B matrix of stride 16, loaded
// straight from storage. K must be a multiple of 16 (the host checks).
// Dispatch: (ceil(N / 64), ceil(M / 64), 1) workgroups of 128 threads, which must be 4 subgroups
// of 32 (the host uses this kernel only where the adapter's subgroup size is exactly 32). Each
// subgroup computes a 32 × 32 quarter of the 64 × 64 output tile as 2 × 2 16 × 16 f32
// accumulators; per 16-wide K slice the workgroup stages a's 64 × 16 block as f16 (2 KiB).
// Products f16 × f16, sums f32. The accumulators go through workgroup memory (16 KiB) for the
// bias, GELU and bounds.

enable f16;
enable wgpu_cooperative_matrix;

struct Params {
    m: u32,
    n: u32,
    k: u32,
    // 0: identity, 1: GELU (erf form)
    act: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f16>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 16u;
const THREADS: u32 = 128u;

// a's 64 × 16 block at k0, row-major, f16.
var<workgroup> a_s: array<f16, BM * BK>;
// The 64 × 64 output tile, row-major, before bias and activation.
var<workgroup> c_s: array<f32, BM * BN>;

// a[row, k], zero outside the matrix.
fn a_at(row: u32, k: u32) -> f32 {
    if (row < p.m && k < p.k) {
        return a[row * p.k + k];
    }
    return 0.0;
}

@compute @workgroup_size(128)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
    @builtin(subgroup_id) sg: u32,
) {
    let row0 = wg.y * BM;
    let col0 = wg.x * BN;
    // This subgroup's quarter of the tile.
    let sr = (sg / 2u) * 32u;
    let sc = (sg % 2u) * 32u;
    // Its two 16-column panels, clamped to the last one: a panel past N only feeds outputs the
    // epilogue drops, and every subgroup keeps loading (cooperative operations need uniform
    // control flow).
    let last = (p.n + 15u) / 16u - 1u;
    let j0 = min((col0 + sc) / 16u, last);
    let j1 = min((col0 + sc) / 16u + 1u, last);
    var c00 = coop_mat16x16<f32, C>();
    var c01 = coop_mat16x16<f32, C>();
    var c10 = coop_mat16x16<f32, C>();
    var c11 = coop_mat16x16<f32, C>();
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        for (var i = 0u; i < BM * BK / THREADS; i++) {
            let e = tid + i * THREADS;
            a_s[e] = f16(a_at(row0 + e / BK, k0 + e % BK));
        }
        workgroupBarrier();
        let a0 = coopLoadT<coop_mat16x16<f16, A>>(&a_s[sr * BK], BK);
        let a1 = coopLoadT<coop_mat16x16<f16, A>>(&a_s[(sr + 16u) * BK], BK);
        let b0 = coopLoadT<coop_mat16x16<f16, B>>(&w[(j0 * p.k + k0) * 16u], 16u);
        let b1 = coopLoadT<coop_mat16x16<f16, B>>(&w[(j1 * p.k + k0) * 16u], 16u);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        workgroupBarrier();
    }
    coopStoreT(c00, &c_s[sr * BN + sc], BN);
    coopStoreT(c01, &c_s[sr * BN + sc + 16u], BN);
    coopStoreT(c10, &c_s[(sr + 16u) * BN + sc], BN);
    coopStoreT(c11, &c_s[(sr + 16u) * BN + sc + 16u], BN);
    workgroupBarrier();
    for (var i = 0u; i < BM * BN / THREADS; i++) {
        let e = tid + i * THREADS;
        let r = row0 + e / BN;
        let c = col0 + e % BN;
        if (r < p.m && c < p.n) {
            var x = c_s[e] + bias[c];
            if (p.act == 1u) {
                x = gelu(x);
            }
            out[r * p.n + c] = x;
        }
    }
}
