#![cfg(not(target_arch = "wasm32"))]
//! Engine behaviour with the real model and the in-memory / file stores: add, search, remove,
//! idempotent re-add, atomic replace, and every kind of bad input (each gets a typed error and
//! loses nothing already stored).
use crate::common;

use webrag::config::Config;
use webrag::engine::{Engine, SearchOptions, decode_utf8};
use webrag::error::{Error, InputError, ModelError, StoreError};
use webrag::ports::{FixedClock, MemoryStore, NoProgress, Store};
use webrag::retrieve::{FusionWeights, GraphCascade};
use webrag::types::{DocumentInput, Format, SearchMode};

type Eng = Engine<MemoryStore, &'static webrag::embed::CpuEmbedder>;

fn doc(id: &str, text: &str) -> DocumentInput {
    DocumentInput { id: id.into(), title: None, text: text.into(), format: Format::Auto, ..Default::default() }
}

async fn open() -> Eng {
    Engine::open(MemoryStore::new(), common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open")
}

const NOTES: [(&str, &str); 3] = [
    (
        "rust.md",
        "# Rust\n\nRust is a systems programming language focused on safety.\n\n## Ownership\n\nEvery value has a single owner; the borrow checker enforces it.",
    ),
    (
        "bread.md",
        "# Baking bread\n\nFlour, water, salt and yeast make a simple loaf.\n\n## Proofing\n\nLet the dough rise in a warm place for an hour.",
    ),
    ("tea.txt", "Green tea is steeped in water at about 80 degrees Celsius for two minutes."),
];

async fn seeded() -> Eng {
    let mut e = open().await;
    let docs = NOTES.iter().map(|(id, t)| DocumentInput { url: Some(id.to_string()), ..doc(id, t) }).collect();
    let r = e.add(docs, &mut NoProgress).await.expect("add");
    assert_eq!(r.added.len(), 3);
    e
}

fn ids(hits: &[webrag::types::Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.doc_id.as_str()).collect()
}

#[test]
fn add_search_every_mode() {
    pollster::block_on(async {
        let e = seeded().await;
        let s = e.stats();
        assert_eq!((s.documents, s.dim), (3, 384));
        assert!(s.chunks >= 3);
        for mode in [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid] {
            let hits = e.search("who owns a value? borrow checker", &SearchOptions::new(3, mode)).await.expect("search");
            assert_eq!(hits[0].doc_id, "rust.md", "{mode:?}");
            assert_eq!(hits[0].heading_path, vec!["Rust", "Ownership"]);
            assert_eq!(hits[0].title, "Rust");
        }
        // dense finds meaning without shared words
        let hits = e.search("how hot should the water be for my cup", &SearchOptions::new(1, SearchMode::Dense)).await.expect("search");
        assert_eq!(ids(&hits), vec!["tea.txt"]);
        // hybrid hits carry both retrievers' scores and a highlighted snippet
        let hits = e.search("dough rise", &SearchOptions::default()).await.expect("search");
        let h = &hits[0];
        assert_eq!(h.doc_id, "bread.md");
        assert!(h.scores.bm25.is_some() && h.scores.dense.is_some() && h.scores.rrf.is_some());
        assert!(h.snippet.iter().any(|p| p.hit && p.text.to_lowercase() == "dough"));
    });
}

#[test]
fn search_grouped_by_document_gives_each_document_once_with_its_sections() {
    use webrag::types::Grouping;
    pollster::block_on(async {
        let e = seeded().await;
        let by_chunk = e.search("rust water owner", &SearchOptions::new(10, SearchMode::Bm25)).await.expect("search");
        let rust: Vec<&str> = by_chunk.iter().filter(|h| h.doc_id == "rust.md").map(|h| h.chunk_id.as_str()).collect();
        assert!(rust.len() >= 2, "the query matches several chunks of rust.md: {:?}", ids(&by_chunk));
        let grouped = SearchOptions { group: Grouping::Document, ..SearchOptions::new(10, SearchMode::Bm25) };
        let by_doc = e.search("rust water owner", &grouped).await.expect("search");
        let mut first_seen: Vec<&str> = Vec::new();
        for h in &by_chunk {
            if !first_seen.contains(&h.doc_id.as_str()) {
                first_seen.push(&h.doc_id);
            }
        }
        assert_eq!(ids(&by_doc), first_seen, "each document once, where its best chunk ranks");
        for d in &by_doc {
            let chunks: Vec<&webrag::types::Hit> = by_chunk.iter().filter(|h| h.doc_id == d.doc_id).collect();
            assert_eq!(d.chunk_id, chunks[0].chunk_id, "the best chunk stands for the document");
            let sections: Vec<&str> = d.sections.iter().map(|s| s.chunk_id.as_str()).collect();
            let rest: Vec<&str> = chunks[1..].iter().take(2).map(|h| h.chunk_id.as_str()).collect();
            assert_eq!(sections, rest, "{}: its next chunks are its sections", d.doc_id);
            for (s, h) in d.sections.iter().zip(&chunks[1..]) {
                assert_eq!((s.score, &s.heading_path, &s.snippet), (h.score, &h.heading_path, &h.snippet));
            }
        }
        assert!(by_doc.iter().any(|d| !d.sections.is_empty()));
        // k counts documents.
        let one = e.search("rust water owner", &SearchOptions { k: 1, ..grouped.clone() }).await.expect("search");
        assert_eq!(one, by_doc[..1].to_vec());
        // The option reads from JSON as the page sends it.
        let o: SearchOptions = serde_json::from_value(serde_json::json!({"k": 3, "group": "document"})).unwrap();
        assert_eq!(o.group, Grouping::Document);
        assert!(serde_json::from_value::<SearchOptions>(serde_json::json!({"group": "pages"})).is_err());
    });
}

#[test]
fn fusion_weights_weigh_each_retriever_and_zero_leaves_a_list_out() {
    pollster::block_on(async {
        let mut e = seeded().await;
        let q = "how hot should the water be for bread dough";
        let hybrid = SearchOptions::new(10, SearchMode::Hybrid);
        let only = |mode| SearchOptions::new(10, mode);
        let ranked = |hits: &[webrag::types::Hit]| hits.iter().map(|h| h.chunk_id.clone()).collect::<Vec<_>>();
        let bm25 = ranked(&e.search(q, &only(SearchMode::Bm25)).await.unwrap());
        // Dense weighted 0: the hybrid list is the BM25 list; BM25 weighted 0: the dense list,
        // in the order of its ranks.
        e.set_search_config(&Config { fusion_weights: FusionWeights { dense: 0.0, ..FusionWeights::EQUAL }, ..Config::default() }).unwrap();
        assert_eq!(ranked(&e.search(q, &hybrid).await.unwrap()), bm25);
        e.set_search_config(&Config { fusion_weights: FusionWeights { bm25: 0.0, ..FusionWeights::EQUAL }, ..Config::default() }).unwrap();
        let h = e.search(q, &hybrid).await.unwrap();
        let ranks: Vec<u32> = h.iter().map(|x| x.scores.dense_rank.expect("every hit is the dense list's")).collect();
        assert!(!ranks.is_empty() && ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
        // A weight scales its list's share of the RRF score.
        e.set_search_config(&Config { fusion_weights: FusionWeights { bm25: 2.0, ..FusionWeights::EQUAL }, ..Config::default() }).unwrap();
        let h = e.search(q, &hybrid).await.unwrap();
        for x in &h {
            let want =
                x.scores.bm25_rank.map_or(0.0, |r| 2.0 / (60.0 + r as f32)) + x.scores.dense_rank.map_or(0.0, |r| 1.0 / (60.0 + r as f32));
            assert!((x.score - want).abs() < 1e-6, "{} {} {want}", x.chunk_id, x.score);
        }
    });
}

#[test]
fn query_syntax_filters() {
    pollster::block_on(async {
        let e = seeded().await;
        let all = SearchOptions::new(10, SearchMode::Hybrid);
        let hits = e.search("water -tea", &all).await.expect("search");
        assert!(!hits.is_empty() && hits.iter().all(|h| h.doc_id != "tea.txt"), "{:?}", ids(&hits));
        let hits = e.search("\"simple loaf\"", &all).await.expect("search");
        assert_eq!(ids(&hits), vec!["bread.md"]);
        let hits = e.search("\"loaf simple\"", &all).await.expect("search");
        assert!(hits.is_empty());
        // a boost multiplies that term's contribution: tea matches only `water`
        let bm = SearchOptions::new(3, SearchMode::Bm25);
        let score = |hits: &[webrag::types::Hit], id: &str| hits.iter().find(|h| h.doc_id == id).and_then(|h| h.scores.bm25).expect("hit");
        let plain = e.search("water salt", &bm).await.expect("search");
        let boosted = e.search("water^5 salt", &bm).await.expect("search");
        assert_eq!(plain[0].doc_id, "bread.md");
        let ratio = score(&boosted, "tea.txt") / score(&plain, "tea.txt");
        assert!((ratio - 5.0).abs() < 1e-4, "boost ratio {ratio}");
    });
}

#[test]
fn readd_unchanged_is_noop_and_changed_replaces() {
    pollster::block_on(async {
        let mut e = seeded().await;
        let before = e.stats();
        let r = e.add(vec![doc("tea.txt", NOTES[2].1)], &mut NoProgress).await.expect("re-add");
        assert_eq!(r.unchanged, vec!["tea.txt"]);
        assert_eq!(r.chunks, 0);
        assert_eq!(e.stats(), before);
        let r = e.add(vec![doc("tea.txt", "Black tea wants boiling water and four minutes.")], &mut NoProgress).await.expect("replace");
        assert_eq!(r.replaced, vec!["tea.txt"]);
        assert_eq!(e.stats().documents, 3);
        let hits = e.search("80 degrees", &SearchOptions::new(10, SearchMode::Bm25)).await.expect("search");
        assert!(hits.iter().all(|h| h.doc_id != "tea.txt"), "old chunk still indexed");
        let hits = e.search("boiling", &SearchOptions::new(1, SearchMode::Bm25)).await.expect("search");
        assert_eq!(ids(&hits), vec!["tea.txt"]);
    });
}

#[test]
fn literal_queries_ignore_the_syntax() {
    pollster::block_on(async {
        let e = seeded().await;
        // With the syntax, the phrase "water tea" filters out every chunk (no chunk holds it) ...
        let q = r#"which "water tea" -bread"#;
        assert!(e.search(q, &SearchOptions::new(10, SearchMode::Hybrid)).await.expect("search").is_empty());
        // ... read literally, the words score and nothing is filtered or excluded.
        let lit = SearchOptions { literal: true, ..SearchOptions::new(10, SearchMode::Bm25) };
        let hits = e.search(q, &lit).await.expect("literal");
        assert_eq!(ids(&hits)[0], "tea.txt");
        assert!(ids(&hits).contains(&"bread.md"), "-bread excluded in literal mode");
    });
}

#[test]
fn invalid_config_is_rejected_at_open() {
    pollster::block_on(async {
        for (config, name) in [
            (Config { bm25_k1: -1.0, ..Config::default() }, "bm25K1"),
            (Config { embed_batch: Some(0), ..Config::default() }, "embedBatch"),
            (Config { embed_batch: Some(1025), ..Config::default() }, "embedBatch"),
            (Config { target_chunk_tokens: 300, ..Config::default() }, "targetChunkTokens"),
            (Config { fusion_weights: FusionWeights { graph: -1.0, ..FusionWeights::EQUAL }, ..Config::default() }, "fusionWeights.graph"),
            (
                Config { fusion_weights: FusionWeights { bm25: f32::NAN, ..FusionWeights::EQUAL }, ..Config::default() },
                "fusionWeights.bm25",
            ),
            (Config { graph_cascade: GraphCascade { keep: 101, ..GraphCascade::DEFAULT }, ..Config::default() }, "graphCascade.keep"),
        ] {
            let r = Engine::open(MemoryStore::new(), common::model(), config, Box::new(FixedClock(1.0))).await;
            match r {
                Err(Error::Input(InputError::InvalidOption { name: n, .. })) => assert_eq!(n, name),
                Err(other) => panic!("{name}: unexpected error {other}"),
                Ok(_) => panic!("{name}: accepted"),
            }
        }
    });
}

#[test]
fn remove_and_unknown_ids() {
    pollster::block_on(async {
        let mut e = seeded().await;
        let r = e.remove(&["bread.md".into(), "nope".into()]).await.expect("remove");
        assert_eq!(r.removed, vec!["bread.md"]);
        assert_eq!(r.unknown, vec!["nope"]);
        assert_eq!(e.stats().documents, 2);
        let hits = e.search("bread dough flour", &SearchOptions::new(10, SearchMode::Hybrid)).await.expect("search");
        assert!(hits.iter().all(|h| h.doc_id != "bread.md"));
        let r = e.remove(&["bread.md".into()]).await.expect("remove again");
        assert_eq!(r.unknown, vec!["bread.md"]);
    });
}

#[test]
fn persists_across_reopen_with_file_store() {
    let path = std::env::temp_dir().join(format!("webrag-engine-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    pollster::block_on(async {
        let store = webrag::native::FileStore::open(&path).await.expect("store");
        let mut e = Engine::open(store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
        e.add(vec![doc("a", "Alpacas live in the Andes."), doc("b", "Bees make honey.")], &mut NoProgress).await.expect("add");
        drop(e);
        let store = webrag::native::FileStore::open(&path).await.expect("store");
        let e = Engine::open(store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("reopen");
        assert_eq!(e.stats().documents, 2);
        let hits = e.search("honey", &SearchOptions::default()).await.expect("search");
        assert_eq!(hits[0].doc_id, "b");
    });
    let _ = std::fs::remove_file(&path);
}

fn code(e: &Error) -> &'static str {
    e.code()
}

#[test]
fn bad_input_is_typed_and_loses_nothing() {
    pollster::block_on(async {
        let mut e = seeded().await;
        let before = (e.stats(), e.corpus().documents());
        // empty document (also: markup only)
        for text in ["", "   \n\t ", "<html><script>x()</script></html>"] {
            let err = e.add(vec![doc("new", "ok text"), doc("empty", text)], &mut NoProgress).await.expect_err("empty");
            assert_eq!(err, Error::Input(InputError::EmptyDocument { id: "empty".into() }));
        }
        // duplicate ids in one batch
        let err = e.add(vec![doc("x", "one"), doc("x", "two")], &mut NoProgress).await.expect_err("dup");
        assert_eq!(code(&err), "DUPLICATE_ID");
        // invalid ids
        let err = e.add(vec![doc("", "text")], &mut NoProgress).await.expect_err("id");
        assert_eq!(code(&err), "INVALID_ID");
        // a 10 MB document is over the default 8 MiB limit
        let big = "word ".repeat(2_000_000);
        let err = e.add(vec![doc("big", &big)], &mut NoProgress).await.expect_err("big");
        assert_eq!(err, Error::Input(InputError::TooLarge { id: "big".into(), bytes: 10_000_000, limit: 8 << 20 }));
        // k out of range
        let err = e.search("x", &SearchOptions::new(0, SearchMode::Bm25)).await.expect_err("k");
        assert_eq!(code(&err), "INVALID_OPTION");
        // a search option out of its documented range leaves the old settings in force
        let err = e.set_search_config(&Config { bm25_b: 1.5, ..Config::default() }).expect_err("b");
        assert_eq!(err, Error::Input(InputError::InvalidOption { name: "bm25B".into(), reason: "1.5 is outside 0..=1".into() }));
        assert_eq!(e.config(), &Config::default());
        assert_eq!((e.stats(), e.corpus().documents()), before, "a rejected batch changed the store");
    });
}

#[test]
fn failing_commit_leaves_engine_and_store_unchanged() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
        e.add(vec![doc("a", "Alpacas live in the Andes.")], &mut NoProgress).await.expect("add");
        let stored_before = store.load().await.expect("load");
        store.fail_next_commit(StoreError::QuotaExceeded);
        let err = e.add(vec![doc("b", "Bees make honey."), doc("a", "Alpacas changed.")], &mut NoProgress).await.expect_err("quota");
        assert_eq!(code(&err), "QUOTA_EXCEEDED");
        assert_eq!(store.load().await.expect("load"), stored_before);
        assert_eq!(e.stats().documents, 1);
        let hits = e.search("alpacas andes", &SearchOptions::new(5, SearchMode::Bm25)).await.expect("search");
        assert_eq!(hits.len(), 1);
        assert!(e.search("bees honey", &SearchOptions::new(5, SearchMode::Bm25)).await.expect("search").is_empty());
        store.fail_next_commit(StoreError::QuotaExceeded);
        assert!(e.remove(&["a".into()]).await.is_err());
        assert_eq!(e.stats().documents, 1);
    });
}

#[test]
fn invalid_utf8_is_rejected_with_offset() {
    let err = decode_utf8("up.txt", b"good \xff\xfe bad".to_vec()).expect_err("utf8");
    assert_eq!(err, Error::Input(InputError::InvalidUtf8 { id: "up.txt".into(), offset: 5 }));
    assert_eq!(decode_utf8("bom", b"\xEF\xBB\xBFhi".to_vec()).expect("bom"), "hi");
}

#[test]
fn malformed_html_is_indexed_leniently() {
    pollster::block_on(async {
        let mut e = open().await;
        let html = "<html><body><h1>Broken <b>page</h1><p>Unclosed paragraph about <i>zebras<div><p>and giraffes</td></table>";
        e.add(vec![DocumentInput { format: Format::Html, ..doc("broken", html) }], &mut NoProgress).await.expect("add");
        let hits = e.search("giraffes", &SearchOptions::new(1, SearchMode::Bm25)).await.expect("search");
        assert_eq!(hits[0].doc_id, "broken");
        assert_eq!(hits[0].title, "Broken page");
    });
}

#[test]
fn model_errors_are_typed() {
    let dir = webrag::native::default_model_dir();
    let files = webrag::native::read_model_files(&dir).expect("files");
    let load = |f: &webrag::embed::ModelFiles| webrag::embed::CpuEmbedder::from_files("m", f).err().map(|e| e.code());
    // missing directory
    let err = webrag::native::load_embedder(std::path::Path::new("/nonexistent/model")).err().expect("missing");
    assert_eq!(err.code(), "MODEL_FILE_UNAVAILABLE");
    // corrupt config / tokenizer / weights
    let mut f = files.clone();
    f.config = b"{not json".to_vec();
    assert_eq!(load(&f), Some("MODEL_CONFIG_INVALID"));
    let mut f = files.clone();
    f.config = br#"{"hidden_size":384,"num_hidden_layers":6,"num_attention_heads":12,"intermediate_size":1536,"max_position_embeddings":512,"vocab_size":30522,"hidden_act":"relu"}"#.to_vec();
    assert_eq!(load(&f), Some("MODEL_UNSUPPORTED"));
    // Sizes that would size allocations before the weights are read: refused up front.
    for (field, v) in [("hidden_size", "3145728"), ("num_hidden_layers", "4000000000"), ("vocab_size", "9223372036854775807")] {
        let mut c: serde_json::Value = serde_json::from_slice(&files.config).unwrap();
        c[field] = serde_json::from_str(v).unwrap();
        let mut f = files.clone();
        f.config = c.to_string().into_bytes();
        assert_eq!(load(&f), Some("MODEL_UNSUPPORTED"), "{field} {v}");
    }
    let mut f = files.clone();
    f.tokenizer = b"[]".to_vec();
    assert_eq!(load(&f), Some("MODEL_TOKENIZER_INVALID"));
    let mut f = files.clone();
    f.weights.truncate(1000);
    assert_eq!(load(&f), Some("MODEL_WEIGHTS_CORRUPT"));
    // a config that asks for more layers than the weights hold -> missing tensor
    let mut f = files.clone();
    let mut cfg: serde_json::Value = serde_json::from_slice(&files.config).expect("cfg");
    cfg["num_hidden_layers"] = 7.into();
    f.config = serde_json::to_vec(&cfg).expect("json");
    let err = webrag::embed::CpuEmbedder::from_files("m", &f).err().expect("missing tensor");
    assert!(matches!(&err, Error::Model(ModelError::TensorMissing { name }) if name.contains("layer.6")), "{err}");
    // wrong shape
    let mut f = files.clone();
    cfg["num_hidden_layers"] = 6.into();
    cfg["intermediate_size"] = 1024.into();
    f.config = serde_json::to_vec(&cfg).expect("json");
    assert_eq!(load(&f), Some("MODEL_TENSOR_SHAPE"));
}

#[test]
fn model_mismatch_is_detected_at_open() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let e = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
        drop(e);
        store
            .commit(vec![webrag::ports::Op::Put(webrag::ports::Record::Meta(webrag::schema::MetaRecord {
                id: "model".into(),
                value: "\"other/model\"".into(),
            }))])
            .await
            .expect("commit");
        let err = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.err().expect("mismatch");
        assert_eq!(err.code(), "MODEL_MISMATCH");
    });
}

#[test]
fn chunks_never_exceed_256_word_pieces() {
    let m = common::model();
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap_or_default();
    let long_para = "Supercalifragilisticexpialidocious antidisestablishmentarianism 中文字符 🚀 ".repeat(400);
    let one_sentence_no_spaces = "x".repeat(5000) + &"中".repeat(3000);
    let md = format!("# T\n\n{readme}\n\n## Long\n\n{long_para}\n\n{one_sentence_no_spaces}\n");
    let parsed = webrag::text::parse(&md, Format::Markdown).expect("native builds have the parsers");
    let chunks = webrag::text::chunk("T", &parsed.blocks, m.tokenizer(), 256, 200);
    assert!(chunks.len() > 10);
    for c in &chunks {
        let n = m.tokenizer().encode(&c.embed_input).expect("enc").len();
        assert!(c.token_count <= 256 && n <= 256, "chunk of {} / {n} tokens", c.token_count);
        // every token is embedded: the truncating tokenizer did not cut it
        assert_eq!(n, c.token_count);
    }
}

/// The `Embedder` methods that describe the model, answered by the real one (for the test
/// embedders below, which differ only in `embed`).
macro_rules! the_model_describes_it {
    () => {
        fn model_id(&self) -> &str {
            common::model().model_id()
        }
        fn dim(&self) -> usize {
            common::model().dim()
        }
        fn max_tokens(&self) -> usize {
            common::model().max_tokens()
        }
        fn token_counter(&self) -> &dyn webrag::text::TokenCounter {
            common::model().token_counter()
        }
    };
}

/// The real model behind [`webrag::embed::Embedder`], recording the size of every call and
/// asking for `preferred` texts per call (as a GPU path asks for 256).
struct Recording {
    preferred: usize,
    calls: std::cell::RefCell<Vec<usize>>,
}

impl webrag::embed::Embedder for Recording {
    the_model_describes_it!();
    async fn embed(&self, texts: &[&str]) -> webrag::Result<Vec<Vec<f32>>> {
        self.calls.borrow_mut().push(texts.len());
        common::model().embed(texts).await
    }
    fn preferred_batch(&self) -> usize {
        self.preferred
    }
}

/// An embedder whose output is broken one way: `0` one vector too few, `1` vectors of the wrong
/// size, `2` a NaN.
struct Broken(u8);

impl webrag::embed::Embedder for Broken {
    the_model_describes_it!();
    async fn embed(&self, texts: &[&str]) -> webrag::Result<Vec<Vec<f32>>> {
        let mut v = common::model().embed(texts).await?;
        match self.0 {
            0 => drop(v.pop()),
            1 => v[0].truncate(10),
            _ => v[0][3] = f32::NAN,
        }
        Ok(v)
    }
}

/// A broken embedder is a typed error (`MODEL_OUTPUT_INVALID`) at ingest and at search, never a
/// panic or a bad vector in an index; nothing already stored is lost.
#[test]
fn broken_embedder_output_is_a_typed_error() {
    pollster::block_on(async {
        for mode in 0..3 {
            let store = MemoryStore::new();
            let good = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
            let mut good = good;
            good.add(vec![doc("tea.txt", NOTES[2].1)], &mut NoProgress).await.expect("add");
            drop(good);
            let before = store.load().await.unwrap();
            let mut e = Engine::open(&store, Broken(mode), Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
            let err = e.add(vec![doc("rust.md", NOTES[0].1), doc("bread.md", NOTES[1].1)], &mut NoProgress).await.expect_err("bad output");
            assert_eq!(err.code(), "MODEL_OUTPUT_INVALID", "{mode}: {err}");
            assert_eq!(store.load().await.unwrap(), before, "{mode}: nothing written");
            let err = e.search("green tea", &SearchOptions::new(3, SearchMode::Dense)).await.expect_err("bad query vector");
            assert_eq!(err.code(), "MODEL_OUTPUT_INVALID");
            let hits = e.search("green tea", &SearchOptions::new(3, SearchMode::Bm25)).await.expect("bm25 needs no vector");
            assert_eq!(hits[0].doc_id, "tea.txt");
        }
    });
}

/// Ingest embeds in the embedder's preferred batch unless `embedBatch` says otherwise, and
/// reports an `embed` progress event after each call.
#[test]
fn ingest_batches_follow_the_embedder_unless_configured() {
    use webrag::embed::Embedder;
    // Small chunks: each part (about 40 word pieces) is a chunk of its own.
    let text: String = (0..9)
        .map(|i| format!("# Part {i}\n\nParagraph {i} is about topic number {i}, its history, its uses, its makers, its critics and its many variants across the years.\n\n"))
        .collect();
    for (configured, want) in [(None, 4usize), (Some(3), 3)] {
        let rec = Recording { preferred: 4, calls: Default::default() };
        let config = Config { embed_batch: configured, max_chunk_tokens: 48, target_chunk_tokens: 40, ..Config::default() };
        pollster::block_on(async {
            let mut e = Engine::open(MemoryStore::new(), &rec, config, Box::new(FixedClock(1.0))).await.expect("open");
            assert_eq!(e.embed_batch(), want);
            let mut events = Vec::new();
            let r = e
                .add(vec![doc("parts.md", &text)], &mut |ev: webrag::types::ProgressEvent| events.push((ev.phase, ev.done)))
                .await
                .expect("add");
            let calls = rec.calls.borrow().clone();
            assert!(r.chunks > want, "the document must need several calls: {} chunks", r.chunks);
            assert!(calls.iter().all(|&n| n <= want), "calls {calls:?} exceed {want}");
            assert_eq!(calls[0], want, "calls {calls:?}");
            let embeds = events.iter().filter(|(p, _)| *p == webrag::types::Phase::Embed).count();
            assert_eq!(embeds, r.chunks.div_ceil(want), "one embed event per call: {events:?}");
        });
        assert_eq!(rec.preferred_batch(), 4);
    }
}

/// An engine over a discarding store (a site build's) answers from its memory as one over a
/// keeping store does, its commits stay guarded by the commit count, and the store keeps nothing
/// but that count.
#[test]
fn discarding_store_keeps_the_count_alone() {
    pollster::block_on(async {
        let store = MemoryStore::discarding();
        let mut e = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
        let docs: Vec<_> = NOTES.iter().map(|(id, t)| DocumentInput { url: Some(id.to_string()), ..doc(id, t) }).collect();
        e.add(docs[..2].to_vec(), &mut NoProgress).await.expect("add");
        e.add(docs[2..].to_vec(), &mut NoProgress).await.expect("a second commit passes the generation check");
        let kept = seeded().await;
        for mode in [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid] {
            let opts = SearchOptions::new(3, mode);
            let q = "who owns a value? borrow checker";
            assert_eq!(ids(&e.search(q, &opts).await.expect("search")), ids(&kept.search(q, &opts).await.expect("search")), "{mode:?}");
        }
        let c = store.load().await.expect("load");
        assert!(c.documents.is_empty() && c.chunks.is_empty() && c.vectors.is_empty() && c.graph_nodes.is_empty());
        assert!(c.meta.iter().any(|m| m.id == webrag::ports::GENERATION_KEY), "the commit count is kept");
        assert!(!store.keeps(webrag::ports::Collection::Vectors) && store.keeps(webrag::ports::Collection::Meta));
        // A second engine on the same store, one commit behind, is refused.
        let mut stale = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
        e.add(vec![doc("more.md", "# More\n\nAnother note about kettles.")], &mut NoProgress).await.expect("add");
        let r = stale.add(vec![doc("late.md", "# Late\n\nA note written in another tab.")], &mut NoProgress).await;
        assert!(matches!(r, Err(Error::Store(StoreError::Conflict { .. }))), "{r:?}");
    });
}
