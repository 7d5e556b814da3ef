//! The GPU embedder: WGSL compute shaders dispatched through wgpu (WebGPU in the browser; Vulkan
//! natively, lavapipe on GPU-less machines). [`crate::embed::DeviceEmbedder`] puts it behind the
//! [`crate::embed::Embedder`] port.
//!
//! [`Gpu`] opens a device and builds every pipeline once. [`Gpu::upload`] puts a [`BertModel`]'s
//! weights on the device ([`GpuBert`]), whose [`GpuBert::embed_ids`] runs the whole forward pass:
//! embedding gather → LayerNorm → per layer {fused Q/K/V matmul, attention, output matmul,
//! residual + LayerNorm, FFN matmul with fused GELU, matmul, residual + LayerNorm} → mean pooling
//! + L2, 3 + 7 per layer dispatches in one command buffer.
//!
//! Per batch only activations move: the activation, id, parameter and readback buffers and the
//! bind groups live in a workspace that is created for the largest batch seen so far (token
//! capacity rounded up to a power of two) and reused afterwards, so a warm batch creates no
//! buffer, bind group or pipeline ([`Gpu::counters`] counts them). Sequences are sorted by length
//! and cut into forward passes of at most [`GpuBert::max_batch_tokens`] tokens (length buckets);
//! within a pass they are packed end to end, so no padding is computed.
//!
//! [`Gpu::matmul`] and [`Gpu::layer_norm`] are one-shot entry points for the kernel tests.
//!
//! Readback is `map_async` + await; only native backends add a blocking `device.poll`.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use wgpu::util::DeviceExt;

use crate::embed::bert::BertModel;
use crate::embed::gemm::Packed;
use crate::error::GpuError;

/// `out[M, N] = act(a[M, K] · w[K, N] + bias[N])`; 64 × 64 tiles, 16 × 16 threads, f32 (the
/// [`MatmulTile::Large`] shape; [`matmul_wgsl`] derives the others), with [`GELU_WGSL`] appended.
pub const MATMUL_WGSL: &str = concat!(include_str!("matmul.wgsl"), "\n", include_str!("gelu.wgsl"));
/// The matmul on cooperative matrices (tensor cores; native only): f16 × f16 → f32, 64 × 64
/// tiles of 128 threads in four 32-wide subgroups, with [`GELU_WGSL`] appended.
pub const MATMUL_COOP_WGSL: &str = concat!(include_str!("matmul_coop.wgsl"), "\n", include_str!("gelu.wgsl"));
/// GELU (erf form), appended to each matmul kernel.
pub const GELU_WGSL: &str = include_str!("gelu.wgsl");
/// `x[r, :] = LayerNorm(x[r, :] + res[r, :])`; one 128-thread workgroup per row.
pub const LAYERNORM_WGSL: &str = include_str!("layernorm.wgsl");
/// `ctx = softmax(scale · Q Kᵀ) V` per sequence and head of a packed batch: a workgroup per
/// (16-query tile, head, sequence), K/V tiles staged in workgroup memory, online softmax.
pub const ATTENTION_WGSL: &str = include_str!("attention.wgsl");
/// `x[t] = word[id] + position[pos] + token_type[0]`.
pub const EMBED_WGSL: &str = include_str!("embed.wgsl");
/// Mean pooling per sequence + L2 normalisation.
pub const POOL_WGSL: &str = include_str!("pool.wgsl");
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
    /// whose 64 × 64 grid would leave most of a GPU idle (a query batch of 10–80 rows).
    Small,
}

impl MatmulTile {
    /// Every shape, in pipeline order.
    pub const ALL: [MatmulTile; 2] = [MatmulTile::Large, MatmulTile::Small];

    /// Workgroups below which a 64 × 64 grid is taken to under-fill the GPU (about two per
    /// streaming multiprocessor of a large GPU; WebGPU does not report the count).
    pub const FILL: u32 = 256;

    /// The edge of the square tile.
    pub fn edge(self) -> u32 {
        match self {
            MatmulTile::Large => 64,
            MatmulTile::Small => 32,
        }
    }

    /// The tile for an `m × n` output: [`MatmulTile::Large`] unless its grid has fewer than
    /// [`MatmulTile::FILL`] workgroups.
    pub fn for_shape(m: u32, n: u32) -> Self {
        if m.div_ceil(64) * n.div_ceil(64) < Self::FILL { MatmulTile::Small } else { MatmulTile::Large }
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
    if !subgroups {
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

/// GPU time of one forward pass by kernel kind (timestamp queries), and its wall time from
/// submission to readback on the host, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KernelTimes {
    /// Tiled matrix multiplies (Q/K/V, output, FFN ×2).
    pub matmul_ms: f64,
    /// Attention.
    pub attention_ms: f64,
    /// Residual + LayerNorm.
    pub layer_norm_ms: f64,
    /// Embedding gather and pooling.
    pub other_ms: f64,
    /// Host wall time of the whole call (includes launches, transfers, readback).
    pub wall_ms: f64,
}

/// GPU objects created so far on one device (a warm batch must add none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuCounters {
    /// Buffers (weights, activations, parameters, readback).
    pub buffers: u64,
    /// Bind groups.
    pub bind_groups: u64,
    /// Compute pipelines.
    pub pipelines: u64,
}

#[derive(Default)]
struct Counters {
    buffers: AtomicU64,
    bind_groups: AtomicU64,
    pipelines: AtomicU64,
}

/// A device with the kernels' pipelines, created once.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: String,
    software: bool,
    f16: bool,
    subgroups: bool,
    lost: Arc<AtomicBool>,
    counters: Counters,
    /// The matmul per tile shape ([`MatmulTile::ALL`] order), sharing one bind-group layout so
    /// one bind group serves every shape.
    matmul: Vec<wgpu::ComputePipeline>,
    /// The f16 matmuls per tile shape, where the adapter has `shader-f16`.
    matmul_f16: Option<Vec<wgpu::ComputePipeline>>,
    /// The cooperative-matrix matmul, where the adapter offers it and it matched the f16 kernel
    /// on a test product when the device opened.
    matmul_coop: Option<wgpu::ComputePipeline>,
    /// Why there is no cooperative-matrix matmul, or that there is one.
    coop_status: String,
    layer_norm: wgpu::ComputePipeline,
    attention: wgpu::ComputePipeline,
    embed: wgpu::ComputePipeline,
    pool: wgpu::ComputePipeline,
}

fn failed(what: &str, e: impl std::fmt::Display) -> GpuError {
    GpuError::Failed { reason: format!("{what}: {e}") }
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Weights as f32 bytes, or as f16 bytes padded to a multiple of 4.
fn weight_bytes(w: &[f32], f16: bool) -> Vec<u8> {
    if f16 {
        let mut b: Vec<u8> = w.iter().flat_map(|x| half::f16::from_f32(*x).to_le_bytes()).collect();
        b.resize(b.len().next_multiple_of(4), 0);
        b
    } else {
        bytes(w)
    }
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

impl Gpu {
    /// Opens the default adapter and builds every pipeline.
    ///
    /// Errors: [`GpuError::Unavailable`] when there is no adapter or device.
    pub async fn new() -> Result<Self, GpuError> {
        let instance = wgpu::Instance::default();
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions::default())
            .await
            .map_err(|e| GpuError::Unavailable { reason: e.to_string() })?;
        let info = adapter.get_info();
        let name = if info.name.is_empty() { format!("{:?}", info.backend) } else { format!("{} ({:?})", info.name, info.backend) };
        // A CPU implementation of the API (lavapipe, SwiftShader when the browser flags it as a
        // fallback adapter) is correct but slower than the CPU path.
        let software = info.device_type == wgpu::DeviceType::Cpu;
        // Ask for the adapter's own buffer limits (the defaults cap a binding at 128 MiB).
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: adapter.limits().max_storage_buffer_binding_size,
            max_buffer_size: adapter.limits().max_buffer_size,
            ..wgpu::Limits::default()
        };
        // Timestamp queries for the kernel-time split of the benchmark, f16 arithmetic, subgroup
        // reductions (native only: naga's WGSL front end takes no `enable subgroups;`, which a
        // browser requires), and cooperative matrices where the adapter offers the one shape
        // the kernel uses.
        let offered = adapter.features();
        let mut wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SHADER_F16;
        if cfg!(not(target_arch = "wasm32")) {
            wanted |= wgpu::Features::SUBGROUP;
        }
        let coop_shape = adapter.cooperative_matrix_properties().iter().any(|c| {
            (c.m_size, c.n_size, c.k_size) == (16, 16, 16)
                && c.ab_type == wgpu::CooperativeScalarType::F16
                && c.cr_type == wgpu::CooperativeScalarType::F32
        });
        let coop_wanted = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16 | wgpu::Features::SUBGROUP;
        let coop_offered = if !offered.contains(coop_wanted) {
            let missing: Vec<&str> = [
                (wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX, "cooperative matrices"),
                (wgpu::Features::SHADER_F16, "shader-f16"),
                (wgpu::Features::SUBGROUP, "subgroups"),
            ]
            .into_iter()
            .filter(|(f, _)| !offered.contains(*f))
            .map(|(_, name)| name)
            .collect();
            Err(format!("the adapter lacks {}", missing.join(", ")))
        } else if !coop_shape {
            Err("the adapter offers no 16 × 16 × 16 f16 → f32 cooperative matrix".to_string())
        } else if (info.subgroup_min_size, info.subgroup_max_size) != (32, 32) {
            Err(format!("subgroups of {}–{} invocations (the kernel needs exactly 32)", info.subgroup_min_size, info.subgroup_max_size))
        } else {
            Ok(())
        };
        if coop_offered.is_ok() {
            wanted |= coop_wanted;
        }
        let features = offered & wanted;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                required_limits: limits,
                required_features: features,
                // SAFETY: the only experimental feature requested is cooperative matrices, used by
                // one kernel whose results are checked against the f16 kernel before use.
                experimental_features: if coop_offered.is_ok() {
                    unsafe { wgpu::ExperimentalFeatures::enabled() }
                } else {
                    wgpu::ExperimentalFeatures::disabled()
                },
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Unavailable { reason: e.to_string() })?;
        let lost = Arc::new(AtomicBool::new(false));
        let flag = lost.clone();
        device.set_device_lost_callback(move |_, _| flag.store(true, Ordering::SeqCst));
        // Validation or out-of-memory errors outside an error scope: mark the device unusable
        // (the embedder then falls back to the CPU) instead of wgpu's default panic.
        let flag = lost.clone();
        device.on_uncaptured_error(Arc::new(move |_e: wgpu::Error| flag.store(true, Ordering::SeqCst)));
        let pipeline_in = |label: &str, src: &str, layout: Option<&wgpu::PipelineLayout>| {
            let module = device
                .create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(src.into()) });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let pipeline = |label: &str, src: &str| pipeline_in(label, src, None);
        // One explicit layout for every matmul variant: params, a, w, bias, out.
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        };
        let read = wgpu::BufferBindingType::Storage { read_only: true };
        let group = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("matmul"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, read),
                entry(2, read),
                entry(3, read),
                entry(4, wgpu::BufferBindingType::Storage { read_only: false }),
            ],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("matmul"),
            bind_group_layouts: &[Some(&group)],
            immediate_size: 0,
        });
        let matmuls = |f16: bool| -> Vec<wgpu::ComputePipeline> {
            MatmulTile::ALL.iter().map(|&t| pipeline_in("matmul", &matmul_wgsl(t, f16), Some(&layout))).collect()
        };
        let matmul = matmuls(false);
        let subgroups = features.contains(wgpu::Features::SUBGROUP);
        let layer_norm = pipeline("layernorm", &layernorm_wgsl(subgroups));
        let attention = pipeline("attention", ATTENTION_WGSL);
        let embed = pipeline("embed", EMBED_WGSL);
        let pool = pipeline("pool", POOL_WGSL);
        let f16 = features.contains(wgpu::Features::SHADER_F16);
        let matmul_f16 = f16.then(|| matmuls(true));
        let tiles = MatmulTile::ALL.len() as u64;
        let counters = Counters { pipelines: AtomicU64::new(4 + tiles * (1 + f16 as u64)), ..Default::default() };
        let coop = match coop_offered {
            Ok(()) => {
                // Compiled inside an error scope: an experimental feature's shader that the driver
                // refuses must cost the fallback, not the device.
                let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
                let p = pipeline_in("matmul_coop", MATMUL_COOP_WGSL, Some(&layout));
                match scope.pop().await {
                    None => Ok(p),
                    Some(e) => Err(format!("the cooperative-matrix kernel did not compile: {e}")),
                }
            }
            Err(why) => Err(why),
        };
        let mut gpu = Gpu {
            device,
            queue,
            adapter: name,
            software,
            f16,
            subgroups,
            lost,
            counters,
            matmul,
            matmul_f16,
            matmul_coop: None,
            coop_status: String::new(),
            layer_norm,
            attention,
            embed,
            pool,
        };
        gpu.coop_status = match coop {
            Ok(p) => {
                gpu.counters.pipelines.fetch_add(1, Ordering::Relaxed);
                gpu.matmul_coop = Some(p);
                match gpu.coop_check().await {
                    Ok(()) => "in use (16 × 16 × 16 f16 → f32, matched the f16 kernel)".to_string(),
                    Err(why) => {
                        gpu.matmul_coop = None;
                        why
                    }
                }
            }
            Err(why) => why,
        };
        Ok(gpu)
    }

    /// Runs one product on the cooperative-matrix kernel and on the f16 kernel, on the same f16
    /// weights: they must agree within f16 rounding (max abs difference ≤ 2⁻⁶ of the largest
    /// output, outputs of order 1) before the cooperative kernel is used.
    async fn coop_check(&self) -> Result<(), String> {
        let (m, k, n) = (75usize, 64usize, 80usize);
        // Deterministic values in [-1, 1): a small LCG.
        let mut x = 0x9e37_79b9u32;
        let mut next = || {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        };
        let a: Vec<f32> = (0..m * k).map(|_| next()).collect();
        let w: Vec<f32> = (0..k * n).map(|_| next()).collect();
        let bias: Vec<f32> = (0..n).map(|_| next()).collect();
        let w = Packed::from_linear(&w, n, k);
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let coop = self.matmul_with(&a, m, &w, &bias, true, MatmulKernel::Coop).await;
        let error = scope.pop().await;
        let coop = match (coop, error) {
            (Ok(v), None) => v,
            (Err(e), _) => return Err(format!("the cooperative-matrix kernel failed: {e}")),
            (_, Some(e)) => return Err(format!("the cooperative-matrix kernel failed: {e}")),
        };
        let f16 = self
            .matmul_with(&a, m, &w, &bias, true, MatmulKernel::F16(MatmulTile::Large))
            .await
            .map_err(|e| format!("the f16 kernel failed: {e}"))?;
        let largest = f16.iter().fold(0f32, |acc, v| acc.max(v.abs()));
        let worst = coop.iter().zip(&f16).fold(0f32, |acc, (c, f)| acc.max((c - f).abs()));
        if worst.is_finite() && worst <= largest / 64.0 {
            Ok(())
        } else {
            Err(format!(
                "the cooperative-matrix kernel disagreed with the f16 kernel (max abs difference {worst}, largest output {largest})"
            ))
        }
    }

    /// Whether matmuls run on cooperative matrices (tensor cores) for f16 models, and if not,
    /// why not.
    pub fn coop_status(&self) -> (bool, &str) {
        (self.matmul_coop.is_some(), &self.coop_status)
    }

    /// Whether LayerNorm reduces through subgroup operations.
    pub fn uses_subgroups(&self) -> bool {
        self.subgroups
    }

    /// The adapter in use, e.g. `llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)`.
    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    /// Whether the adapter is a CPU implementation of the API (lavapipe, SwiftShader).
    pub fn is_software(&self) -> bool {
        self.software
    }

    /// Whether the adapter offers `shader-f16` (then [`Gpu::upload_f16`] can store weights as f16).
    pub fn supports_f16(&self) -> bool {
        self.f16
    }

    /// Whether the device was lost (or hit an uncaptured error); a lost device is not used again.
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// Destroys the device, as a driver reset or `GPUDevice.destroy()` would: every later
    /// submission fails and [`Gpu::is_lost`] turns true. (Used to test the CPU fallback.)
    pub fn destroy(&self) {
        self.lost.store(true, Ordering::SeqCst);
        self.device.destroy();
    }

    /// Buffers, bind groups and pipelines created on this device so far.
    pub fn counters(&self) -> GpuCounters {
        GpuCounters {
            buffers: self.counters.buffers.load(Ordering::Relaxed),
            bind_groups: self.counters.bind_groups.load(Ordering::Relaxed),
            pipelines: self.counters.pipelines.load(Ordering::Relaxed),
        }
    }

    fn storage(&self, label: &str, data: &[u8], writable: bool) -> wgpu::Buffer {
        let mut usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        if writable {
            usage |= wgpu::BufferUsages::COPY_SRC;
        }
        // wgpu rejects zero-sized bindings: keep at least one element.
        let contents = if data.is_empty() { &[0u8; 4][..] } else { data };
        self.counters.buffers.fetch_add(1, Ordering::Relaxed);
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage })
    }

    fn uniform(&self, data: &[u8]) -> wgpu::Buffer {
        self.counters.buffers.fetch_add(1, Ordering::Relaxed);
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: data,
            usage: wgpu::BufferUsages::UNIFORM,
        })
    }

    /// One dispatch (one-shot bind group), then `out`'s first `len` floats read back.
    async fn run(
        &self,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[&wgpu::Buffer],
        groups: (u32, u32, u32),
        out: &wgpu::Buffer,
        len: usize,
    ) -> Result<Vec<f32>, GpuError> {
        let entries: Vec<wgpu::BindGroupEntry> =
            buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
        let bind = self.bind_group(pipeline, &entries);
        let readback = self.scratch((len * 4) as u64, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        dispatch(&mut enc, pipeline, &bind, groups);
        enc.copy_buffer_to_buffer(out, 0, &readback, 0, (len.max(1) * 4) as u64);
        self.queue.submit([enc.finish()]);
        self.read(&readback, len).await
    }

    /// A buffer without contents (counted).
    fn scratch(&self, bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.counters.buffers.fetch_add(1, Ordering::Relaxed);
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("scratch"),
            size: bytes.max(4).next_multiple_of(4),
            usage,
            mapped_at_creation: false,
        })
    }

    /// A bind group for `pipeline`'s group 0 (counted).
    fn bind_group(&self, pipeline: &wgpu::ComputePipeline, entries: &[wgpu::BindGroupEntry]) -> wgpu::BindGroup {
        self.counters.bind_groups.fetch_add(1, Ordering::Relaxed);
        self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(0), entries })
    }

    /// Maps `readback` (`map_async` + await), copies out its first `len` floats, unmaps it.
    async fn read(&self, readback: &wgpu::Buffer, len: usize) -> Result<Vec<f32>, GpuError> {
        let (tx, rx) = futures::channel::oneshot::channel();
        let bytes = (len.max(1) * 4) as u64;
        readback.slice(..bytes).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        #[cfg(not(target_arch = "wasm32"))]
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| failed("poll", e))?;
        rx.await.map_err(|_| failed("map_async", "callback dropped"))?.map_err(|e| failed("map_async", e))?;
        if self.is_lost() {
            return Err(failed("map_async", "the device was lost"));
        }
        let out = {
            let view = readback.slice(..bytes).get_mapped_range().map_err(|e| failed("get_mapped_range", format!("{e:?}")))?;
            view.chunks_exact(4).take(len).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        };
        readback.unmap();
        Ok(out)
    }

    /// The matmul tile for an `m × n` output on this adapter: [`MatmulTile::for_shape`] on
    /// hardware; always [`MatmulTile::Large`] on a software adapter, whose few CPU threads are
    /// filled by any grid, so smaller tiles only cost reuse.
    pub fn tile_for(&self, m: u32, n: u32) -> MatmulTile {
        if self.software { MatmulTile::Large } else { MatmulTile::for_shape(m, n) }
    }

    /// The kernel for an `m × n` product over `k` with f32 or (`f16`) f16 weights: the
    /// cooperative-matrix kernel for f16 weights where `coop` allows it, the device has it and
    /// `k` is a multiple of 16, else the f16 or f32 kernel in the tile shape [`Gpu::tile_for`]
    /// picks.
    pub fn kernel_for(&self, m: u32, n: u32, k: u32, f16: bool, coop: bool) -> MatmulKernel {
        if f16 && self.matmul_f16.is_some() {
            if coop && self.matmul_coop.is_some() && k.is_multiple_of(16) {
                MatmulKernel::Coop
            } else {
                MatmulKernel::F16(self.tile_for(m, n))
            }
        } else {
            MatmulKernel::F32(self.tile_for(m, n))
        }
    }

    /// The pipeline of a kernel, if this device has it.
    fn matmul_pipeline(&self, kernel: MatmulKernel) -> Option<&wgpu::ComputePipeline> {
        match kernel {
            MatmulKernel::F32(t) => Some(&self.matmul[t as usize]),
            MatmulKernel::F16(t) => self.matmul_f16.as_ref().map(|p| &p[t as usize]),
            MatmulKernel::Coop => self.matmul_coop.as_ref(),
        }
    }

    /// `act(a[m×k] · w + bias[n])` on the GPU in f32, `act` = GELU (erf form) when `gelu`, with
    /// the tile shape [`Gpu::tile_for`] picks.
    ///
    /// Panics when a slice does not match its shape.
    pub async fn matmul(&self, a: &[f32], m: usize, w: &Packed, bias: &[f32], gelu: bool) -> Result<Vec<f32>, GpuError> {
        self.matmul_with(a, m, w, bias, gelu, MatmulKernel::F32(self.tile_for(m as u32, w.n() as u32))).await
    }

    /// [`Gpu::matmul`] on a given kernel (f16 kernels get `w` rounded to f16).
    ///
    /// Errors: [`GpuError::Unavailable`] when this device lacks the kernel.
    /// Panics when a slice does not match its shape.
    pub async fn matmul_with(
        &self,
        a: &[f32],
        m: usize,
        w: &Packed,
        bias: &[f32],
        gelu: bool,
        kernel: MatmulKernel,
    ) -> Result<Vec<f32>, GpuError> {
        let (k, n) = (w.k(), w.n());
        assert!(a.len() == m * k && bias.len() == n, "matmul: shapes");
        let pipeline =
            self.matmul_pipeline(kernel).ok_or_else(|| GpuError::Unavailable { reason: format!("no {kernel:?} matmul on this device") })?;
        let params = self.uniform(&words(&[m as u32, n as u32, k as u32, gelu as u32]));
        let wb = self.storage("w", &weight_bytes(w.as_slice(), kernel.is_f16()), false);
        let (ab, bb) = (self.storage("a", &bytes(a), false), self.storage("bias", &bytes(bias), false));
        let out = self.storage("out", &vec![0u8; m * n * 4], true);
        self.run(pipeline, &[&params, &ab, &wb, &bb, &out], kernel.groups(m as u32, n as u32), &out, m * n).await
    }

    /// `LayerNorm(x + res)` over each `h`-wide row (`res` optional), with `gamma`, `beta`, `eps`.
    ///
    /// Panics when a slice does not match its shape.
    pub async fn layer_norm(&self, x: &[f32], res: Option<&[f32]>, gamma: &[f32], beta: &[f32], eps: f32) -> Result<Vec<f32>, GpuError> {
        let h = gamma.len();
        assert!(h > 0 && x.len().is_multiple_of(h) && beta.len() == h && res.is_none_or(|r| r.len() == x.len()), "layer_norm: shapes");
        let rows = x.len() / h;
        let mut p = words(&[rows as u32, h as u32]);
        p.extend(eps.to_le_bytes());
        p.extend((res.is_some() as u32).to_le_bytes());
        let params = self.uniform(&p);
        let xb = self.storage("x", &bytes(x), true);
        let rb_ = self.storage("res", &bytes(res.unwrap_or(&[])), false);
        let (gb, bb) = (self.storage("gamma", &bytes(gamma), false), self.storage("beta", &bytes(beta), false));
        self.run(&self.layer_norm, &[&params, &xb, &rb_, &gb, &bb], (rows as u32, 1, 1), &xb, x.len()).await
    }
}

impl Gpu {
    /// `ctx [T, H] = softmax(QKᵀ/√d) V` per sequence and head of a packed batch; `qkv` is
    /// `[T, 3H]` (Q | K | V per row), `lens` the sequence lengths (Σ = T).
    ///
    /// Panics when the shapes disagree or [`attention_supports`] refuses the head dimension.
    pub async fn attention(&self, qkv: &[f32], lens: &[usize], hidden: usize, heads: usize) -> Result<Vec<f32>, GpuError> {
        let t: usize = lens.iter().sum();
        assert!(qkv.len() == t * 3 * hidden && attention_supports(hidden, heads), "attention: shapes");
        let mut span = Vec::with_capacity(2 * lens.len());
        let mut start = 0u32;
        for &len in lens {
            span.extend([start, len as u32]);
            start += len as u32;
        }
        let longest = lens.iter().copied().max().unwrap_or(0) as u32;
        let mut p = words(&[t as u32, hidden as u32, heads as u32]);
        p.extend((1.0 / ((hidden / heads) as f32).sqrt()).to_le_bytes());
        let params = self.uniform(&p);
        let (qb, sb) = (self.storage("qkv", &bytes(qkv), false), self.storage("span", &words(&span), false));
        let out = self.storage("ctx", &vec![0u8; t * hidden * 4], true);
        let groups = (longest.div_ceil(16), heads as u32, lens.len() as u32);
        self.run(&self.attention, &[&params, &qb, &sb, &out], groups, &out, t * hidden).await
    }

    /// Mean of each sequence's rows of `x [T, h]`, L2-normalised: `[B, h]`.
    ///
    /// Panics when the shapes disagree.
    pub async fn mean_pool(&self, x: &[f32], lens: &[usize], h: usize) -> Result<Vec<f32>, GpuError> {
        let t: usize = lens.iter().sum();
        assert!(x.len() == t * h, "mean_pool: shapes");
        let mut span = Vec::with_capacity(2 * lens.len());
        let mut start = 0u32;
        for &len in lens {
            span.extend([start, len as u32]);
            start += len as u32;
        }
        let params = self.uniform(&words(&[lens.len() as u32, h as u32, 0, 0]));
        let (xb, sb) = (self.storage("x", &bytes(x), false), self.storage("span", &words(&span), false));
        let out = self.storage("out", &vec![0u8; lens.len() * h * 4], true);
        self.run(&self.pool, &[&params, &xb, &sb, &out], (lens.len() as u32, 1, 1), &out, lens.len() * h).await
    }

    /// `word[ids[t]] + position[pos[t]] + token_type[0]` per token (`[T, h]`; ids ≥ the
    /// vocabulary read as `[UNK]` = 100).
    ///
    /// Panics when the shapes disagree.
    pub async fn embed_gather(
        &self,
        ids: &[u32],
        pos: &[u32],
        word: &[f32],
        position: &[f32],
        token_type: &[f32],
        h: usize,
    ) -> Result<Vec<f32>, GpuError> {
        let t = ids.len();
        assert!(
            pos.len() == t && word.len().is_multiple_of(h) && position.len().is_multiple_of(h) && token_type.len() >= h,
            "embed_gather: shapes"
        );
        let params = self.uniform(&words(&[t as u32, h as u32, (word.len() / h) as u32, 0]));
        let (ib, pb) = (self.storage("ids", &words(ids), false), self.storage("pos", &words(pos), false));
        let (wb, qb, tb) = (
            self.storage("word", &bytes(word), false),
            self.storage("position", &bytes(position), false),
            self.storage("token_type", &bytes(token_type), false),
        );
        let out = self.storage("x", &vec![0u8; t * h * 4], true);
        self.run(&self.embed, &[&params, &ib, &pb, &wb, &qb, &tb, &out], (((t * h) as u32).div_ceil(256), 1, 1), &out, t * h).await
    }
}

/// Records one compute pass with one dispatch.
fn dispatch(enc: &mut wgpu::CommandEncoder, pipeline: &wgpu::ComputePipeline, bind: &wgpu::BindGroup, groups: (u32, u32, u32)) {
    dispatch_timed(enc, pipeline, bind, groups, None);
}

/// [`dispatch`], writing timestamps `2i` and `2i + 1` of `ts = (set, i)` around the pass.
fn dispatch_timed(
    enc: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    bind: &wgpu::BindGroup,
    groups: (u32, u32, u32),
    ts: Option<(&wgpu::QuerySet, u32)>,
) {
    let timestamp_writes = ts.map(|(query_set, i)| wgpu::ComputePassTimestampWrites {
        query_set,
        beginning_of_pass_write_index: Some(2 * i),
        end_of_pass_write_index: Some(2 * i + 1),
    });
    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes });
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, bind, &[]);
    pass.dispatch_workgroups(groups.0, groups.1, groups.2);
}

/// One linear layer on the GPU: packed weight and bias.
struct GpuLinear {
    w: wgpu::Buffer,
    b: wgpu::Buffer,
    k: u32,
    n: u32,
}

/// LayerNorm parameters on the GPU.
struct GpuNorm {
    gamma: wgpu::Buffer,
    beta: wgpu::Buffer,
}

struct GpuLayer {
    qkv: GpuLinear,
    attention_output: GpuLinear,
    attention_ln: GpuNorm,
    intermediate: GpuLinear,
    output: GpuLinear,
    output_ln: GpuNorm,
}

/// Uniform slots (each 16 bytes of parameters at a 256-byte aligned offset), rewritten per batch.
#[derive(Clone, Copy)]
enum Slot {
    Embed,
    Norm,
    NormResidual,
    Qkv,
    AttentionOutput,
    Intermediate,
    Output,
    Attention,
    Pool,
}
const SLOTS: u64 = 9;
const SLOT_BYTES: u64 = 256;

/// Per-batch buffers and the bind groups that use them, for up to `tokens` tokens and `seqs`
/// sequences. Created for the largest batch so far, then reused.
struct Workspace {
    tokens: u32,
    seqs: u32,
    params: wgpu::Buffer,
    ids: wgpu::Buffer,
    pos: wgpu::Buffer,
    seq_span: wgpu::Buffer,
    out: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// In dispatch order: embed, LayerNorm, then 7 per layer, then pooling.
    binds: Vec<wgpu::BindGroup>,
}

/// A BERT model with its weights resident on the GPU (uploaded once). Each
/// [`GpuBert::embed_ids`] writes ids and parameters, records the forward pass (3 + 7 per layer
/// dispatches) in one command buffer per length bucket, and reads back the pooled vectors.
pub struct GpuBert {
    gpu: Arc<Gpu>,
    hidden: u32,
    heads: u32,
    inter: u32,
    vocab: u32,
    eps: f32,
    max_len: usize,
    word: wgpu::Buffer,
    position: wgpu::Buffer,
    token_type: wgpu::Buffer,
    no_res: wgpu::Buffer,
    embeddings_ln: GpuNorm,
    layers: Vec<GpuLayer>,
    max_tokens: u32,
    /// Linear weights stored as f16 (the f16 or cooperative-matrix matmuls, [`Gpu::kernel_for`]).
    f16: bool,
    /// Whether f16 products may run on cooperative matrices (where the device has them).
    coop: bool,
    ws: futures::lock::Mutex<Option<Workspace>>,
}

impl Gpu {
    /// Uploads `model`'s weights in f32 (the CPU path's packed layout, so both share one packing).
    ///
    /// Panics when [`attention_supports`] refuses the model's head dimension.
    pub fn upload(self: &Arc<Self>, model: &BertModel) -> GpuBert {
        self.upload_with(model, false)
    }

    /// Uploads `model` with the linear layers' weights stored as f16 and multiplied in f16 (half
    /// the memory and weight traffic, packed f16 arithmetic or tensor cores; cosine ≥ 0.999 to
    /// the golden vectors). Falls back to f32 without `shader-f16`.
    pub fn upload_f16(self: &Arc<Self>, model: &BertModel) -> GpuBert {
        self.upload_with(model, self.f16)
    }

    fn upload_with(self: &Arc<Self>, model: &BertModel, f16: bool) -> GpuBert {
        let c = model.config();
        assert!(attention_supports(c.hidden_size, c.num_attention_heads), "upload: head dimension (check attention_supports first)");
        let lin = |l: &crate::embed::bert::Linear| GpuLinear {
            w: self.storage("w", &weight_bytes(l.w.as_slice(), f16), false),
            b: self.storage("b", &bytes(&l.b), false),
            k: l.w.k() as u32,
            n: l.w.n() as u32,
        };
        let norm = |n: &crate::embed::bert::LayerNorm| GpuNorm {
            gamma: self.storage("gamma", &bytes(&n.weight), false),
            beta: self.storage("beta", &bytes(&n.bias), false),
        };
        // The largest activation is [tokens, max(3H, I)] floats; keep it within one binding.
        let widest = (3 * c.hidden_size).max(c.intermediate_size) as u64 * 4;
        let limit = self.device.limits().max_storage_buffer_binding_size;
        let max_tokens = (limit / widest).clamp(c.max_seq_len() as u64, GpuBert::MAX_BATCH_TOKENS as u64) as u32;
        GpuBert {
            gpu: self.clone(),
            hidden: c.hidden_size as u32,
            heads: c.num_attention_heads as u32,
            inter: c.intermediate_size as u32,
            vocab: c.vocab_size as u32,
            eps: c.layer_norm_eps,
            max_len: c.max_position_embeddings,
            word: self.storage("word", &bytes(&model.word_embeddings), false),
            position: self.storage("position", &bytes(&model.position_embeddings), false),
            token_type: self.storage("token_type", &bytes(&model.token_type_embeddings), false),
            // The LayerNorm's `res` binding when there is no residual (a buffer may not be bound
            // both writable and read-only in one dispatch).
            no_res: self.storage("no_res", &[], false),
            embeddings_ln: norm(&model.embeddings_ln),
            layers: model
                .layers
                .iter()
                .map(|l| GpuLayer {
                    qkv: lin(&l.qkv),
                    attention_output: lin(&l.attention_output),
                    attention_ln: norm(&l.attention_ln),
                    intermediate: lin(&l.intermediate),
                    output: lin(&l.output),
                    output_ln: norm(&l.output_ln),
                })
                .collect(),
            max_tokens,
            f16,
            coop: f16,
            ws: futures::lock::Mutex::new(None),
        }
    }
}

impl GpuBert {
    /// Upper bound on the tokens of one forward pass (a length bucket).
    pub const MAX_BATCH_TOKENS: usize = 8192;

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Tokens per forward pass on this device: [`GpuBert::MAX_BATCH_TOKENS`], or fewer when the
    /// widest activation would exceed the device's storage-binding limit.
    pub fn max_batch_tokens(&self) -> usize {
        self.max_tokens as usize
    }

    /// Whether the linear weights are stored as f16.
    pub fn is_f16(&self) -> bool {
        self.f16
    }

    /// Lets (`true`, the default for f16 weights) or stops f16 products from running on
    /// cooperative matrices where the device has them (the benchmark compares both).
    pub fn use_coop(&mut self, on: bool) {
        self.coop = on && self.f16;
    }

    /// Compute dispatches per forward pass: embedding, its LayerNorm, 7 per layer, pooling.
    pub fn dispatches_per_forward(&self) -> usize {
        3 + 7 * self.layers.len()
    }

    /// Sentence embeddings `[B][H]` (mean pooling, L2-normalised) of token-id sequences (special
    /// tokens included; each cut to the model's maximum length), as [`BertModel::embed`].
    ///
    /// Sequences are sorted by length and cut into forward passes of at most
    /// [`GpuBert::max_batch_tokens`] tokens; results come back in input order.
    ///
    /// Errors: [`GpuError::Failed`] when a submission or the readback fails (device lost).
    pub async fn embed_ids(&self, seqs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, GpuError> {
        if self.gpu.is_lost() {
            return Err(failed("embed", "the device was lost"));
        }
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by_key(|&i| seqs[i].len());
        let mut out = vec![Vec::new(); seqs.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start;
            let mut tokens = 0;
            while end < order.len() {
                let len = seqs[order[end]].len().clamp(1, self.max_len);
                if end > start && tokens + len > self.max_tokens as usize {
                    break;
                }
                tokens += len;
                end += 1;
            }
            let bucket: Vec<&[u32]> = order[start..end].iter().map(|&i| seqs[i].as_slice()).collect();
            for (v, &i) in self.forward(&bucket).await?.into_iter().zip(&order[start..end]) {
                out[i] = v;
            }
            start = end;
        }
        Ok(out)
    }

    /// GPU time per kernel kind for one forward pass over `seqs` (one packed batch), from
    /// timestamp queries; `None` when the device has no `TIMESTAMP_QUERY`.
    pub async fn profile(&self, seqs: &[Vec<u32>], clock: &dyn crate::ports::Clock) -> Result<Option<KernelTimes>, GpuError> {
        if !self.gpu.device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Ok(None);
        }
        let refs: Vec<&[u32]> = seqs.iter().map(|s| s.as_slice()).collect();
        let n = self.dispatches_per_forward() as u32;
        let set = self.gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * n,
        });
        let t0 = clock.monotonic_ms();
        let (_, ticks) = self.forward_with(&refs, Some(&set)).await?;
        let wall_ms = clock.monotonic_ms() - t0;
        let period = self.gpu.queue.get_timestamp_period() as f64;
        let kinds = self.kernel_kinds();
        let mut t = KernelTimes { wall_ms, ..Default::default() };
        for (i, kind) in kinds.iter().enumerate() {
            let ms = ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64 * period / 1e6;
            match *kind {
                "matmul" => t.matmul_ms += ms,
                "attention" => t.attention_ms += ms,
                "layernorm" => t.layer_norm_ms += ms,
                _ => t.other_ms += ms,
            }
        }
        Ok(Some(t))
    }

    /// Kernel of each dispatch, in order.
    fn kernel_kinds(&self) -> Vec<&'static str> {
        let mut k = vec!["embed", "layernorm"];
        for _ in &self.layers {
            k.extend(["matmul", "attention", "matmul", "layernorm", "matmul", "matmul", "layernorm"]);
        }
        k.push("pool");
        k
    }

    /// One forward pass over a packed batch.
    async fn forward(&self, seqs: &[&[u32]]) -> Result<Vec<Vec<f32>>, GpuError> {
        Ok(self.forward_with(seqs, None).await?.0)
    }

    /// [`GpuBert::forward`], with timestamps around every dispatch when `ts` is given (returned
    /// as raw ticks, two per dispatch).
    async fn forward_with(&self, seqs: &[&[u32]], ts: Option<&wgpu::QuerySet>) -> Result<(Vec<Vec<f32>>, Vec<u64>), GpuError> {
        let g = &*self.gpu;
        let h = self.hidden;
        let (mut ids, mut pos, mut seq_span) = (Vec::new(), Vec::new(), Vec::new());
        for s in seqs {
            let start = ids.len() as u32;
            let len = s.len().min(self.max_len) as u32;
            for (i, &id) in s.iter().take(len as usize).enumerate() {
                ids.push(id);
                pos.push(i as u32);
            }
            seq_span.extend([start, len]);
        }
        let t = ids.len() as u32;
        let b = seqs.len() as u32;
        let mut guard = self.ws.lock().await;
        if guard.as_ref().is_none_or(|w| w.tokens < t || w.seqs < b) {
            // Grow to the next power of two (at least 512 tokens / 32 sequences): a few sizes
            // serve every later batch.
            let (old_t, old_b) = guard.as_ref().map_or((0, 0), |w| (w.tokens, w.seqs));
            let tokens = t.max(old_t).max(512).next_power_of_two().min(self.max_tokens.max(t));
            let seqs_cap = b.max(old_b).max(32).next_power_of_two();
            *guard = Some(self.workspace(tokens, seqs_cap));
        }
        let ws = guard.as_ref().expect("workspace");
        // Parameters of every slot for this batch.
        let mut params = vec![0u8; (SLOTS * SLOT_BYTES) as usize];
        let mut put = |slot: Slot, v: [u32; 4]| {
            let o = slot as usize * SLOT_BYTES as usize;
            params[o..o + 16].copy_from_slice(&words(&v));
        };
        let eps = self.eps.to_bits();
        let l0 = &self.layers[0];
        put(Slot::Embed, [t, h, self.vocab, 0]);
        put(Slot::Norm, [t, h, eps, 0]);
        put(Slot::NormResidual, [t, h, eps, 1]);
        put(Slot::Qkv, [t, l0.qkv.n, l0.qkv.k, 0]);
        put(Slot::AttentionOutput, [t, l0.attention_output.n, l0.attention_output.k, 0]);
        put(Slot::Intermediate, [t, l0.intermediate.n, l0.intermediate.k, 1]);
        put(Slot::Output, [t, l0.output.n, l0.output.k, 0]);
        put(Slot::Attention, [t, h, self.heads, (1.0 / ((h / self.heads) as f32).sqrt()).to_bits()]);
        put(Slot::Pool, [b, h, 0, 0]);
        g.queue.write_buffer(&ws.params, 0, &params);
        g.queue.write_buffer(&ws.ids, 0, &words(&ids));
        g.queue.write_buffer(&ws.pos, 0, &words(&pos));
        g.queue.write_buffer(&ws.seq_span, 0, &words(&seq_span));
        let mut enc = g.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        let mut binds = ws.binds.iter();
        let mut index = 0u32;
        let mut next = |enc: &mut wgpu::CommandEncoder, pipeline: &wgpu::ComputePipeline, groups: (u32, u32, u32)| {
            dispatch_timed(enc, pipeline, binds.next().expect("one bind group per dispatch"), groups, ts.map(|set| (set, index)));
            index += 1;
        };
        let longest = seqs.iter().map(|s| s.len().min(self.max_len) as u32).max().unwrap_or(0);
        let mm = |l: &GpuLinear| {
            let kernel = g.kernel_for(t, l.n, l.k, self.f16, self.coop);
            (g.matmul_pipeline(kernel).expect("the device has the kernels kernel_for picks"), kernel.groups(t, l.n))
        };
        next(&mut enc, &g.embed, ((t * h).div_ceil(256), 1, 1));
        next(&mut enc, &g.layer_norm, (t, 1, 1));
        for l in &self.layers {
            let (p, groups) = mm(&l.qkv);
            next(&mut enc, p, groups);
            next(&mut enc, &g.attention, (longest.div_ceil(16), self.heads, b));
            let (p, groups) = mm(&l.attention_output);
            next(&mut enc, p, groups);
            next(&mut enc, &g.layer_norm, (t, 1, 1));
            let (p, groups) = mm(&l.intermediate);
            next(&mut enc, p, groups);
            let (p, groups) = mm(&l.output);
            next(&mut enc, p, groups);
            next(&mut enc, &g.layer_norm, (t, 1, 1));
        }
        next(&mut enc, &g.pool, (b, 1, 1));
        let n = (b * h) as usize;
        enc.copy_buffer_to_buffer(&ws.out, 0, &ws.readback, 0, (n * 4) as u64);
        // Profiling only: resolve the timestamps into a buffer made for this call.
        let ticks_rb = ts.map(|set| {
            let count = 2 * self.dispatches_per_forward() as u64;
            let resolve = g.scratch(count * 8, wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
            let rb = g.scratch(count * 8, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
            enc.resolve_query_set(set, 0..count as u32, &resolve, 0);
            enc.copy_buffer_to_buffer(&resolve, 0, &rb, 0, count * 8);
            (rb, count as usize)
        });
        g.queue.submit([enc.finish()]);
        let flat = g.read(&ws.readback, n).await?;
        let mut ticks = Vec::new();
        if let Some((rb, count)) = ticks_rb {
            // Two f32-sized words per u64 tick.
            let words = g.read(&rb, 2 * count).await?;
            ticks = words.chunks_exact(2).map(|w| (w[0].to_bits() as u64) | ((w[1].to_bits() as u64) << 32)).collect();
        }
        Ok((flat.chunks_exact(h as usize).map(|c| c.to_vec()).collect(), ticks))
    }

    /// Buffers and bind groups for `tokens` tokens and `seqs` sequences.
    fn workspace(&self, tokens: u32, seqs: u32) -> Workspace {
        let g = &*self.gpu;
        let (t, h) = (tokens as u64, self.hidden as u64);
        let act = |floats: u64| g.scratch(floats * 4, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC);
        let input = |words: u64| g.scratch(words * 4, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST);
        let params = g.scratch(SLOTS * SLOT_BYTES, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST);
        let (ids, pos, seq_span) = (input(t), input(t), input(2 * seqs as u64));
        let (a, b) = (act(t * h), act(t * h));
        let (qkv, ctx, mid) = (act(t * 3 * h), act(t * h), act(t * self.inter as u64));
        let out = act(seqs as u64 * h);
        let readback = g.scratch(seqs as u64 * h * 4, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        let slot = |s: Slot| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &params,
                offset: s as u64 * SLOT_BYTES,
                size: std::num::NonZeroU64::new(16),
            })
        };
        let bind = |pipeline: &wgpu::ComputePipeline, s: Slot, bufs: &[&wgpu::Buffer]| {
            let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: slot(s) }];
            entries.extend(
                bufs.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32 + 1, resource: b.as_entire_binding() }),
            );
            g.bind_group(pipeline, &entries)
        };
        let mut binds = vec![
            bind(&g.embed, Slot::Embed, &[&ids, &pos, &self.word, &self.position, &self.token_type, &a]),
            bind(&g.layer_norm, Slot::Norm, &[&a, &self.no_res, &self.embeddings_ln.gamma, &self.embeddings_ln.beta]),
        ];
        for l in &self.layers {
            // Every matmul kernel shares one layout: bind with the first.
            let mm = &g.matmul[0];
            binds.push(bind(mm, Slot::Qkv, &[&a, &l.qkv.w, &l.qkv.b, &qkv]));
            binds.push(bind(&g.attention, Slot::Attention, &[&qkv, &seq_span, &ctx]));
            binds.push(bind(mm, Slot::AttentionOutput, &[&ctx, &l.attention_output.w, &l.attention_output.b, &b]));
            binds.push(bind(&g.layer_norm, Slot::NormResidual, &[&b, &a, &l.attention_ln.gamma, &l.attention_ln.beta]));
            binds.push(bind(mm, Slot::Intermediate, &[&b, &l.intermediate.w, &l.intermediate.b, &mid]));
            binds.push(bind(mm, Slot::Output, &[&mid, &l.output.w, &l.output.b, &a]));
            binds.push(bind(&g.layer_norm, Slot::NormResidual, &[&a, &b, &l.output_ln.gamma, &l.output_ln.beta]));
        }
        binds.push(bind(&g.pool, Slot::Pool, &[&a, &seq_span, &out]));
        Workspace { tokens, seqs, params, ids, pos, seq_span, out, readback, binds }
    }
}
