//! The native integration tests, one module per file of `tests/`, in one test binary: compiled
//! once, with one copy of the engine's generic code (one binary per file, 27 of them, took 836 s
//! of CPU to compile on a fresh build, more than their tests took to run), and run together on
//! every core (`cargo test --test suite`;
//! one file's tests: `cargo test --test suite lazy_open::`). Each file still reads as its own
//! test: its module doc says what it checks. The binaries of their own (Cargo.toml's `[[test]]`
//! list): `amplification` and `site_memory` count the whole process's allocations, and `fuzz` is
//! `./webrag.sh fuzz`'s entry point.
#![cfg(not(target_arch = "wasm32"))]

#[path = "ann_engine.rs"]
mod ann_engine;
#[path = "ann_recall.rs"]
mod ann_recall;
#[path = "architecture.rs"]
mod architecture;
#[path = "ask_decompose.rs"]
mod ask_decompose;
#[path = "ask_enhance.rs"]
mod ask_enhance;
#[path = "ask_pipeline.rs"]
mod ask_pipeline;
#[path = "ask_presets.rs"]
mod ask_presets;
#[path = "cli_kb.rs"]
mod cli_kb;
mod common;
#[path = "engine.rs"]
mod engine;
#[path = "golden.rs"]
mod golden;
#[path = "gpu_kernels.rs"]
mod gpu_kernels;
#[path = "graph.rs"]
mod graph;
#[path = "kb_transfer.rs"]
mod kb_transfer;
#[path = "late_chunking.rs"]
mod late_chunking;
#[path = "lazy_open.rs"]
mod lazy_open;
#[path = "lazy_write.rs"]
mod lazy_write;
#[path = "llm_client.rs"]
mod llm_client;
#[path = "pgr_equivalence.rs"]
mod pgr_equivalence;
#[path = "rerank_maxsim.rs"]
mod rerank_maxsim;
#[path = "residency_suite.rs"]
mod residency_suite;
#[path = "site_snapshot.rs"]
mod site_snapshot;
#[path = "static_rank.rs"]
mod static_rank;
#[path = "static_tier.rs"]
mod static_tier;
#[path = "stemmed_kb.rs"]
mod stemmed_kb;
#[path = "store_conformance.rs"]
mod store_conformance;
#[path = "store_fixtures.rs"]
mod store_fixtures;
#[path = "store_suite.rs"]
mod store_suite;
#[path = "surface.rs"]
mod surface;
#[path = "tokenizer_parity.rs"]
mod tokenizer_parity;
#[path = "two_tabs.rs"]
mod two_tabs;
