//! The GPU embedder's kernels: WGSL compute shaders dispatched through wgpu (Vulkan natively,
//! lavapipe on GPU-less machines; WebGPU in the browser once the web side lands).
//!
//! Status (issue 3, first slice): device set-up, pipelines built once, and two kernels — the
//! tiled matrix multiply with fused bias + GELU ([`MATMUL_WGSL`]) and residual + LayerNorm
//! ([`LAYERNORM_WGSL`]) — each with a one-shot entry point ([`Gpu::matmul`], [`Gpu::layer_norm`])
//! that uploads, dispatches and reads back, for the kernel tests. The embedding engine (weights
//! resident on the GPU, the whole forward pass, length buckets, f16) builds on these.
//!
//! Readback is `map_async` + await; only native backends add a blocking `device.poll`.
use wgpu::util::DeviceExt;

use crate::error::GpuError;

/// `out[M, N] = act(a[M, K] · w[K, N] + bias[N])`; 64 × 64 tiles, 16 × 16 threads.
pub const MATMUL_WGSL: &str = include_str!("matmul.wgsl");
/// `x[r, :] = LayerNorm(x[r, :] + res[r, :])`; one 128-thread workgroup per row.
pub const LAYERNORM_WGSL: &str = include_str!("layernorm.wgsl");
/// Every kernel, by file name (the naga validation test walks this list).
pub const KERNELS: &[(&str, &str)] = &[("matmul.wgsl", MATMUL_WGSL), ("layernorm.wgsl", LAYERNORM_WGSL)];

/// A device with the kernels' pipelines, created once.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: String,
    matmul: wgpu::ComputePipeline,
    layer_norm: wgpu::ComputePipeline,
}

fn failed(what: &str, e: impl std::fmt::Display) -> GpuError {
    GpuError::Failed { reason: format!("{what}: {e}") }
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
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
        let name = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor::default())
            .await
            .map_err(|e| GpuError::Unavailable { reason: e.to_string() })?;
        let pipeline = |label: &str, src: &str| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(src.into()),
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let matmul = pipeline("matmul", MATMUL_WGSL);
        let layer_norm = pipeline("layernorm", LAYERNORM_WGSL);
        Ok(Gpu { device, queue, adapter: name, matmul, layer_norm })
    }

    /// The adapter in use, e.g. `llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, Cpu)`.
    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    fn storage(&self, label: &str, data: &[u8], writable: bool) -> wgpu::Buffer {
        let mut usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        if writable {
            usage |= wgpu::BufferUsages::COPY_SRC;
        }
        // wgpu rejects zero-sized bindings: keep at least one element.
        let contents = if data.is_empty() { &[0u8; 4][..] } else { data };
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage })
    }

    fn uniform(&self, data: &[u8]) -> wgpu::Buffer {
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: data,
            usage: wgpu::BufferUsages::UNIFORM,
        })
    }

    fn run(&self, pipeline: &wgpu::ComputePipeline, buffers: &[&wgpu::Buffer], groups: (u32, u32, u32), out: &wgpu::Buffer, len: usize) -> wgpu::Buffer {
        let entries: Vec<wgpu::BindGroupEntry> =
            buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
        let bind = self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(0), entries: &entries });
        let size = (len.max(1) * 4) as u64;
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(groups.0, groups.1, groups.2);
        }
        enc.copy_buffer_to_buffer(out, 0, &readback, 0, size);
        self.queue.submit([enc.finish()]);
        readback
    }

    async fn read(&self, readback: wgpu::Buffer, len: usize) -> Result<Vec<f32>, GpuError> {
        let (tx, rx) = futures::channel::oneshot::channel();
        readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        #[cfg(not(target_arch = "wasm32"))]
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| failed("poll", e))?;
        rx.await.map_err(|_| failed("map_async", "callback dropped"))?.map_err(|e| failed("map_async", e))?;
        let out = {
            let view = readback.slice(..).get_mapped_range().map_err(|e| failed("get_mapped_range", format!("{e:?}")))?;
            view.chunks_exact(4).take(len).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        };
        readback.unmap();
        Ok(out)
    }

    /// `act(a[m×k] · w[k×n] + bias[n])` on the GPU, `act` = GELU (erf form) when `gelu`.
    /// `w` is row-major `[k×n]` (inputs × outputs).
    ///
    /// Panics when a slice does not match its shape.
    pub async fn matmul(&self, a: &[f32], m: usize, k: usize, w: &[f32], n: usize, bias: &[f32], gelu: bool) -> Result<Vec<f32>, GpuError> {
        assert!(a.len() == m * k && w.len() == k * n && bias.len() == n, "matmul: shapes");
        let params = self.uniform(&words(&[m as u32, n as u32, k as u32, gelu as u32]));
        let (ab, wb, bb) = (self.storage("a", &bytes(a), false), self.storage("w", &bytes(w), false), self.storage("bias", &bytes(bias), false));
        let out = self.storage("out", &vec![0u8; m * n * 4], true);
        let groups = ((n as u32).div_ceil(64), (m as u32).div_ceil(64), 1);
        let rb = self.run(&self.matmul, &[&params, &ab, &wb, &bb, &out], groups, &out, m * n);
        self.read(rb, m * n).await
    }

    /// `LayerNorm(x + res)` over each `h`-wide row (`res` optional), with `gamma`, `beta`, `eps`.
    ///
    /// Panics when a slice does not match its shape.
    pub async fn layer_norm(&self, x: &[f32], res: Option<&[f32]>, gamma: &[f32], beta: &[f32], eps: f32) -> Result<Vec<f32>, GpuError> {
        let h = gamma.len();
        assert!(h > 0 && x.len() % h == 0 && beta.len() == h && res.is_none_or(|r| r.len() == x.len()), "layer_norm: shapes");
        let rows = x.len() / h;
        let mut p = words(&[rows as u32, h as u32]);
        p.extend(eps.to_le_bytes());
        p.extend((res.is_some() as u32).to_le_bytes());
        let params = self.uniform(&p);
        let xb = self.storage("x", &bytes(x), true);
        let rb_ = self.storage("res", &bytes(res.unwrap_or(&[])), false);
        let (gb, bb) = (self.storage("gamma", &bytes(gamma), false), self.storage("beta", &bytes(beta), false));
        let rb = self.run(&self.layer_norm, &[&params, &xb, &rb_, &gb, &bb], (rows as u32, 1, 1), &xb, x.len());
        self.read(rb, x.len()).await
    }
}
