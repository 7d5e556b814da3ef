//! Native adapters (not built for wasm32): a file-backed [`Store`](crate::ports::Store), model
//! loading from a directory, and the retrieval evaluation used by `webrag eval`.
pub mod bench;
pub mod bench_embed;
pub mod bench_graph;
pub mod cli;
pub mod distill;
pub mod eval;
pub mod eval_answers;
pub mod eval_ask;
pub mod eval_fusion;
mod file_store;
pub mod http;
pub mod oracle;
pub mod page_rank;
pub mod quantize;
mod rng;
pub mod site;
pub mod snapshot_search;
pub mod surface;
mod surface_types;

use std::path::{Path, PathBuf};

pub use file_store::FileStore;
pub use rng::XorShift;

use crate::embed::{CpuEmbedder, DeviceEmbedder, DevicePreference, ModelFiles, file_error};
use crate::error::Result;

pub use crate::embed::DEFAULT_MODEL_ID;

/// The default model directory: `$WEBRAG_MODEL`, else `.models/all-MiniLM-L6-v2` under the crate
/// root (where `./webrag.sh setup` unpacks it).
pub fn default_model_dir() -> PathBuf {
    std::env::var_os("WEBRAG_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".models/all-MiniLM-L6-v2"))
}

/// Reads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
pub fn read_model_files(dir: &Path) -> Result<ModelFiles> {
    let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| file_error(name, format!("{}: {e}", dir.join(name).display())));
    Ok(ModelFiles { config: read("config.json")?, tokenizer: read("tokenizer.json")?, weights: read("model.safetensors")? })
}

/// The id knowledge bases, snapshots and build caches record for the model:
/// `$WEBRAG_MODEL_ID`, else [`DEFAULT_MODEL_ID`]. Another model (`--model DIR`) needs its own id
/// (e.g. `moka-ai/m3e-small`), so that what was built with one is never read with the other.
pub fn model_id() -> String {
    std::env::var("WEBRAG_MODEL_ID").ok().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| DEFAULT_MODEL_ID.to_string())
}

/// Loads the CPU embedder from `dir`, recorded as [`model_id`].
pub fn load_embedder(dir: &Path) -> Result<CpuEmbedder> {
    CpuEmbedder::from_files(&model_id(), &read_model_files(dir)?)
}

/// Opens the path `device` asks for over the loaded model `cpu`, as the page does
/// ([`DeviceEmbedder::open`]: `auto` takes a hardware GPU adapter when there is one, else the
/// CPU on every core); says on stderr which path it took and why.
///
/// Errors: the model's, and [`crate::error::GpuError::Unavailable`] for `gpu` without an adapter.
pub async fn open_embedder(cpu: CpuEmbedder, device: DevicePreference) -> Result<DeviceEmbedder> {
    let precision = cpu.precision();
    let e = DeviceEmbedder::open(cpu, device, Box::new(crate::ports::SystemClock)).await?;
    let info = e.info();
    let on = match (info.path, &info.adapter) {
        (crate::embed::EmbedPath::Gpu, Some(a)) => format!("GPU ({a})"),
        _ => format!("CPU ({} threads, {precision:?})", rayon::current_num_threads()),
    };
    eprintln!("embedding on the {on}: {}; {} texts per batch", info.reason, crate::embed::Embedder::preferred_batch(&e));
    Ok(e)
}
