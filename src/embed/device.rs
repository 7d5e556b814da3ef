//! [`DeviceEmbedder`]: the [`Embedder`] the engine uses, running the forward pass on the GPU
//! ([`GpuBert`]) when there is a usable adapter and on the CPU ([`CpuEmbedder`]) otherwise.
//!
//! Choice of path ([`DevicePreference`]):
//! - `Auto` (default): the GPU when the adapter is real hardware. A software adapter (lavapipe,
//!   SwiftShader flagged as a fallback adapter) runs the same kernels on the CPU, many times
//!   slower than the CPU path, so `Auto` does not use it.
//! - `Gpu`: the GPU, whatever the adapter ([`GpuError::Unavailable`] when there is none).
//! - `Cpu`: never touches WebGPU.
//!
//! On hardware with `shader-f16` the GPU path stores the linear weights as f16 (computing in f32).
//!
//! Single texts (search queries) go to whichever path the start-up measurement says is faster:
//! one short probe sentence, median of 3 runs on each path after a warm-up ([`Crossover`]).
//! Batches go to the GPU when it is in use.
//!
//! In the page, batches on the CPU path go to a pool of embedding workers when one is set
//! ([`CpuPool`], [`DeviceEmbedder::set_pool`]): every core runs forward passes while the engine's
//! own worker stays free for searches (single texts, queries, are embedded in place). A pool that
//! fails is dropped for good: the call is redone in place and listeners get `WORKERS_FAILED`.
//!
//! Device loss (driver reset, `GPUDevice.destroy()`, an uncaptured GPU error) never fails or
//! hangs a call: the call is redone on the CPU, the GPU is dropped for good, and listeners get an
//! [`EmbedderEvent`] with code `GPU_LOST`, at the first call after the loss (whichever path that
//! call would have taken).
use std::cell::{Cell, RefCell};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::gpu::{Gpu, GpuBert, GpuCounters, KernelTimes};
use super::{CpuEmbedder, Embedder};
use crate::error::{GpuError, Result};
use crate::ports::Clock;
use crate::text::TokenCounter;

/// Where the user wants embeddings computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DevicePreference {
    /// GPU on a hardware adapter, CPU otherwise.
    #[default]
    Auto,
    /// CPU only.
    Cpu,
    /// GPU, including software adapters; an error when there is no adapter.
    Gpu,
    /// No transformer: sparse random-indexing vectors of the word pieces
    /// ([`super::hashing`]), model id `…+hashing`. For benchmarks at scale only.
    Hashing,
}

impl std::str::FromStr for DevicePreference {
    type Err = crate::error::InputError;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            "hashing" => Ok(Self::Hashing),
            other => Err(crate::error::InputError::InvalidOption {
                name: "device".into(),
                reason: format!("{other:?} is not auto, cpu, gpu or hashing"),
            }),
        }
    }
}

/// A compute path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum EmbedPath {
    /// WordPiece + BERT on the CPU (wasm SIMD in the page).
    Cpu,
    /// WGSL kernels through wgpu (WebGPU in the page, Vulkan natively).
    Gpu,
}

/// One-query latency of each path, measured at start-up (milliseconds, median of up to 3 runs;
/// one run when the paths differ by more than 4×).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Crossover {
    /// CPU path.
    pub cpu_ms: f64,
    /// GPU path (ids in, pooled vector out, readback awaited).
    pub gpu_ms: f64,
}

/// Precision of the GPU path's matrix multiplies ([`EmbedderInfo::gpu_weights`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum GpuWeights {
    /// f16 weights; products in f16 summed in f32 per 16-wide slice (a hardware adapter with
    /// `shader-f16`).
    F16,
    /// f32 weights and products.
    F32,
}

/// Which path is in use, on which adapter, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct EmbedderInfo {
    /// Path for batches (ingest).
    pub path: EmbedPath,
    /// Path for single texts (queries), from the crossover.
    pub queries: EmbedPath,
    /// The adapter, when one was opened (e.g. `llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)`).
    pub adapter: Option<String>,
    /// Whether that adapter is a CPU implementation of the API.
    pub software_adapter: bool,
    /// Why this path, in one plain sentence (e.g. `no WebGPU adapter: embedding on the CPU (wasm SIMD)`).
    pub reason: String,
    /// What the platform said when it offered no usable adapter (the raw error), for a
    /// "details" view; `None` when there is nothing more to say.
    pub detail: Option<String>,
    /// The start-up measurement, when both paths were available.
    pub crossover: Option<Crossover>,
    /// Precision of the GPU path's matrix multiplies (`None` on the CPU path).
    pub gpu_weights: Option<GpuWeights>,
    /// Compute dispatches per forward pass on the GPU (none on the CPU path).
    pub dispatches_per_forward: Option<usize>,
    /// Buffers, bind groups and pipelines created on the device so far (a warm batch adds none).
    pub gpu_objects: Option<GpuCounters>,
    /// Arithmetic of the CPU path's linear layers ([`super::Precision`]).
    pub precision: super::Precision,
    /// The instruction set of the CPU path's kernels: which build of the engine the page loaded.
    pub cpu_kernels: super::gemm::CpuKernels,
    /// Threads the CPU path's forward passes run on: rayon's pool natively; in the page the
    /// embedding workers ([`CpuPool`]), or 1 without them.
    pub threads: usize,
    /// In the page with embedding workers: the wasm memory each started worker holds (bytes; the
    /// model and its working buffers), `None` before the first batch starts them or without them.
    pub worker_memory_bytes: Option<usize>,
}

/// Pools of token positions as the page's embedding workers read them (`WebRagEmbedder.embedIds`): per sequence its pool count, then per pool
/// its length and its token positions.
pub fn encode_pools(seqs: usize, pools: &[Vec<Vec<usize>>]) -> Vec<u32> {
    if pools.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for b in 0..seqs {
        let ps = pools.get(b).map_or(&[][..], |p| p.as_slice());
        out.push(ps.len() as u32);
        for p in ps {
            out.push(p.len() as u32);
            out.extend(p.iter().map(|&t| t as u32));
        }
    }
    out
}

/// The inverse of [`encode_pools`] for `seqs` sequences of at most `max` tokens; `None` when
/// `data` does not describe that (no pools at all when it is empty).
pub fn decode_pools(data: &[u32], seqs: usize, max: usize) -> Option<Vec<Vec<Vec<usize>>>> {
    if data.is_empty() {
        return Some(Vec::new());
    }
    let mut it = data.iter().map(|&x| x as usize);
    let mut out = Vec::with_capacity(seqs);
    for _ in 0..seqs {
        let n = it.next()?;
        let mut ps = Vec::with_capacity(n.min(data.len()));
        for _ in 0..n {
            let len = it.next()?;
            let p: Vec<usize> = it.by_ref().take(len).collect();
            if p.len() != len || p.iter().any(|&t| t >= max) {
                return None;
            }
            ps.push(p);
        }
        out.push(ps);
    }
    it.next().is_none().then_some(out)
}

/// A call to a [`CpuPool`]: its result, or why the worker failed.
pub type PoolCall<T> = futures::future::LocalBoxFuture<'static, std::result::Result<T, String>>;

/// Forward passes on other threads: the page's embedding workers, each holding the same model
/// and precision (`worker.js`). The CPU path sends batches here; single texts stay in place.
pub trait CpuPool {
    /// Workers that run forward passes at once.
    fn threads(&self) -> usize;
    /// The wasm memory of one started worker, in bytes (`None` before they start).
    fn memory_bytes(&self) -> Option<usize>;
    /// One L2-normalised vector per token-id sequence (ids include `[CLS]`/`[SEP]`), computed
    /// by the next free worker.
    ///
    /// Errors: why the worker failed, in words (the caller redoes the batch in place).
    fn embed_ids(&self, ids: &[Vec<u32>]) -> PoolCall<Vec<Vec<f32>>>;
    /// [`super::BertModel::embed_pooled`] on the next free worker: each sequence's vector and
    /// one per pool of token positions (late chunking).
    ///
    /// Errors: why the worker failed, in words (the caller redoes the batch in place).
    fn embed_pooled(&self, ids: &[Vec<u32>], pools: &[Vec<Vec<usize>>]) -> PoolCall<Vec<super::PooledVectors>>;
}

/// Something the embedder tells its listeners about (today: the GPU was lost).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbedderEvent {
    /// `"warning"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Stable code: `GPU_LOST`, `WORKERS_FAILED`.
    pub code: String,
    /// What happened, in words.
    pub message: String,
}

type Listener = Box<dyn Fn(&EmbedderEvent)>;

/// Threads the CPU path's products run on.
fn cpu_threads() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    return rayon::current_num_threads();
    #[cfg(target_arch = "wasm32")]
    1
}

/// The engine's embedder: GPU or CPU path behind one [`Embedder`].
pub struct DeviceEmbedder {
    cpu: CpuEmbedder,
    gpu: Option<GpuBert>,
    /// False once the GPU was lost (then every call runs on the CPU).
    gpu_ok: Cell<bool>,
    info: RefCell<EmbedderInfo>,
    listener: RefCell<Option<Listener>>,
    /// With [`DevicePreference::Hashing`]: the model id (`…+hashing`).
    hashing: Option<String>,
    /// The platform's clock (calibration and profiling use its monotonic time).
    clock: Box<dyn Clock>,
    /// Embedding workers for the CPU path's batches, while they work.
    pool: RefCell<Option<std::rc::Rc<dyn CpuPool>>>,
}

/// The probe for the query crossover: a typical short search query.
const PROBE: &str = "how do I search my notes without a server?";

impl DeviceEmbedder {
    /// The CPU path only (no WebGPU is touched).
    pub fn cpu_only(cpu: CpuEmbedder, reason: &str, clock: Box<dyn Clock>) -> Self {
        let info = EmbedderInfo {
            path: EmbedPath::Cpu,
            queries: EmbedPath::Cpu,
            adapter: None,
            software_adapter: false,
            reason: reason.into(),
            detail: None,
            crossover: None,
            gpu_weights: None,
            dispatches_per_forward: None,
            gpu_objects: None,
            precision: cpu.precision(),
            cpu_kernels: super::gemm::CpuKernels::compiled(),
            threads: cpu_threads(),
            worker_memory_bytes: None,
        };
        DeviceEmbedder {
            cpu,
            gpu: None,
            gpu_ok: Cell::new(false),
            info: RefCell::new(info),
            listener: RefCell::new(None),
            hashing: None,
            clock,
            pool: RefCell::new(None),
        }
    }

    /// The CPU path because the platform offered no GPU adapter: a plain reason, the platform's
    /// own words in [`EmbedderInfo::detail`].
    pub fn no_adapter(cpu: CpuEmbedder, detail: String, clock: Box<dyn Clock>) -> Self {
        let reason = if cfg!(target_arch = "wasm32") {
            "no WebGPU adapter: embedding on the CPU (wasm SIMD)"
        } else {
            "no GPU adapter: embedding on the CPU"
        };
        let me = Self::cpu_only(cpu, reason, clock);
        me.info.borrow_mut().detail = Some(detail);
        me
    }

    /// Replaces the adapter's name in [`EmbedderInfo::adapter`] with the platform's own
    /// description (the page reads `GPUAdapter.info`, which wgpu's web backend leaves out).
    pub fn set_adapter_name(&self, name: String) {
        let mut info = self.info.borrow_mut();
        if info.adapter.is_some() {
            info.adapter = Some(name);
        }
    }

    /// Opens the path `preference` asks for (see the module docs), uploads the weights when the
    /// GPU is used, and measures the query crossover.
    ///
    /// Errors: [`GpuError::Unavailable`] only for [`DevicePreference::Gpu`] with no adapter;
    /// [`GpuError::Failed`] when the forced GPU fails its first forward pass.
    pub async fn open(cpu: CpuEmbedder, preference: DevicePreference, clock: Box<dyn Clock>) -> Result<Self> {
        if preference == DevicePreference::Cpu {
            return Ok(Self::cpu_only(cpu, "device: cpu", clock));
        }
        if preference == DevicePreference::Hashing {
            let id = format!("{}+hashing", cpu.model_id());
            let mut me =
                Self::cpu_only(cpu, "device: hashing (benchmarks only: sparse random indexing of word pieces, not the transformer)", clock);
            me.hashing = Some(id);
            return Ok(me);
        }
        match Gpu::new().await {
            Ok(gpu) => Self::on_gpu(cpu, preference, gpu, clock).await,
            Err(e) if preference == DevicePreference::Auto => Ok(Self::no_adapter(cpu, e.to_string(), clock)),
            Err(e) => Err(e.into()),
        }
    }

    /// [`DeviceEmbedder::open`] once a device opened: the GPU path, or the CPU path where the
    /// model's attention or a software adapter rules the GPU out. (In the search build `Gpu` is
    /// uninhabited, so rustc reads this body as unreachable and its bindings as unused.)
    #[cfg_attr(not(feature = "gpu"), allow(unused_variables))]
    async fn on_gpu(cpu: CpuEmbedder, preference: DevicePreference, gpu: Gpu, clock: Box<dyn Clock>) -> Result<Self> {
        let (adapter, software) = (gpu.adapter().to_string(), gpu.is_software());
        let c = cpu.bert().config();
        if !super::gpu::attention_supports(c.hidden_size, c.num_attention_heads) {
            let why = format!(
                "the GPU attention kernel needs a head dimension that is a multiple of 16 up to 64; this model's is {} / {}",
                c.hidden_size, c.num_attention_heads
            );
            if preference == DevicePreference::Gpu {
                return Err(GpuError::Unavailable { reason: why }.into());
            }
            let mut me = Self::cpu_only(cpu, &why, clock);
            me.info.get_mut().adapter = Some(adapter);
            return Ok(me);
        }
        if software && preference == DevicePreference::Auto {
            let mut me =
                Self::cpu_only(cpu, "the only adapter is a software one (slower than the CPU path); device: 'gpu' forces it", clock);
            me.info.get_mut().adapter = Some(adapter);
            me.info.get_mut().software_adapter = true;
            return Ok(me);
        }
        // f16 weights (half the memory and weight traffic, cosine ≥ 0.999 to f32) where the adapter
        // has shader-f16 and is real hardware; a forced software adapter keeps exact f32.
        // Natively `Gpu` is Send + Sync; wgpu's WebGPU backend is single-threaded (not Send), and
        // the same code serves both.
        #[allow(clippy::arc_with_non_send_sync)]
        let gpu = Arc::new(gpu);
        let bert = if gpu.supports_f16() && !software { gpu.upload_f16(cpu.bert()) } else { gpu.upload(cpu.bert()) };
        let reason = if software { "device: gpu (software adapter)" } else { "hardware GPU adapter" };
        let info = EmbedderInfo {
            path: EmbedPath::Gpu,
            queries: EmbedPath::Gpu,
            adapter: Some(adapter),
            software_adapter: software,
            reason: reason.into(),
            detail: None,
            crossover: None,
            gpu_weights: Some(if bert.is_f16() { GpuWeights::F16 } else { GpuWeights::F32 }),
            dispatches_per_forward: Some(bert.dispatches_per_forward()),
            gpu_objects: None,
            precision: cpu.precision(),
            cpu_kernels: super::gemm::CpuKernels::compiled(),
            threads: cpu_threads(),
            worker_memory_bytes: None,
        };
        let me = DeviceEmbedder {
            cpu,
            gpu: Some(bert),
            gpu_ok: Cell::new(true),
            info: RefCell::new(info),
            listener: RefCell::new(None),
            hashing: None,
            clock,
            pool: RefCell::new(None),
        };
        me.calibrate().await?;
        Ok(me)
    }

    /// Times [`PROBE`] on both paths and routes single texts to the faster one.
    async fn calibrate(&self) -> Result<()> {
        let Some(gpu) = &self.gpu else { return Ok(()) };
        let ids = vec![self.cpu.tokenizer().encode(PROBE)?];
        let mut cpu_t = Vec::new();
        let mut gpu_t = Vec::new();
        // The first GPU pass allocates the workspace and finishes pipeline compilation.
        gpu.embed_ids(&ids).await?;
        self.cpu.embed_ids(&ids);
        let now = || self.clock.monotonic_ms();
        for _ in 0..3 {
            let t = now();
            std::hint::black_box(self.cpu.embed_ids(&ids));
            cpu_t.push(now() - t);
            let t = now();
            std::hint::black_box(gpu.embed_ids(&ids).await?);
            gpu_t.push(now() - t);
            // One run decides a 4× gap (a software adapter takes seconds per pass).
            if gpu_t[0] > 4.0 * cpu_t[0] || cpu_t[0] > 4.0 * gpu_t[0] {
                break;
            }
        }
        let med = |v: &mut Vec<f64>| {
            crate::sort::by(v, f64::total_cmp);
            v[v.len() / 2]
        };
        let c = Crossover { cpu_ms: med(&mut cpu_t), gpu_ms: med(&mut gpu_t) };
        let mut info = self.info.borrow_mut();
        info.queries = if c.cpu_ms <= c.gpu_ms { EmbedPath::Cpu } else { EmbedPath::Gpu };
        info.crossover = Some(c);
        Ok(())
    }

    /// Sends the CPU path's batches to `pool` from now on ([`CpuPool`]).
    pub fn set_pool(&self, pool: std::rc::Rc<dyn CpuPool>) {
        self.info.borrow_mut().threads = pool.threads();
        *self.pool.borrow_mut() = Some(pool);
    }

    /// Path, adapter, reason, crossover and GPU object counts.
    pub fn info(&self) -> EmbedderInfo {
        let mut info = self.info.borrow().clone();
        info.gpu_objects = self.gpu().map(|g| g.gpu().counters());
        info.worker_memory_bytes = self.pool.borrow().as_ref().and_then(|p| p.memory_bytes());
        info
    }

    /// GPU time per kernel kind for one forward pass over `texts` (timestamp queries); `None` on
    /// the CPU path or without `TIMESTAMP_QUERY`.
    pub async fn profile(&self, texts: &[&str]) -> Result<Option<KernelTimes>> {
        let Some(gpu) = self.gpu() else { return Ok(None) };
        let ids = texts.iter().map(|t| self.cpu.tokenizer().encode(t)).collect::<Result<Vec<_>>>()?;
        Ok(gpu.profile(&ids, &*self.clock).await?)
    }

    /// Calls `f` for every later [`EmbedderEvent`] (replacing any earlier listener).
    pub fn on_event(&self, f: impl Fn(&EmbedderEvent) + 'static) {
        *self.listener.borrow_mut() = Some(Box::new(f));
    }

    /// The CPU path (always loaded: it is the fallback).
    pub fn cpu(&self) -> &CpuEmbedder {
        &self.cpu
    }

    /// The GPU path, while it is usable.
    pub fn gpu(&self) -> Option<&GpuBert> {
        self.gpu.as_ref().filter(|_| self.gpu_ok.get())
    }

    /// Embeds `texts` on `path` (benchmarks compare the paths this way); `None` follows the
    /// routing rules, as [`Embedder::embed`].
    ///
    /// Errors: [`GpuError::Unavailable`] for [`EmbedPath::Gpu`] when no GPU is in use.
    pub async fn embed_on(&self, texts: &[&str], path: Option<EmbedPath>) -> Result<Vec<Vec<f32>>> {
        let ids = texts.iter().map(|t| self.cpu.tokenizer().encode(t)).collect::<Result<Vec<_>>>()?;
        match path {
            None => Ok(self.embed_ids(&ids).await),
            Some(EmbedPath::Gpu) if self.gpu().is_none() => {
                Err(GpuError::Unavailable { reason: "the GPU path is not in use".into() }.into())
            }
            Some(p) => Ok(self.run_on(&ids, p).await),
        }
    }

    /// Embeds token-id sequences on the path the routing rules pick, falling back to the CPU
    /// when the GPU fails.
    pub async fn embed_ids(&self, ids: &[Vec<u32>]) -> Vec<Vec<f32>> {
        if self.hashing.is_some() {
            return ids.iter().map(|t| super::hashing::hashing_vector(t, self.cpu.dim())).collect();
        }
        // A loss reported by the device (even while queries ran on the CPU) is announced at the
        // next call, whichever path that call takes.
        if self.gpu().is_some_and(|g| g.gpu().is_lost()) {
            self.lose_gpu(&GpuError::Failed { reason: "the device was lost".into() });
        }
        let want = if ids.len() == 1 { self.info.borrow().queries } else { self.info.borrow().path };
        self.run_on(ids, want).await
    }

    /// Runs on `want` when it is usable; a GPU failure drops the GPU and redoes the call on the CPU.
    async fn run_on(&self, ids: &[Vec<u32>], want: EmbedPath) -> Vec<Vec<f32>> {
        if let (EmbedPath::Gpu, Some(gpu)) = (want, self.gpu()) {
            match gpu.embed_ids(ids).await {
                Ok(v) => return v,
                Err(e) => self.lose_gpu(&e),
            }
        }
        let pool = self.pool.borrow().clone();
        if let Some(pool) = pool.filter(|_| ids.len() > 1) {
            match pool.embed_ids(ids).await {
                Ok(v) if v.len() == ids.len() => return v,
                Ok(v) => self.lose_pool(&format!("{} vectors for {} texts", v.len(), ids.len())),
                Err(e) => self.lose_pool(&e),
            }
        }
        self.cpu.embed_ids(ids)
    }

    fn lose_pool(&self, reason: &str) {
        *self.pool.borrow_mut() = None;
        self.info.borrow_mut().threads = cpu_threads();
        let message = format!("the embedding workers failed ({reason}); embedding continues in the engine's worker");
        self.tell(&EmbedderEvent { kind: "warning".into(), code: "WORKERS_FAILED".into(), message });
    }

    fn tell(&self, ev: &EmbedderEvent) {
        if let Some(f) = self.listener.borrow().as_ref() {
            f(ev);
        }
    }

    fn lose_gpu(&self, e: &GpuError) {
        self.gpu_ok.set(false);
        let message = format!("the GPU failed ({e}); embedding continues on the CPU");
        {
            let mut info = self.info.borrow_mut();
            info.path = EmbedPath::Cpu;
            info.queries = EmbedPath::Cpu;
            info.reason = format!("GPU lost: {e}");
        }
        self.tell(&EmbedderEvent { kind: "warning".into(), code: "GPU_LOST".into(), message });
    }
}

impl Embedder for DeviceEmbedder {
    fn model_id(&self) -> &str {
        self.hashing.as_deref().unwrap_or(self.cpu.model_id())
    }
    fn dim(&self) -> usize {
        self.cpu.dim()
    }
    fn max_tokens(&self) -> usize {
        self.cpu.max_tokens()
    }
    fn token_counter(&self) -> &dyn TokenCounter {
        self.cpu.token_counter()
    }
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let ids = texts.iter().map(|t| self.cpu.tokenizer().encode(t)).collect::<Result<Vec<_>>>()?;
        Ok(self.embed_ids(&ids).await)
    }
    /// [`super::GPU_BATCH`] on a hardware GPU; [`super::CPU_BATCH`] on the CPU and on a software
    /// adapter (which runs the kernels on the CPU, slowly: small batches keep progress moving).
    fn preferred_batch(&self) -> usize {
        let info = self.info.borrow();
        if self.hashing.is_some() || (info.path == EmbedPath::Gpu && !info.software_adapter) { super::GPU_BATCH } else { super::CPU_BATCH }
    }
    /// On the CPU path (the embedding workers where set, in place otherwise); `None` on the GPU
    /// path and with hashing vectors.
    async fn embed_late(&self, texts: &[&str], pools: &[super::LatePools]) -> Result<Option<Vec<super::LateVectors>>> {
        if self.hashing.is_some() || (self.gpu().is_some() && self.info.borrow().path == EmbedPath::Gpu) {
            return Ok(None);
        }
        let (ids, positions) = self.cpu.late_ids(texts, pools);
        let pool = self.pool.borrow().clone();
        if let Some(pool) = pool.filter(|_| ids.len() > 1) {
            match pool.embed_pooled(&ids, &positions).await {
                Ok(v) if v.len() == ids.len() && v.iter().zip(&positions).all(|((_, ps), p)| ps.len() == p.len()) => {
                    return Ok(Some(super::late_vectors(v, &positions)));
                }
                Ok(_) => self.lose_pool("late chunking: vectors of the wrong shape"),
                Err(e) => self.lose_pool(&e),
            }
        }
        Ok(Some(super::late_vectors(self.cpu.bert().embed_pooled(&ids, &positions), &positions)))
    }
    /// The embedding workers on the CPU path (each takes one batch at a time), else 1.
    fn parallelism(&self) -> usize {
        let on_cpu = self.hashing.is_none() && self.gpu().is_none();
        self.pool.borrow().as_ref().filter(|_| on_cpu).map_or(1, |p| p.threads().max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::{decode_pools, encode_pools};

    #[test]
    fn pools_round_trip_and_malformed_ones_are_refused() {
        let pools = vec![vec![vec![0, 3, 4, 9], vec![]], vec![], vec![vec![1]]];
        let enc = encode_pools(3, &pools);
        assert_eq!(decode_pools(&enc, 3, 10), Some(pools));
        assert_eq!(decode_pools(&[], 3, 10), Some(Vec::new()), "no pools at all");
        assert_eq!(decode_pools(&enc, 3, 9), None, "a position past the sequence's maximum");
        assert_eq!(decode_pools(&enc[..enc.len() - 1], 3, 10), None, "cut short");
        assert_eq!(decode_pools(&[enc.clone(), vec![0]].concat(), 3, 10), None, "trailing values");
        assert_eq!(decode_pools(&[1, u32::MAX], 1, 10), None, "a length larger than the data");
        assert_eq!(decode_pools(&[u32::MAX], 1, 10), None, "a count larger than the data");
    }
}
