//! The pseudo-graph (PG-RAG, docs/pseudo-graph.md): per-document mind maps (topic → routes → facts) fused
//! across documents, and matrix-based reverse-DFS retrieval over them.
//!
//! - [`mindmap`]: the tree type every builder produces, and the structural builder (no LLM).
//! - [`pgr`]: template matrices, anchors, control / path / dyeing / aggregation matrices.
//! - [`reference`](mod@reference): the plain reverse DFS the matrix version must equal (tests, benchmark).
//! - [`params`]: the graph's options.
//! - [`pseudo`]: the live pseudo-graph of a knowledge base: nodes, node vectors, super-topics and
//!   super-facts.
//! - [`plan`]: incremental add / remove, planned against the graph, applied after the commit.
//! - [`entities`]: entity links between topics (title mentions, shared names).
//! - [`search`]: the PGR retriever over the live graph (candidate walk, template, PGR).
//! - [`export`]: a document's mind map and a topic's part of a static-site snapshot, read back.
pub mod entities;
pub mod export;
pub mod mindmap;
pub mod params;
pub mod pgr;
pub mod plan;
pub mod pseudo;
pub mod reference;
pub mod search;

pub use export::{ExportNode, TopicExport};
pub use mindmap::{MapNode, MindMap};
pub use params::GraphParams;
pub use pgr::{PgrParams, PgrResult, Template};
pub use plan::{GraphPlan, NewMap, NodeSource, PlannedNode, node_inputs, node_sources};
pub use pseudo::{PseudoGraph, vector_collection};
pub use search::{GraphExplain, GraphHit, GraphSearch};
