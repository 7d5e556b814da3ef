//! The pseudo-graph (PG-RAG, docs/pseudo-graph.md): per-document mind maps (topic → routes → facts) fused
//! across documents, and matrix-based reverse-DFS retrieval over them.
//!
//! - [`mindmap`]: the tree type every builder produces, and the structural builder (no LLM).
//! - [`pgr`]: template matrices, anchors, control / path / dyeing / aggregation matrices.
//! - [`reference`]: the plain reverse DFS the matrix version must equal (tests, benchmark).
//! - [`index`]: the live pseudo-graph of a knowledge base: nodes, node vectors, super-topics and
//!   super-facts, entity links, incremental add/remove, and the PGR retriever.
pub mod index;
pub mod mindmap;
pub mod pgr;
pub mod reference;

pub use index::{GraphHit, PseudoGraph};
pub use mindmap::{MapNode, MindMap};
pub use pgr::{PgrParams, PgrResult, Template};
