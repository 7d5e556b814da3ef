//! The search build's stand-ins (no `gpu` feature): a [`Gpu`] and a [`GpuBert`] that cannot
//! exist. Each method matches on `*self`, which has no value, so the embedder's GPU branches type
//! check and compile to nothing.
use std::sync::Arc;

use super::{GpuCounters, KernelTimes};
use crate::embed::BertModel;
use crate::error::GpuError;

/// No GPU device in this build.
pub enum Gpu {}

/// No model on a GPU in this build.
pub enum GpuBert {}

impl Gpu {
    /// No device: the search build (`webrag/search`) leaves the GPU engine out of its `.wasm`.
    ///
    /// Errors: always [`GpuError::Unavailable`].
    pub async fn new() -> Result<Self, GpuError> {
        Err(GpuError::Unavailable { reason: "the search build (webrag/search) has no GPU engine; webrag has".into() })
    }

    /// Never called.
    pub fn adapter(&self) -> &str {
        match *self {}
    }

    /// Never called.
    pub fn is_software(&self) -> bool {
        match *self {}
    }

    /// Never called.
    pub fn supports_f16(&self) -> bool {
        match *self {}
    }

    /// Never called.
    pub fn is_lost(&self) -> bool {
        match *self {}
    }

    /// Never called.
    pub fn destroy(&self) {
        match *self {}
    }

    /// Never called.
    pub fn counters(&self) -> GpuCounters {
        match *self {}
    }

    /// Never called.
    pub fn upload(self: &Arc<Self>, _: &BertModel) -> GpuBert {
        match **self {}
    }

    /// Never called.
    pub fn upload_f16(self: &Arc<Self>, _: &BertModel) -> GpuBert {
        match **self {}
    }
}

impl GpuBert {
    /// Tokens one forward pass takes at most (as the GPU engine's).
    pub const MAX_BATCH_TOKENS: usize = 8192;

    /// Never called.
    pub fn gpu(&self) -> &Gpu {
        match *self {}
    }

    /// Never called.
    pub fn max_batch_tokens(&self) -> usize {
        match *self {}
    }

    /// Never called.
    pub fn is_f16(&self) -> bool {
        match *self {}
    }

    /// Never called.
    pub fn dispatches_per_forward(&self) -> usize {
        match *self {}
    }

    /// Never called.
    pub async fn embed_ids(&self, _: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, GpuError> {
        match *self {}
    }

    /// Never called.
    pub async fn profile(&self, _: &[Vec<u32>], _: &dyn crate::ports::Clock) -> Result<Option<KernelTimes>, GpuError> {
        match *self {}
    }
}
