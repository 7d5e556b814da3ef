//! Matrix multiply for the CPU forward pass: `out[m×n] = a[m×k] · W[k×n] + bias[n]`.
//!
//! Weights are packed once at load ([`Packed`]). Natively the product is `matrixmultiply`'s
//! `sgemm` (runtime-detected AVX2/FMA, 2 threads). On wasm32 it is our SIMD128 micro-kernel:
//! `W` is stored as column panels `[n/16][k][16]` so the inner loop streams one 16-wide panel
//! (which stays in L1/L2) while 4 rows of `a` accumulate into 16 `f32x4` registers.

/// A weight matrix `[k×n]` (inputs × outputs) prepared for [`matmul_bias`].
#[derive(Debug, Clone)]
pub struct Packed {
    k: usize,
    n: usize,
    /// Native: row-major `[k×n]`. wasm32: panels `[ceil(n/16)][k][16]`, zero-padded.
    data: Vec<f32>,
}

#[cfg(target_arch = "wasm32")]
const PANEL: usize = 16;

impl Packed {
    /// Packs a Hugging Face `Linear` weight, stored `[n×k]` (outputs × inputs), row-major.
    pub fn from_linear(w_nk: &[f32], n: usize, k: usize) -> Self {
        debug_assert_eq!(w_nk.len(), n * k);
        #[cfg(not(target_arch = "wasm32"))]
        {
            let mut data = vec![0f32; k * n];
            for j in 0..n {
                for i in 0..k {
                    data[i * n + j] = w_nk[j * k + i];
                }
            }
            Packed { k, n, data }
        }
        #[cfg(target_arch = "wasm32")]
        {
            let panels = n.div_ceil(PANEL);
            let mut data = vec![0f32; panels * k * PANEL];
            for j in 0..n {
                let (p, c) = (j / PANEL, j % PANEL);
                for i in 0..k {
                    data[(p * k + i) * PANEL + c] = w_nk[j * k + i];
                }
            }
            Packed { k, n, data }
        }
    }
    /// Outputs.
    pub fn n(&self) -> usize {
        self.n
    }
}

/// `out[m×n] = a[m×k] · w + bias` (all row-major). `out` is overwritten.
pub fn matmul_bias(a: &[f32], m: usize, w: &Packed, bias: &[f32], out: &mut [f32]) {
    let (k, n) = (w.k, w.n);
    assert!(a.len() >= m * k && out.len() >= m * n && bias.len() == n);
    for r in 0..m {
        out[r * n..(r + 1) * n].copy_from_slice(bias);
    }
    #[cfg(not(target_arch = "wasm32"))]
    // SAFETY: slice lengths checked above; strides describe row-major [m×k], [k×n], [m×n].
    unsafe {
        matrixmultiply::sgemm(
            m, k, n, 1.0, a.as_ptr(), k as isize, 1, w.data.as_ptr(), n as isize, 1, 1.0,
            out.as_mut_ptr(), n as isize, 1,
        );
    }
    #[cfg(target_arch = "wasm32")]
    wasm::gemm_acc(a, m, k, &w.data, n, out);
}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use super::PANEL;
    use core::arch::wasm32::*;

    /// `out += a · panels` with the SIMD128 4×16 micro-kernel.
    pub fn gemm_acc(a: &[f32], m: usize, k: usize, panels: &[f32], n: usize, out: &mut [f32]) {
        let np = n.div_ceil(PANEL);
        for p in 0..np {
            let panel = &panels[p * k * PANEL..(p + 1) * k * PANEL];
            let cols = (n - p * PANEL).min(PANEL);
            let mut i = 0;
            while i + 4 <= m {
                // SAFETY: rows i..i+4 < m; panel has k*16 floats; loads are unaligned-safe.
                unsafe { block::<4>(a, i, k, panel, out, n, p * PANEL, cols) };
                i += 4;
            }
            while i < m {
                unsafe { block::<1>(a, i, k, panel, out, n, p * PANEL, cols) };
                i += 1;
            }
        }
    }

    #[inline(always)]
    unsafe fn block<const R: usize>(
        a: &[f32], i: usize, k: usize, panel: &[f32], out: &mut [f32], n: usize, col0: usize, cols: usize,
    ) {
        unsafe {
            let mut acc = [[f32x4_splat(0.0); 4]; R];
            let pp = panel.as_ptr();
            let ap = a.as_ptr();
            for kk in 0..k {
                let bp = pp.add(kk * PANEL);
                let b0 = v128_load(bp as *const v128);
                let b1 = v128_load(bp.add(4) as *const v128);
                let b2 = v128_load(bp.add(8) as *const v128);
                let b3 = v128_load(bp.add(12) as *const v128);
                for r in 0..R {
                    let av = f32x4_splat(*ap.add((i + r) * k + kk));
                    acc[r][0] = f32x4_add(acc[r][0], f32x4_mul(av, b0));
                    acc[r][1] = f32x4_add(acc[r][1], f32x4_mul(av, b1));
                    acc[r][2] = f32x4_add(acc[r][2], f32x4_mul(av, b2));
                    acc[r][3] = f32x4_add(acc[r][3], f32x4_mul(av, b3));
                }
            }
            for r in 0..R {
                let row = (i + r) * n + col0;
                let mut tmp = [0f32; PANEL];
                for q in 0..4 {
                    v128_store(tmp.as_mut_ptr().add(q * 4) as *mut v128, acc[r][q]);
                }
                for c in 0..cols {
                    out[row + c] += tmp[c];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_naive() {
        let (m, k, n) = (7, 33, 37);
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 97) as f32 / 97.0 - 0.5).collect();
        let w: Vec<f32> = (0..n * k).map(|i| ((i * 104729) % 89) as f32 / 89.0 - 0.5).collect();
        let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
        let p = Packed::from_linear(&w, n, k);
        let mut out = vec![0f32; m * n];
        matmul_bias(&a, m, &p, &bias, &mut out);
        for r in 0..m {
            for j in 0..n {
                let want: f32 = bias[j] + (0..k).map(|i| a[r * k + i] * w[j * k + i]).sum::<f32>();
                assert!((out[r * n + j] - want).abs() < 1e-4, "{r},{j}: {} vs {want}", out[r * n + j]);
            }
        }
    }
}
