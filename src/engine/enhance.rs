//! PIKE-RAG's enhanced chunking and auto-tagging (arXiv 2501.11551, §4.2) as stored data: a
//! chunk's forward summary, embedded with it, and a document's automatic tags. The model calls
//! that write them live in [`crate::ask::enhance`]; this is where they are stored and indexed.
use crate::embed::Embedder;
use crate::error::Result;
use crate::ports::{Op, Record, Store};
use crate::schema::*;
use crate::types::*;

use super::Engine;

/// The text embedded for a chunk with a forward summary: the summary, then the chunk's input.
pub fn forward_input(summary: &str, input: &str) -> String {
    format!("{}\n{input}", summary.trim())
}

impl<S: Store, E: Embedder> Engine<S, E> {
    /// The text a stored chunk is embedded from and BM25 indexes: its title and headings prefix
    /// and its text, as [`crate::text::chunk`] gave it when the chunk was added, after its
    /// forward summary when it has one (so a chunk that goes on from the one before is found by
    /// the words of what it is about).
    pub(super) fn chunk_input(&self, title: &str, c: &ChunkRecord) -> String {
        let max = self.config.max_chunk_tokens.min(self.embedder.max_tokens());
        let input = crate::text::embed_input(title, &c.heading_path, &c.text, self.embedder.token_counter(), max);
        match &c.forward_summary {
            Some(s) => forward_input(s, &input),
            None => input,
        }
    }
}

/// PIKE-RAG's stages' writes: automatic tags and forward summaries.
impl<S: Store, E: Embedder> super::Enrichment<'_, S, E> {
    /// Sets documents' automatic tags ([`normalize_tag`]ged, deduplicated, at most
    /// [`MAX_TAGS`], each 1..=[`MAX_TAG_CHARS`] characters; others dropped) and marks them
    /// tagged, in one commit. Unknown ids are skipped.
    pub async fn set_auto_tags(&mut self, tags: Vec<(DocId, Vec<String>)>) -> Result<()> {
        let mut recs = Vec::new();
        for (id, ts) in tags {
            let Some(d) = self.0.corpus.docs.get(&id) else { continue };
            let mut auto: Vec<String> = Vec::new();
            for t in ts.iter().map(|t| normalize_tag(t)) {
                let n = t.chars().count();
                if (1..=MAX_TAG_CHARS).contains(&n) && !auto.contains(&t) && auto.len() < MAX_TAGS {
                    auto.push(t);
                }
            }
            recs.push(DocumentRecord { auto_tags: auto, tagged: true, ..d.clone() });
        }
        if recs.is_empty() {
            return Ok(());
        }
        self.0.commit(recs.iter().map(|r| Op::Put(Record::Document(r.clone()))).collect()).await?;
        for r in recs {
            self.0.corpus.docs.insert(r.id.clone(), r);
        }
        Ok(())
    }

    /// Sets chunks' forward summaries and indexes each chunk again with its summary before its
    /// input ([`forward_input`]): embedded, and its BM25 postings derived, in one commit. Unknown
    /// ids are skipped.
    ///
    /// Errors: the embedder's and the store's (nothing is written then).
    pub async fn set_forward_summaries(&mut self, items: Vec<(ChunkId, String)>) -> Result<()> {
        let mut recs = Vec::new();
        let mut inputs = Vec::new();
        let mut langs = Vec::new();
        for (cid, summary) in items {
            let Some(c) = self.0.corpus.chunks.get(&cid) else { continue };
            let rec = ChunkRecord { forward_summary: Some(summary.trim().to_string()), ..c.clone() };
            let doc = self.0.corpus.docs.get(&c.doc_id);
            let title = doc.map(|d| d.title.clone()).unwrap_or_default();
            inputs.push(self.0.chunk_input(&title, &rec));
            langs.push(crate::retrieve::stemmer_of(doc));
            recs.push(rec);
        }
        if recs.is_empty() {
            return Ok(());
        }
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let vectors = self.0.embed_distinct(&refs, crate::types::Phase::Embed, &mut crate::ports::NoProgress).await?;
        let postings: Vec<PostingRecord> = recs
            .iter()
            .zip(inputs.iter().zip(&langs))
            .map(|(r, (input, lang))| {
                let (terms, length) = crate::index::bm25::term_frequencies(input, *lang);
                PostingRecord { id: r.id.clone(), length, terms }
            })
            .collect();
        let mut ops = Vec::new();
        for ((r, v), p) in recs.iter().zip(&vectors).zip(&postings) {
            ops.push(Op::Put(Record::Chunk(r.clone())));
            ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&r.id, "chunks", v))));
            ops.push(Op::Put(Record::Posting(p.clone())));
        }
        // The stored index segments saw the old vectors: these chunks are changed there.
        let ids: Vec<ChunkId> = recs.iter().map(|r| r.id.clone()).collect();
        let delta = self.0.next_delta(&ids, &ids, self.0.corpus.docs.len());
        ops.extend(delta.as_ref().map(|(op, _)| op.clone()));
        self.0.commit(ops).await?;
        self.0.set_delta(delta.map(|(_, d)| d));
        for ((r, v), p) in recs.into_iter().zip(vectors).zip(postings) {
            if let Some(slot) = self.0.slots.get(&r.id) {
                self.0.vectors.insert(slot, &v);
                if let Some(old) = self.0.corpus.postings.get(&r.id) {
                    self.0.bm25.remove(slot, &old.terms);
                }
                self.0.bm25.insert(slot, &p.terms, p.length);
            }
            self.0.corpus.postings.insert(r.id.clone(), p);
            self.0.corpus.chunks.insert(r.id.clone(), r);
        }
        Ok(())
    }
}
