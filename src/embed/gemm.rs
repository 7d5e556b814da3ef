//! Matrix multiply for the CPU forward pass: `out[m×n] = a[m×k] · W[k×n] + bias[n]`.
//!
//! Weights are packed once at load ([`Packed`]) into column panels `[ceil(n/16)][k][16]`
//! (zero-padded), so a micro-kernel streams one 16-wide panel (which stays in L1/L2) while a few
//! rows of `a` accumulate in registers. Nothing is repacked per call: with the short sequences of
//! sentence embedding (`m` ≈ 10–100 rows), repacking `W` would cost as much as the product.
//!
//! Micro-kernels (rows × columns of `out` held in registers):
//! - x86-64 with AVX-512F: 12 × 16 (12 `zmm` accumulators, FMA), chosen at run time;
//! - x86-64 with AVX2 + FMA: 6 × 16 (12 `ymm` accumulators);
//! - wasm32 (SIMD128, relaxed-SIMD FMA): 2 × 16 (8 `v128` accumulators). Measured in headless
//!   Chromium on a 77×384×1536 product: 2×16 and 4×8 reach 37–38 GFLOP/s, while 6×8 (12
//!   accumulators) falls to 18–22 as V8 spills registers;
//! - elsewhere: a portable loop the compiler vectorises.
//!
//! Natively, products of at least [`PAR_MIN_MACS`] multiply-adds are cut into tasks of row
//! blocks × panel ranges that rayon's global pool runs on every core (`RAYON_NUM_THREADS` caps
//! it); each task writes a disjoint block of the output. In the page the product runs on the
//! calling thread.

/// The instruction set the CPU path's kernels were compiled for (the embedder's info reports it
/// as `cpuKernels`): the page's two builds of the engine differ only in this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum CpuKernels {
    /// wasm SIMD128 with the relaxed-SIMD proposal's fused multiply-add and i8 dot product
    /// (`webrag_bg.wasm`: Chrome/Edge 114+, Firefox 145+).
    RelaxedSimd,
    /// wasm SIMD128 alone (`baseline/webrag_bg.wasm`: every browser with SIMD128, Safari 16.4+
    /// and Firefox ESR among them): a multiply then an add, and the int8 product
    /// ([`super::gemm_i8`]) by its portable loop.
    Simd128,
    /// Natively: AVX-512F or AVX2 + FMA chosen at run time on x86-64, else portable loops.
    Native,
}

impl CpuKernels {
    /// The kernels of this build.
    pub const fn compiled() -> Self {
        if cfg!(all(target_arch = "wasm32", target_feature = "relaxed-simd")) {
            CpuKernels::RelaxedSimd
        } else if cfg!(target_arch = "wasm32") {
            CpuKernels::Simd128
        } else {
            CpuKernels::Native
        }
    }
}

/// Columns per packed panel.
pub const PANEL: usize = 16;

/// Smallest product (`m·k·n` multiply-adds) split across threads natively.
pub const PAR_MIN_MACS: usize = 1 << 20;

/// Tasks per pool thread for a split product (more tasks than threads evens out the work).
#[cfg(not(target_arch = "wasm32"))]
const TASKS_PER_THREAD: usize = 3;

/// Rows of `a` per cache block: the block (`MB × k` floats) stays in L2 while every panel
/// passes over it.
const MB: usize = 96;

/// A weight matrix `[k×n]` (inputs × outputs) packed as panels `[ceil(n/16)][k][16]`.
#[derive(Debug, Clone)]
pub struct Packed {
    k: usize,
    n: usize,
    data: Vec<f32>,
}

impl Packed {
    /// Packs a Hugging Face `Linear` weight, stored `[n×k]` (outputs × inputs), row-major.
    pub fn from_linear(w_nk: &[f32], n: usize, k: usize) -> Self {
        assert_eq!(w_nk.len(), n * k, "weight is not [n×k]");
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

    /// Packs a row-major `[k×n]` matrix (inputs × outputs).
    pub fn from_kn(w_kn: &[f32], k: usize, n: usize) -> Self {
        assert_eq!(w_kn.len(), n * k, "matrix is not [k×n]");
        let panels = n.div_ceil(PANEL);
        let mut data = vec![0f32; panels * k * PANEL];
        for i in 0..k {
            for j in 0..n {
                data[((j / PANEL) * k + i) * PANEL + j % PANEL] = w_kn[i * n + j];
            }
        }
        Packed { k, n, data }
    }

    /// Repacks in place (keeping the allocation) as the `[k×n]` matrix
    /// `W[i][j] = src[offset + i·stride_k + j·stride_n]`: a strided view such as one head's
    /// keys, transposed (`stride_k = 1`, `stride_n` = row length), or its values.
    ///
    /// Panics when the view runs past `src`.
    pub fn refill_strided(&mut self, src: &[f32], k: usize, n: usize, offset: usize, stride_k: usize, stride_n: usize) {
        let panels = n.div_ceil(PANEL);
        self.k = k;
        self.n = n;
        self.data.clear();
        self.data.resize(panels * k * PANEL, 0.0);
        if k == 0 || n == 0 {
            return;
        }
        assert!(offset + (k - 1) * stride_k + (n - 1) * stride_n < src.len(), "refill_strided: view out of bounds");
        let (sp, dp) = (src.as_ptr(), self.data.as_mut_ptr());
        for p in 0..panels {
            let cols = (n - p * PANEL).min(PANEL);
            for i in 0..k {
                let base = offset + i * stride_k + p * PANEL * stride_n;
                let row = (p * k + i) * PANEL;
                for c in 0..cols {
                    // SAFETY: i < k, p·16 + c < n: inside the view checked above; row + c is
                    // inside the panels·k·16 floats just allocated.
                    unsafe { *dp.add(row + c) = *sp.add(base + c * stride_n) };
                }
            }
        }
    }

    /// The packed floats, `[ceil(n/16)][k][16]` (the GPU matmul reads this layout too).
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// Inputs.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Outputs.
    pub fn n(&self) -> usize {
        self.n
    }
}

/// `out[m×n] = a[m×k] · w + bias` (all row-major). `out` is overwritten.
///
/// Panics when a slice is shorter than its shape says.
pub fn matmul_bias(a: &[f32], m: usize, w: &Packed, bias: &[f32], out: &mut [f32]) {
    matmul_bias_act(a, m, w, bias, out, false);
}

/// `out[m×n] = gelu_erf(a[m×k] · w + bias)`: [`matmul_bias`] with BERT's GELU applied to each
/// output while it is still in registers (BertIntermediate), saving a pass over `out`.
pub fn matmul_bias_gelu(a: &[f32], m: usize, w: &Packed, bias: &[f32], out: &mut [f32]) {
    matmul_bias_act(a, m, w, bias, out, true);
}

fn matmul_bias_act(a: &[f32], m: usize, w: &Packed, bias: &[f32], out: &mut [f32], gelu: bool) {
    let (k, n) = (w.k, w.n);
    assert!(a.len() >= m * k && out.len() >= m * n && bias.len() == n, "matmul_bias: shapes");
    let lens = [a.len(), w.data.len(), out.len()];
    run(Ctx { a: a.as_ptr(), lda: k, m, k, w: w.data.as_ptr(), n, bias: bias.as_ptr(), gelu, out: OutPtr(out.as_mut_ptr()), ldo: n, lens });
}

/// `out[i·ldo + j] = Σ_c a[i·lda + c] · w[c][j]` for `i < m`, `j < n`: the product on strided
/// views (a head's slice of the fused Q/K/V rows, a head's columns of the context). Only those
/// `m×n` output elements are written.
///
/// Panics when a view runs past its slice or a stride is shorter than the row it strides.
pub fn matmul_strided(a: &[f32], m: usize, lda: usize, w: &Packed, out: &mut [f32], ldo: usize) {
    let (k, n) = (w.k, w.n);
    if m == 0 {
        return;
    }
    assert!(lda >= k && ldo >= n && a.len() >= (m - 1) * lda + k && out.len() >= (m - 1) * ldo + n, "matmul_strided: shapes");
    let lens = [a.len(), w.data.len(), out.len()];
    let bias = std::ptr::null();
    run(Ctx { a: a.as_ptr(), lda, m, k, w: w.data.as_ptr(), n, bias, gelu: false, out: OutPtr(out.as_mut_ptr()), ldo, lens });
}

fn run(ctx: Ctx) {
    for_each_task(ctx.m, ctx.k, ctx.n, &|rows, panels| ctx.run_rows(rows, panels));
}

/// Runs `f(rows, panels)` over a cover of `0..m` × `0..ceil(n/16)` by disjoint blocks: natively,
/// for products of at least [`PAR_MIN_MACS`] multiply-adds, as tasks on rayon's pool (row blocks
/// first, so each task streams fewer panels, then panel ranges until every thread has
/// [`TASKS_PER_THREAD`]); otherwise one call on the calling thread.
pub(crate) fn for_each_task(m: usize, k: usize, n: usize, f: &(dyn Fn(std::ops::Range<usize>, std::ops::Range<usize>) + Sync)) {
    let panels = n.div_ceil(PANEL);
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        let threads = rayon::current_num_threads();
        if m * k * n >= PAR_MIN_MACS && threads >= 2 {
            let want = threads * TASKS_PER_THREAD;
            let row_blocks = m.div_ceil(MB).clamp(1, want);
            let rows_per = m.div_ceil(row_blocks);
            let panel_groups = want.div_ceil(row_blocks).clamp(1, panels);
            let panels_per = panels.div_ceil(panel_groups);
            (0..row_blocks * panel_groups).into_par_iter().for_each(|t| {
                let (rb, pg) = (t / panel_groups, t % panel_groups);
                let rows = rb * rows_per..((rb + 1) * rows_per).min(m);
                let cols = pg * panels_per..((pg + 1) * panels_per).min(panels);
                if !rows.is_empty() && !cols.is_empty() {
                    f(rows, cols);
                }
            });
            return;
        }
    }
    let _ = k;
    f(0..m, 0..panels);
}

/// The output pointer, shared by tasks that write disjoint blocks.
#[derive(Clone, Copy)]
struct OutPtr(*mut f32);
// SAFETY: tasks given disjoint (row range, panel range) pairs write disjoint output blocks (see `Ctx::run_rows`).
unsafe impl Send for OutPtr {}
unsafe impl Sync for OutPtr {}

/// One product: raw views checked by `matmul_bias`.
#[derive(Clone, Copy)]
struct Ctx {
    a: *const f32,
    lda: usize,
    m: usize,
    k: usize,
    w: *const f32,
    n: usize,
    /// `[n]`, or null for no bias.
    bias: *const f32,
    gelu: bool,
    out: OutPtr,
    ldo: usize,
    /// The lengths of the slices behind `a`, `w` and `out`, for the range `debug_assert!`s of
    /// [`Ctx::tile`] (test builds check every micro-kernel call against them).
    lens: [usize; 3],
}
// SAFETY: `a`, `w` and `bias` are only read; `out` writes are disjoint per task.
unsafe impl Send for Ctx {}
unsafe impl Sync for Ctx {}

impl Ctx {
    /// `out[rows, panels] = act(a[rows] · W[:, panels] + bias[panels])`, in row blocks of [`MB`].
    fn run_rows(&self, rows: std::ops::Range<usize>, panels: std::ops::Range<usize>) {
        let mut r0 = rows.start;
        while r0 < rows.end {
            let rows = (rows.end - r0).min(MB);
            let init = |p: usize| {
                let cols = (self.n - p * PANEL).min(PANEL);
                let mut init = [0f32; PANEL];
                if !self.bias.is_null() {
                    // SAFETY: `bias` holds `n` floats and p·16 + cols ≤ n.
                    init[..cols].copy_from_slice(unsafe { std::slice::from_raw_parts(self.bias.add(p * PANEL), cols) });
                }
                init
            };
            // Panels two at a time (the widest kernels hold 32 columns in registers).
            let mut p = panels.start;
            while p < panels.end {
                let i0 = init(p);
                if p + 1 < panels.end {
                    let i1 = init(p + 1);
                    // SAFETY: rows r0..r0+rows < m; panels p, p + 1 < ceil(n/16) (see `tile`).
                    unsafe { kernel::pair(&self.tile(r0, rows, p, &i0), &self.tile(r0, rows, p + 1, &i1)) };
                    p += 2;
                } else {
                    // SAFETY: as above, for panel p.
                    unsafe { kernel::panel(&self.tile(r0, rows, p, &i0)) };
                    p += 1;
                }
            }
            r0 += rows;
        }
    }
}

impl Ctx {
    /// The micro-kernel call for rows `r0..r0 + rows` and panel `p`.
    ///
    /// # Safety
    /// `r0 + rows ≤ m` and `p < ceil(n/16)`: panel p holds k·16 floats and the columns
    /// p·16..p·16+cols < n of each row are inside `out` (checked by the public entry points).
    unsafe fn tile<'i>(&self, r0: usize, rows: usize, p: usize, init: &'i [f32; PANEL]) -> Tile<'i> {
        let cols = (self.n - p * PANEL).min(PANEL);
        // The ranges each micro-kernel call reads and writes, within their slices.
        debug_assert!(
            rows > 0 && r0 + rows <= self.m && p < self.n.div_ceil(PANEL),
            "gemm tile: rows {r0}+{rows} of {}, panel {p}",
            self.m
        );
        debug_assert!((r0 + rows - 1) * self.lda + self.k <= self.lens[0], "gemm tile: a read past its slice");
        debug_assert!((p + 1) * self.k * PANEL <= self.lens[1], "gemm tile: panel {p} past the packed weights");
        debug_assert!((r0 + rows - 1) * self.ldo + p * PANEL + cols <= self.lens[2], "gemm tile: a write past out");
        // SAFETY: the caller's bounds.
        unsafe {
            Tile {
                a: self.a.add(r0 * self.lda),
                lda: self.lda,
                rows,
                k: self.k,
                w: self.w.add(p * self.k * PANEL),
                init,
                o: self.out.0.add(r0 * self.ldo + p * PANEL),
                ldo: self.ldo,
                cols,
                gelu: self.gelu,
            }
        }
    }
}

/// One micro-kernel call: `o[rows×cols] = act(a[rows×k] · w[k×16] + init)`, where `a` has row
/// stride `lda`, `o` row stride `ldo`, and `act` is GELU when `gelu` is set, else identity.
struct Tile<'i> {
    a: *const f32,
    lda: usize,
    rows: usize,
    k: usize,
    w: *const f32,
    init: &'i [f32; PANEL],
    o: *mut f32,
    ldo: usize,
    cols: usize,
    gelu: bool,
}

/// Writes `v[..cols]` (after GELU when asked) to `o` (scalar tail of every kernel).
///
/// # Safety
/// `o` is valid for `cols` writes.
#[inline(always)]
unsafe fn store_tail(o: *mut f32, v: &[f32; PANEL], cols: usize, gelu: bool) {
    for (c, &x) in v.iter().enumerate().take(cols) {
        // SAFETY: c < cols.
        unsafe { *o.add(c) = if gelu { super::ops::gelu_erf(x) } else { x } };
    }
}

#[cfg(target_arch = "x86_64")]
mod kernel {
    use super::{PANEL, Tile, store_tail};
    use core::arch::x86_64::*;

    /// One tile, on the widest kernel the CPU has.
    pub unsafe fn panel(t: &Tile) {
        // SAFETY: the caller's bounds; the target features are checked before each call.
        unsafe {
            if is_x86_feature_detected!("avx512f") {
                avx512(t)
            } else if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                avx2(t)
            } else {
                super::portable::panel(t)
            }
        }
    }

    /// Two tiles of the same rows over adjacent panels (`u.cols` may be short).
    pub unsafe fn pair(t: &Tile, u: &Tile) {
        // SAFETY: the caller's bounds; the target features are checked before each call.
        unsafe {
            if is_x86_feature_detected!("avx512f") {
                avx512_pair(t, u)
            } else {
                panel(t);
                panel(u);
            }
        }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn avx512_pair(t: &Tile, u: &Tile) {
        let mut i = 0;
        // SAFETY: row i + R ≤ rows for every block.
        unsafe {
            while i + 12 <= t.rows {
                pair512::<12>(t, u, i);
                i += 12;
            }
            while i + 4 <= t.rows {
                pair512::<4>(t, u, i);
                i += 4;
            }
            while i < t.rows {
                pair512::<1>(t, u, i);
                i += 1;
            }
        }
    }

    /// Rows `i..i+R` of two adjacent panels: `2R` `zmm` accumulators, so each broadcast of `a`
    /// feeds two fused multiply-adds.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn pair512<const R: usize>(t: &Tile, u: &Tile, i: usize) {
        unsafe {
            let a = t.a.add(i * t.lda);
            let mut acc = [_mm512_loadu_ps(t.init.as_ptr()); R];
            let mut acc2 = [_mm512_loadu_ps(u.init.as_ptr()); R];
            for kk in 0..t.k {
                let b = _mm512_loadu_ps(t.w.add(kk * PANEL));
                let b2 = _mm512_loadu_ps(u.w.add(kk * PANEL));
                for r in 0..R {
                    let av = _mm512_set1_ps(*a.add(r * t.lda + kk));
                    acc[r] = _mm512_fmadd_ps(av, b, acc[r]);
                    acc2[r] = _mm512_fmadd_ps(av, b2, acc2[r]);
                }
            }
            for r in 0..R {
                let mut v = [0f32; PANEL];
                _mm512_storeu_ps(v.as_mut_ptr(), acc[r]);
                store_tail(t.o.add((i + r) * t.ldo), &v, t.cols, t.gelu);
                _mm512_storeu_ps(v.as_mut_ptr(), acc2[r]);
                store_tail(u.o.add((i + r) * u.ldo), &v, u.cols, u.gelu);
            }
        }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn avx512(t: &Tile) {
        let mut i = 0;
        // SAFETY: row i + R ≤ rows for every block.
        unsafe {
            while i + 12 <= t.rows {
                block512::<12>(t, i);
                i += 12;
            }
            while i + 4 <= t.rows {
                block512::<4>(t, i);
                i += 4;
            }
            while i < t.rows {
                block512::<1>(t, i);
                i += 1;
            }
        }
    }

    /// Rows `i..i+R` of the tile: `R` `zmm` accumulators.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn block512<const R: usize>(t: &Tile, i: usize) {
        unsafe {
            let a = t.a.add(i * t.lda);
            let mut acc = [_mm512_loadu_ps(t.init.as_ptr()); R];
            for kk in 0..t.k {
                let b = _mm512_loadu_ps(t.w.add(kk * PANEL));
                for (r, acc) in acc.iter_mut().enumerate() {
                    *acc = _mm512_fmadd_ps(_mm512_set1_ps(*a.add(r * t.lda + kk)), b, *acc);
                }
            }
            for (r, acc) in acc.iter().enumerate() {
                let mut v = [0f32; PANEL];
                _mm512_storeu_ps(v.as_mut_ptr(), *acc);
                store_tail(t.o.add((i + r) * t.ldo), &v, t.cols, t.gelu);
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2(t: &Tile) {
        let mut i = 0;
        // SAFETY: row i + R ≤ rows for every block.
        unsafe {
            while i + 6 <= t.rows {
                block256::<6>(t, i);
                i += 6;
            }
            while i < t.rows {
                block256::<1>(t, i);
                i += 1;
            }
        }
    }

    /// Rows `i..i+R` of the tile: `2R` `ymm` accumulators.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn block256<const R: usize>(t: &Tile, i: usize) {
        unsafe {
            let a = t.a.add(i * t.lda);
            let init = [_mm256_loadu_ps(t.init.as_ptr()), _mm256_loadu_ps(t.init.as_ptr().add(8))];
            let mut acc = [init; R];
            for kk in 0..t.k {
                let b0 = _mm256_loadu_ps(t.w.add(kk * PANEL));
                let b1 = _mm256_loadu_ps(t.w.add(kk * PANEL + 8));
                for (r, acc) in acc.iter_mut().enumerate() {
                    let av = _mm256_set1_ps(*a.add(r * t.lda + kk));
                    acc[0] = _mm256_fmadd_ps(av, b0, acc[0]);
                    acc[1] = _mm256_fmadd_ps(av, b1, acc[1]);
                }
            }
            for (r, acc) in acc.iter().enumerate() {
                let mut v = [0f32; PANEL];
                _mm256_storeu_ps(v.as_mut_ptr(), acc[0]);
                _mm256_storeu_ps(v.as_mut_ptr().add(8), acc[1]);
                store_tail(t.o.add((i + r) * t.ldo), &v, t.cols, t.gelu);
            }
        }
    }
}

#[cfg(target_arch = "wasm32")]
mod kernel {
    use super::{PANEL, Tile, store_tail};
    use core::arch::wasm32::*;

    /// Two tiles of the same rows over adjacent panels: one after the other.
    pub unsafe fn pair(t: &Tile, u: &Tile) {
        // SAFETY: the caller's bounds.
        unsafe {
            panel(t);
            panel(u);
        }
    }

    /// One tile, two rows at a time.
    pub unsafe fn panel(t: &Tile) {
        // SAFETY: the caller's bounds.
        unsafe {
            let mut i = 0;
            while i + 2 <= t.rows {
                block::<2>(t, i);
                i += 2;
            }
            if i < t.rows {
                block::<1>(t, i);
            }
        }
    }

    #[inline(always)]
    fn madd(a: v128, b: v128, c: v128) -> v128 {
        #[cfg(target_feature = "relaxed-simd")]
        {
            f32x4_relaxed_madd(a, b, c)
        }
        #[cfg(not(target_feature = "relaxed-simd"))]
        {
            f32x4_add(f32x4_mul(a, b), c)
        }
    }

    /// Rows `i..i+R` (`R` ≤ 2) × 16 columns: `4R` accumulators. `v128.load32_splat` broadcasts
    /// `a` straight from memory (no shuffle). Written out by hand (no arrays, no inner loops) so
    /// that the accumulators stay in registers whatever the optimisation level of the crate.
    #[inline(always)]
    unsafe fn block<const R: usize>(t: &Tile, i: usize) {
        unsafe {
            let a = t.a.add(i * t.lda);
            let ip = t.init.as_ptr() as *const v128;
            let (mut c00, mut c01, mut c02, mut c03) = (v128_load(ip), v128_load(ip.add(1)), v128_load(ip.add(2)), v128_load(ip.add(3)));
            let (mut c10, mut c11, mut c12, mut c13) = (c00, c01, c02, c03);
            let a1 = if R == 2 { a.add(t.lda) } else { a };
            let mut bp = t.w;
            for kk in 0..t.k {
                let b0 = v128_load(bp as *const v128);
                let b1 = v128_load(bp.add(4) as *const v128);
                let b2 = v128_load(bp.add(8) as *const v128);
                let b3 = v128_load(bp.add(12) as *const v128);
                let x = v128_load32_splat(a.add(kk) as *const u32);
                c00 = madd(x, b0, c00);
                c01 = madd(x, b1, c01);
                c02 = madd(x, b2, c02);
                c03 = madd(x, b3, c03);
                if R == 2 {
                    let y = v128_load32_splat(a1.add(kk) as *const u32);
                    c10 = madd(y, b0, c10);
                    c11 = madd(y, b1, c11);
                    c12 = madd(y, b2, c12);
                    c13 = madd(y, b3, c13);
                }
                bp = bp.add(PANEL);
            }
            let o = t.o.add(i * t.ldo);
            store_row(o, [c00, c01, c02, c03], t.cols, t.gelu);
            if R == 2 {
                store_row(o.add(t.ldo), [c10, c11, c12, c13], t.cols, t.gelu);
            }
        }
    }

    /// `o[..cols] = act(acc)` (16 lanes), GELU on four lanes at a time when asked.
    #[inline(always)]
    unsafe fn store_row(o: *mut f32, mut acc: [v128; 4], cols: usize, gelu: bool) {
        unsafe {
            if gelu {
                for a in acc.iter_mut() {
                    *a = crate::embed::ops::gelu4(*a);
                }
            }
            if cols == PANEL {
                for (q, acc) in acc.iter().enumerate() {
                    v128_store(o.add(4 * q) as *mut v128, *acc);
                }
            } else {
                let mut v = [0f32; PANEL];
                for (q, acc) in acc.iter().enumerate() {
                    v128_store(v.as_mut_ptr().add(4 * q) as *mut v128, *acc);
                }
                store_tail(o, &v, cols, false);
            }
        }
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
mod kernel {
    pub use super::portable::{pair, panel};
}

#[cfg(not(target_arch = "wasm32"))]
mod portable {
    use super::{PANEL, Tile, store_tail};

    /// Two tiles of the same rows over adjacent panels: one after the other.
    #[allow(dead_code)]
    pub unsafe fn pair(t: &Tile, u: &Tile) {
        // SAFETY: the caller's bounds.
        unsafe {
            panel(t);
            panel(u);
        }
    }

    /// One tile, one row at a time (16 accumulators).
    #[allow(dead_code)]
    pub unsafe fn panel(t: &Tile) {
        // SAFETY: the caller's bounds.
        unsafe {
            let w = std::slice::from_raw_parts(t.w, t.k * PANEL);
            for r in 0..t.rows {
                let row = std::slice::from_raw_parts(t.a.add(r * t.lda), t.k);
                let mut acc = *t.init;
                for (kk, &x) in row.iter().enumerate() {
                    for (c, acc) in acc.iter_mut().enumerate() {
                        *acc += x * w[kk * PANEL + c];
                    }
                }
                store_tail(t.o.add(r * t.ldo), &acc, t.cols, t.gelu);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `a[m×k] · w_nkᵀ + bias`, one sum at a time (the reference of the kernels' tests).
    pub(crate) fn naive(a: &[f32], m: usize, k: usize, w_nk: &[f32], n: usize, bias: &[f32]) -> Vec<f32> {
        let mut out = vec![0f32; m * n];
        for r in 0..m {
            for j in 0..n {
                out[r * n + j] = bias[j] + (0..k).map(|i| a[r * k + i] * w_nk[j * k + i]).sum::<f32>();
            }
        }
        out
    }

    /// Shapes that exercise every kernel and remainder: rows not a multiple of 12/6/4, columns
    /// not a multiple of 16 or 8, and a product large enough to be split across threads.
    #[test]
    fn matches_naive() {
        for &(m, k, n) in &[(7, 33, 37), (1, 5, 3), (13, 64, 16), (29, 40, 24), (200, 96, 120)] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 97) as f32 / 97.0 - 0.5).collect();
            let w: Vec<f32> = (0..n * k).map(|i| ((i * 104729) % 89) as f32 / 89.0 - 0.5).collect();
            let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
            let p = Packed::from_linear(&w, n, k);
            // NaN first: every output must be overwritten.
            let mut out = vec![f32::NAN; m * n];
            matmul_bias(&a, m, &p, &bias, &mut out);
            let want = naive(&a, m, k, &w, n, &bias);
            for (i, (g, w)) in out.iter().zip(&want).enumerate() {
                assert!((g - w).abs() < 1e-4, "{m}x{k}x{n} [{i}]: {g} vs {w}");
            }
            let mut out = vec![f32::NAN; m * n];
            matmul_bias_gelu(&a, m, &p, &bias, &mut out);
            for (i, (g, w)) in out.iter().zip(&want).enumerate() {
                let w = crate::embed::ops::gelu_erf(*w);
                assert!((g - w).abs() < 1e-4, "gelu {m}x{k}x{n} [{i}]: {g} vs {w}");
            }
        }
        // from_kn packs the transpose of from_linear's input.
        let (k, n) = (9, 21);
        let w_nk: Vec<f32> = (0..n * k).map(|i| i as f32).collect();
        let mut w_kn = vec![0f32; k * n];
        for j in 0..n {
            for i in 0..k {
                w_kn[i * n + j] = w_nk[j * k + i];
            }
        }
        assert_eq!(Packed::from_kn(&w_kn, k, n).data, Packed::from_linear(&w_nk, n, k).data);
        let mut r = Packed::from_kn(&[1.0; 4], 2, 2);
        r.refill_strided(&w_kn, k, n, 0, n, 1);
        assert_eq!(r.data, Packed::from_kn(&w_kn, k, n).data);
    }

    /// Strided views: a is every other 5-float group of a wider row, out leaves its padding alone.
    #[test]
    fn strided_matches_naive() {
        let (m, k, n, lda, ldo) = (9, 5, 19, 12, 23);
        let a: Vec<f32> = (0..m * lda).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
        let w_kn: Vec<f32> = (0..k * n).map(|i| ((i * 13) % 7) as f32 * 0.25).collect();
        let mut out = vec![-7f32; m * ldo];
        matmul_strided(&a, m, lda, &Packed::from_kn(&w_kn, k, n), &mut out, ldo);
        for i in 0..m {
            for j in 0..ldo {
                let want = if j < n { (0..k).map(|c| a[i * lda + c] * w_kn[c * n + j]).sum::<f32>() } else { -7.0 };
                assert!((out[i * ldo + j] - want).abs() < 1e-4, "[{i},{j}] {} vs {want}", out[i * ldo + j]);
            }
        }
    }

    #[test]
    fn large_product_is_split_and_exact() {
        // One row block (a query batch) and several (a packed ingest batch).
        for (m, k, n) in [(77, 384, 1536), (301, 384, 400)] {
            split_product_is_exact(m, k, n);
        }
    }

    fn split_product_is_exact(m: usize, k: usize, n: usize) {
        assert!(m * k * n >= PAR_MIN_MACS);
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 31) % 101) as f32 / 101.0 - 0.5).collect();
        let w: Vec<f32> = (0..n * k).map(|i| ((i * 17) % 103) as f32 / 103.0 - 0.5).collect();
        let bias = vec![0.5f32; n];
        let mut out = vec![0f32; m * n];
        matmul_bias(&a, m, &Packed::from_linear(&w, n, k), &bias, &mut out);
        let want = naive(&a, m, k, &w, n, &bias);
        let worst = out.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0f32, f32::max);
        assert!(worst < 1e-3, "max abs error {worst}");
    }
}
