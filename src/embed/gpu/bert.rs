//! [`GpuBert`]: a BERT model's weights resident on the device and its forward pass.
use std::sync::Arc;

use crate::embed::bert::BertModel;
use crate::error::GpuError;

use super::device::*;
use super::kernels::*;

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
            coop: f16 && self.prefers_coop(),
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

    /// Lets or stops f16 products from running on cooperative matrices where the device has
    /// them (the benchmark compares both). The default is [`Gpu::prefers_coop`]: on where they
    /// were measured faster than the f16 kernel at device creation.
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
        crate::sort::by_key(&mut order, |&i| seqs[i].len());
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
        let span = match (ticks.first(), ticks.last()) {
            (Some(&a), Some(&z)) => z.saturating_sub(a) as f64 * period / 1e6,
            _ => 0.0,
        };
        let mut t = KernelTimes { wall_ms, span_ms: span, ..Default::default() };
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
    ///
    /// Longer than most functions here, on purpose: it records one forward pass — embedding
    /// gather, per layer Q/K/V, attention, output, LayerNorm, two FFN products, LayerNorm, then
    /// pooling — into one command buffer in dispatch order (`kernel_kinds` lists the same
    /// order), so the sequence reads as the model does.
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
        let longest = seqs.iter().map(|s| s.len().min(self.max_len) as u32).max().unwrap_or(0);
        let mm = |l: &GpuLinear| {
            let kernel = g.kernel_for(t, l.n, l.k, self.f16, self.coop);
            (g.matmul_pipeline(kernel).expect("the device has the kernels kernel_for picks"), kernel.groups(t, l.n))
        };
        // The pass's dispatches, in order (pipeline, grid); ws.binds holds their bind groups.
        let mut plan = vec![(&g.embed, ((t * h).div_ceil(256), 1, 1)), (&g.layer_norm, (t, 1, 1))];
        for l in &self.layers {
            plan.push(mm(&l.qkv));
            plan.push((&g.attention, (longest.div_ceil(16), self.heads, b)));
            plan.push(mm(&l.attention_output));
            plan.push((&g.layer_norm, (t, 1, 1)));
            plan.push(mm(&l.intermediate));
            plan.push(mm(&l.output));
            plan.push((&g.layer_norm, (t, 1, 1)));
        }
        plan.push((&g.pool, (b, 1, 1)));
        let mut enc = g.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        match ts {
            // Timestamps are written at pass boundaries: one pass per dispatch.
            Some(set) => {
                for (i, ((pipeline, groups), bind)) in plan.iter().zip(&ws.binds).enumerate() {
                    dispatch_timed(&mut enc, pipeline, bind, *groups, Some((set, i as u32)));
                }
            }
            // One pass for the whole forward: the host records 45 dispatches, not 45 passes.
            None => {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                for ((pipeline, groups), bind) in plan.iter().zip(&ws.binds) {
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, bind, &[]);
                    pass.dispatch_workgroups(groups.0, groups.1, groups.2);
                }
            }
        }
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
