//! What the GPU engine reports (in every build: [`crate::embed::EmbedderInfo`] names them).

/// GPU time of one forward pass by kernel kind (timestamp queries), its span on the GPU, and its
/// wall time from recording to readback on the host, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
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
    /// GPU time from the first dispatch's start to the last one's end: the kernels and the gaps
    /// between them (barriers, launches).
    pub span_ms: f64,
    /// Host wall time of the whole call (includes recording, submission, transfers, readback).
    pub wall_ms: f64,
}

/// GPU objects created so far on one device (a warm batch must add none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GpuCounters {
    /// Buffers (weights, activations, parameters, readback).
    pub buffers: u64,
    /// Bind groups.
    pub bind_groups: u64,
    /// Compute pipelines.
    pub pipelines: u64,
}
