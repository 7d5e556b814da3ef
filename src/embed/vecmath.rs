//! Vector arithmetic shared by every layer above, defined once: the dot products (f32, int8 and
//! 12-bit integers; SIMD), symmetric quantization with one scale per vector (int8, int4, 12-bit),
//! spherical k-means (an IVF's lists) and the median.

/// Dot product with 8 independent accumulators (lane `l` sums the products at `8c + l`), then
/// the lanes in order, then the tail. Natively the compiler vectorises the loop; the browser
/// build is compiled at `opt-level = "z"`, where it does not, so wasm has the same sums written
/// with SIMD128 intrinsics (`dot_simd128`): both give bit-identical results.
#[inline]
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // The same 8 lanes in one 256-bit register where the CPU has AVX (a multiply, then an add,
    // as the portable loop: bit-identical sums); HNSW construction spends most of its time here.
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: AVX is present (checked just above).
        return unsafe { dot_avx(a, b) };
    }
    dot_lanes(a, b)
}

/// [`dot`] compiled for AVX (the loop vectorises into one 8-lane multiply and add per step).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn dot_avx(a: &[f32], b: &[f32]) -> f32 {
    dot_lanes(a, b)
}

/// The portable 8-lane sum behind [`dot`].
#[inline(always)]
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn dot_lanes(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let n = a.len().min(b.len());
    let chunks = n / 8;
    for c in 0..chunks {
        let (x, y) = (&a[c * 8..c * 8 + 8], &b[c * 8..c * 8 + 8]);
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for i in chunks * 8..n {
        s += a[i] * b[i];
    }
    s
}

/// [`dot`] on wasm: two `f32x4` accumulators hold the 8 lanes (multiply, then add: no fused
/// multiply-add, so the rounding equals the native loop's).
#[inline]
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_simd128(a, b)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn dot_simd128(a: &[f32], b: &[f32]) -> f32 {
    use core::arch::wasm32::*;
    let n = a.len().min(b.len());
    let chunks = n / 8;
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let (mut lo, mut hi) = (f32x4_splat(0.0), f32x4_splat(0.0));
    for c in 0..chunks {
        // SAFETY: 8c + 8 ≤ n ≤ both lengths; v128_load has no alignment requirement.
        unsafe {
            let (x, y) = (pa.add(c * 8), pb.add(c * 8));
            lo = f32x4_add(lo, f32x4_mul(v128_load(x as *const v128), v128_load(y as *const v128)));
            hi = f32x4_add(hi, f32x4_mul(v128_load(x.add(4) as *const v128), v128_load(y.add(4) as *const v128)));
        }
    }
    let lanes = [
        f32x4_extract_lane::<0>(lo),
        f32x4_extract_lane::<1>(lo),
        f32x4_extract_lane::<2>(lo),
        f32x4_extract_lane::<3>(lo),
        f32x4_extract_lane::<0>(hi),
        f32x4_extract_lane::<1>(hi),
        f32x4_extract_lane::<2>(hi),
        f32x4_extract_lane::<3>(hi),
    ];
    let mut s: f32 = lanes.iter().sum();
    for i in chunks * 8..n {
        s += a[i] * b[i];
    }
    s
}

/// Exact int8 dot product (i32 sums are associative, so this vectorises; the AVX2 build of the
/// same code is chosen at run time natively).
#[inline]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { dot_i8_avx2(a, b) };
        }
    }
    dot_i8_generic(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_i8_generic(a, b)
}

#[inline(always)]
fn dot_i8_generic(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| *x as i16 as i32 * *y as i16 as i32).sum()
}

/// `Σ a_i · b_i` of values within ±[`I12_MAX`] ([`quantize_i12`]), exact. On wasm with SIMD128: 8 lanes at a time
/// summed in pairs (`i32x4.dot_i16x8_s`, each pair ≤ 2 · 2047² ≈ 8.4e6), the 32-bit lanes moved
/// into an i64 every 64 steps (≤ 5.4e8 < 2³¹), so any dimension is safe.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub fn dot_i16(a: &[i16], b: &[i16]) -> i64 {
    use core::arch::wasm32::*;
    let n = a.len().min(b.len());
    let chunks = n / 8;
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut total: i64 = 0;
    let mut acc = i32x4_splat(0);
    let lanes = |v: v128| -> i64 {
        i32x4_extract_lane::<0>(v) as i64
            + i32x4_extract_lane::<1>(v) as i64
            + i32x4_extract_lane::<2>(v) as i64
            + i32x4_extract_lane::<3>(v) as i64
    };
    for c in 0..chunks {
        // SAFETY: 8c + 8 ≤ n ≤ both lengths; v128_load has no alignment requirement.
        let (x, y) = unsafe { (v128_load(pa.add(c * 8) as *const v128), v128_load(pb.add(c * 8) as *const v128)) };
        acc = i32x4_add(acc, i32x4_dot_i16x8(x, y));
        if c % 64 == 63 {
            total += lanes(acc);
            acc = i32x4_splat(0);
        }
    }
    total += lanes(acc);
    for i in chunks * 8..n {
        total += a[i] as i64 * b[i] as i64;
    }
    total
}

/// `Σ a_i · b_i` of values within ±[`I12_MAX`] ([`quantize_i12`]), exact.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub fn dot_i16(a: &[i16], b: &[i16]) -> i64 {
    a.iter().zip(b).map(|(x, y)| *x as i64 * *y as i64).sum()
}

/// Symmetric int8 quantization with one scale per vector: `(scale, q)` with `v ≈ scale · q`,
/// `scale = max |x| / 127`. A vector of zeros (or one with a non-finite value) gets scale 0 and
/// zeros. The one definition every int8 vector in webrag uses: model weights, snapshot vectors,
/// PGR vectors, static-model rows.
pub fn quantize_i8(row: &[f32]) -> (f32, Vec<i8>) {
    let (scale, q) = quantize_symmetric(row, 127.0);
    (scale, q.into_iter().map(|x| x as i8).collect())
}

/// Symmetric int4 quantization with one scale per vector: `(scale, q)` with `v ≈ scale · q`, `q`
/// in −7…7 (one per `i8`; a snapshot's `WRV4` blocks pack two to a byte),
/// `scale = max |x| / 7`; zeros (or a non-finite value) as [`quantize_i8`]. A static-tier
/// snapshot's chunk vectors: half int8's bytes for at most 1 point of dense R@5
/// (docs/benchmarks.md, "The static model").
pub fn quantize_i4(row: &[f32]) -> (f32, Vec<i8>) {
    let (scale, q) = quantize_symmetric(row, 7.0);
    (scale, q.into_iter().map(|x| x as i8).collect())
}

/// Symmetric 12-bit quantization with one scale per vector: `(scale, q)` with `v ≈ scale · q`, `q`
/// in ±[`I12_MAX`] (one per `i16`), `scale = max |x| / 2047`; zeros (or a non-finite value) as
/// [`quantize_i8`]. The store's IVF lists (relative error about 1/4094 of the largest component,
/// against 1/254 for int8); with values this small the SIMD dot product's 32-bit lanes cannot
/// overflow ([`dot_i16`]).
pub fn quantize_i12(row: &[f32]) -> (f32, Vec<i16>) {
    let (scale, q) = quantize_symmetric(row, I12_MAX);
    (scale, q.into_iter().map(|x| x as i16).collect())
}

/// The largest magnitude of a [`quantize_i12`] value.
pub const I12_MAX: f32 = 2047.0;

/// `row` as integers in `−top…top` with one scale, `max |x| / top`: the one rule of every
/// quantization here (a zero or non-finite vector: scale 0 and zeros).
fn quantize_symmetric(row: &[f32], top: f32) -> (f32, Vec<f32>) {
    // `f32::max` skips a NaN, so a NaN component is looked for apart.
    let max = row.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() || row.iter().any(|x| x.is_nan()) {
        return (0.0, vec![0.0; row.len()]);
    }
    let scale = max / top;
    (scale, row.iter().map(|x| (x / scale).round().clamp(-top, top)).collect())
}

/// Spherical k-means (inner product; centroids renormalised), deterministic: starts from evenly
/// spaced vectors, `iters` rounds. Returns the centroids and each vector's list.
pub fn kmeans(vectors: &[Vec<f32>], k: usize, iters: usize) -> (Vec<Vec<f32>>, Vec<usize>) {
    let refs: Vec<&[f32]> = vectors.iter().map(Vec::as_slice).collect();
    let cents = kmeans_train(&refs, k, iters);
    let assign = assign(&refs, &cents);
    (cents, assign)
}

/// The centroids of [`kmeans`] alone, trained on `vectors`.
pub fn kmeans_train(vectors: &[&[f32]], k: usize, iters: usize) -> Vec<Vec<f32>> {
    let n = vectors.len();
    let k = k.clamp(1, n.max(1));
    let dim = vectors.first().map_or(0, |v| v.len());
    if n == 0 {
        return Vec::new();
    }
    let mut cents: Vec<Vec<f32>> = (0..k).map(|i| vectors[i * n / k].to_vec()).collect();
    for _ in 0..iters {
        let a = assign(vectors, &cents);
        let mut sums = vec![vec![0.0f32; dim]; k];
        let mut counts = vec![0usize; k];
        for (v, &a) in vectors.iter().zip(&a) {
            counts[a] += 1;
            for (s, x) in sums[a].iter_mut().zip(v.iter()) {
                *s += x;
            }
        }
        for c in 0..k {
            let norm = sums[c].iter().map(|x| x * x).sum::<f32>().sqrt();
            if counts[c] > 0 && norm > 0.0 {
                cents[c] = sums[c].iter().map(|x| x / norm).collect();
            }
        }
    }
    cents
}

/// Each vector's nearest centroid (inner product; the first on ties). The inner products are
/// one matrix product per block of 256 vectors against the packed centroids
/// ([`super::gemm`]: cache-blocked, on every core natively), not a dot product per pair.
/// A vector of another length than the centroids' counts as padded or cut to theirs.
pub fn assign(vectors: &[&[f32]], cents: &[Vec<f32>]) -> Vec<usize> {
    use super::gemm::{Packed, matmul_strided};
    const BLOCK: usize = 256;
    let (k, dim) = (cents.len(), cents.first().map_or(0, Vec::len));
    if k <= 1 || dim == 0 {
        return vec![0; vectors.len()];
    }
    let flat: Vec<f32> = cents.iter().flat_map(|c| (0..dim).map(|i| c.get(i).copied().unwrap_or(0.0))).collect();
    let w = Packed::from_linear(&flat, k, dim);
    let mut a = vec![0f32; BLOCK * dim];
    let mut scores = vec![0f32; BLOCK * k];
    let mut out = Vec::with_capacity(vectors.len());
    for block in vectors.chunks(BLOCK) {
        for (row, v) in a.chunks_exact_mut(dim).zip(block) {
            let n = v.len().min(dim);
            row[..n].copy_from_slice(&v[..n]);
            row[n..].fill(0.0);
        }
        matmul_strided(&a, block.len(), dim, &w, &mut scores, k);
        out.extend(scores.chunks_exact(k).take(block.len()).map(|row| {
            let mut best = (f32::MIN, 0);
            for (c, &s) in row.iter().enumerate() {
                if s > best.0 {
                    best = (s, c);
                }
            }
            best.1
        }));
    }
    out
}

/// The median of `v` (the upper of the two middle values for an even length; NaN for none).
pub fn median(mut v: Vec<f64>) -> f64 {
    crate::sort::by(&mut v, f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_quantizer_has_one_zero_vector_rule_and_its_range() {
        for bad in [vec![0.0f32; 4], vec![f32::NAN, 1.0, 0.0, 0.0], vec![f32::INFINITY, 1.0, 0.0, 0.0]] {
            assert_eq!(quantize_i8(&bad), (0.0, vec![0; 4]));
            assert_eq!(quantize_i4(&bad), (0.0, vec![0; 4]));
            assert_eq!(quantize_i12(&bad), (0.0, vec![0; 4]));
        }
        let v = [0.5f32, -1.0, 0.25, 0.0];
        assert_eq!(quantize_i8(&v).1, vec![64, -127, 32, 0]);
        assert_eq!(quantize_i4(&v).1, vec![3, -7, 2, 0], "0.5 / (1 / 7) is 3.4999998 in f32");
        assert_eq!(quantize_i12(&v).1, vec![1024, -2047, 512, 0]);
        for (scale, top) in [(quantize_i8(&v).0, 127.0), (quantize_i4(&v).0, 7.0), (quantize_i12(&v).0, I12_MAX)] {
            assert_eq!(scale, 1.0 / top);
        }
    }

    #[test]
    fn median_takes_the_upper_middle_and_none_is_nan() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 3.0);
        assert!(median(Vec::new()).is_nan());
    }
}
