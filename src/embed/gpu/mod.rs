//! The GPU embedder: WGSL compute shaders dispatched through wgpu (WebGPU in the browser; Vulkan
//! natively, lavapipe on GPU-less machines). [`crate::embed::DeviceEmbedder`] puts it behind the
//! [`crate::embed::Embedder`] port.
//!
//! [`Gpu`] opens a device and builds every pipeline once. [`Gpu::upload`] puts a `BertModel`'s
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
//!
//! The engine is the cargo feature `gpu` (in `full`, and so in every native build and the page's
//! `webrag`). Without it (the search build, `webrag/search`) [`Gpu`] and [`GpuBert`] are
//! uninhabited types (`absent.rs`): the embedder's `Option<GpuBert>` can only be `None`, so the
//! code that would run a GPU pass, and wgpu with it, is not in that `.wasm`.
#[cfg(not(feature = "gpu"))]
mod absent;
#[cfg(feature = "gpu")]
mod bert;
#[cfg(feature = "gpu")]
mod device;
mod kernels;
mod report;

#[cfg(not(feature = "gpu"))]
pub use absent::{Gpu, GpuBert};
#[cfg(feature = "gpu")]
pub use bert::GpuBert;
#[cfg(feature = "gpu")]
pub use device::Gpu;
pub use kernels::*;
pub use report::{GpuCounters, KernelTimes};
