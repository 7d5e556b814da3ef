//! Element-wise and row kernels of the CPU forward pass: GELU (erf form), softmax, LayerNorm,
//! residual add, with the `erf` and `exp` approximations they use.
//!
//! On wasm32 they are written with SIMD128 intrinsics, so they stay vectorised at the
//! size-optimised level of the browser build (`opt-level = "s"`, where the auto-vectoriser
//! mostly gives up); elsewhere they are plain loops that the compiler vectorises at `-O3`. Both
//! paths evaluate the same formulas (results agree to ~1e-7).

/// `e^x`, branch-free: `x = n·ln2 + r` (Cody–Waite split of ln 2, `n` rounded with the 1.5·2²³
/// trick), `e^r` by its degree-6 Taylor polynomial on |r| ≤ ln2/2, times `2^n` built from the
/// exponent bits. Inputs are clamped to [−87.3, 88.3] (the normal range). Relative error below
/// 3e-7 (tested against f64 `exp`).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.3, 88.3);
    let n = (x * LOG2E + MAGIC) - MAGIC;
    let r = x - n * LN2_HI + n * LN2_LO;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (E3 + r * (E4 + r * (E5 + r * E6)))));
    p * f32::from_bits(((n as i32 + 127) << 23) as u32)
}

/// `erf(x)` as a rational function, `x · P(x²) / Q(x²)` with `x` clamped to [−4, 4] (beyond,
/// erf is ±1 in f32). Coefficients fitted by us (iteratively reweighted least squares on 20,000
/// points of [0, 4] against double-precision erf); maximum absolute error 4.2e-7 in f32 over
/// [−6, 6] (tested against `libm::erff`).
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let z = x * x;
    let p = P0 + z * (P1 + z * (P2 + z * (P3 + z * (P4 + z * (P5 + z * P6)))));
    let q = 1.0 + z * (Q1 + z * (Q2 + z * (Q3 + z * Q4)));
    x * p / q
}

/// GELU, erf form as BERT uses: `x/2 · (1 + erf(x/√2))`.
#[inline(always)]
pub fn gelu_erf(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

const LOG2E: f32 = std::f32::consts::LOG2_E;
const MAGIC: f32 = 12_582_912.0; // 1.5 · 2²³: adding and subtracting it rounds to an integer
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = 2.121_944_4e-4; // ln 2 = LN2_HI − LN2_LO
const E3: f32 = 1.0 / 6.0;
const E4: f32 = 1.0 / 24.0;
const E5: f32 = 1.0 / 120.0;
const E6: f32 = 1.0 / 720.0;
const P0: f32 = 1.128_378_7;
const P1: f32 = 0.213_928_31;
const P2: f32 = 0.052_431_476;
const P3: f32 = 0.004_292_430_2;
const P4: f32 = 0.000_155_527_16;
const P5: f32 = -1.990_423_4e-6;
const P6: f32 = 1.922_012_8e-8;
const Q1: f32 = 0.522_916_7;
const Q2: f32 = 0.120_792_99;
const Q3: f32 = 0.015_549_804;
const Q4: f32 = 0.001_097_903;

/// `x ← gelu_erf(x)` element-wise.
pub fn gelu(x: &mut [f32]) {
    #[cfg(target_arch = "wasm32")]
    {
        let (n, p) = (x.len(), x.as_mut_ptr());
        let mut i = 0;
        while i + 4 <= n {
            // SAFETY: i + 4 ≤ len; unaligned v128 access is allowed.
            unsafe { w::st(p.add(i), w::gelu4(w::ld(p.add(i)))) };
            i += 4;
        }
        for v in &mut x[i..] {
            *v = gelu_erf(*v);
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    for v in x.iter_mut() {
        *v = gelu_erf(*v);
    }
}

/// `row ← softmax(scale · row)`, max-subtracted.
pub fn softmax(row: &mut [f32], scale: f32) {
    if row.is_empty() {
        return;
    }
    #[cfg(target_arch = "wasm32")]
    {
        use core::arch::wasm32::*;
        let (n, p) = (row.len(), row.as_mut_ptr());
        let whole = n - n % 4;
        // SAFETY: every access below is at i + 4 ≤ whole ≤ len.
        unsafe {
            let mut vmax = f32x4_splat(f32::NEG_INFINITY);
            let mut i = 0;
            while i < whole {
                vmax = f32x4_pmax(vmax, w::ld(p.add(i)));
                i += 4;
            }
            let max = row[whole..].iter().copied().fold(w::hmax(vmax), f32::max);
            let (vmax, vscale) = (f32x4_splat(max), f32x4_splat(scale));
            let mut acc = f32x4_splat(0.0);
            let mut i = 0;
            while i < whole {
                let e = w::exp4(f32x4_mul(f32x4_sub(w::ld(p.add(i)), vmax), vscale));
                w::st(p.add(i), e);
                acc = f32x4_add(acc, e);
                i += 4;
            }
            let mut sum = w::hsum(acc);
            for v in &mut row[whole..] {
                *v = exp((*v - max) * scale);
                sum += *v;
            }
            let inv = f32x4_splat(1.0 / sum);
            let mut i = 0;
            while i < whole {
                w::st(p.add(i), f32x4_mul(w::ld(p.add(i)), inv));
                i += 4;
            }
            for v in &mut row[whole..] {
                *v /= sum;
            }
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for v in row.iter_mut() {
            *v = exp((*v - max) * scale);
        }
        let inv = 1.0 / row.iter().sum::<f32>();
        for v in row.iter_mut() {
            *v *= inv;
        }
    }
}

/// LayerNorm over each `h`-wide row of `x`, in place: `(x − mean)/√(var + eps) · weight + bias`
/// (biased variance, as PyTorch), `h` = `weight.len()`; a last partial row is left as it is.
///
/// Panics: `h` is 0 or `bias` is not `h` long (the SIMD path reads `h` values of each).
pub fn layer_norm(x: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    let h = weight.len();
    assert!(h > 0 && bias.len() == h, "layer_norm: weight and bias must be the same non-zero width");
    #[cfg(target_arch = "wasm32")]
    if h.is_multiple_of(4) {
        use core::arch::wasm32::*;
        let n = h as f32;
        let (g, b) = (weight.as_ptr(), bias.as_ptr());
        for row in x.chunks_exact_mut(h) {
            let p = row.as_mut_ptr();
            // SAFETY: `row`, `weight` and `bias` hold `h` floats, a multiple of 4.
            unsafe {
                let mut acc = f32x4_splat(0.0);
                let mut i = 0;
                while i < h {
                    acc = f32x4_add(acc, w::ld(p.add(i)));
                    i += 4;
                }
                let vmean = f32x4_splat(w::hsum(acc) / n);
                let mut acc = f32x4_splat(0.0);
                let mut i = 0;
                while i < h {
                    let d = f32x4_sub(w::ld(p.add(i)), vmean);
                    acc = f32x4_add(acc, f32x4_mul(d, d));
                    i += 4;
                }
                let inv = f32x4_splat(1.0 / (w::hsum(acc) / n + eps).sqrt());
                let mut i = 0;
                while i < h {
                    let d = f32x4_mul(f32x4_sub(w::ld(p.add(i)), vmean), inv);
                    w::st(p.add(i), f32x4_add(f32x4_mul(d, w::ld(g.add(i))), w::ld(b.add(i))));
                    i += 4;
                }
            }
        }
        return;
    }
    for row in x.chunks_exact_mut(h) {
        let mean = sum(row) / h as f32;
        let var = sum_sq_dev(row, mean) / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(weight).zip(bias) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

/// `a ← a + b` element-wise.
pub fn add(a: &mut [f32], b: &[f32]) {
    #[cfg(target_arch = "wasm32")]
    {
        use core::arch::wasm32::*;
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_mut_ptr(), b.as_ptr());
        let mut i = 0;
        while i + 4 <= n {
            // SAFETY: i + 4 ≤ both lengths.
            unsafe { w::st(pa.add(i), f32x4_add(w::ld(pa.add(i)), w::ld(pb.add(i)))) };
            i += 4;
        }
        for (x, y) in a[i..n].iter_mut().zip(&b[i..n]) {
            *x += y;
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

fn sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for l in 0..8 {
            acc[l] += c[l];
        }
    }
    acc.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

fn sum_sq_dev(x: &[f32], mean: f32) -> f32 {
    let mut acc = [0f32; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for l in 0..8 {
            acc[l] += (c[l] - mean) * (c[l] - mean);
        }
    }
    acc.iter().sum::<f32>() + chunks.remainder().iter().map(|v| (v - mean) * (v - mean)).sum::<f32>()
}

/// [`gelu_erf`] on four lanes.
#[cfg(target_arch = "wasm32")]
pub use w::gelu4;

#[cfg(target_arch = "wasm32")]
mod w {
    use super::*;
    use core::arch::wasm32::*;

    /// Four floats from `p` (unaligned).
    ///
    /// # Safety
    /// `p` is valid for reading 4 floats.
    #[inline(always)]
    pub unsafe fn ld(p: *const f32) -> v128 {
        unsafe { v128_load(p as *const v128) }
    }

    /// Four floats to `p` (unaligned).
    ///
    /// # Safety
    /// `p` is valid for writing 4 floats.
    #[inline(always)]
    pub unsafe fn st(p: *mut f32, v: v128) {
        unsafe { v128_store(p as *mut v128, v) }
    }

    /// Sum of the four lanes.
    #[inline(always)]
    pub fn hsum(v: v128) -> f32 {
        f32x4_extract_lane::<0>(v) + f32x4_extract_lane::<1>(v) + f32x4_extract_lane::<2>(v) + f32x4_extract_lane::<3>(v)
    }

    /// Largest of the four lanes.
    #[inline(always)]
    pub fn hmax(v: v128) -> f32 {
        f32x4_extract_lane::<0>(v).max(f32x4_extract_lane::<1>(v)).max(f32x4_extract_lane::<2>(v).max(f32x4_extract_lane::<3>(v)))
    }

    #[inline(always)]
    fn clamp(x: v128, lo: f32, hi: f32) -> v128 {
        f32x4_pmax(f32x4_pmin(x, f32x4_splat(hi)), f32x4_splat(lo))
    }

    /// `a·b + c` (one rounding where relaxed SIMD fuses it).
    #[inline(always)]
    fn madd(a: v128, b: v128, c: f32) -> v128 {
        #[cfg(target_feature = "relaxed-simd")]
        {
            f32x4_relaxed_madd(a, b, f32x4_splat(c))
        }
        #[cfg(not(target_feature = "relaxed-simd"))]
        {
            f32x4_add(f32x4_mul(a, b), f32x4_splat(c))
        }
    }

    /// [`super::exp`] on four lanes.
    #[inline(always)]
    pub fn exp4(x: v128) -> v128 {
        let x = clamp(x, -87.3, 88.3);
        let n = f32x4_sub(f32x4_add(f32x4_mul(x, f32x4_splat(LOG2E)), f32x4_splat(MAGIC)), f32x4_splat(MAGIC));
        let r = f32x4_add(f32x4_sub(x, f32x4_mul(n, f32x4_splat(LN2_HI))), f32x4_mul(n, f32x4_splat(LN2_LO)));
        let mut p = madd(r, f32x4_splat(E6), E5);
        p = madd(p, r, E4);
        p = madd(p, r, E3);
        p = madd(p, r, 0.5);
        p = madd(p, r, 1.0);
        p = madd(p, r, 1.0);
        let bits = i32x4_shl(i32x4_add(i32x4_trunc_sat_f32x4(n), i32x4_splat(127)), 23);
        f32x4_mul(p, bits)
    }

    /// [`super::gelu_erf`] on four lanes.
    #[inline(always)]
    pub fn gelu4(x: v128) -> v128 {
        let t = clamp(f32x4_mul(x, f32x4_splat(std::f32::consts::FRAC_1_SQRT_2)), -4.0, 4.0);
        let z = f32x4_mul(t, t);
        let mut p = madd(z, f32x4_splat(P6), P5);
        p = madd(p, z, P4);
        p = madd(p, z, P3);
        p = madd(p, z, P2);
        p = madd(p, z, P1);
        p = madd(p, z, P0);
        let mut q = madd(z, f32x4_splat(Q4), Q3);
        q = madd(q, z, Q2);
        q = madd(q, z, Q1);
        q = madd(q, z, 1.0);
        let erf = f32x4_div(f32x4_mul(t, p), q);
        f32x4_mul(f32x4_mul(f32x4_splat(0.5), x), f32x4_add(f32x4_splat(1.0), erf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "layer_norm: weight and bias")]
    fn layer_norm_refuses_a_short_bias() {
        layer_norm(&mut [1.0; 8], &[1.0; 8], &[0.0; 4], 1e-12);
    }

    #[test]
    #[should_panic(expected = "layer_norm: weight and bias")]
    fn layer_norm_refuses_a_zero_width() {
        layer_norm(&mut [1.0; 8], &[], &[], 1e-12);
    }

    #[test]
    fn erf_within_5e7_of_libm() {
        let mut worst = (0f32, 0f32);
        for i in -600_000..=600_000 {
            let x = i as f32 * 1e-5;
            let e = (erf(x) - libm::erff(x)).abs();
            if e > worst.0 {
                worst = (e, x);
            }
        }
        assert!(worst.0 < 5e-7, "max |erf - erff| = {} at {}", worst.0, worst.1);
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(-9.0), -erf(9.0));
    }

    #[test]
    fn exp_within_3e7_relative() {
        let mut worst = (0f64, 0f32);
        for i in -873_000..=883_000 {
            let x = i as f32 * 1e-4;
            let want = (x as f64).exp();
            let e = ((exp(x) as f64 - want) / want).abs();
            if e > worst.0 {
                worst = (e, x);
            }
        }
        assert!(worst.0 < 3e-7, "max relative error {} at {}", worst.0, worst.1);
        assert!(exp(-1000.0) < 1e-37 && exp(-1000.0) >= 0.0);
    }

    #[test]
    fn row_kernels_match_definitions() {
        let x: Vec<f32> = (0..37).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
        let mut s = x.clone();
        softmax(&mut s, 0.5);
        let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let z: f64 = x.iter().map(|v| (((v - m) * 0.5) as f64).exp()).sum();
        for (a, v) in s.iter().zip(&x) {
            assert!((*a as f64 - (((v - m) * 0.5) as f64).exp() / z).abs() < 1e-6);
        }
        let (w, b): (Vec<f32>, Vec<f32>) = ((0..37).map(|i| 1.0 + i as f32 * 0.01).collect(), vec![0.25; 37]);
        let mut l = x.clone();
        layer_norm(&mut l, &w, &b, 1e-12);
        let mean = x.iter().sum::<f32>() / 37.0;
        let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 37.0;
        for i in 0..37 {
            let want = (x[i] - mean) / (var + 1e-12).sqrt() * w[i] + b[i];
            assert!((l[i] - want).abs() < 1e-5, "{i}: {} vs {want}", l[i]);
        }
        let mut g = x.clone();
        gelu(&mut g);
        for (a, v) in g.iter().zip(&x) {
            assert!((a - gelu_erf(*v)).abs() < 1e-6);
        }
        let mut a = x.clone();
        add(&mut a, &w);
        assert!(a.iter().zip(x.iter().zip(&w)).all(|(s, (p, q))| *s == p + q));
    }
}
