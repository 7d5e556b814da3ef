//! [`Gpu`]: a device with every kernel's pipeline, created once, and one-shot entry points for
//! the kernel tests.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use wgpu::util::DeviceExt;

use crate::embed::gemm::Packed;
use crate::error::GpuError;

use super::kernels::*;

pub use super::report::{GpuCounters, KernelTimes};

#[derive(Default)]
pub(super) struct Counters {
    buffers: AtomicU64,
    bind_groups: AtomicU64,
    pipelines: AtomicU64,
}

/// A device with the kernels' pipelines, created once.
pub struct Gpu {
    pub(super) device: wgpu::Device,
    pub(super) queue: wgpu::Queue,
    pub(super) adapter: String,
    pub(super) software: bool,
    pub(super) f16: bool,
    pub(super) subgroups: bool,
    pub(super) lost: Arc<AtomicBool>,
    pub(super) counters: Counters,
    /// The matmul per tile shape ([`MatmulTile::ALL`] order), sharing one bind-group layout so
    /// one bind group serves every shape.
    pub(super) matmul: Vec<wgpu::ComputePipeline>,
    /// The f16 matmuls per tile shape, where the adapter has `shader-f16`.
    pub(super) matmul_f16: Option<Vec<wgpu::ComputePipeline>>,
    /// The cooperative-matrix matmul, where the adapter offers it and it matched the f16 kernel
    /// on a test product when the device opened.
    pub(super) matmul_coop: Option<wgpu::ComputePipeline>,
    /// Whether [`Gpu::coop_race`] found the cooperative-matrix kernel faster than the f16 one.
    pub(super) coop_preferred: bool,
    /// Why there is no cooperative-matrix matmul, or that there is one.
    pub(super) coop_status: String,
    pub(super) layer_norm: wgpu::ComputePipeline,
    pub(super) attention: wgpu::ComputePipeline,
    pub(super) embed: wgpu::ComputePipeline,
    pub(super) pool: wgpu::ComputePipeline,
}

pub(super) fn failed(what: &str, e: impl std::fmt::Display) -> GpuError {
    GpuError::Failed { reason: format!("{what}: {e}") }
}

pub(super) fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Weights as f32 bytes, or as f16 bytes padded to a multiple of 4.
pub(super) fn weight_bytes(w: &[f32], f16: bool) -> Vec<u8> {
    if f16 {
        let mut b: Vec<u8> = w.iter().flat_map(|x| half::f16::from_f32(*x).to_le_bytes()).collect();
        b.resize(b.len().next_multiple_of(4), 0);
        b
    } else {
        bytes(w)
    }
}

pub(super) fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Whether the adapter offers the cooperative matrices the kernel uses (16 × 16 × 16 f16 → f32,
/// with f16 and 32-wide subgroups), else why not.
fn coop_offered(adapter: &wgpu::Adapter, info: &wgpu::AdapterInfo) -> Result<(), String> {
    if cfg!(target_arch = "wasm32") {
        return Err(NATIVE_ONLY.to_string());
    }
    let offered = adapter.features();
    let shape = adapter.cooperative_matrix_properties().iter().any(|c| {
        (c.m_size, c.n_size, c.k_size) == (16, 16, 16)
            && c.ab_type == wgpu::CooperativeScalarType::F16
            && c.cr_type == wgpu::CooperativeScalarType::F32
    });
    if !offered.contains(COOP_FEATURES) {
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
    } else if !shape {
        Err("the adapter offers no 16 × 16 × 16 f16 → f32 cooperative matrix".to_string())
    } else if (info.subgroup_min_size, info.subgroup_max_size) != (32, 32) {
        Err(format!("subgroups of {}–{} invocations (the kernel needs exactly 32)", info.subgroup_min_size, info.subgroup_max_size))
    } else {
        Ok(())
    }
}

/// Why a browser has no cooperative-matrix kernel.
const NATIVE_ONLY: &str = "cooperative matrices are native only (WebGPU has none)";

/// What the cooperative-matrix kernel needs.
const COOP_FEATURES: wgpu::Features =
    wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX.union(wgpu::Features::SHADER_F16).union(wgpu::Features::SUBGROUP);

/// The features to request, of those offered: timestamp queries for the kernel-time split of the
/// benchmark, f16 arithmetic, subgroup reductions (native only: naga's WGSL front end takes no
/// `enable subgroups;`, which a browser requires), and cooperative matrices when `coop`.
fn wanted_features(adapter: &wgpu::Adapter, coop: bool) -> wgpu::Features {
    let mut wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SHADER_F16;
    if cfg!(not(target_arch = "wasm32")) {
        wanted |= wgpu::Features::SUBGROUP;
    }
    if coop {
        wanted |= COOP_FEATURES;
    }
    adapter.features() & wanted
}

/// The cooperative-matrix kernel, compiled inside an error scope: an experimental feature's
/// shader that the driver refuses must cost the fallback, not the device. Native only: WebGPU
/// has no cooperative matrices, so the browser builds do not ship the kernel.
#[cfg(target_arch = "wasm32")]
async fn compile_coop(_: &wgpu::Device, _: &wgpu::PipelineLayout) -> Result<wgpu::ComputePipeline, String> {
    Err(NATIVE_ONLY.to_string())
}

/// The cooperative-matrix kernel, compiled inside an error scope: an experimental feature's
/// shader that the driver refuses must cost the fallback, not the device.
#[cfg(not(target_arch = "wasm32"))]
async fn compile_coop(device: &wgpu::Device, layout: &wgpu::PipelineLayout) -> Result<wgpu::ComputePipeline, String> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let p = pipeline(device, "matmul_coop", MATMUL_COOP_WGSL, Some(layout));
    match scope.pop().await {
        None => Ok(p),
        Some(e) => Err(format!("the cooperative-matrix kernel did not compile: {e}")),
    }
}

/// A compute pipeline of one WGSL kernel (entry point `main`), its layout given or derived.
fn pipeline(device: &wgpu::Device, label: &str, src: &str, layout: Option<&wgpu::PipelineLayout>) -> wgpu::ComputePipeline {
    let module =
        device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(src.into()) });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// The one explicit layout of every matmul variant: params, a, w, bias, out.
fn matmul_layout(device: &wgpu::Device) -> wgpu::PipelineLayout {
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
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("matmul"),
        bind_group_layouts: &[Some(&group)],
        immediate_size: 0,
    })
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
        let coop_offered = coop_offered(&adapter, &info);
        let features = wanted_features(&adapter, coop_offered.is_ok());
        // Ask for the adapter's own buffer limits (the defaults cap a binding at 128 MiB).
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: adapter.limits().max_storage_buffer_binding_size,
            max_buffer_size: adapter.limits().max_buffer_size,
            ..wgpu::Limits::default()
        };
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
        let subgroups = features.contains(wgpu::Features::SUBGROUP);
        let f16 = features.contains(wgpu::Features::SHADER_F16);
        let layout = matmul_layout(&device);
        let matmuls = |f16: bool| -> Vec<wgpu::ComputePipeline> {
            MatmulTile::ALL.iter().map(|&t| pipeline(&device, "matmul", &matmul_wgsl(t, f16), Some(&layout))).collect()
        };
        let tiles = MatmulTile::ALL.len() as u64;
        let coop = match coop_offered {
            Ok(()) => compile_coop(&device, &layout).await,
            Err(why) => Err(why),
        };
        let mut gpu = Gpu {
            matmul: matmuls(false),
            matmul_f16: f16.then(|| matmuls(true)),
            layer_norm: pipeline(&device, "layernorm", &layernorm_wgsl(subgroups), None),
            attention: pipeline(&device, "attention", ATTENTION_WGSL, None),
            embed: pipeline(&device, "embed", EMBED_WGSL, None),
            pool: pipeline(&device, "pool", POOL_WGSL, None),
            counters: Counters { pipelines: AtomicU64::new(4 + tiles * (1 + f16 as u64)), ..Default::default() },
            device,
            queue,
            adapter: name,
            software,
            f16,
            subgroups,
            lost,
            matmul_coop: None,
            coop_preferred: false,
            coop_status: String::new(),
        };
        gpu.coop_status = match coop {
            Ok(p) => gpu.adopt_coop(p).await,
            Err(why) => why,
        };
        Ok(gpu)
    }

    /// Takes the cooperative-matrix kernel if it matches the f16 kernel's results, and prefers it
    /// if it is also faster; returns what became of it, in words.
    async fn adopt_coop(&mut self, p: wgpu::ComputePipeline) -> String {
        self.counters.pipelines.fetch_add(1, Ordering::Relaxed);
        self.matmul_coop = Some(p);
        if let Err(why) = self.coop_check().await {
            self.matmul_coop = None;
            return why;
        }
        match self.coop_race().await {
            Ok((coop, f16)) if coop < f16 => {
                self.coop_preferred = true;
                format!(
                    "in use (16 × 16 × 16 f16 → f32, matched the f16 kernel; {coop:.3} ms against its {f16:.3} ms per 2048 × 384 × 1536 product)"
                )
            }
            Ok((coop, f16)) => format!(
                "available, not used by default: the f16 kernel was faster ({f16:.3} ms against {coop:.3} ms per 2048 × 384 × 1536 product)"
            ),
            Err(why) => format!("available, not used by default: {why}"),
        }
    }

    /// Times the cooperative-matrix kernel against the f16 kernel on one product of BERT-base's
    /// feed-forward shape at a 2048-token pass (2048 × 384 × 1536, GELU): milliseconds per
    /// product of each, `(coop, f16)`, the median of 5 submissions of 8 products after a warm-up
    /// (wall clock, readback excluded). Tensor cores are not faster on every device through
    /// every driver: the faster kernel is the default ([`Gpu::prefers_coop`]).
    ///
    /// Errors: a message when a submission fails, or on the web (no wall clock here; the web
    /// has no cooperative matrices either).
    pub(super) async fn coop_race(&self) -> Result<(f64, f64), String> {
        #[cfg(target_arch = "wasm32")]
        {
            Err("no timing in the page".to_string())
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let (m, k, n) = (2048u32, 384u32, 1536u32);
            let params = self.uniform(&words(&[m, n, k, 1]));
            let a = self.storage("a", &bytes(&vec![0.5f32; (m * k) as usize]), false);
            let w = self.storage("w", &vec![0u8; (k * n * 2) as usize], false);
            let bias = self.storage("bias", &bytes(&vec![0.0f32; n as usize]), false);
            let out = self.storage("out", &vec![0u8; (m * n * 4) as usize], true);
            let mut ms = [0f64; 2];
            for (i, kernel) in [MatmulKernel::Coop, MatmulKernel::F16(self.tile_for(m, n))].into_iter().enumerate() {
                let pipeline = self.matmul_pipeline(kernel).ok_or("no such kernel")?;
                let entries: Vec<wgpu::BindGroupEntry> = [&params, &a, &w, &bias, &out]
                    .iter()
                    .enumerate()
                    .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
                    .collect();
                let bind = self.bind_group(pipeline, &entries);
                let mut runs = Vec::new();
                for rep in 0..6 {
                    let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
                    for _ in 0..8 {
                        dispatch(&mut enc, pipeline, &bind, kernel.groups(m, n));
                    }
                    let t = std::time::Instant::now();
                    self.queue.submit([enc.finish()]);
                    self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| format!("the timing run failed: {e}"))?;
                    if rep > 0 {
                        runs.push(t.elapsed().as_secs_f64() * 1000.0 / 8.0);
                    }
                }
                if self.is_lost() {
                    return Err("the device was lost during the timing run".into());
                }
                crate::sort::by(&mut runs, f64::total_cmp);
                ms[i] = runs[runs.len() / 2];
            }
            Ok((ms[0], ms[1]))
        }
    }

    /// Whether f16 models multiply on cooperative matrices by default: the device has them, they
    /// computed the f16 kernel's results, and `Gpu::coop_race` found them faster.
    pub fn prefers_coop(&self) -> bool {
        self.coop_preferred && self.matmul_coop.is_some()
    }

    /// Runs one product on the cooperative-matrix kernel and on the f16 kernel, on the same f16
    /// weights: they must agree within f16 rounding (max abs difference ≤ 2⁻⁶ of the largest
    /// output, outputs of order 1) before the cooperative kernel is used.
    pub(super) async fn coop_check(&self) -> Result<(), String> {
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

    pub(super) fn storage(&self, label: &str, data: &[u8], writable: bool) -> wgpu::Buffer {
        let mut usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        if writable {
            usage |= wgpu::BufferUsages::COPY_SRC;
        }
        // wgpu rejects zero-sized bindings: keep at least one element.
        let contents = if data.is_empty() { &[0u8; 4][..] } else { data };
        self.counters.buffers.fetch_add(1, Ordering::Relaxed);
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage })
    }

    pub(super) fn uniform(&self, data: &[u8]) -> wgpu::Buffer {
        self.counters.buffers.fetch_add(1, Ordering::Relaxed);
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: data,
            usage: wgpu::BufferUsages::UNIFORM,
        })
    }

    /// One dispatch (one-shot bind group), then `out`'s first `len` floats read back.
    pub(super) async fn run(
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
    pub(super) fn scratch(&self, bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.counters.buffers.fetch_add(1, Ordering::Relaxed);
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("scratch"),
            size: bytes.max(4).next_multiple_of(4),
            usage,
            mapped_at_creation: false,
        })
    }

    /// A bind group for `pipeline`'s group 0 (counted).
    pub(super) fn bind_group(&self, pipeline: &wgpu::ComputePipeline, entries: &[wgpu::BindGroupEntry]) -> wgpu::BindGroup {
        self.counters.bind_groups.fetch_add(1, Ordering::Relaxed);
        self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(0), entries })
    }

    /// Maps `readback` (`map_async` + await), copies out its first `len` floats, unmaps it.
    pub(super) async fn read(&self, readback: &wgpu::Buffer, len: usize) -> Result<Vec<f32>, GpuError> {
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
    pub(super) fn matmul_pipeline(&self, kernel: MatmulKernel) -> Option<&wgpu::ComputePipeline> {
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
pub(super) fn dispatch(enc: &mut wgpu::CommandEncoder, pipeline: &wgpu::ComputePipeline, bind: &wgpu::BindGroup, groups: (u32, u32, u32)) {
    dispatch_timed(enc, pipeline, bind, groups, None);
}

/// [`dispatch`], writing timestamps `2i` and `2i + 1` of `ts = (set, i)` around the pass.
pub(super) fn dispatch_timed(
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
