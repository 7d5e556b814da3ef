//! Writes: add (parse, chunk, embed, one atomic commit, then the parts apply it), remove, clear —
//! one write path over either residency of a knowledge base's parts ([`Residency`]).
use std::collections::HashSet;

use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{InputError, Result};
use crate::graph::mindmap;
use crate::graph::{GraphParams, GraphPlan, NewMap, NodeSource, PseudoGraph, node_inputs, node_sources};
use crate::index::bm25::term_frequencies;
use crate::index::segment::{Delta, QuestionDelta};
use crate::ports::{Clock, Collection, Op, Progress, Record, Store};
use crate::schema::*;
use crate::text;
use crate::types::*;
use std::collections::HashMap;

use super::input::{check_lang, check_tags};
use super::{Engine, check_id};

/// A document as its mind map is built from: id, title, and each chunk's heading path and text
/// in order.
pub(super) struct MapSource<'a> {
    pub doc_id: &'a str,
    pub title: &'a str,
    pub chunks: Vec<(Vec<String>, String)>,
}

/// An `add` batch validated, parsed and chunked against the engine as it stood
/// ([`Engine::plan_add`]), waiting for its vectors ([`embed_add`]).
pub(crate) struct AddPlan {
    pub(super) report: AddReport,
    /// (record, chunks) of the documents to write.
    pub(super) pending: Vec<(DocumentRecord, Vec<text::Chunk>)>,
    /// Documents in the batch.
    pub(super) total: usize,
    /// The engine's generation the plan was made at ([`Engine::commit_add`] checks it).
    pub(super) generation: u64,
    /// Whether the pseudo-graph is built.
    pub(super) graph: bool,
    /// Whether facts are late-chunked ([`crate::graph::GraphParams::late_chunking`]).
    pub(super) late_chunking: bool,
}

impl AddPlan {
    /// Whether `other` embeds exactly what this plan embeds (the same documents with the same
    /// titles and chunks, the same graph switches), so this plan's vectors serve it: a plan made
    /// again after a conflict usually does, since the other write touched other documents.
    pub(crate) fn same_input(&self, other: &AddPlan) -> bool {
        self.graph == other.graph
            && self.late_chunking == other.late_chunking
            && self.pending.len() == other.pending.len()
            && self.pending.iter().zip(&other.pending).all(|((a, x), (b, y))| a.id == b.id && a.title == b.title && x == y)
    }
}

/// The vectors of an [`AddPlan`]: its chunks', and its structural mind maps with their nodes'.
pub(crate) struct AddVectors {
    pub(super) chunks: Vec<Vec<f32>>,
    pub(super) maps: Vec<mindmap::MindMap>,
    /// Node vectors of every map, in map order ([`node_inputs`] order within each).
    pub(super) nodes: Vec<Vec<f32>>,
    /// Nodes of each map.
    pub(super) node_counts: Vec<usize>,
}

/// Step 2 of an `add`, which needs no engine: the forward passes of a plan's chunks (progress
/// phase `embed`) and of its mind maps' nodes (phase `graph`), with `embedder` in calls of
/// `batch` texts. With late chunking ([`crate::graph::GraphParams::late_chunking`]) the facts'
/// vectors come from their chunks' passes and only the topics and routes (and facts the path
/// could not pool) get passes of their own. The page runs this step without holding the engine,
/// so searches answer meanwhile.
///
/// Errors: the embedder's.
pub(crate) async fn embed_add<E: Embedder>(embedder: &E, batch: usize, plan: &AddPlan, progress: &mut dyn Progress) -> Result<AddVectors> {
    let inputs: Vec<&str> = plan.pending.iter().flat_map(|(_, cs)| cs.iter().map(|c| c.embed_input.as_str())).collect();
    if !plan.graph || plan.pending.is_empty() {
        let chunks = super::embed_distinct(embedder, batch, &inputs, crate::types::Phase::Embed, progress).await?;
        return Ok(AddVectors { chunks, maps: Vec::new(), nodes: Vec::new(), node_counts: Vec::new() });
    }
    let maps: Vec<mindmap::MindMap> = plan.pending.iter().map(|(rec, cs)| mindmap::structural(&rec.title, &map_chunks(cs))).collect();
    let sources: Vec<Vec<NodeSource<'_>>> = maps.iter().map(node_sources).collect();
    // Late chunking: each fact as a pool of its chunk (the heading prefix and its sentence).
    let mut pooled: HashMap<(usize, usize), Vec<f32>> = HashMap::new();
    let chunks = if plan.late_chunking {
        let (pools, owners) = fact_pools(&plan.pending, &sources);
        match super::embed_late_distinct(embedder, batch, &inputs, &pools, crate::types::Phase::Embed, progress).await? {
            Some(mut late) => {
                // Each pool's vector moved to its node (a fact owns one pool).
                for (node, flat, k) in owners {
                    if let Some(v) = late.get_mut(flat).and_then(|(_, ps)| ps.get_mut(k)).and_then(Option::take) {
                        pooled.insert(node, v);
                    }
                }
                late.into_iter().map(|(whole, _)| whole).collect()
            }
            None => super::embed_distinct(embedder, batch, &inputs, crate::types::Phase::Embed, progress).await?,
        }
    } else {
        super::embed_distinct(embedder, batch, &inputs, crate::types::Phase::Embed, progress).await?
    };
    // The other nodes: a pass each (distinct texts once).
    let pooled_ref = &pooled;
    let rest: Vec<&str> = sources
        .iter()
        .enumerate()
        .flat_map(|(i, src)| src.iter().enumerate().filter(move |(j, _)| !pooled_ref.contains_key(&(i, *j))).map(|(_, (t, _))| t.as_str()))
        .collect();
    let mut own = super::embed_distinct(embedder, batch, &rest, crate::types::Phase::Graph, progress).await?.into_iter();
    let mut nodes = Vec::with_capacity(sources.iter().map(Vec::len).sum());
    for (i, src) in sources.iter().enumerate() {
        for j in 0..src.len() {
            nodes.push(pooled.remove(&(i, j)).or_else(|| own.next()).unwrap_or_default());
        }
    }
    let node_counts = sources.iter().map(Vec::len).collect();
    Ok(AddVectors { chunks, maps, nodes, node_counts })
}

/// A late-chunked fact: `((document, node), chunk, pool)`, its node and which pool of which chunk
/// (flattened over the batch) gives its vector.
type FactPool = ((usize, usize), usize, usize);

/// Late chunking's pools: for each chunk of `pending` (flattened in order) the byte ranges of
/// each of its facts in its `embed_input` (the heading prefix, then the fact's sentence, found
/// in order); and for each fact node `((document, node), chunk, pool)`. A fact not found
/// verbatim after the previous one gets no pool (its own pass).
fn fact_pools(
    pending: &[(DocumentRecord, Vec<text::Chunk>)],
    sources: &[Vec<NodeSource<'_>>],
) -> (Vec<crate::embed::LatePools>, Vec<FactPool>) {
    let mut first = Vec::with_capacity(pending.len());
    let mut n = 0;
    for (_, cs) in pending {
        first.push(n);
        n += cs.len();
    }
    let mut pools: Vec<crate::embed::LatePools> = vec![Vec::new(); n];
    let mut cursor: Vec<Option<usize>> = vec![None; n];
    let mut owners = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        for (j, (_, fact)) in src.iter().enumerate() {
            let Some((o, label)) = fact else { continue };
            let (flat, Some(c)) = (first[i] + *o as usize, pending[i].1.get(*o as usize)) else { continue };
            // The chunk's text ends its embed_input, after the prefix and a newline.
            let Some(text_at) =
                c.embed_input.len().checked_sub(c.text.len()).filter(|&at| c.embed_input.get(at..) == Some(c.text.as_str()))
            else {
                continue;
            };
            let from = cursor[flat].unwrap_or(text_at);
            let Some(at) = c.embed_input.get(from..).and_then(|rest| rest.find(label)).map(|k| from + k) else { continue };
            cursor[flat] = Some(at + label.len());
            let mut ranges = Vec::with_capacity(2);
            if text_at > 0 {
                ranges.push((0, text_at.saturating_sub(1)));
            }
            ranges.push((at, at + label.len()));
            pools[flat].push(ranges);
            owners.push(((i, j), flat, pools[flat].len() - 1));
        }
    }
    (pools, owners)
}

/// What planning an `add` reads besides the batch: the embedder (its token counter and limit),
/// the options, the clock, and the generation the plan is made at.
pub(super) struct Planner<'a, E: Embedder> {
    pub embedder: &'a E,
    pub config: &'a Config,
    pub clock: &'a dyn Clock,
    pub generation: u64,
}

/// A document's `sourceHash`: hex SHA-256 of its format, title and text, and of its tags and
/// metadata when it has any, and of its language when it has one (a document re-added with new
/// ones is replaced; one without them hashes as before they existed).
fn source_hash(d: &DocumentInput, format: Format) -> String {
    let mut h = Sha256::new();
    h.update(format!("{format:?}\0{}\0", d.title.as_deref().unwrap_or("")).as_bytes());
    h.update(d.text.as_bytes());
    if !d.tags.is_empty() || !d.meta.is_empty() {
        let tags: std::collections::BTreeSet<String> = d.tags.iter().map(|t| normalize_tag(t)).collect();
        h.update(serde_json::json!({"tags": tags, "meta": d.meta}).to_string().as_bytes());
    }
    if let Some(lang) = d.lang.as_deref().and_then(primary_subtag) {
        h.update(format!("\0lang\0{lang}").as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>()
}

impl<E: Embedder> Planner<'_, E> {
    /// The batch's input errors, before anything is parsed: an id empty or too long, twice in
    /// the batch, a document over `max_document_bytes`, bad tags.
    fn check_batch(&self, docs: &[DocumentInput]) -> Result<()> {
        let mut seen = HashSet::new();
        for d in docs {
            check_id(&d.id)?;
            if !seen.insert(d.id.as_str()) {
                return Err(InputError::DuplicateId { id: d.id.clone() }.into());
            }
            if d.text.len() > self.config.max_document_bytes {
                return Err(InputError::TooLarge { id: d.id.clone(), bytes: d.text.len(), limit: self.config.max_document_bytes }.into());
            }
            check_tags(d)?;
            check_lang(d)?;
        }
        Ok(())
    }

    /// Step 1 of an `add`: validates the batch, skips unchanged documents (`stored` gives a stored
    /// document's `sourceHash`), parses and chunks the others (progress phase `parse`).
    ///
    /// Errors: the input errors of [`Engine::add`].
    pub(super) fn plan<'s>(
        &self,
        docs: Vec<DocumentInput>,
        stored: &dyn Fn(&str) -> Option<&'s str>,
        progress: &mut dyn Progress,
    ) -> Result<AddPlan> {
        self.check_batch(&docs)?;
        let mut report = AddReport::default();
        let mut pending: Vec<(DocumentRecord, Vec<text::Chunk>)> = Vec::new();
        let total = docs.len();
        for (i, d) in docs.into_iter().enumerate() {
            let format = text::resolve_format(d.format, d.url.as_deref(), &d.text);
            let hash = source_hash(&d, format);
            if stored(&d.id) == Some(hash.as_str()) {
                report.unchanged.push(d.id);
                continue;
            }
            let mut parsed = text::parse(&d.text, format)?;
            let given = d.title.as_ref().filter(|t| !t.trim().is_empty());
            // The title is copied into every chunk's inputs, the topic and each hit: cut at
            // MAX_TITLE_CHARS; a longer given title is also the document's first text block.
            let (title, cut) = text::cut_title(given.cloned().or(parsed.title.take()).unwrap_or_else(|| d.id.clone()));
            if let Some(full) = given.filter(|_| cut) {
                parsed.blocks.insert(0, text::title_block(full));
            }
            let chunks = text::chunk(
                &title,
                &parsed.blocks,
                self.embedder.token_counter(),
                self.config.max_chunk_tokens.min(self.embedder.max_tokens()),
                self.config.target_chunk_tokens,
            );
            if chunks.is_empty() {
                return Err(InputError::EmptyDocument { id: d.id }.into());
            }
            let rec = DocumentRecord {
                id: d.id.clone(),
                title,
                url: d.url,
                source_hash: hash,
                added_at: self.clock.now_ms(),
                chunk_count: chunks.len() as u32,
                status: "indexed".into(),
                mind_map: None,
                tags: {
                    let tags: std::collections::BTreeSet<String> = d.tags.iter().map(|t| normalize_tag(t)).collect();
                    tags.into_iter().collect()
                },
                auto_tags: Vec::new(),
                tagged: false,
                meta: d.meta.clone(),
                lang: d.lang.as_deref().and_then(primary_subtag),
            };
            if stored(&d.id).is_some() {
                report.replaced.push(d.id);
            } else {
                report.added.push(d.id);
            }
            pending.push((rec, chunks));
            progress.report(ProgressEvent { phase: crate::types::Phase::Parse, done: i + 1, total });
        }
        Ok(AddPlan {
            report,
            pending,
            total,
            generation: self.generation,
            graph: self.config.graph.enabled,
            late_chunking: self.config.graph.late_chunking,
        })
    }
}

/// The graph plan of an `add` against `graph`: the documents it replaces removed, then the new
/// mind maps fused (when it built them).
pub(super) fn graph_plan(
    graph: &PseudoGraph,
    replaced: &[String],
    pending: &[(DocumentRecord, Vec<text::Chunk>)],
    vectors: &AddVectors,
    p: &GraphParams,
) -> GraphPlan {
    let mut plan = graph.plan_remove(replaced);
    if vectors.maps.is_empty() {
        return plan;
    }
    let replacing: HashSet<String> = replaced.iter().cloned().collect();
    let chunk_ids: Vec<Vec<String>> = pending.iter().map(|(rec, cs)| (0..cs.len()).map(|o| chunk_id(&rec.id, o)).collect()).collect();
    let mut at = 0;
    let mut new_maps = Vec::new();
    for (i, (rec, _)) in pending.iter().enumerate() {
        let n = vectors.node_counts.get(i).copied().unwrap_or(0);
        let Some(vs) = vectors.nodes.get(at..at + n) else { break };
        new_maps.push(NewMap { doc_id: &rec.id, chunk_ids: &chunk_ids[i], map: &vectors.maps[i], vectors: vs });
        at += n;
    }
    plan.extend(graph.plan_add(&new_maps, &replacing, p));
    plan
}

/// The store writes of an `add`'s documents (before the graph's, the delta's and memory's), and
/// what they change.
pub(super) struct AddWrite {
    pub ops: Vec<Op>,
    /// Chunks deleted (those of the documents replaced).
    pub gone: Vec<ChunkId>,
    /// The new chunks, with their postings and vectors.
    pub chunks: Vec<(ChunkRecord, PostingRecord, Vec<f32>)>,
    /// The documents written.
    pub docs: Vec<DocumentRecord>,
}

/// [`AddWrite`] of `pending` with its chunks' `vectors` (in order): `old` gives the stored chunks
/// of a document, `questions` how many atomic questions a stored chunk has.
pub(super) fn add_write(
    pending: Vec<(DocumentRecord, Vec<text::Chunk>)>,
    vectors: Vec<Vec<f32>>,
    old: &dyn Fn(&str) -> Vec<ChunkId>,
    questions: &dyn Fn(&str) -> usize,
) -> AddWrite {
    let mut w = AddWrite { ops: Vec::new(), gone: Vec::new(), chunks: Vec::new(), docs: Vec::new() };
    let mut vi = vectors.into_iter();
    for (rec, chunks) in pending {
        for cid in old(&rec.id) {
            chunk_deletes(&cid, questions(&cid), &mut w.ops);
            w.gone.push(cid);
        }
        for (ordinal, c) in chunks.into_iter().enumerate() {
            let id = chunk_id(&rec.id, ordinal);
            let v = vi.next().unwrap_or_default();
            // BM25 indexes the heading prefix (title, headings) with the text, as a field.
            let (terms, length) = term_frequencies(&c.embed_input, crate::retrieve::stemmer_of(Some(&rec)));
            let cr = ChunkRecord {
                id: id.clone(),
                doc_id: rec.id.clone(),
                ordinal: ordinal as u32,
                heading_path: c.heading_path,
                text: c.text,
                token_count: c.token_count as u32,
                forward_summary: None,
            };
            let pr = PostingRecord { id: id.clone(), length, terms };
            w.ops.push(Op::Put(Record::Chunk(cr.clone())));
            w.ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&id, "chunks", &v))));
            w.ops.push(Op::Put(Record::Posting(pr.clone())));
            w.chunks.push((cr, pr, v));
        }
        w.ops.push(Op::Put(Record::Document(rec.clone())));
        w.docs.push(rec);
    }
    w
}

/// The store writes of a `remove`: its report and ops, and the chunks deleted. `stored` says
/// whether a document is stored; `old` and `questions` as for [`add_write`].
pub(super) fn remove_write(
    ids: &[String],
    stored: &dyn Fn(&str) -> bool,
    old: &dyn Fn(&str) -> Vec<ChunkId>,
    questions: &dyn Fn(&str) -> usize,
) -> (RemoveReport, Vec<Op>, Vec<ChunkId>) {
    let mut report = RemoveReport::default();
    let mut ops = Vec::new();
    let mut gone: Vec<ChunkId> = Vec::new();
    for id in ids {
        if report.removed.contains(id) {
            continue;
        }
        if !stored(id) {
            if !report.unknown.contains(id) {
                report.unknown.push(id.clone());
            }
            continue;
        }
        for cid in old(id) {
            chunk_deletes(&cid, questions(&cid), &mut ops);
            gone.push(cid);
        }
        ops.push(Op::Delete(Collection::Documents, id.clone()));
        report.removed.push(id.clone());
    }
    (report, ops, gone)
}

/// Deletes of a stored chunk: its record, vector and postings, and its `questions` atomic
/// questions with their vectors.
fn chunk_deletes(cid: &str, questions: usize, ops: &mut Vec<Op>) {
    for c in [Collection::Chunks, Collection::Vectors, Collection::Postings] {
        ops.push(Op::Delete(c, cid.to_string()));
    }
    if questions > 0 {
        ops.push(Op::Delete(Collection::Questions, cid.to_string()));
        for i in 0..questions {
            ops.push(Op::Delete(Collection::Vectors, QuestionKey::new(cid, i).store_id()));
        }
    }
}

/// `(heading path, text)` of each chunk, as mind maps are built from.
fn map_chunks(cs: &[text::Chunk]) -> Vec<(Vec<String>, String)> {
    cs.iter().map(|c| (c.heading_path.clone(), c.text.clone())).collect()
}

/// How a knowledge base's parts are held, as a write sees them: what it reads before it commits,
/// and how it takes a committed write. Implemented once per residency — [`Engine`] (every part
/// resident in memory) and the lazy reader (`super::lazy`: parts read from the store on
/// demand). [`plan_add`], [`commit_add`] and [`remove`] are the one write path over either: plan
/// → embed ([`embed_add`], the engine not held) → one write set → one guarded commit
/// ([`crate::ports::commit_guarded`]) → [`Residency::apply`].
#[allow(async_fn_in_trait)] // webrag runs on one thread (a worker, or a CLI's block_on)
pub(super) trait Residency<S: Store, E: Embedder> {
    fn store(&self) -> &S;
    fn embedder(&self) -> &E;
    fn config(&self) -> &Config;
    fn clock(&self) -> &dyn Clock;
    /// The store's generation the view is of.
    fn view_generation(&self) -> u64;
    /// How many documents are stored.
    fn document_count(&self) -> usize;
    /// The languages the documents are stemmed in ([`super::stored_languages`]).
    fn languages(&self) -> &[crate::text::Language];
    /// The `sourceHash` of each of the documents `ids` that is stored.
    async fn source_hashes(&self, ids: &[String]) -> Result<HashMap<DocId, String>>;
    /// The live chunks of the stored documents `ids`.
    fn chunks_of(&self, ids: &[String]) -> HashMap<DocId, Vec<ChunkId>>;
    /// How many atomic questions each of `chunks` has (those with none left out).
    async fn question_counts(&self, chunks: &[ChunkId]) -> Result<HashMap<ChunkId, usize>>;
    /// The pseudo-graph (read first where it is not resident).
    async fn graph_for_write(&mut self) -> Result<&PseudoGraph>;
    /// The next delta of the stored index segments after a write that deletes `gone` (chunks of
    /// the documents `old`) and adds `added`, leaving `documents` documents; `None` when the store
    /// holds no base.
    fn next_delta(&self, old: &HashMap<DocId, Vec<ChunkId>>, gone: &[ChunkId], added: &[ChunkId], documents: usize) -> Option<(Op, Delta)>;
    /// The question delta of the stored index segments after atomic questions are written for
    /// `chunks`, with its `Put`; `None` when the store holds no base.
    fn next_question_delta(&self, chunks: &[ChunkId]) -> Option<(Op, QuestionDelta)>;
    /// The stored records of the documents `ids` that exist.
    async fn document_records(&self, ids: &[String]) -> Result<HashMap<DocId, DocumentRecord>>;
    /// The memory entries learned from any of the `gone` chunks (they go with them).
    async fn memory_from(&self, gone: &[ChunkId]) -> Result<HashSet<String>>;
    /// Commits `ops` guarded by the view's generation ([`crate::ports::commit_guarded`]).
    async fn commit_ops(&mut self, ops: Vec<Op>) -> Result<()>;
    /// Takes a committed write: each part mirrors it in memory or follows its stored delta.
    ///
    /// Errors: [`crate::error::StoreError::Backend`] when the part cannot follow (it must be
    /// read again).
    fn apply(&mut self, change: Change) -> Result<()>;
}

/// A committed write, as the parts take it ([`Residency::apply`]).
#[derive(Default)]
pub(super) struct Change {
    /// Documents whose chunks were deleted (replaced or removed).
    pub unindexed: Vec<DocId>,
    /// Those chunks.
    pub gone: Vec<ChunkId>,
    /// The new chunks, with their postings and vectors.
    pub chunks: Vec<(ChunkRecord, PostingRecord, Vec<f32>)>,
    /// The documents written.
    pub docs: Vec<DocumentRecord>,
    /// The index segments' delta committed (`None`: no base).
    pub delta: Option<Delta>,
    /// Memory entries deleted.
    pub memory: HashSet<String>,
    /// The pseudo-graph's change.
    pub graph: GraphPlan,
    /// Atomic questions written: each chunk's questions with their embeddings (replacing any the
    /// chunk had).
    pub questions: Vec<(ChunkId, Vec<String>, Vec<Vec<f32>>)>,
    /// The question delta committed with them (`None`: no base).
    pub question_delta: Option<QuestionDelta>,
    /// The stemmed languages after the write, when it added one ([`super::grown_languages`]).
    pub languages: Option<Vec<crate::text::Language>>,
}

/// Step 1 of an `add`: validates the batch, skips unchanged documents, parses and chunks the
/// others (progress phase `parse`) — [`Planner::plan`] against the stored documents.
///
/// Errors: the input errors of [`Engine::add`]; store errors.
pub(super) async fn plan_add<S: Store, E: Embedder>(
    kb: &impl Residency<S, E>,
    docs: Vec<DocumentInput>,
    progress: &mut dyn Progress,
) -> Result<AddPlan> {
    let stored = kb.source_hashes(&docs.iter().map(|d| d.id.clone()).collect::<Vec<_>>()).await?;
    let planner = Planner { embedder: kb.embedder(), config: kb.config(), clock: kb.clock(), generation: kb.view_generation() };
    planner.plan(docs, &|id| stored.get(id).map(String::as_str), progress)
}

/// Step 3 of an `add`: fuses the plan's mind maps into the pseudo-graph (progress phase
/// `store`), commits the batch to the store in one transaction (with the index segments' delta
/// and the memory entries learned from replaced chunks deleted), then the parts apply it (phase
/// `done`).
///
/// Errors: [`crate::error::StoreError::Conflict`] when the knowledge base committed or was read
/// again since the plan was made (nothing is written: plan again); store errors.
pub(super) async fn commit_add<S: Store, E: Embedder>(
    kb: &mut impl Residency<S, E>,
    plan: AddPlan,
    vectors: AddVectors,
    progress: &mut dyn Progress,
) -> Result<AddReport> {
    let AddPlan { mut report, pending, total, generation, .. } = plan;
    if generation != kb.view_generation() {
        return Err(crate::error::StoreError::Conflict { expected: generation, found: kb.view_generation() }.into());
    }
    let old = kb.chunks_of(&report.replaced);
    let questions = kb.question_counts(&old.values().flatten().cloned().collect::<Vec<_>>()).await?;
    // The graph plan against the current graph (documents being replaced are removed first, in
    // the same commit).
    let params = kb.config().graph;
    let graph = graph_plan(kb.graph_for_write().await?, &report.replaced, &pending, &vectors, &params);
    // The plan holds the nodes' vectors now: the batch's are freed.
    let AddVectors { chunks: chunk_vectors, maps, nodes, node_counts } = vectors;
    drop((maps, nodes, node_counts));
    let old_of = |id: &str| old.get(id).cloned().unwrap_or_default();
    let questions_of = |cid: &str| questions.get(cid).copied().unwrap_or(0);
    let AddWrite { mut ops, gone, chunks, docs } = add_write(pending, chunk_vectors, &old_of, &questions_of);
    ops.extend(graph.ops_kept(&|c| kb.store().keeps(c)));
    let languages = super::grown_languages(kb.languages(), &docs).map(|(op, langs)| {
        ops.push(op);
        langs
    });
    if ops.is_empty() {
        progress.report(ProgressEvent { phase: crate::types::Phase::Done, done: total, total });
        return Ok(report);
    }
    let added: Vec<ChunkId> = chunks.iter().map(|(c, _, _)| c.id.clone()).collect();
    let documents = kb.document_count().saturating_add(report.added.len());
    progress.report(ProgressEvent { phase: crate::types::Phase::Store, done: 0, total: 1 });
    let delta = commit_write(kb, ops, &old, &gone, &added, documents).await?;
    report.chunks = chunks.len();
    let (delta, memory) = delta;
    kb.apply(Change { unindexed: report.replaced.clone(), gone, chunks, docs, delta, memory, graph, languages, ..Change::default() })?;
    progress.report(ProgressEvent { phase: crate::types::Phase::Done, done: total, total });
    Ok(report)
}

/// Removes documents (their chunks, vectors, postings and atomic questions, the memory entries
/// learned from them, their mind maps' share of the pseudo-graph) in one atomic batch. Unknown
/// ids are reported in `unknown`, not an error.
///
/// Errors: store errors ([`crate::error::StoreError::Conflict`]: nothing written).
pub(super) async fn remove<S: Store, E: Embedder>(kb: &mut impl Residency<S, E>, ids: &[String]) -> Result<RemoveReport> {
    let stored = kb.source_hashes(ids).await?;
    let present: Vec<String> = stored.keys().cloned().collect();
    let old = kb.chunks_of(&present);
    let questions = kb.question_counts(&old.values().flatten().cloned().collect::<Vec<_>>()).await?;
    let stored_of = |id: &str| stored.contains_key(id);
    let old_of = |id: &str| old.get(id).cloned().unwrap_or_default();
    let questions_of = |cid: &str| questions.get(cid).copied().unwrap_or(0);
    let (report, mut ops, gone) = remove_write(ids, &stored_of, &old_of, &questions_of);
    let graph = kb.graph_for_write().await?.plan_remove(&report.removed);
    ops.extend(graph.ops_kept(&|c| kb.store().keeps(c)));
    if ops.is_empty() {
        return Ok(report);
    }
    let documents = kb.document_count().saturating_sub(report.removed.len());
    let (delta, memory) = commit_write(kb, ops, &old, &gone, &[], documents).await?;
    kb.apply(Change { unindexed: report.removed.clone(), gone, delta, memory, graph, ..Change::default() })?;
    Ok(report)
}

/// Commits a write's `ops` with the index segments' next delta and the deletes of the memory
/// entries learned from the `gone` chunks; returns both for [`Residency::apply`].
///
/// Errors: store errors ([`crate::error::StoreError::Conflict`]: nothing written).
async fn commit_write<S: Store, E: Embedder>(
    kb: &mut impl Residency<S, E>,
    mut ops: Vec<Op>,
    old: &HashMap<DocId, Vec<ChunkId>>,
    gone: &[ChunkId],
    added: &[ChunkId],
    documents: usize,
) -> Result<(Option<Delta>, HashSet<String>)> {
    let delta = kb.next_delta(old, gone, added, documents);
    let delta = delta.map(|(op, d)| {
        ops.push(op);
        d
    });
    // Memory learned from a deleted chunk goes with it (a write that deletes none reads none).
    let memory = if gone.is_empty() { HashSet::new() } else { kb.memory_from(gone).await? };
    ops.extend(memory.iter().map(|id| Op::Delete(Collection::Memory, id.clone())));
    kb.commit_ops(ops).await?;
    Ok((delta, memory))
}

impl<S: Store, E: Embedder> Residency<S, E> for Engine<S, E> {
    fn store(&self) -> &S {
        &self.store
    }

    fn embedder(&self) -> &E {
        &self.embedder
    }

    fn config(&self) -> &Config {
        &self.config
    }

    fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    fn view_generation(&self) -> u64 {
        self.generation.get()
    }

    fn languages(&self) -> &[crate::text::Language] {
        &self.languages
    }

    fn document_count(&self) -> usize {
        self.corpus.docs.len()
    }

    async fn source_hashes(&self, ids: &[String]) -> Result<HashMap<DocId, String>> {
        Ok(ids.iter().filter_map(|id| Some((id.clone(), self.corpus.docs.get(id)?.source_hash.clone()))).collect())
    }

    fn chunks_of(&self, ids: &[String]) -> HashMap<DocId, Vec<ChunkId>> {
        ids.iter().map(|id| (id.clone(), self.corpus.doc_chunks.get(id).cloned().unwrap_or_default())).collect()
    }

    async fn question_counts(&self, chunks: &[ChunkId]) -> Result<HashMap<ChunkId, usize>> {
        Ok(chunks.iter().filter_map(|c| Some((c.clone(), self.ask.atoms.get(c)?.len()))).collect())
    }

    async fn graph_for_write(&mut self) -> Result<&PseudoGraph> {
        Ok(&self.graph)
    }

    fn next_delta(
        &self,
        _old: &HashMap<DocId, Vec<ChunkId>>,
        gone: &[ChunkId],
        added: &[ChunkId],
        documents: usize,
    ) -> Option<(Op, Delta)> {
        self.next_delta(gone, added, documents)
    }

    fn next_question_delta(&self, chunks: &[ChunkId]) -> Option<(Op, QuestionDelta)> {
        self.next_question_delta(chunks)
    }

    async fn document_records(&self, ids: &[String]) -> Result<HashMap<DocId, DocumentRecord>> {
        Ok(ids.iter().filter_map(|id| Some((id.clone(), self.corpus.docs.get(id)?.clone()))).collect())
    }

    async fn memory_from(&self, gone: &[ChunkId]) -> Result<HashSet<String>> {
        Ok(self.ask.memory_from(gone))
    }

    async fn commit_ops(&mut self, ops: Vec<Op>) -> Result<()> {
        self.commit(ops).await
    }

    /// Mirrors the write in memory: the delta, memory, the documents' chunks out of the indexes
    /// and the new ones in, the documents, the pseudo-graph, the atomic questions.
    fn apply(&mut self, change: Change) -> Result<()> {
        let Change { unindexed, chunks, docs, delta, memory, graph, questions, question_delta, languages, .. } = change;
        self.set_delta(delta);
        if let Some(langs) = languages {
            self.languages = langs;
        }
        self.ask.drop_memory(&memory);
        for id in &unindexed {
            self.unindex_doc(id);
        }
        for (c, p, v) in chunks {
            self.index_chunk(c, p, &v);
        }
        for d in docs {
            self.corpus.docs.insert(d.id.clone(), d);
        }
        self.graph.apply(graph);
        for (c, qs, vs) in questions {
            self.ask.index_questions(&c, qs, &vs);
        }
        self.set_question_delta(question_delta);
        Ok(())
    }
}

impl<S: Store, E: Embedder> Engine<S, E> {
    /// Adds documents as one atomic batch.
    ///
    /// Per document: unchanged (same id and same hash of format, title and text) → nothing is
    /// written; changed → its old chunks, vectors and postings are replaced in the same
    /// transaction; new → inserted. The whole batch is validated, parsed, chunked and embedded
    /// before anything is written. In three steps: [`plan_add`], [`embed_add`] (which the page
    /// runs without holding the engine), [`commit_add`].
    ///
    /// Errors (nothing is written): [`InputError::DuplicateId`], [`InputError::InvalidId`],
    /// [`InputError::TooLarge`] (over `max_document_bytes`), [`InputError::EmptyDocument`] (no
    /// text after parsing), model and store errors.
    pub async fn add(&mut self, docs: Vec<DocumentInput>, progress: &mut dyn Progress) -> Result<AddReport> {
        let plan = self.plan_add(docs, progress).await?;
        let vectors = embed_add(&self.embedder, self.embed_batch(), &plan, progress).await?;
        self.commit_add(plan, vectors, progress).await
    }

    /// Step 1 of [`Engine::add`] ([`plan_add`]).
    ///
    /// Errors: the input errors of [`Engine::add`].
    pub(crate) async fn plan_add(&self, docs: Vec<DocumentInput>, progress: &mut dyn Progress) -> Result<AddPlan> {
        plan_add(self, docs, progress).await
    }

    /// Step 3 of [`Engine::add`] ([`commit_add`]).
    ///
    /// Errors: [`crate::error::StoreError::Conflict`] when the engine committed or read the store
    /// again since the plan was made (nothing is written: plan again); store errors.
    pub(crate) async fn commit_add(&mut self, plan: AddPlan, vectors: AddVectors, progress: &mut dyn Progress) -> Result<AddReport> {
        commit_add(self, plan, vectors, progress).await
    }

    /// The structural mind maps of `docs`, their node embeddings (progress phase `graph`), and
    /// the plan that fuses them into the pseudo-graph (PG-RAG §3; docs/pseudo-graph.md).
    pub(super) async fn plan_mind_maps(
        &self,
        docs: &[MapSource<'_>],
        replacing: &HashSet<String>,
        progress: &mut dyn Progress,
    ) -> Result<GraphPlan> {
        let maps: Vec<mindmap::MindMap> = docs.iter().map(|d| mindmap::structural(d.title, &d.chunks)).collect();
        let inputs: Vec<Vec<String>> = maps.iter().map(node_inputs).collect();
        let flat: Vec<&str> = inputs.iter().flatten().map(|s| s.as_str()).collect();
        let node_vecs = self.embed_distinct(&flat, crate::types::Phase::Graph, progress).await?;
        let chunk_ids: Vec<Vec<String>> = docs.iter().map(|d| (0..d.chunks.len()).map(|o| chunk_id(d.doc_id, o)).collect()).collect();
        let mut at = 0;
        let mut new_maps = Vec::new();
        for (i, d) in docs.iter().enumerate() {
            let n = inputs[i].len();
            new_maps.push(NewMap { doc_id: d.doc_id, chunk_ids: &chunk_ids[i], map: &maps[i], vectors: &node_vecs[at..at + n] });
            at += n;
        }
        Ok(self.graph.plan_add(&new_maps, replacing, &self.config.graph))
    }

    /// Removes documents ([`remove`]). Unknown ids are reported in `unknown`, not an error.
    ///
    /// Errors: store errors ([`crate::error::StoreError::Conflict`]: nothing written).
    pub async fn remove(&mut self, ids: &[String]) -> Result<RemoveReport> {
        remove(self, ids).await
    }

    /// Deletes everything (the model metadata is written again).
    pub async fn clear(&mut self) -> Result<()> {
        let next = super::clear_store(&self.store, self.generation.get()).await?;
        self.generation.set(next);
        self.write_meta().await?;
        self.reset_indexes();
        Ok(())
    }
}
