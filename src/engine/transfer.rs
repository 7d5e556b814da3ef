//! Moving a knowledge base between stores: [`Engine::export_kb`] and [`Engine::import_kb`]
//! (the file format is [`crate::kb_file`]).
use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{ModelError, Result};
use crate::kb_file;
use crate::ports::{Collection, FixedClock, MemoryStore, Op, Store};
use crate::text::TokenCounter;
use crate::types::Stats;

use super::Engine;

/// The shape of a model (id, dimension) without its weights: enough to open a knowledge base
/// and check it, not to embed (every embed fails).
struct ShapeOnly<'a> {
    model: &'a str,
    dim: usize,
    tokens: &'a dyn TokenCounter,
}

impl Embedder for ShapeOnly<'_> {
    fn model_id(&self) -> &str {
        self.model
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn max_tokens(&self) -> usize {
        0
    }
    fn token_counter(&self) -> &dyn TokenCounter {
        self.tokens
    }
    async fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>> {
        // Only a chunk without a readable vector is embedded at open: in a file, that is corrupt.
        Err(crate::error::StoreError::Corrupt {
            collection: "vectors".into(),
            key: String::new(),
            reason: "a chunk has no readable vector".into(),
        }
        .into())
    }
}

impl<S: Store, E: Embedder> Engine<S, E> {
    /// The whole knowledge base as a knowledge-base file ([`kb_file`]): every stored record,
    /// gzip-compressed JSON, read from the store a page at a time ([`kb_file::export`]).
    ///
    /// Errors: store errors.
    pub async fn export_kb(&self) -> Result<Vec<u8>> {
        self.export_kb_at(flate2::Compression::default()).await
    }

    /// [`Engine::export_kb`] compressed at `level` (`fast()`: several times quicker, a larger
    /// file; the static-site build cache).
    ///
    /// Errors: store errors.
    pub(crate) async fn export_kb_at(&self, level: flate2::Compression) -> Result<Vec<u8>> {
        kb_file::export(&self.store, self.embedder.model_id(), self.embedder.dim(), level).await
    }

    /// Replaces this knowledge base with the one in `bytes` (a file from [`Engine::export_kb`]),
    /// then reads it back: afterwards the engine answers exactly as the exporting one did.
    ///
    /// The file is checked whole before anything is written: its layout, its records' schema,
    /// its model against the loaded one, and its records by opening them as a knowledge base in
    /// memory (every chunk has its vector; stale graph edges are dropped, as an open drops them).
    /// Then one commit deletes every
    /// stored record and writes the file's, so a failure leaves the old knowledge base as it was.
    /// An older schema is migrated as [`Engine::open`] migrates a store.
    ///
    /// Errors (nothing written): [`crate::error::InputError::InvalidKbFile`],
    /// [`crate::error::StoreError::VersionTooNew`], [`ModelError::Mismatch`],
    /// [`crate::error::StoreError::Corrupt`] (records that do not form a knowledge base), store
    /// errors.
    pub async fn import_kb(&mut self, bytes: &[u8]) -> Result<Stats> {
        let file = kb_file::decode(bytes)?;
        if file.model != self.embedder.model_id() || file.dim != self.embedder.dim() {
            return Err(ModelError::Mismatch {
                stored: file.model,
                stored_dim: file.dim,
                loaded: self.embedder.model_id().into(),
                loaded_dim: self.embedder.dim(),
            }
            .into());
        }
        // Document ids as `add` takes them (derived ids, and so keys, stay bounded).
        if let Some(d) = file.contents.documents.iter().find(|d| super::check_id(&d.id).is_err()) {
            let id: String = d.id.chars().take(64).collect();
            return Err(kb_file::invalid(format!("document id {id:?}… is not 1 to {} characters", super::MAX_ID_CHARS)));
        }
        // The records as a store holds them (a record listed twice is one record, the last).
        let scratch = MemoryStore::new();
        scratch.commit(file.contents.into_ops()).await?;
        let raw = scratch.load().await?;
        // The check: the records opened as a knowledge base of their own, in memory. A schema-1
        // file would need embeddings to migrate; its graph is then built by the reopen below.
        let shape = ShapeOnly { model: &file.model, dim: file.dim, tokens: self.embedder.token_counter() };
        let checked = Engine::open(
            &scratch,
            shape,
            Config { graph: crate::graph::GraphParams { enabled: false, ..self.config.graph }, ..self.config.clone() },
            Box::new(FixedClock(0.0)),
        )
        .await?;
        drop(checked);
        // What is written and read back is what the check kept: the records less those its open
        // deleted (a chunk of a document the file lacks, with its vector and postings), so the
        // read-back meets nothing the check did not. What the check derived again (postings of
        // another analyzer version) is not taken: it had no model, the read-back derives it.
        let left: std::collections::HashSet<(Collection, String)> = scratch
            .load()
            .await?
            .into_ops()
            .into_iter()
            .filter_map(|op| match op {
                Op::Put(r) => Some((r.collection(), r.key().to_string())),
                _ => None,
            })
            .collect();
        let kept = MemoryStore::new();
        kept.commit(
            raw.into_ops()
                .into_iter()
                .filter(|op| matches!(op, Op::Put(r) if left.contains(&(r.collection(), r.key().to_string()))))
                .collect(),
        )
        .await?;
        let contents = kept.load().await?;
        // Every stored record goes (each `Put` of the old contents becomes its `Delete`).
        let mut ops: Vec<Op> = self
            .store
            .load()
            .await?
            .into_ops()
            .into_iter()
            .filter_map(|op| match op {
                Op::Put(r) => Some(Op::Delete(r.collection(), r.key().to_string())),
                Op::Delete(..) | Op::CheckGeneration(_) => None,
            })
            .collect();
        ops.extend(contents.clone().into_ops().into_iter().filter(|op| match op {
            Op::Put(crate::ports::Record::Meta(m)) => m.id != crate::ports::GENERATION_KEY,
            _ => true,
        }));
        self.commit(ops).await?;
        // Read back exactly as a fresh open would (with the migration of an older schema).
        let found = self.check_meta(&contents.meta)?;
        self.reset_indexes();
        let repairs = self.rebuild(contents)?;
        self.commit(repairs).await?;
        if let Some(m) = found.and_then(crate::schema::migration) {
            self.migrate(m).await?;
        }
        Ok(self.stats())
    }
}
