//! The kernels' WGSL sources and the variants derived from them (tile shapes, f16, subgroups),
//! and the choice of matmul kernel.

/// A kernel's source as shipped: `src/embed/gpu/<file>` without its comments (`build.rs`).
macro_rules! kernel {
    ($file:literal) => {
        include_str!(concat!(env!("OUT_DIR"), "/", $file))
    };
}

/// `out[M, N] = act(a[M, K] · w[K, N] + bias[N])`; 64 × 64 tiles, 16 × 16 threads, f32 (the
/// [`MatmulTile::Large`] shape; [`matmul_wgsl`] derives the others), with [`GELU_WGSL`] appended.
pub const MATMUL_WGSL: &str = concat!(kernel!("matmul.wgsl"), "\n", kernel!("gelu.wgsl"));
/// The matmul on cooperative matrices (tensor cores; native only): f16 × f16 → f32, 64 × 64
/// tiles of 128 threads in four 32-wide subgroups, with [`GELU_WGSL`] appended.
pub const MATMUL_COOP_WGSL: &str = concat!(kernel!("matmul_coop.wgsl"), "\n", kernel!("gelu.wgsl"));
/// GELU (erf form), appended to each matmul kernel.
pub const GELU_WGSL: &str = kernel!("gelu.wgsl");
/// `x[r, :] = LayerNorm(x[r, :] + res[r, :])`; one 128-thread workgroup per row.
pub const LAYERNORM_WGSL: &str = kernel!("layernorm.wgsl");
/// `ctx = softmax(scale · Q Kᵀ) V` per sequence and head of a packed batch: a workgroup per
/// (16-query tile, head, sequence), K/V tiles staged in workgroup memory, online softmax.
pub const ATTENTION_WGSL: &str = kernel!("attention.wgsl");
/// `x[t] = word[id] + position[pos] + token_type[0]`.
pub const EMBED_WGSL: &str = kernel!("embed.wgsl");
/// Mean pooling per sequence + L2 normalisation.
pub const POOL_WGSL: &str = kernel!("pool.wgsl");
/// Head dimensions the attention kernel supports (`H / heads`): a multiple of 16, at most 64
/// (MiniLM and BERT-base-like models: 32 and 64).
pub fn attention_supports(hidden: usize, heads: usize) -> bool {
    heads > 0 && hidden.is_multiple_of(heads) && (hidden / heads).is_multiple_of(16) && (16..=64).contains(&(hidden / heads))
}

/// Output tile of a matrix multiply, chosen per product shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatmulTile {
    /// 64 × 64 outputs per workgroup of 256 threads: most reuse of each staged value.
    Large,
    /// 32 × 32 outputs per workgroup of 64 threads: four times the workgroups, for products
    /// whose 64 × 64 grid would leave most of a GPU idle (a batch of 8–32 sentences).
    Small,
    /// 32 × 32 outputs, K staged 64 wide (16 KiB of workgroup memory): a quarter of the round
    /// trips to memory and of the barriers, for products whose 32 × 32 grid still leaves most
    /// of the GPU idle (a batch of 1–8 sentences), where each workgroup's time is the latency of
    /// its K / depth round trips, not arithmetic. With enough workgroups, the smaller slice wins
    /// (more workgroups per multiprocessor): on an H200 at 2,327 × 384 outputs, the f32 products
    /// took 47% longer staged 64 wide (docs/benchmarks.md, "On a GPU machine").
    Deep,
}

impl MatmulTile {
    /// Every shape, in pipeline order.
    pub const ALL: [MatmulTile; 3] = [MatmulTile::Large, MatmulTile::Small, MatmulTile::Deep];

    /// Workgroups below which a 64 × 64 grid is taken to under-fill the GPU (about two per
    /// streaming multiprocessor of a large GPU; WebGPU does not report the count).
    pub const FILL: u32 = 256;

    /// The edge of the square tile.
    pub fn edge(self) -> u32 {
        match self {
            MatmulTile::Large => 64,
            MatmulTile::Small | MatmulTile::Deep => 32,
        }
    }

    /// The width of the K slice staged at once (a multiple of 16; 2 · edge · depth · 16 bytes of
    /// workgroup memory ≤ WebGPU's default 16 KiB).
    pub fn depth(self) -> u32 {
        match self {
            MatmulTile::Large | MatmulTile::Small => 16,
            MatmulTile::Deep => 64,
        }
    }

    /// The tile for an `m × n` output: [`MatmulTile::Large`] unless its grid has fewer than
    /// [`MatmulTile::FILL`] workgroups, then [`MatmulTile::Small`] unless its grid has fewer
    /// too, then [`MatmulTile::Deep`].
    pub fn for_shape(m: u32, n: u32) -> Self {
        let grid = |e: u32| m.div_ceil(e) * n.div_ceil(e);
        if grid(64) >= Self::FILL {
            MatmulTile::Large
        } else if grid(32) >= Self::FILL {
            MatmulTile::Small
        } else {
            MatmulTile::Deep
        }
    }

    /// The dispatch grid for an `m × n` output.
    pub fn groups(self, m: u32, n: u32) -> (u32, u32, u32) {
        (n.div_ceil(self.edge()), m.div_ceil(self.edge()), 1)
    }
}

/// `src` with the one occurrence of `from` replaced by `to`; panics when the kernel text changed
/// so that `from` is no longer there exactly once (a test derives every variant).
fn substitute(src: &str, from: &str, to: &str) -> String {
    assert!(src.matches(from).count() == 1, "kernel text changed: update its variant ({from})");
    src.replace(from, to)
}

/// The matmul kernel for a tile shape, in f32 or (`f16`) with f16 weights, tiles and products
/// within each 16-wide K slice, summed across slices in f32 (bias, activation and output stay
/// f32; needs the `shader-f16` feature). Derived from [`MATMUL_WGSL`] so the variants cannot
/// drift.
pub fn matmul_wgsl(tile: MatmulTile, f16: bool) -> String {
    let e = tile.edge();
    let mut src = substitute(MATMUL_WGSL, "const BM: u32 = 64u;", &format!("const BM: u32 = {e}u;"));
    src = substitute(&src, "const BN: u32 = 64u;", &format!("const BN: u32 = {e}u;"));
    src = substitute(&src, "const BK: u32 = 16u;", &format!("const BK: u32 = {}u;", tile.depth()));
    if f16 {
        src = substitute(&src, "var<storage, read> w: array<vec4<f32>>;", "var<storage, read> w: array<vec4<f16>>;");
        src = substitute(&src, "alias mul4 = vec4<f32>;", "alias mul4 = vec4<f16>;");
        src = format!("enable f16;\n{src}");
    }
    src
}

/// The LayerNorm kernel, with its two row reductions through a tree in workgroup memory, or
/// (`subgroups`, where the adapter has them; native only) through `subgroupAdd` and one partial
/// sum per subgroup: 2 barriers per reduction instead of 8. Derived from [`LAYERNORM_WGSL`].
pub fn layernorm_wgsl(subgroups: bool) -> String {
    // Browsers get no subgroups (`wanted_features`): the variant is not shipped to them.
    if !subgroups || cfg!(target_arch = "wasm32") {
        return LAYERNORM_WGSL.to_string();
    }
    let start = LAYERNORM_WGSL.find("fn reduce_sum(").expect("layernorm.wgsl: reduce_sum");
    let end = start + LAYERNORM_WGSL[start..].find("\n}\n").expect("layernorm.wgsl: end of reduce_sum") + 3;
    let reduce = "// This invocation's subgroup lane, subgroup and the workgroup's subgroup count.
var<private> lane: u32;
var<private> sg: u32;
var<private> sg_count: u32;

fn reduce_sum(tid: u32, v: f32) -> f32 {
    let s = subgroupAdd(v);
    if (lane == 0u) {
        part[sg] = s;
    }
    workgroupBarrier();
    var total = 0.0;
    for (var i = 0u; i < sg_count; i++) {
        total += part[i];
    }
    workgroupBarrier();
    return total;
}
";
    let src = format!("{}{reduce}{}", &LAYERNORM_WGSL[..start], &LAYERNORM_WGSL[end..]);
    substitute(
        &src,
        "fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
        "fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(subgroup_invocation_id) lane_id: u32,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(num_subgroups) sgs: u32,
) {
    lane = lane_id;
    sg = sg_id;
    sg_count = sgs;",
    )
}

/// Which matmul kernel runs a product.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatmulKernel {
    /// f32 weights and arithmetic, in a tile shape.
    F32(MatmulTile),
    /// f16 weights, tiles and per-slice products (`shader-f16`), in a tile shape.
    F16(MatmulTile),
    /// f16 weights on cooperative matrices (tensor cores), 64 × 64 tiles; native only, where the
    /// adapter offers 16 × 16 × 16 f16 → f32 matrices in 32-wide subgroups.
    Coop,
}

impl MatmulKernel {
    /// Whether the kernel reads f16 weights.
    pub fn is_f16(self) -> bool {
        !matches!(self, MatmulKernel::F32(_))
    }

    /// The dispatch grid for an `m × n` output.
    pub fn groups(self, m: u32, n: u32) -> (u32, u32, u32) {
        match self {
            MatmulKernel::F32(t) | MatmulKernel::F16(t) => t.groups(m, n),
            MatmulKernel::Coop => MatmulTile::Large.groups(m, n),
        }
    }
}

/// Every kernel source, by file name, as compiled (the matmul kernels with [`GELU_WGSL`]
/// appended; the naga validation test walks this list).
pub const KERNELS: &[(&str, &str)] = &[
    ("attention.wgsl", ATTENTION_WGSL),
    ("embed.wgsl", EMBED_WGSL),
    ("gelu.wgsl", GELU_WGSL),
    ("layernorm.wgsl", LAYERNORM_WGSL),
    ("matmul.wgsl", MATMUL_WGSL),
    ("matmul_coop.wgsl", MATMUL_COOP_WGSL),
    ("pool.wgsl", POOL_WGSL),
];

#[cfg(test)]
mod tests {
    use super::MatmulTile;

    /// Batches of 1, 32 and 128 sentences of the bench set (77, 2,327 and 9,682 tokens) against
    /// MiniLM's product widths.
    #[test]
    fn tile_follows_the_grid() {
        assert_eq!(MatmulTile::for_shape(77, 384), MatmulTile::Deep);
        assert_eq!(MatmulTile::for_shape(77, 1536), MatmulTile::Deep);
        assert_eq!(MatmulTile::for_shape(2327, 384), MatmulTile::Small);
        assert_eq!(MatmulTile::for_shape(2327, 1152), MatmulTile::Large);
        assert_eq!(MatmulTile::for_shape(9682, 384), MatmulTile::Large);
        for t in MatmulTile::ALL {
            // Both staged tiles within WebGPU's default 16 KiB of workgroup memory (f32).
            assert!(2 * t.edge() * t.depth() * 4 <= 16384 && t.depth() % 16 == 0, "{t:?}");
        }
    }
}
