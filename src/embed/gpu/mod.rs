//! The GPU embedder: WGSL compute shaders dispatched through wgpu (WebGPU in the browser; Vulkan
//! natively, lavapipe on GPU-less machines). The engine does not use it yet (issue 3).
//!
//! [`Gpu`] opens a device and builds every pipeline once. [`Gpu::upload`] puts a [`BertModel`]'s
//! weights on the device ([`GpuBert`]), whose [`GpuBert::embed_ids`] runs the whole forward pass:
//! embedding gather → LayerNorm → per layer {fused Q/K/V matmul, attention, output matmul,
//! residual + LayerNorm, FFN matmul with fused GELU, matmul, residual + LayerNorm} → mean pooling
//! + L2, 3 + 7 per layer dispatches in one command buffer. [`Gpu::matmul`] and
//! [`Gpu::layer_norm`] are one-shot entry points for the kernel tests.
//!
//! Readback is `map_async` + await; only native backends add a blocking `device.poll`.
use wgpu::util::DeviceExt;

use crate::embed::bert::BertModel;
use crate::embed::gemm::Packed;
use crate::error::GpuError;

/// `out[M, N] = act(a[M, K] · w[K, N] + bias[N])`; 64 × 64 tiles, 16 × 16 threads.
pub const MATMUL_WGSL: &str = include_str!("matmul.wgsl");
/// `x[r, :] = LayerNorm(x[r, :] + res[r, :])`; one 128-thread workgroup per row.
pub const LAYERNORM_WGSL: &str = include_str!("layernorm.wgsl");
/// `ctx = softmax(scale · Q Kᵀ) V` per sequence and head of a packed batch; online softmax.
pub const ATTENTION_WGSL: &str = include_str!("attention.wgsl");
/// `x[t] = word[id] + position[pos] + token_type[0]`.
pub const EMBED_WGSL: &str = include_str!("embed.wgsl");
/// Mean pooling per sequence + L2 normalisation.
pub const POOL_WGSL: &str = include_str!("pool.wgsl");
/// Every kernel, by file name (the naga validation test walks this list).
pub const KERNELS: &[(&str, &str)] = &[
    ("attention.wgsl", ATTENTION_WGSL),
    ("embed.wgsl", EMBED_WGSL),
    ("layernorm.wgsl", LAYERNORM_WGSL),
    ("matmul.wgsl", MATMUL_WGSL),
    ("pool.wgsl", POOL_WGSL),
];

/// A device with the kernels' pipelines, created once.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: String,
    matmul: wgpu::ComputePipeline,
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
        let attention = pipeline("attention", ATTENTION_WGSL);
        let embed = pipeline("embed", EMBED_WGSL);
        let pool = pipeline("pool", POOL_WGSL);
        Ok(Gpu { device, queue, adapter: name, matmul, layer_norm, attention, embed, pool })
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

    /// One dispatch, then `out`'s first `len` floats copied to a mappable buffer (for [`Gpu::read`]).
    fn run(&self, pipeline: &wgpu::ComputePipeline, buffers: &[&wgpu::Buffer], groups: (u32, u32, u32), out: &wgpu::Buffer, len: usize) -> wgpu::Buffer {
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        self.dispatch(&mut enc, pipeline, buffers, groups);
        self.submit(enc, out, len)
    }

    /// Records the copy of `out`'s first `len` floats into a new mappable buffer and submits `enc`.
    fn submit(&self, mut enc: wgpu::CommandEncoder, out: &wgpu::Buffer, len: usize) -> wgpu::Buffer {
        let size = (len.max(1) * 4) as u64;
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
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

    /// `act(a[m×k] · w + bias[n])` on the GPU, `act` = GELU (erf form) when `gelu`.
    ///
    /// Panics when a slice does not match its shape.
    pub async fn matmul(&self, a: &[f32], m: usize, w: &Packed, bias: &[f32], gelu: bool) -> Result<Vec<f32>, GpuError> {
        let (k, n) = (w.k(), w.n());
        let w = w.as_slice();
        assert!(a.len() == m * k && bias.len() == n, "matmul: shapes");
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

/// A BERT model with its weights resident on the GPU (uploaded once); each
/// [`GpuBert::embed_ids`] moves only ids in and pooled vectors out, and records the whole
/// forward pass (3 + 7 per layer dispatches) in one command buffer.
pub struct GpuBert<'g> {
    gpu: &'g Gpu,
    hidden: u32,
    heads: u32,
    inter: u32,
    vocab: u32,
    eps: f32,
    max_len: usize,
    word: wgpu::Buffer,
    position: wgpu::Buffer,
    token_type: wgpu::Buffer,
    embeddings_ln: GpuNorm,
    layers: Vec<GpuLayer>,
}

impl Gpu {
    /// Uploads `model`'s weights (the CPU path's packed layout, so both share one packing).
    pub fn upload<'g>(&'g self, model: &BertModel) -> GpuBert<'g> {
        let c = model.config();
        let lin = |l: &crate::embed::bert::Linear| GpuLinear {
            w: self.storage("w", &bytes(l.w.as_slice()), false),
            b: self.storage("b", &bytes(&l.b), false),
            k: l.w.k() as u32,
            n: l.w.n() as u32,
        };
        let norm = |n: &crate::embed::bert::LayerNorm| GpuNorm {
            gamma: self.storage("gamma", &bytes(&n.weight), false),
            beta: self.storage("beta", &bytes(&n.bias), false),
        };
        GpuBert {
            gpu: self,
            hidden: c.hidden_size as u32,
            heads: c.num_attention_heads as u32,
            inter: c.intermediate_size as u32,
            vocab: c.vocab_size as u32,
            eps: c.layer_norm_eps,
            max_len: c.max_position_embeddings,
            word: self.storage("word", &bytes(&model.word_embeddings), false),
            position: self.storage("position", &bytes(&model.position_embeddings), false),
            token_type: self.storage("token_type", &bytes(&model.token_type_embeddings), false),
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
        }
    }

    fn scratch(&self, floats: usize) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("activations"),
            size: (floats.max(1) * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    fn dispatch(&self, enc: &mut wgpu::CommandEncoder, pipeline: &wgpu::ComputePipeline, buffers: &[&wgpu::Buffer], groups: (u32, u32, u32)) {
        let entries: Vec<wgpu::BindGroupEntry> =
            buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
        let bind = self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(0), entries: &entries });
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }
}

impl GpuBert<'_> {
    /// Sentence embeddings `[B][H]` (mean pooling, L2-normalised) of token-id sequences (special
    /// tokens included; each cut to the model's maximum length), as [`BertModel::embed`].
    pub async fn embed_ids(&self, seqs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, GpuError> {
        if seqs.is_empty() {
            return Ok(Vec::new());
        }
        let g = self.gpu;
        let (h, heads, inter) = (self.hidden, self.heads, self.inter);
        let (mut ids, mut pos, mut tok_span, mut seq_span) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for s in seqs {
            let start = ids.len() as u32;
            let len = s.len().min(self.max_len) as u32;
            for (i, &id) in s.iter().take(len as usize).enumerate() {
                ids.push(id);
                pos.push(i as u32);
                tok_span.extend([start, len]);
            }
            seq_span.extend([start, len]);
        }
        let t = ids.len() as u32;
        let (ids_b, pos_b) = (g.storage("ids", &words(&ids), false), g.storage("pos", &words(&pos), false));
        let (tok_b, seq_b) = (g.storage("tok_span", &words(&tok_span), false), g.storage("seq_span", &words(&seq_span), false));
        let (a, b) = (g.scratch((t * h) as usize), g.scratch((t * h) as usize));
        let (qkv, ctx, mid) = (g.scratch((t * 3 * h) as usize), g.scratch((t * h) as usize), g.scratch((t * inter) as usize));
        let out = g.scratch(seqs.len() * h as usize);
        let mut enc = g.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        // The LayerNorm's `res` binding when there is no residual (a buffer may not be bound
        // both writable and read-only in one dispatch).
        let none = g.storage("no_res", &[], false);
        let ln = |enc: &mut wgpu::CommandEncoder, x: &wgpu::Buffer, res: Option<&wgpu::Buffer>, n: &GpuNorm| {
            let mut p = words(&[t, h]);
            p.extend(self.eps.to_le_bytes());
            p.extend((res.is_some() as u32).to_le_bytes());
            let params = g.uniform(&p);
            g.dispatch(enc, &g.layer_norm, &[&params, x, res.unwrap_or(&none), &n.gamma, &n.beta], (t, 1, 1));
        };
        let mm = |enc: &mut wgpu::CommandEncoder, x: &wgpu::Buffer, l: &GpuLinear, y: &wgpu::Buffer, gelu: bool| {
            let params = g.uniform(&words(&[t, l.n, l.k, gelu as u32]));
            g.dispatch(enc, &g.matmul, &[&params, x, &l.w, &l.b, y], (l.n.div_ceil(64), t.div_ceil(64), 1));
        };
        let params = g.uniform(&words(&[t, h, self.vocab, 0]));
        g.dispatch(&mut enc, &g.embed, &[&params, &ids_b, &pos_b, &self.word, &self.position, &self.token_type, &a], ((t * h).div_ceil(256), 1, 1));
        ln(&mut enc, &a, None, &self.embeddings_ln);
        let mut scale = words(&[t, h, heads]);
        scale.extend((1.0 / ((h / heads) as f32).sqrt()).to_le_bytes());
        let attn_params = g.uniform(&scale);
        for l in &self.layers {
            mm(&mut enc, &a, &l.qkv, &qkv, false);
            g.dispatch(&mut enc, &g.attention, &[&attn_params, &qkv, &tok_b, &ctx], ((t * heads).div_ceil(64), 1, 1));
            mm(&mut enc, &ctx, &l.attention_output, &b, false);
            ln(&mut enc, &b, Some(&a), &l.attention_ln);
            mm(&mut enc, &b, &l.intermediate, &mid, true);
            mm(&mut enc, &mid, &l.output, &a, false);
            ln(&mut enc, &a, Some(&b), &l.output_ln);
        }
        let params = g.uniform(&words(&[seqs.len() as u32, h, 0, 0]));
        g.dispatch(&mut enc, &g.pool, &[&params, &a, &seq_b, &out], (seqs.len() as u32, 1, 1));
        let n = seqs.len() * h as usize;
        let readback = g.submit(enc, &out, n);
        let flat = g.read(readback, n).await?;
        Ok(flat.chunks_exact(h as usize).map(|c| c.to_vec()).collect())
    }
}
