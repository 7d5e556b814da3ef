//! int8 matrix multiply for the CPU forward pass: `out[m×n] ≈ a[m×k] · W[k×n] + bias[n]` with
//! 8-bit weights and 7-bit activations, summed exactly in i32.
//!
//! Quantization (dynamic, as in ONNX Runtime's `quantize_dynamic` with `reduce_range`, but the
//! 7 bits on the activations and per row):
//! - weights: symmetric per output column, `W[i][j] ≈ sw[j] · qw[i][j]`, `qw ∈ [-127, 127]`,
//!   once at load ([`PackedI8`]);
//! - activations: asymmetric per row at every product, `a[r][i] ≈ lo[r] + sa[r] · qa[r][i]`,
//!   `qa ∈ [0, 127]`, `sa = (max − min) / 127` ([`QuantRows`]);
//! - so `out[r][j] = sa[r]·sw[j]·Σ qa·qw + lo[r]·sw[j]·Σ_i qw[i][j] + bias[j]`: the column sums
//!   are stored with the weights.
//!
//! The 7-bit activations are what both instruction sets multiply without saturation or
//! implementation-defined results: x86's `vpmaddubsw` (unsigned × signed bytes, pairs summed to
//! a saturating i16: `2·127·128 < 2¹⁵`) and wasm's `i32x4.relaxed_dot_i8x16_i7x16_add_s`
//! (deterministic when the second operand's top bits are clear). Every path gives bit-identical
//! integer sums.
//!
//! Weights are packed as column panels of 16, `k` in groups of 4 (zero-padded):
//! `[ceil(n/16)][ceil(k/4)][16 columns][4 k]` bytes, so one 4-byte broadcast of a row of `a`
//! meets 16 columns × 4 products in 64 contiguous bytes. Micro-kernels:
//! - x86-64 with AVX2: 4 rows × 16 columns (8 `ymm` i32 accumulators; `vpmaddubsw`, `vpmaddwd`
//!   against ones, `vpaddd`);
//! - wasm32 with relaxed SIMD: 2 rows × 16 columns (8 `v128` accumulators);
//! - wasm32 with SIMD128 alone (the baseline build): 1 row × 16 columns, bytes widened to i16
//!   and summed in pairs by `i32x4.dot_i16x8_s` (8 accumulators);
//! - elsewhere: a portable loop.
//!
//! Natively the product is split across rayon's pool exactly as the f32 one
//! (`super::gemm::for_each_task`).
use std::ops::Range;

use super::gemm::PANEL;

/// `k` values per packed group (one i32 lane's dot product).
const KG: usize = 4;

/// A weight matrix `[k×n]` quantized to int8 per output column and packed (see the module
/// documentation).
#[derive(Debug, Clone)]
pub struct PackedI8 {
    k: usize,
    n: usize,
    /// `[ceil(n/16)][ceil(k/4)][16][4]`.
    data: Vec<i8>,
    /// `sw[j]`, `[ceil(n/16)·16]` (zero past `n`).
    scale: Vec<f32>,
    /// `sw[j] · Σ_i qw[i][j]`, the activations' offset term, `[ceil(n/16)·16]`.
    offset: Vec<f32>,
}

impl PackedI8 {
    /// Quantizes and packs a Hugging Face `Linear` weight, stored `[n×k]` (outputs × inputs),
    /// row-major.
    ///
    /// Panics when `w_nk` is not `n·k` long.
    pub fn from_linear(w_nk: &[f32], n: usize, k: usize) -> Self {
        assert_eq!(w_nk.len(), n * k, "weight is not [n×k]");
        let panels = n.div_ceil(PANEL);
        let groups = k.div_ceil(KG);
        let mut data = vec![0i8; panels * groups * PANEL * KG];
        let mut scale = vec![0f32; panels * PANEL];
        let mut offset = vec![0f32; panels * PANEL];
        for j in 0..n {
            let col = &w_nk[j * k..(j + 1) * k];
            let amax = col.iter().fold(0f32, |m, &x| if x.is_finite() { m.max(x.abs()) } else { m });
            let s = if amax > 0.0 { amax / 127.0 } else { 1.0 };
            let (p, c) = (j / PANEL, j % PANEL);
            let mut sum = 0i32;
            for (i, &x) in col.iter().enumerate() {
                let q = if x.is_finite() { (x / s).round().clamp(-127.0, 127.0) as i8 } else { 0 };
                sum += q as i32;
                data[((p * groups + i / KG) * PANEL + c) * KG + i % KG] = q;
            }
            scale[j] = s;
            offset[j] = s * sum as f32;
        }
        PackedI8 { k, n, data, scale, offset }
    }

    /// Inputs.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Outputs.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Bytes held (weights, scales and offsets).
    pub fn bytes(&self) -> usize {
        self.data.len() + 4 * (self.scale.len() + self.offset.len())
    }

    /// The weights as the integer kernels see them, `[n×k]` row-major: `sw[j] · q[j][i]`. The
    /// kernels' sums are exact, so their product equals the f32 product of these and
    /// [`QuantRows::dequantized`] up to f32 rounding (what the tests check, natively and in the
    /// browser builds).
    pub fn dequantized(&self) -> Vec<f32> {
        let groups = self.k.div_ceil(KG);
        (0..self.n * self.k)
            .map(|x| {
                let (j, i) = (x / self.k, x % self.k);
                self.scale[j] * self.data[(((j / PANEL) * groups + i / KG) * PANEL + j % PANEL) * KG + i % KG] as f32
            })
            .collect()
    }
}

/// Rows of activations quantized to 7 bits: `a[r][i] ≈ lo[r] + step[r] · q[r][i]`.
#[derive(Debug, Default)]
pub struct QuantRows {
    /// Row stride in bytes: `k` rounded up to a multiple of 4 (the padding is 0).
    stride: usize,
    /// `[m][stride]`, each in `0..=127`.
    q: Vec<u8>,
    step: Vec<f32>,
    lo: Vec<f32>,
}

impl QuantRows {
    /// Quantizes the `m` rows of `a` (`[m×k]`, row-major), each value first multiplied by its
    /// channel's `scale[c]` when given, reusing this buffer. A non-finite value counts as 0.
    pub fn quantize(&mut self, a: &[f32], m: usize, k: usize, scale: Option<&[f32]>) {
        assert!(a.len() >= m * k, "quantize: shapes");
        self.stride = k.div_ceil(KG) * KG;
        self.q.clear();
        self.q.resize(m * self.stride, 0);
        self.step.clear();
        self.lo.clear();
        let mut scaled = Vec::new();
        for (r, row) in a.chunks_exact(k.max(1)).take(m).enumerate() {
            let row = match scale {
                Some(s) => {
                    scaled.clear();
                    scaled.extend(row.iter().zip(s).map(|(x, s)| x * s));
                    &scaled[..]
                }
                None => row,
            };
            let fin = |x: f32| if x.is_finite() { x } else { 0.0 };
            let (lo, hi) = row.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &x| (lo.min(fin(x)), hi.max(fin(x))));
            let (lo, hi) = if lo <= hi { (lo, hi) } else { (0.0, 0.0) };
            let step = if hi > lo { (hi - lo) / 127.0 } else { 1.0 };
            let inv = 1.0 / step;
            let dst = &mut self.q[r * self.stride..r * self.stride + k];
            for (d, &x) in dst.iter_mut().zip(row) {
                *d = ((fin(x) - lo) * inv).round().clamp(0.0, 127.0) as u8;
            }
            self.step.push(step);
            self.lo.push(lo);
        }
    }

    /// The `m` rows last quantized, as the integer kernels see them: `[m×k]` row-major,
    /// `lo[r] + step[r] · q[r][i]` (see [`PackedI8::dequantized`]).
    pub fn dequantized(&self, k: usize) -> Vec<f32> {
        (0..self.step.len() * k).map(|i| self.lo[i / k] + self.step[i / k] * self.q[(i / k) * self.stride + i % k] as f32).collect()
    }
}

/// `out[m×n] = act((a[m×k] ⊙ scale) · W + bias)` through int8 (see the module documentation):
/// `scale[c]` multiplies input channel `c` (a smoothing factor folded into `W`; none: 1); `act`
/// is BERT's GELU when `gelu` is set. `scratch` holds the quantized rows between calls.
///
/// Panics when a slice is shorter than its shape says.
#[allow(clippy::too_many_arguments)]
pub fn matmul_bias_i8(
    a: &[f32],
    m: usize,
    w: &PackedI8,
    scale: Option<&[f32]>,
    bias: &[f32],
    out: &mut [f32],
    gelu: bool,
    scratch: &mut QuantRows,
) {
    let (k, n) = (w.k, w.n);
    assert!(a.len() >= m * k && out.len() >= m * n && bias.len() == n, "matmul_bias_i8: shapes");
    assert!(scale.is_none_or(|s| s.len() == k), "matmul_bias_i8: scale is not [k]");
    if m == 0 {
        return;
    }
    scratch.quantize(a, m, k, scale);
    let mut init = vec![0f32; w.scale.len()];
    init[..n].copy_from_slice(bias);
    let ctx = Ctx { a: scratch, w, init: &init, out: OutPtr(out.as_mut_ptr()), out_len: out.len(), gelu };
    super::gemm::for_each_task(m, k, n, &|rows, panels| ctx.run(rows, panels));
}

/// The output pointer, shared by tasks that write disjoint blocks.
#[derive(Clone, Copy)]
struct OutPtr(*mut f32);
// SAFETY: tasks given disjoint (row range, panel range) pairs write disjoint output blocks.
unsafe impl Send for OutPtr {}
unsafe impl Sync for OutPtr {}

struct Ctx<'a> {
    a: &'a QuantRows,
    w: &'a PackedI8,
    /// `bias`, zero-padded to whole panels.
    init: &'a [f32],
    out: OutPtr,
    /// The length of the slice behind `out`, for the range `debug_assert!`s of [`Ctx::run`].
    out_len: usize,
    gelu: bool,
}

/// One micro-kernel call: rows `r0..r0 + rows` of `a`, panel `p`.
struct Tile<'a> {
    /// Quantized rows, `stride` apart.
    a: &'a [u8],
    stride: usize,
    /// The panel: `groups` × 64 bytes.
    w: &'a [i8],
    groups: usize,
    /// Per row: step, lo. Per column (16): sw, offset, bias.
    step: &'a [f32],
    lo: &'a [f32],
    sw: &'a [f32],
    off: &'a [f32],
    bias: &'a [f32],
    /// Output row 0 of the tile, column `p·16`; row stride `n`.
    o: *mut f32,
    ldo: usize,
    cols: usize,
    gelu: bool,
}

impl Ctx<'_> {
    fn run(&self, rows: Range<usize>, panels: Range<usize>) {
        let (n, groups, stride) = (self.w.n, self.w.k.div_ceil(KG), self.a.stride);
        for p in panels {
            let cols = (n - p * PANEL).min(PANEL);
            let c = p * PANEL..(p + 1) * PANEL;
            // The ranges the micro-kernel call reads and writes (checked in test builds): the
            // rows' quantized bytes, the panel's, and the output block.
            debug_assert!(!rows.is_empty() && rows.end * stride <= self.a.q.len() && stride >= groups * KG, "gemm_i8 tile: rows {rows:?}");
            debug_assert!((p + 1) * groups * PANEL * KG <= self.w.data.len() && c.end <= self.init.len(), "gemm_i8 tile: panel {p}");
            debug_assert!((rows.end - 1) * n + p * PANEL + cols <= self.out_len, "gemm_i8 tile: a write past out");
            let t = Tile {
                a: &self.a.q[rows.start * stride..rows.end * stride],
                stride,
                w: &self.w.data[p * groups * PANEL * KG..(p + 1) * groups * PANEL * KG],
                groups,
                step: &self.a.step[rows.clone()],
                lo: &self.a.lo[rows.clone()],
                sw: &self.w.scale[c.clone()],
                off: &self.w.offset[c.clone()],
                bias: &self.init[c],
                // SAFETY (of the writes through it): row < m, column p·16 + cols ≤ n, checked by
                // `matmul_bias_i8`; tasks own disjoint (rows, panels) blocks.
                o: unsafe { self.out.0.add(rows.start * n + p * PANEL) },
                ldo: n,
                cols,
                gelu: self.gelu,
            };
            kernel::tile(&t);
        }
    }
}

impl Tile<'_> {
    /// Writes row `r`'s 16 integer sums as floats: `step·sw·acc + lo·offset + bias`, GELU'd when
    /// asked, the first `cols` of them.
    #[inline(always)]
    fn store(&self, r: usize, acc: &[i32; PANEL]) {
        let (step, lo) = (self.step[r], self.lo[r]);
        for (c, &acc) in acc.iter().enumerate().take(self.cols) {
            let x = step * self.sw[c] * acc as f32 + lo * self.off[c] + self.bias[c];
            let x = if self.gelu { super::ops::gelu_erf(x) } else { x };
            // SAFETY: r < the tile's rows and c < cols (see `Ctx::run`).
            unsafe { *self.o.add(r * self.ldo + c) = x };
        }
    }

    fn rows(&self) -> usize {
        self.step.len()
    }
}

#[cfg(target_arch = "x86_64")]
mod kernel {
    use super::{KG, PANEL, Tile};
    use core::arch::x86_64::*;

    pub fn tile(t: &Tile) {
        if is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present.
            unsafe { avx2(t) }
        } else {
            super::portable::tile(t)
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn avx2(t: &Tile) {
        let mut i = 0;
        // SAFETY: row i + R ≤ rows for every block.
        unsafe {
            while i + 4 <= t.rows() {
                block::<4>(t, i);
                i += 4;
            }
            while i < t.rows() {
                block::<1>(t, i);
                i += 1;
            }
        }
    }

    /// Rows `i..i+R`: `2R` accumulators of 8 columns.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn block<const R: usize>(t: &Tile, i: usize) {
        let ones = _mm256_set1_epi16(1);
        let mut acc = [[_mm256_setzero_si256(); 2]; R];
        let a = t.a[i * t.stride..].as_ptr();
        let w = t.w.as_ptr();
        for g in 0..t.groups {
            // SAFETY: the panel holds groups·64 bytes; each row holds stride ≥ 4·groups bytes.
            unsafe {
                let w0 = _mm256_loadu_si256(w.add(g * PANEL * KG) as *const __m256i);
                let w1 = _mm256_loadu_si256(w.add(g * PANEL * KG + 32) as *const __m256i);
                for (r, acc) in acc.iter_mut().enumerate() {
                    let x = _mm256_set1_epi32((a.add(r * t.stride + g * KG) as *const i32).read_unaligned());
                    acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w0), ones));
                    acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w1), ones));
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let mut v = [0i32; PANEL];
            // SAFETY: v holds 16 i32.
            unsafe {
                _mm256_storeu_si256(v.as_mut_ptr() as *mut __m256i, acc[0]);
                _mm256_storeu_si256(v.as_mut_ptr().add(8) as *mut __m256i, acc[1]);
            }
            t.store(i + r, &v);
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
mod kernel {
    use super::{KG, PANEL, Tile};
    use core::arch::wasm32::*;

    pub fn tile(t: &Tile) {
        let mut i = 0;
        while i + 2 <= t.rows() {
            block::<2>(t, i);
            i += 2;
        }
        if i < t.rows() {
            block::<1>(t, i);
        }
    }

    /// Rows `i..i+R` (`R` ≤ 2) × 16 columns: `4R` accumulators, written out by hand so that
    /// they stay in registers (see the f32 kernel).
    #[inline(always)]
    fn block<const R: usize>(t: &Tile, i: usize) {
        let z = i32x4_splat(0);
        let (mut c00, mut c01, mut c02, mut c03) = (z, z, z, z);
        let (mut c10, mut c11, mut c12, mut c13) = (z, z, z, z);
        let a0 = t.a[i * t.stride..].as_ptr();
        let a1 = if R == 2 { t.a[(i + 1) * t.stride..].as_ptr() } else { a0 };
        let w = t.w.as_ptr();
        for g in 0..t.groups {
            // SAFETY: the panel holds groups·64 bytes; each row holds stride ≥ 4·groups bytes.
            unsafe {
                let wp = w.add(g * PANEL * KG);
                let w0 = v128_load(wp as *const v128);
                let w1 = v128_load(wp.add(16) as *const v128);
                let w2 = v128_load(wp.add(32) as *const v128);
                let w3 = v128_load(wp.add(48) as *const v128);
                let x = v128_load32_splat(a0.add(g * KG) as *const u32);
                c00 = i32x4_relaxed_dot_i8x16_i7x16_add(w0, x, c00);
                c01 = i32x4_relaxed_dot_i8x16_i7x16_add(w1, x, c01);
                c02 = i32x4_relaxed_dot_i8x16_i7x16_add(w2, x, c02);
                c03 = i32x4_relaxed_dot_i8x16_i7x16_add(w3, x, c03);
                if R == 2 {
                    let y = v128_load32_splat(a1.add(g * KG) as *const u32);
                    c10 = i32x4_relaxed_dot_i8x16_i7x16_add(w0, y, c10);
                    c11 = i32x4_relaxed_dot_i8x16_i7x16_add(w1, y, c11);
                    c12 = i32x4_relaxed_dot_i8x16_i7x16_add(w2, y, c12);
                    c13 = i32x4_relaxed_dot_i8x16_i7x16_add(w3, y, c13);
                }
            }
        }
        t.store(i, &lanes([c00, c01, c02, c03]));
        if R == 2 {
            t.store(i + 1, &lanes([c10, c11, c12, c13]));
        }
    }

    #[inline(always)]
    fn lanes(acc: [v128; 4]) -> [i32; PANEL] {
        let mut v = [0i32; PANEL];
        for (q, a) in acc.iter().enumerate() {
            // SAFETY: v holds 16 i32.
            unsafe { v128_store(v.as_mut_ptr().add(4 * q) as *mut v128, *a) };
        }
        v
    }
}

/// wasm32 with SIMD128 alone (the baseline build): each 4-column × 4-`k` block of the panel
/// and the row's 4 bytes widened to i16, `i32x4.dot_i16x8_s` summing products in pairs into
/// two accumulators per 4 columns, the pairs added at the end; the same exact sums as the
/// relaxed kernel (products ≤ 127·128 and pair sums fit i16 / i32).
#[cfg(all(target_arch = "wasm32", not(target_feature = "relaxed-simd")))]
mod kernel {
    use super::{KG, PANEL, Tile};
    use core::arch::wasm32::*;

    /// One row at a time × 16 columns: 8 accumulators.
    pub fn tile(t: &Tile) {
        let w = t.w.as_ptr();
        for r in 0..t.rows() {
            let a = t.a[r * t.stride..].as_ptr();
            let z = i32x4_splat(0);
            let (mut l0, mut h0, mut l1, mut h1, mut l2, mut h2, mut l3, mut h3) = (z, z, z, z, z, z, z, z);
            for g in 0..t.groups {
                // SAFETY: the panel holds groups·64 bytes; each row holds stride ≥ 4·groups bytes.
                unsafe {
                    let wp = w.add(g * PANEL * KG);
                    let x = i16x8_extend_low_i8x16(v128_load32_splat(a.add(g * KG) as *const u32));
                    let w0 = v128_load(wp as *const v128);
                    let w1 = v128_load(wp.add(16) as *const v128);
                    let w2 = v128_load(wp.add(32) as *const v128);
                    let w3 = v128_load(wp.add(48) as *const v128);
                    l0 = i32x4_add(l0, i32x4_dot_i16x8(i16x8_extend_low_i8x16(w0), x));
                    h0 = i32x4_add(h0, i32x4_dot_i16x8(i16x8_extend_high_i8x16(w0), x));
                    l1 = i32x4_add(l1, i32x4_dot_i16x8(i16x8_extend_low_i8x16(w1), x));
                    h1 = i32x4_add(h1, i32x4_dot_i16x8(i16x8_extend_high_i8x16(w1), x));
                    l2 = i32x4_add(l2, i32x4_dot_i16x8(i16x8_extend_low_i8x16(w2), x));
                    h2 = i32x4_add(h2, i32x4_dot_i16x8(i16x8_extend_high_i8x16(w2), x));
                    l3 = i32x4_add(l3, i32x4_dot_i16x8(i16x8_extend_low_i8x16(w3), x));
                    h3 = i32x4_add(h3, i32x4_dot_i16x8(i16x8_extend_high_i8x16(w3), x));
                }
            }
            let mut v = [0i32; PANEL];
            for (q, (lo, hi)) in [(l0, h0), (l1, h1), (l2, h2), (l3, h3)].into_iter().enumerate() {
                // lo: columns 4q, 4q+1 as pair sums [c, c, c+1, c+1]; hi: 4q+2, 4q+3.
                let sums = i32x4_add(i32x4_shuffle::<0, 2, 4, 6>(lo, hi), i32x4_shuffle::<1, 3, 5, 7>(lo, hi));
                // SAFETY: v holds 16 i32.
                unsafe { v128_store(v.as_mut_ptr().add(4 * q) as *mut v128, sums) };
            }
            t.store(r, &v);
        }
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
mod kernel {
    pub use super::portable::tile;
}

#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
mod portable {
    use super::{KG, PANEL, Tile};

    /// One row at a time, 16 i32 accumulators.
    pub fn tile(t: &Tile) {
        for r in 0..t.rows() {
            let row = &t.a[r * t.stride..r * t.stride + t.groups * KG];
            let mut acc = [0i32; PANEL];
            for (g, x) in row.chunks_exact(KG).enumerate() {
                let w = &t.w[g * PANEL * KG..(g + 1) * PANEL * KG];
                for (c, acc) in acc.iter_mut().enumerate() {
                    *acc += (0..KG).map(|q| x[q] as i32 * w[c * KG + q] as i32).sum::<i32>();
                }
            }
            t.store(r, &acc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::gemm::tests::naive as reference;

    /// The integer sums are exact, so the kernel equals the product of the dequantized operands;
    /// against the f32 product the error is the quantization's (bounded here relative to the
    /// output's scale). Shapes cover the row and column remainders, `k` not a multiple of 4, and
    /// a product split across threads.
    #[test]
    fn matches_dequantized_product() {
        for &(m, k, n) in &[(7, 33, 37), (1, 5, 3), (13, 64, 16), (9, 40, 24), (200, 384, 120), (77, 384, 1536)] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 97) as f32 / 97.0 - 0.3).collect();
            let w: Vec<f32> = (0..n * k).map(|i| ((i * 104729) % 89) as f32 / 89.0 - 0.5).collect();
            let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
            let p = PackedI8::from_linear(&w, n, k);
            let mut q = QuantRows::default();
            q.quantize(&a, m, k, None);
            let exact = reference(&q.dequantized(k), m, k, &p.dequantized(), n, &bias);
            let want = reference(&a, m, k, &w, n, &bias);
            let mut out = vec![f32::NAN; m * n];
            matmul_bias_i8(&a, m, &p, None, &bias, &mut out, false, &mut q);
            let scale = want.iter().fold(0f32, |s, x| s.max(x.abs()));
            for (i, ((g, e), w)) in out.iter().zip(&exact).zip(&want).enumerate() {
                assert!((g - e).abs() <= 1e-4 * scale.max(1.0), "{m}x{k}x{n} [{i}]: {g} vs dequantized {e}");
                assert!((g - w).abs() <= 0.02 * scale, "{m}x{k}x{n} [{i}]: {g} vs f32 {w}");
            }
            let mut act = vec![f32::NAN; m * n];
            matmul_bias_i8(&a, m, &p, None, &bias, &mut act, true, &mut q);
            for (g, x) in act.iter().zip(&out) {
                assert_eq!(*g, crate::embed::ops::gelu_erf(*x));
            }
        }
    }

    /// Constant rows, zero columns and non-finite inputs quantize without NaN.
    #[test]
    fn degenerate_inputs_stay_finite() {
        let (m, k, n) = (3, 8, 5);
        let mut a = vec![2.5f32; m * k];
        a[k] = f32::NAN;
        a[2 * k] = f32::INFINITY;
        let mut w = vec![0f32; n * k];
        w[k..2 * k].iter_mut().for_each(|x| *x = 1.0);
        let p = PackedI8::from_linear(&w, n, k);
        let mut out = vec![f32::NAN; m * n];
        matmul_bias_i8(&a, m, &p, None, &[0.5; 5], &mut out, false, &mut QuantRows::default());
        assert!(out.iter().all(|x| x.is_finite()), "{out:?}");
        assert_eq!(out[0], 0.5);
        assert!((out[1] - (0.5 + 2.5 * 8.0)).abs() < 1e-3, "{}", out[1]);
    }
}
