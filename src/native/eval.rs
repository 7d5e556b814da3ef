//! Retrieval evaluation, HippoRAG-style: the pool is every passage of the corpus file; recall@k
//! is the share of a question's gold passages among the top k *passages* (chunk hits are mapped
//! to their passage, first occurrence wins), averaged over questions.
use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::config::{Bm25Idf, Config};
use crate::embed::Embedder;
use crate::engine::{Engine, SearchOptions};
use crate::error::Result;
use crate::ports::{FixedClock, MemoryStore, NoProgress, Store};
use crate::types::{DocumentInput, Format, SearchMode};

/// A question set over a passage pool.
#[derive(Debug, Clone)]
pub struct EvalSet {
    /// `hotpotqa` or `musique`.
    pub name: String,
    /// `(title, text)` per passage.
    pub passages: Vec<(String, String)>,
    /// `(question, gold passage indices)`.
    pub questions: Vec<(String, Vec<usize>)>,
    /// Each question's gold answers (the answer, then MuSiQue's aliases), as `questions`.
    pub answers: Vec<Vec<String>>,
    /// Each question's own passages (HotpotQA's `context`, MuSiQue's `paragraphs`: the gold ones
    /// and their distractors), as `questions`.
    pub contexts: Vec<Vec<usize>>,
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string())
}

/// Loads `hotpotqa/train100{,_corpus}.json`: gold = titles in `supporting_facts`.
pub fn load_hotpotqa(dir: &Path) -> std::io::Result<EvalSet> {
    let corpus: Value = serde_json::from_slice(&std::fs::read(dir.join("train100_corpus.json"))?)?;
    let qs: Value = serde_json::from_slice(&std::fs::read(dir.join("train100.json"))?)?;
    let mut passages = Vec::new();
    let mut by_title = HashMap::new();
    for (title, sents) in corpus.as_object().ok_or_else(|| bad("corpus is not an object"))? {
        let text: String = sents.as_array().ok_or_else(|| bad("sentences"))?.iter().filter_map(|s| s.as_str()).collect();
        by_title.insert(title.clone(), passages.len());
        passages.push((title.clone(), text));
    }
    let mut questions = Vec::new();
    let mut answers = Vec::new();
    let mut contexts = Vec::new();
    for q in qs.as_array().ok_or_else(|| bad("questions"))? {
        answers.push(gold_answers(q));
        let context = q["context"].as_array().into_iter().flatten().filter_map(|c| c[0].as_str().and_then(|t| by_title.get(t).copied()));
        contexts.push(context.collect());
        let mut gold: Vec<usize> = q["supporting_facts"]
            .as_array()
            .ok_or_else(|| bad("supporting_facts"))?
            .iter()
            .filter_map(|f| f[0].as_str().and_then(|t| by_title.get(t).copied()))
            .collect();
        gold.sort();
        gold.dedup();
        questions.push((q["question"].as_str().unwrap_or_default().to_string(), gold));
    }
    Ok(EvalSet { name: "hotpotqa".into(), passages, questions, answers, contexts })
}

/// Loads `musique/train100{,_corpus}.json`: gold = `paragraphs` with `is_supporting`, matched to
/// the corpus by (title, text).
pub fn load_musique(dir: &Path) -> std::io::Result<EvalSet> {
    let corpus: Value = serde_json::from_slice(&std::fs::read(dir.join("train100_corpus.json"))?)?;
    let qs: Value = serde_json::from_slice(&std::fs::read(dir.join("train100.json"))?)?;
    let mut passages = Vec::new();
    let mut by_key = HashMap::new();
    for p in corpus.as_array().ok_or_else(|| bad("corpus is not an array"))? {
        let (t, x) = (p["title"].as_str().unwrap_or_default(), p["text"].as_str().unwrap_or_default());
        by_key.entry((t.to_string(), x.to_string())).or_insert(passages.len());
        passages.push((t.to_string(), x.to_string()));
    }
    let mut questions = Vec::new();
    let mut answers = Vec::new();
    let mut contexts = Vec::new();
    for q in qs.as_array().ok_or_else(|| bad("questions"))? {
        answers.push(gold_answers(q));
        let paragraphs = q["paragraphs"].as_array().ok_or_else(|| bad("paragraphs"))?;
        let index = |p: &&Value| {
            let key = (p["title"].as_str()?.to_string(), p["paragraph_text"].as_str()?.to_string());
            by_key.get(&key).copied()
        };
        contexts.push(paragraphs.iter().filter_map(|p| index(&p)).collect());
        let mut gold: Vec<usize> =
            paragraphs.iter().filter(|p| p["is_supporting"].as_bool() == Some(true)).filter_map(|p| index(&p)).collect();
        gold.sort();
        gold.dedup();
        questions.push((q["question"].as_str().unwrap_or_default().to_string(), gold));
    }
    Ok(EvalSet { name: "musique".into(), passages, questions, answers, contexts })
}

/// A question's `answer` and `answer_aliases` (MuSiQue), the non-empty ones.
fn gold_answers(q: &Value) -> Vec<String> {
    std::iter::once(&q["answer"])
        .chain(q["answer_aliases"].as_array().into_iter().flatten())
        .filter_map(|a| a.as_str().map(str::trim).filter(|a| !a.is_empty()).map(str::to_string))
        .collect()
}

impl EvalSet {
    /// The first `n` questions and only their own passages ([`EvalSet::contexts`], in the set's
    /// order): a smaller pool for a quick run, whose recall is not comparable with the whole set's.
    pub fn first(&self, n: usize) -> EvalSet {
        let mut keep = vec![false; self.passages.len()];
        for &i in self.contexts.iter().take(n).flatten().chain(self.questions.iter().take(n).flat_map(|(_, g)| g)) {
            if let Some(k) = keep.get_mut(i) {
                *k = true;
            }
        }
        let mut new_index = vec![usize::MAX; self.passages.len()];
        let mut passages = Vec::new();
        for (i, p) in self.passages.iter().enumerate().filter(|(i, _)| keep[*i]) {
            new_index[i] = passages.len();
            passages.push(p.clone());
        }
        let remap = |ids: &[usize]| ids.iter().filter_map(|&i| new_index.get(i).copied().filter(|&j| j != usize::MAX)).collect();
        EvalSet {
            name: self.name.clone(),
            passages,
            questions: self.questions.iter().take(n).map(|(q, g)| (q.clone(), remap(g))).collect(),
            answers: self.answers.iter().take(n).cloned().collect(),
            contexts: self.contexts.iter().take(n).map(|c| remap(c)).collect(),
        }
    }

    /// The passages as documents: id = passage index, title = passage title, plain text.
    pub fn documents(&self) -> Vec<DocumentInput> {
        self.passages
            .iter()
            .enumerate()
            .map(|(i, (t, x))| DocumentInput {
                id: i.to_string(),
                title: Some(t.clone()),
                text: x.clone(),
                format: Format::Text,
                ..Default::default()
            })
            .collect()
    }
}

/// Recall@2/5/10 per retriever.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EvalRow {
    /// Dataset name.
    pub dataset: String,
    /// `bm25`, `dense`, `hybrid`, `graph` or `hybrid+graph`.
    pub retriever: String,
    /// Recall@2, in percent.
    pub r2: f64,
    /// Recall@5, in percent.
    pub r5: f64,
    /// Recall@10, in percent.
    pub r10: f64,
    /// BM25 settings: `default` ([`Config::default`]) or `rank_bm25` ([`reference_config`]).
    pub bm25: String,
    /// The reference R@5 (rank_bm25 / sentence-transformers on the same files), when known.
    pub reference_r5: Option<f64>,
    /// Questions evaluated.
    pub questions: usize,
}

/// The settings the references were measured with: `rank_bm25.BM25Okapi` defaults (Okapi idf
/// with the epsilon floor, k1 1.5, b 0.75, epsilon 0.25); RRF k 60.
pub fn reference_config() -> Config {
    Config { bm25_idf: Bm25Idf::Okapi, bm25_k1: 1.5, bm25_b: 0.75, bm25_epsilon: 0.25, ..Config::default() }
}

/// R@5 of the references (issue 2): rank_bm25, sentence-transformers all-MiniLM-L6-v2 (dense),
/// and their RRF, on the same train100 files, passages embedded as `title\ntext`.
pub fn reference_r5(dataset: &str, retriever: &str) -> Option<f64> {
    match (dataset, retriever) {
        ("hotpotqa", "bm25") => Some(75.5),
        ("hotpotqa", "dense") => Some(79.5),
        ("hotpotqa", "hybrid") => Some(79.5),
        ("musique", "bm25") => Some(45.2),
        ("musique", "dense") => Some(62.1),
        ("musique", "hybrid") => Some(57.4),
        _ => None,
    }
}

/// Runs [`evaluate`] with the default settings, then the BM25-dependent rows (bm25, hybrid) again
/// with [`reference_config`]; the engine is left with its default settings.
pub async fn evaluate_both<E: Embedder>(set: &EvalSet, eng: &mut Engine<MemoryStore, E>) -> Result<Vec<EvalRow>> {
    let default = eng.config().clone();
    let mut rows = evaluate(set, eng, "default").await?;
    eng.set_search_config(&Config { graph: default.graph, ..reference_config() })?;
    let reference = evaluate(set, eng, "rank_bm25").await;
    eng.set_search_config(&default)?;
    rows.extend(reference?.into_iter().filter(|r| r.retriever != "dense" && r.retriever != "graph"));
    Ok(rows)
}

/// Indexes the passages ([`EvalSet::documents`]) with the default options and returns the
/// engine ([`build_with`]).
pub async fn build<E: Embedder>(set: &EvalSet, embedder: E, cache: Option<&Path>) -> Result<Engine<MemoryStore, E>> {
    build_with(set, embedder, cache, Config::default()).await
}

/// Indexes the passages ([`EvalSet::documents`]) with `config` and returns the engine. With
/// `cache`, a knowledge base saved there by an earlier run (same model and ingest options) is
/// loaded instead of re-embedding, and a fresh build is saved there.
pub async fn build_with<E: Embedder>(set: &EvalSet, embedder: E, cache: Option<&Path>, config: Config) -> Result<Engine<MemoryStore, E>> {
    let store = MemoryStore::new();
    if let Some(bytes) = cache.and_then(|p| std::fs::read(p).ok()) {
        let c: crate::ports::Contents = serde_json::from_slice(&bytes).map_err(|e| crate::error::StoreError::Corrupt {
            collection: "*".into(),
            key: "eval cache".into(),
            reason: e.to_string(),
        })?;
        store.commit(c.into_ops()).await?;
        let mut eng = Engine::open(store, embedder, config, Box::new(FixedClock(0.0))).await?;
        eng.maintain_all(false).await?;
        return Ok(eng);
    }
    let mut eng = Engine::open(store, embedder, config, Box::new(FixedClock(0.0))).await?;
    // Each add is followed by the idle-time sealing the browser's worker runs.
    for part in set.documents().chunks(256) {
        eng.add(part.to_vec(), &mut NoProgress).await?;
        eng.maintain_all(false).await?;
    }
    if let Some(p) = cache {
        save_cache(&eng, p).await?;
    }
    Ok(eng)
}

/// Writes what `eng` stores to `path` (`--cache`), for [`build_with`] to read back; a cache
/// that cannot be written is skipped (the next run indexes again).
pub async fn save_cache<E: Embedder>(eng: &Engine<MemoryStore, E>, path: &Path) -> Result<()> {
    let c = eng.store().load().await?;
    let _ = std::fs::write(path, serde_json::to_vec(&c).unwrap_or_default());
    Ok(())
}

/// Runs every question through bm25, dense, hybrid, graph and hybrid+graph (the query is
/// embedded once). Questions are
/// read literally (no query syntax), as the reference implementations read them.
pub async fn evaluate<E: Embedder>(set: &EvalSet, eng: &Engine<MemoryStore, E>, bm25: &str) -> Result<Vec<EvalRow>> {
    evaluate_with(set, eng, bm25, eng.embedder()).await
}

/// [`evaluate`] with the questions embedded by `query` (e.g. a quantized copy of the index's
/// model, as a page's query encoder) while the passages keep the engine's vectors.
pub async fn evaluate_with<E: Embedder, Q: Embedder>(
    set: &EvalSet,
    eng: &Engine<MemoryStore, E>,
    bm25: &str,
    query: &Q,
) -> Result<Vec<EvalRow>> {
    let modes = [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid, SearchMode::Graph, SearchMode::HybridGraph];
    let mut sums = [[0f64; 3]; 5];
    let mut n = 0;
    // Once per set (the default pass), not again for the rank_bm25 pass.
    let debug = bm25 == "default" && std::env::var_os("WEBRAG_EVAL_DEBUG").is_some();
    for (q, gold) in &set.questions {
        if gold.is_empty() {
            continue;
        }
        n += 1;
        let qv = query.embed(&[q.as_str()]).await?.pop();
        if let (true, Some(v)) = (debug, qv.as_deref()) {
            print_graph_diagnosis(set, eng, q, v, gold);
        }
        for (mi, mode) in modes.iter().enumerate() {
            let hits = eng.search_with(q, qv.as_deref(), &SearchOptions { literal: true, ..SearchOptions::new(100, *mode) })?;
            let mut ranked: Vec<usize> = Vec::new();
            for h in hits {
                let p: usize = h.doc_id.parse().unwrap_or(usize::MAX);
                if !ranked.contains(&p) {
                    ranked.push(p);
                }
            }
            for (ki, k) in [2usize, 5, 10].iter().enumerate() {
                let found = gold.iter().filter(|g| ranked.iter().take(*k).any(|r| r == *g)).count();
                sums[mi][ki] += found as f64 / gold.len() as f64;
            }
        }
    }
    Ok(modes
        .iter()
        .enumerate()
        .map(|(mi, m)| EvalRow {
            dataset: set.name.clone(),
            retriever: m.name().to_string(),
            r2: 100.0 * sums[mi][0] / n.max(1) as f64,
            r5: 100.0 * sums[mi][1] / n.max(1) as f64,
            r10: 100.0 * sums[mi][2] / n.max(1) as f64,
            questions: n,
            bm25: bm25.to_string(),
            reference_r5: reference_r5(&set.name, m.name()),
        })
        .collect())
}

/// `WEBRAG_EVAL_DEBUG=1`: one question's candidate topics (gold ones starred, with how the walk
/// reached them) and the rank of each gold passage in the graph retriever's list (`-`: absent),
/// on stderr.
fn print_graph_diagnosis<E: Embedder>(set: &EvalSet, eng: &Engine<MemoryStore, E>, q: &str, qv: &[f32], gold: &[usize]) {
    let title = |d: &str| d.parse::<usize>().ok().and_then(|i| set.passages.get(i)).map_or("?", |p| p.0.as_str());
    let gs = eng.graph_search(q, qv, 100);
    let cands: Vec<String> = gs
        .explain
        .topics
        .iter()
        .map(|(d, how)| {
            let star = if d.parse().is_ok_and(|i: usize| gold.contains(&i)) { "*" } else { "" };
            format!("{star}{}[{how}]", title(d))
        })
        .collect();
    let mut docs: Vec<&str> = Vec::new();
    for h in &gs.hits {
        if !docs.contains(&h.doc_id.as_str()) {
            docs.push(&h.doc_id);
        }
    }
    let ranks: Vec<String> = gold
        .iter()
        .map(|g| {
            let rank = docs.iter().position(|d| *d == g.to_string()).map_or("-".to_string(), |x| (x + 1).to_string());
            format!("{}@{rank}", set.passages[*g].0)
        })
        .collect();
    eprintln!("Q: {q}\n  gold: {}\n  cands: {}", ranks.join(" | "), cands.join(", "));
}

/// `eval --decompose`: PIKE-RAG's Algorithm 1 run by the real pipeline ([`crate::ask::decompose`])
/// with `model` as the decomposer, on every question with gold passages.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DecomposeRow {
    /// Dataset name.
    pub dataset: String,
    /// Mean over questions of the share of their gold passages in the final context, in percent.
    pub gold_in_context: f64,
    /// Gold passages in the final contexts over all gold passages, in percent.
    pub gold_pooled: f64,
    /// Mean chunks in the final context.
    pub mean_context: f64,
    /// Largest final context.
    pub max_context: usize,
    /// How the loops ended: nothing proposed / nothing found / nothing selected / rounds used up
    /// / an unreadable proposal.
    pub stops: [usize; 5],
    /// Questions evaluated.
    pub questions: usize,
    /// The parameters used.
    pub params: crate::ask::DecomposeParams,
}

/// Runs the decomposition loop for every question of `set` and scores the final contexts.
pub async fn evaluate_decomposition<E: Embedder, M: crate::llm::LanguageModel>(
    set: &EvalSet,
    eng: &mut Engine<MemoryStore, E>,
    model: &M,
    params: &crate::ask::DecomposeParams,
) -> Result<(DecomposeRow, Vec<crate::ask::Trajectory>)> {
    use crate::ask::Stop;
    let clock = FixedClock(0.0);
    let (mut share, mut found, mut total, mut ctx, mut max_ctx, mut n) = (0f64, 0usize, 0usize, 0usize, 0usize, 0usize);
    let mut stops = [0usize; 5];
    let mut trajectories = Vec::new();
    for (q, gold) in &set.questions {
        if gold.is_empty() {
            continue;
        }
        n += 1;
        let t = crate::ask::decompose(model, &mut *eng, q, params, &clock, &mut |_| {}).await?;
        let docs: Vec<usize> = t.context.iter().filter_map(|c| eng.corpus().chunk(c)).filter_map(|c| c.doc_id.parse().ok()).collect();
        let hit = gold.iter().filter(|g| docs.contains(g)).count();
        if std::env::var_os("WEBRAG_EVAL_DEBUG").is_some() && hit < gold.len() {
            eprintln!("Q: {q}\n  stop {:?}; gold {gold:?}; context {docs:?}", t.stop);
            for r in &t.rounds {
                let cands: Vec<String> =
                    r.candidates.iter().map(|c| eng.corpus().chunk(&c.chunk_id).map_or("?", |c| c.doc_id.as_str()).to_string()).collect();
                eprintln!("  {:?} -> [{}] selected {:?}", r.proposals, cands.join(", "), r.selected);
            }
        }
        share += hit as f64 / gold.len() as f64;
        found += hit;
        total += gold.len();
        ctx += t.context.len();
        max_ctx = max_ctx.max(t.context.len());
        stops[match t.stop {
            Stop::NothingProposed => 0,
            Stop::NothingFound => 1,
            Stop::NothingSelected => 2,
            Stop::Rounds => 3,
            Stop::Unreadable => 4,
        }] += 1;
        trajectories.push(t);
    }
    let row = DecomposeRow {
        dataset: set.name.clone(),
        gold_in_context: 100.0 * share / n.max(1) as f64,
        gold_pooled: 100.0 * found as f64 / total.max(1) as f64,
        mean_context: ctx as f64 / n.max(1) as f64,
        max_context: max_ctx,
        stops,
        questions: n,
        params: *params,
    };
    Ok((row, trajectories))
}

/// The recall cost of the static-site snapshot's vectors: dense R@2/5/10 with the f32 chunk
/// vectors scanned exactly, with the snapshot's int8 vectors ([`crate::embed::vecmath::quantize_i8`])
/// scanned exactly, with the int8 IVF lists ([`crate::embed::vecmath::kmeans`], the snapshot's
/// list size) read `nprobe` at a time, as `static.js` reads them, and with two smaller codes
/// scanned exactly against the f32 query: int4 with one scale per vector
/// ([`crate::embed::vecmath::quantize_i4`], half int8's component bytes) and product quantization
/// (Jégou et al., TPAMI 2011, section III: [`PQ_SUBSPACES`] subvectors of 256 centroids each, one byte per subvector, the query scored by
/// asymmetric distance, the inner product of each subvector with its centroid). Questions are
/// embedded by `query`; `label` is appended to the rows' names.
pub async fn evaluate_snapshot_vectors<E: Embedder, Q: Embedder>(
    set: &EvalSet,
    eng: &Engine<MemoryStore, E>,
    query: &Q,
    label: &str,
) -> Result<Vec<EvalRow>> {
    use crate::embed::vecmath::{kmeans, quantize_i8};
    use crate::native::site::SnapshotParams;
    let p = SnapshotParams::default();
    let mut ids: Vec<usize> = Vec::new();
    let mut vecs: Vec<Vec<f32>> = Vec::new();
    for d in eng.corpus().documents() {
        for cid in eng.corpus().chunk_ids(&d.id) {
            if let Some(v) = eng.chunk_vector(cid) {
                ids.push(d.id.parse().unwrap_or(usize::MAX));
                vecs.push(v.to_vec());
            }
        }
    }
    let q8: Vec<(f32, Vec<i8>)> = vecs.iter().map(|v| quantize_i8(v)).collect();
    let lists = (vecs.len() / p.list_size).max(1);
    let (cents, assign) = kmeans(&vecs, lists, p.kmeans_iterations);
    let c8: Vec<(f32, Vec<i8>)> = cents.iter().map(|c| quantize_i8(c)).collect();
    let dot8 = |q: &[f32], (s, x): &(f32, Vec<i8>)| s * x.iter().zip(q).map(|(a, b)| *a as f32 * b).sum::<f32>();
    let q4: Vec<(f32, Vec<i8>)> = vecs.iter().map(|v| crate::embed::vecmath::quantize_i4(v)).collect();
    let dim = vecs.first().map_or(0, Vec::len);
    let pq = ProductQuantizer::train(&vecs, PQ_SUBSPACES.min(dim.max(1)));
    let codes: Vec<Vec<u8>> = vecs.iter().map(|v| pq.encode(v)).collect();
    let mut sums = [[0f64; 3]; 5];
    let mut n = 0;
    for (q, gold) in &set.questions {
        if gold.is_empty() {
            continue;
        }
        n += 1;
        let qv = query.embed(&[q.as_str()]).await?.pop().unwrap_or_default();
        let mut probe: Vec<(usize, f32)> = c8.iter().enumerate().map(|(i, c)| (i, dot8(&qv, c))).collect();
        probe.sort_by(|a, b| b.1.total_cmp(&a.1));
        let probed: std::collections::HashSet<usize> = probe.iter().take(p.nprobe).map(|x| x.0).collect();
        let table = pq.table(&qv);
        let scored: [Vec<(usize, f32)>; 5] = [
            vecs.iter().enumerate().map(|(i, v)| (i, crate::embed::vecmath::dot(&qv, v))).collect(),
            q8.iter().enumerate().map(|(i, v)| (i, dot8(&qv, v))).collect(),
            q8.iter().enumerate().filter(|(i, _)| probed.contains(&assign[*i])).map(|(i, v)| (i, dot8(&qv, v))).collect(),
            q4.iter().enumerate().map(|(i, v)| (i, dot8(&qv, v))).collect(),
            codes.iter().enumerate().map(|(i, c)| (i, c.iter().zip(&table).map(|(&k, t)| t[k as usize]).sum::<f32>())).collect(),
        ];
        for (mi, s) in scored.into_iter().enumerate() {
            add_recall(&mut sums[mi], s, &ids, gold);
        }
    }
    let names = [
        format!("dense f32, exact scan{label}"),
        format!("dense int8 (snapshot; {} bytes a vector), exact scan{label}", dim + 4),
        format!("dense int8 IVF ({lists} lists, nprobe {}){label}", p.nprobe),
        format!("dense int4 ({} bytes a vector), exact scan{label}", dim.div_ceil(2) + 4),
        format!("dense PQ ({} subvectors × 256 centroids; {} bytes a vector), exact scan{label}", pq.subspaces(), pq.subspaces()),
    ];
    Ok(names
        .into_iter()
        .enumerate()
        .map(|(mi, name)| EvalRow {
            dataset: set.name.clone(),
            retriever: name,
            r2: 100.0 * sums[mi][0] / n.max(1) as f64,
            r5: 100.0 * sums[mi][1] / n.max(1) as f64,
            r10: 100.0 * sums[mi][2] / n.max(1) as f64,
            questions: n,
            bm25: String::new(),
            reference_r5: None,
        })
        .collect())
}

/// Adds one question's recall@2, @5 and @10 to `sums`: its chunks' scores ranked, their
/// documents (`ids`, by chunk) in first-seen order, against the gold documents.
fn add_recall(sums: &mut [f64; 3], mut scored: Vec<(usize, f32)>, ids: &[usize], gold: &[usize]) {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut ranked: Vec<usize> = Vec::new();
    for (i, _) in scored {
        if !ranked.contains(&ids[i]) {
            ranked.push(ids[i]);
            if ranked.len() == 10 {
                break;
            }
        }
    }
    for (ki, k) in [2usize, 5, 10].iter().enumerate() {
        let found = gold.iter().filter(|g| ranked.iter().take(*k).any(|r| r == *g)).count();
        sums[ki] += found as f64 / gold.len() as f64;
    }
}

/// Subvectors of [`evaluate_snapshot_vectors`]'s product quantizer: 32, one byte each, an
/// eighth of int8's 256 bytes for the static model's 256 dimensions.
pub const PQ_SUBSPACES: usize = 32;

/// A product quantizer (Jégou, Douze and Schmid, "Product quantization for nearest neighbor
/// search", TPAMI 2011): the dimensions cut into `m` contiguous subvectors, each coded by the
/// nearest of 256 centroids learnt by k-means (L2, 10 iterations, evenly spaced starting rows).
struct ProductQuantizer {
    /// Subvector bounds `[start, end)`.
    bounds: Vec<(usize, usize)>,
    /// Per subvector, its centroids, each `end − start` long.
    centroids: Vec<Vec<Vec<f32>>>,
}

impl ProductQuantizer {
    fn train(vecs: &[Vec<f32>], m: usize) -> Self {
        let dim = vecs.first().map_or(0, Vec::len);
        let bounds: Vec<(usize, usize)> = (0..m).map(|i| (i * dim / m, (i + 1) * dim / m)).collect();
        let centroids = bounds
            .iter()
            .map(|&(a, b)| {
                let subs: Vec<&[f32]> = vecs.iter().map(|v| &v[a..b]).collect();
                let k = 256.min(subs.len()).max(1);
                let mut cents: Vec<Vec<f32>> =
                    (0..k).map(|i| subs.get(i * subs.len() / k).map_or(vec![0.0; b - a], |s| s.to_vec())).collect();
                for _ in 0..10 {
                    let mut sum = vec![vec![0f32; b - a]; k];
                    let mut count = vec![0usize; k];
                    for s in &subs {
                        let c = nearest(&cents, s);
                        count[c] += 1;
                        sum[c].iter_mut().zip(s.iter()).for_each(|(t, x)| *t += x);
                    }
                    for (c, (t, n)) in cents.iter_mut().zip(sum.into_iter().zip(count)) {
                        if n > 0 {
                            *c = t.into_iter().map(|x| x / n as f32).collect();
                        }
                    }
                }
                cents
            })
            .collect();
        ProductQuantizer { bounds, centroids }
    }

    fn subspaces(&self) -> usize {
        self.bounds.len()
    }

    fn encode(&self, v: &[f32]) -> Vec<u8> {
        self.bounds.iter().zip(&self.centroids).map(|(&(a, b), cents)| nearest(cents, &v[a..b]) as u8).collect()
    }

    /// The asymmetric distance table: per subvector, the query's inner product with each centroid.
    fn table(&self, q: &[f32]) -> Vec<Vec<f32>> {
        self.bounds
            .iter()
            .zip(&self.centroids)
            .map(|(&(a, b), cents)| cents.iter().map(|c| crate::embed::vecmath::dot(&q[a..b], c)).collect())
            .collect()
    }
}

/// The index of the centroid nearest `x` (L2).
fn nearest(cents: &[Vec<f32>], x: &[f32]) -> usize {
    let d = |c: &[f32]| c.iter().zip(x).map(|(a, b)| (a - b) * (a - b)).sum::<f32>();
    (0..cents.len()).min_by(|&i, &j| d(&cents[i]).total_cmp(&d(&cents[j]))).unwrap_or(0)
}

/// Prints `eval --query-model`'s table: each retriever's recall with the questions embedded by
/// the model in `dir` beside the index's own model (`rows`, default BM25 settings).
pub fn print_query_rows(dir: &Path, rows: &[EvalRow], query_rows: &[EvalRow]) {
    println!();
    println!("Questions embedded by {} (passages by the index's model):", dir.display());
    println!();
    println!("| dataset | retriever | R@2 | R@5 | R@10 | R@5 with the index's model | Δ R@5 |");
    println!("|---|---|---|---|---|---|---|");
    for r in query_rows.iter().filter(|r| r.retriever != "bm25") {
        let base = rows.iter().find(|b| b.dataset == r.dataset && b.retriever == r.retriever && b.bm25 == r.bm25);
        let (b5, d5) = base.map_or((String::new(), String::new()), |b| (format!("{:.1}", b.r5), format!("{:+.1}", r.r5 - b.r5)));
        println!("| {} | {} | {:.1} | {:.1} | {:.1} | {b5} | {d5} |", r.dataset, r.retriever, r.r2, r.r5, r.r10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_keeps_the_questions_own_passages_renumbered() {
        let p = |t: &str| (t.to_string(), format!("{t} text"));
        let set = EvalSet {
            name: "hotpotqa".into(),
            passages: vec![p("a"), p("b"), p("c"), p("d"), p("e")],
            questions: vec![("q1".into(), vec![3]), ("q2".into(), vec![1, 4]), ("q3".into(), vec![0])],
            answers: vec![vec!["x".into()], vec!["y".into()], vec!["z".into()]],
            contexts: vec![vec![3, 2], vec![4, 1, 2, 99]],
        };
        let s = set.first(2);
        assert_eq!(s.passages.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), ["b", "c", "d", "e"]);
        assert_eq!(s.questions, [("q1".to_string(), vec![2]), ("q2".to_string(), vec![0, 3])]);
        assert_eq!(s.answers.len(), 2);
        assert_eq!(s.contexts, [vec![2, 1], vec![3, 0, 1]], "an index outside the pool is dropped");
        assert_eq!(set.first(10).passages.len(), 5, "n past the end keeps the questions there are");
    }
}
