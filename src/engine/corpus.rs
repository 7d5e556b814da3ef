//! The documents and chunks a loaded knowledge base holds, each chunk with its BM25 posting: the
//! records the store keeps, by id, and each document's chunks in order. The engine's writes keep
//! it in step with the store; everything else reads it ([`super::Engine::corpus`]).
use std::collections::HashMap;

use crate::schema::*;

/// The documents and chunks of a loaded knowledge base.
#[derive(Debug, Default)]
pub struct Corpus {
    pub(super) docs: HashMap<DocId, DocumentRecord>,
    pub(super) chunks: HashMap<ChunkId, ChunkRecord>,
    /// Each document's chunk ids, by ordinal.
    pub(super) doc_chunks: HashMap<DocId, Vec<ChunkId>>,
    pub(super) postings: HashMap<ChunkId, PostingRecord>,
}

impl Corpus {
    /// Every document, most recently added first (then by id).
    pub fn documents(&self) -> Vec<DocumentRecord> {
        super::newest_first(self.docs.values().cloned().collect())
    }

    /// Every document, in no particular order, without copying (counts and sums over them).
    pub fn document_records(&self) -> impl Iterator<Item = &DocumentRecord> {
        self.docs.values()
    }

    /// One document by id.
    pub fn document(&self, id: &str) -> Option<&DocumentRecord> {
        self.docs.get(id)
    }

    /// One chunk by id.
    pub fn chunk(&self, id: &str) -> Option<&ChunkRecord> {
        self.chunks.get(id)
    }

    /// The chunk ids of a document, by ordinal (none for an unknown id).
    pub fn chunk_ids(&self, doc_id: &str) -> &[ChunkId] {
        self.doc_chunks.get(doc_id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// A document's chunks in order (none for an unknown id).
    pub fn chunks_of(&self, doc_id: &str) -> Vec<&ChunkRecord> {
        self.chunk_ids(doc_id).iter().filter_map(|c| self.chunks.get(c)).collect()
    }

    /// A chunk's BM25 terms with their frequencies, and its length.
    pub fn posting(&self, chunk_id: &str) -> Option<&PostingRecord> {
        self.postings.get(chunk_id)
    }

    /// Every chunk id in document order: documents by id, each one's chunks by ordinal.
    pub fn chunk_ids_in_order(&self) -> impl Iterator<Item = &ChunkId> {
        let mut docs: Vec<&DocId> = self.doc_chunks.keys().collect();
        crate::sort::ascending(&mut docs);
        docs.into_iter().flat_map(|d| self.doc_chunks[d].iter())
    }

    /// Documents the auto-tagging stage has not run on, by id.
    pub fn untagged(&self) -> Vec<DocId> {
        let mut v: Vec<DocId> = self.docs.values().filter(|d| !d.tagged).map(|d| d.id.clone()).collect();
        crate::sort::ascending(&mut v);
        v
    }

    /// Chunks without a forward summary after the first of their document, in document order
    /// ([`Corpus::chunk_ids_in_order`]): the work the forward-summary stage has left.
    pub fn unsummarized(&self) -> Vec<ChunkId> {
        self.chunk_ids_in_order()
            .filter(|c| self.chunks.get(*c).is_some_and(|c| c.ordinal > 0 && c.forward_summary.is_none()))
            .cloned()
            .collect()
    }
}
