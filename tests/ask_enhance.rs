//! Tags and metadata on documents, filterable in `search` and `ask`; PIKE-RAG's auto-tagging and
//! forward summaries as resumable `enrich` stages — through the real client against the
//! scripted server on 127.0.0.1.
#![cfg(not(target_arch = "wasm32"))]
use crate::common;

use common::llm_server::LlmServer;
use serde_json::json;
use webrag::ask::enhance::{SummaryParams, TaggingParams, auto_tag, forward_summaries};
use webrag::ask::pipeline::{NoWeb, PipelineParams, run};
use webrag::config::Config;
use webrag::engine::{Engine, Exclusive, SearchOptions};
use webrag::ports::{FixedClock, MemoryStore, NoProgress, Op, Record, Store};
use webrag::schema::{MetaRecord, PostingRecord};
use webrag::types::{DocumentInput, Format, SearchFilter, SearchMode};

type Eng<'a> = Engine<&'a MemoryStore, &'static webrag::embed::CpuEmbedder>;

fn doc(id: &str, title: &str, text: &str, tags: &[&str], meta: &[(&str, &str)]) -> DocumentInput {
    DocumentInput {
        id: id.into(),
        title: Some(title.into()),
        text: text.into(),
        format: Format::Text,
        url: None,
        tags: tags.iter().map(|t| t.to_string()).collect(),
        meta: meta.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        lang: None,
    }
}

fn corpus() -> Vec<DocumentInput> {
    vec![
        doc(
            "acme",
            "Acme Corporation",
            "Acme Corporation was founded by Jane Roe in 1931 in Springfield.",
            &["Companies", "history"],
            &[("year", "1931")],
        ),
        doc("globex", "Globex", "Globex Corporation was founded by Hank Scorpio in Cypress Creek.", &["companies"], &[("year", "1989")]),
        doc("lyon", "Lyon", "Lyon is a city in France at the confluence of the Rhône and the Saône.", &["places"], &[]),
        doc("tea", "Green tea", "Green tea is made from leaves that are steamed or pan-fired soon after picking.", &[], &[]),
    ]
}

async fn engine(store: &MemoryStore, config: Config, docs: Vec<DocumentInput>) -> Eng<'_> {
    let mut eng = Engine::open(store, common::model(), config, Box::new(FixedClock(1.0))).await.expect("open");
    eng.add(docs, &mut NoProgress).await.expect("add");
    eng
}

fn filter(v: serde_json::Value) -> Option<SearchFilter> {
    Some(serde_json::from_value(v).expect("filter"))
}

async fn docs_found(eng: &Eng<'_>, q: &str, mode: SearchMode, f: Option<SearchFilter>) -> Vec<String> {
    let opts = SearchOptions { filter: f, ..SearchOptions::new(10, mode) };
    let mut d: Vec<String> = eng.search(q, &opts).await.unwrap().into_iter().map(|h| h.doc_id).collect();
    d.dedup();
    d
}

#[test]
fn tags_and_metadata_filter_every_retriever_and_the_ask_pipeline() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store, Config::default(), corpus()).await;
        assert_eq!(eng.corpus().document("acme").unwrap().tags, ["companies", "history"], "tags are normalized");
        for mode in [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid, SearchMode::HybridGraph, SearchMode::Graph] {
            let all = docs_found(&eng, "founded corporation city", mode, None).await;
            assert!(all.len() >= 2, "{mode:?}: {all:?}");
            let companies = docs_found(&eng, "founded corporation city", mode, filter(json!({"tags": ["COMPANIES"]}))).await;
            assert!(!companies.is_empty() && companies.iter().all(|d| d == "acme" || d == "globex"), "{mode:?}: {companies:?}");
            let one = docs_found(&eng, "founded corporation city", mode, filter(json!({"docIds": ["lyon"]}))).await;
            assert!(one.iter().all(|d| d == "lyon"), "{mode:?}: {one:?}");
            let meta =
                docs_found(&eng, "founded corporation", mode, filter(json!({"tags": ["companies"], "meta": {"year": "1989"}}))).await;
            assert!(meta.iter().all(|d| d == "globex"), "{mode:?}: {meta:?}");
            assert!(docs_found(&eng, "founded", mode, filter(json!({"tags": ["nothing"]}))).await.is_empty(), "{mode:?}");
        }
        // Dense with a filter scans the filter's chunks exactly: the best of them is found even
        // when the query is about something else.
        let tea = docs_found(&eng, "corporation founders", SearchMode::Dense, filter(json!({"docIds": ["tea"]}))).await;
        assert_eq!(tea, ["tea"]);
        assert!(serde_json::from_value::<SearchFilter>(json!({"tag": ["x"]})).is_err(), "unknown filter fields are refused");

        // Re-adding: the same tags → unchanged; other tags → replaced, and the filter follows.
        let r = eng.add(corpus(), &mut NoProgress).await.unwrap();
        assert_eq!(r.unchanged.len(), 4);
        let mut moved = corpus();
        moved[3].tags = vec!["drinks".into()];
        let r = eng.add(moved, &mut NoProgress).await.unwrap();
        assert_eq!(r.replaced, ["tea"]);
        assert_eq!(docs_found(&eng, "leaves", SearchMode::Bm25, filter(json!({"tags": ["drinks"]}))).await, ["tea"]);
        // Bad tags and metadata are typed errors naming the document; nothing is written.
        let before = eng.stats();
        for bad in [
            doc("x", "X", "text", &[""], &[]),
            doc("x", "X", "text", &[&"t".repeat(65)], &[]),
            doc("x", "X", "text", &(0..33).map(|_| "t").collect::<Vec<_>>(), &[]),
            doc("x", "X", "text", &[], &[("", "v")]),
        ] {
            let e = eng.add(vec![bad], &mut NoProgress).await.unwrap_err();
            assert_eq!(e.code(), "INVALID_OPTION");
            assert!(e.to_string().contains("documents[\"x\"]"), "{e}");
        }
        assert_eq!(eng.stats(), before);

        // Ask within a scope: every source comes from the scope's documents; the older
        // `filter: "strict"` still sets the knowledge filter.
        let s = LlmServer::start();
        s.rules(json!([{ "match": "Task: answer", "reply": { "content": "Lyon [S1].\nConfidence: high" } }]));
        let p: PipelineParams = serde_json::from_value(json!({"preset": "light", "filter": {"tags": ["places"]}})).unwrap();
        let r = run(&s.client(), &mut eng, None::<&NoWeb>, "Who founded Acme Corporation?", &p, &FixedClock(0.0), &mut |_| {}, &mut |_| {})
            .await
            .unwrap();
        assert!(!r.context.is_empty());
        for c in &r.context {
            match eng.corpus().chunk(&c.source.id) {
                Some(ch) => assert_eq!(ch.doc_id, "lyon", "{c:?}"),
                None => assert!(c.source.id == "graph:1" && c.source.title == "Lyon", "{c:?}"),
            }
        }
        let p: PipelineParams = serde_json::from_value(json!({"filter": "strict"})).unwrap();
        assert_eq!(p.filter_strength(), webrag::ask::pipeline::FilterStrength::Strict);
        assert!(p.scope().is_none());
        let p: PipelineParams = serde_json::from_value(json!({"preset": "L1", "knowledgeFilter": "lenient"})).unwrap();
        assert_eq!(p.filter_strength(), webrag::ask::pipeline::FilterStrength::Lenient);
    });
}

#[test]
fn auto_tagging_tags_each_document_once_from_the_vocabulary_and_resumes() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store, Config::default(), corpus()).await;
        let s = LlmServer::start();
        // Documents by id: acme, globex, lyon, tea. Globex's reply stays unreadable.
        s.rules(json!([
            { "match": "<data>Globex</data>", "reply": { "content": "I like it." } },
            { "match": "could not be used", "reply": { "content": "Still prose." } },
            { "match": "Task: tags", "reply": { "content": "{\"tags\": [\"Business\", \"business\", \"places\", \"Off-List\"]}" } }
        ]));
        let p = TaggingParams { vocabulary: vec!["business".into(), "places".into(), "drinks".into()], ..Default::default() };
        let mut events = Vec::new();
        let r = auto_tag(&Exclusive::new(&mut eng), &s.client(), &p, None, &FixedClock(0.0), &mut NoProgress, &mut |e| events.push(e))
            .await
            .unwrap();
        assert_eq!((r.documents, r.tags, r.failed.as_slice(), r.remaining), (3, 6, &["globex".to_string()][..], 1));
        assert_eq!(eng.corpus().document("acme").unwrap().auto_tags, ["business", "places"], "deduplicated, from the vocabulary only");
        assert_eq!(eng.corpus().document("acme").unwrap().tags, ["companies", "history"], "the given tags stay");
        assert!(events.iter().any(|e| e.step == "tags" && e.output["fallback"].is_string()));
        assert_eq!(docs_found(&eng, "founded", SearchMode::Bm25, filter(json!({"tags": ["business"]}))).await, ["acme"]);
        // The next pass asks only for what is left, and the tags survive a reopen.
        s.reset();
        s.rules(json!([{ "match": "Task: tags", "reply": { "content": "{\"tags\": [\"business\"]}" } }]));
        let r = auto_tag(&Exclusive::new(&mut eng), &s.client(), &p, None, &FixedClock(0.0), &mut NoProgress, &mut |_| {}).await.unwrap();
        assert_eq!((r.documents, r.remaining), (1, 0));
        assert_eq!(s.log().len(), 1);
        drop(eng);
        let eng = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.unwrap();
        assert_eq!(eng.corpus().document("globex").unwrap().auto_tags, ["business"]);
        assert!(eng.corpus().untagged().is_empty());
        // Editing a document clears its automatic tags (they were about the old text).
        let mut eng = eng;
        let mut edited = corpus();
        edited[0].text = "Acme Corporation now makes anvils.".into();
        eng.add(edited, &mut NoProgress).await.unwrap();
        assert_eq!(eng.corpus().untagged(), ["acme"]);
    });
}

#[test]
fn forward_summaries_carry_the_preceding_text_into_each_chunk_and_resume() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let config = Config { max_chunk_tokens: 48, target_chunk_tokens: 40, ..Config::default() };
        let text = "Acme Corporation was founded by Jane Roe in 1931 in Springfield, where it made anvils and rockets for many years.\n\n\
The company moved its head office to Lyon in 1950 and opened a second factory there, near the river.\n\n\
It closed in 1999 after a long decline, and its archives went to the city library of Lyon.";
        let mut eng = engine(&store, config.clone(), vec![doc("acme", "Acme", text, &[], &[])]).await;
        let ids: Vec<String> = eng.corpus().chunks_of("acme").iter().map(|c| c.id.clone()).collect();
        assert_eq!(ids.len(), 3, "three chunks");
        assert_eq!(eng.corpus().unsummarized(), ids[1..]);
        let before = eng.chunk_vector(&ids[2]).unwrap().to_vec();
        // BM25 over the chunks' own text: only the first names Springfield.
        let bm25 = SearchOptions::new(10, SearchMode::Bm25);
        let found = async |eng: &mut Engine<&MemoryStore, &'static webrag::embed::CpuEmbedder>| -> Vec<String> {
            let mut v: Vec<String> = eng.search("Springfield", &bm25).await.unwrap().into_iter().map(|h| h.chunk_id).collect();
            v.sort();
            v
        };
        assert_eq!(found(&mut eng).await, ids[..1]);
        let s = LlmServer::start();
        // The second chunk's summary; then a server error on the third: the first is committed.
        s.script(json!([
            { "content": "{\"summary\": \"Acme Corporation, founded by Jane Roe in 1931 in Springfield, made anvils.\"}" },
            { "status": 500 }
        ]));
        let p = SummaryParams { batch: 8, ..Default::default() };
        let e = forward_summaries(&Exclusive::new(&mut eng), &s.client(), &p, None, &FixedClock(0.0), &mut NoProgress, &mut |_| {})
            .await
            .unwrap_err();
        assert_eq!(e.code(), "LLM_HTTP");
        assert_eq!(eng.corpus().unsummarized(), ids[2..], "what was done is committed");
        // Resume: the third chunk's prompt carries the second chunk's summary and text.
        s.reset();
        s.script(json!([{ "content": "{\"summary\": \"Acme Corporation moved from Springfield to Lyon in 1950.\"}" }]));
        let r = forward_summaries(&Exclusive::new(&mut eng), &s.client(), &p, None, &FixedClock(0.0), &mut NoProgress, &mut |_| {})
            .await
            .unwrap();
        assert_eq!((r.chunks, r.remaining), (1, 0));
        let prompt = s.log()[0]["body"]["messages"][1]["content"].as_str().unwrap().to_string();
        assert!(prompt.contains("<data>Acme Corporation, founded by Jane Roe in 1931 in Springfield, made anvils.</data>"), "{prompt}");
        assert!(prompt.contains("The company moved its head office to Lyon"), "{prompt}");
        let summary = eng.corpus().chunk(&ids[2]).unwrap().forward_summary.clone();
        assert_eq!(summary.as_deref(), Some("Acme Corporation moved from Springfield to Lyon in 1950."));
        assert_eq!(eng.corpus().chunk(&ids[0]).unwrap().forward_summary, None, "the first chunk has none");
        // The chunk was embedded again with its summary: "It closed" is now closer to a
        // question about Acme moving to Lyon.
        let after = eng.chunk_vector(&ids[2]).unwrap().to_vec();
        assert_ne!(before, after);
        use webrag::embed::Embedder;
        let q = eng.embedder().embed_checked(&["Acme Corporation in Lyon"]).await.unwrap().pop().unwrap();
        let cos = |v: &[f32]| v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
        assert!(cos(&after) > cos(&before) + 0.02, "{} → {}", cos(&before), cos(&after));
        // Stored: a reopen reads the summary and the new vector (nothing is embedded again).
        drop(eng);
        let mut eng = Engine::open(&store, common::model(), config.clone(), Box::new(FixedClock(1.0))).await.unwrap();
        assert_eq!(eng.corpus().chunk(&ids[2]).unwrap().forward_summary, summary);
        assert_eq!(eng.chunk_vector(&ids[2]).unwrap().to_vec(), after);
        // BM25 indexes the summaries with their chunks (both name Springfield), stored: the
        // reopened engine finds them too.
        assert_eq!(found(&mut eng).await, ids, "every chunk: the first by its text, the others by their summaries");
        // A store of the version before (postings without the summaries) derives them again.
        let stored = store.load().await.unwrap();
        let current: Vec<_> = stored.postings.clone();
        let mut ops: Vec<Op> = stored
            .postings
            .iter()
            .filter(|p| p.id != ids[0])
            .map(|p| {
                Op::Put(Record::Posting(PostingRecord {
                    terms: p.terms.iter().filter(|(t, _)| t != "springfield").cloned().collect(),
                    ..p.clone()
                }))
            })
            .collect();
        ops.push(Op::Put(Record::Meta(MetaRecord { id: "analyzer".into(), value: "2".into() })));
        store.commit(ops).await.unwrap();
        drop(eng);
        let mut eng = Engine::open(&store, common::model(), config.clone(), Box::new(FixedClock(1.0))).await.unwrap();
        assert_eq!(found(&mut eng).await, ids);
        let repaired = store.load().await.unwrap();
        assert_eq!(repaired.postings, current, "derived again and stored");
        assert!(repaired.meta.iter().any(|m| m.id == "analyzer" && m.value == webrag::text::ANALYZER_VERSION.to_string()));
        // The answer's context reads the chunk with its summary ahead of it.
        use webrag::ask::KnowledgeBase;
        let (_, text) = eng.chunk_text(&ids[2]).await.unwrap().unwrap();
        assert!(text.starts_with("(Before this passage: Acme Corporation moved from Springfield to Lyon in 1950.)\nIt closed"), "{text}");
        let (_, first) = eng.chunk_text(&ids[0]).await.unwrap().unwrap();
        assert!(first.starts_with("Acme Corporation was founded"), "no summary, the text alone: {first}");
    });
}

/// A model that, at each call, takes the shared engine (which `enrich` must not hold while it
/// waits on the model), searches it, and on the first call about `edit` replaces that document;
/// then asks the scripted server.
struct Probe<'a> {
    db: &'a futures::lock::Mutex<webrag::engine::LazyEngine<&'a MemoryStore, &'static webrag::embed::CpuEmbedder>>,
    client: webrag::llm::openai::OpenAiClient<webrag::native::http::UreqTransport>,
    edit: Vec<(&'static str, &'static str)>,
    searches: std::cell::RefCell<Vec<usize>>,
    edited: std::cell::RefCell<Vec<String>>,
}

impl webrag::llm::LanguageModel for Probe<'_> {
    async fn chat(
        &self,
        messages: &[webrag::llm::ChatMessage],
        opts: &webrag::llm::ChatOptions,
    ) -> Result<String, webrag::error::LlmError> {
        {
            let mut lazy = self.db.try_lock().expect("enrich holds the engine while the model answers");
            let hits = lazy.search("founded", &SearchOptions::new(5, SearchMode::Bm25)).await.expect("search");
            self.searches.borrow_mut().push(hits.len());
            let prompt = &messages[1].content;
            for (task, id) in &self.edit {
                if prompt.contains(task)
                    && prompt.contains(&format!("<data>{}", corpus().iter().find(|d| d.id == *id).unwrap().title.clone().unwrap()))
                    && !self.edited.borrow().contains(&id.to_string())
                {
                    let mut d = corpus().into_iter().find(|d| d.id == *id).unwrap();
                    d.text = format!("{} It was rewritten while the model read it.", d.text);
                    lazy.engine().await.unwrap().add(vec![d], &mut NoProgress).await.expect("re-add");
                    self.edited.borrow_mut().push(id.to_string());
                }
            }
        }
        self.client.chat(messages, opts).await
    }
}

#[test]
fn enrich_leaves_the_engine_free_while_the_model_answers_and_drops_replies_about_changed_documents() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        drop(engine(&store, Config::default(), corpus()).await);
        let lazy = webrag::engine::LazyEngine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.unwrap();
        let db = futures::lock::Mutex::new(lazy);
        let s = LlmServer::start();
        s.rules(json!([
            { "match": "Task: tags", "reply": { "content": "{\"tags\": [\"business\"]}" } },
            { "match": "Task: atomize", "reply": { "content": "{\"questions\": [\"Who founded what?\"]}" } }
        ]));
        // Globex changes while its tags are asked for, Lyon while its questions are.
        let probe = Probe {
            db: &db,
            client: s.client(),
            edit: vec![("Task: tags", "globex"), ("Task: atomize", "lyon")],
            searches: Default::default(),
            edited: Default::default(),
        };
        let p: webrag::ask::ingest::EnrichParams =
            serde_json::from_value(json!({"tags": true, "atomize": {"batch": 1}, "mindMaps": false})).unwrap();
        let r = webrag::ask::ingest::enrich(&db, &probe, &p, &FixedClock(0.0), &mut NoProgress, &mut |_| {}).await.unwrap();
        // Every model call found the engine free, and its search answered.
        assert_eq!(probe.searches.borrow().len(), s.log().len());
        assert!(probe.searches.borrow().iter().all(|&n| n > 0));
        assert_eq!(*probe.edited.borrow(), ["globex", "lyon"]);
        let tags = r.tags.unwrap();
        assert_eq!((tags.documents, tags.remaining), (3, 1), "globex's tags were about its old text");
        let atoms = r.atomize.unwrap();
        assert_eq!((atoms.chunks, atoms.remaining), (3, 1), "lyon's questions were about its old text");
        let mut lazy = db.lock().await;
        let eng = lazy.engine().await.unwrap();
        assert_eq!(eng.corpus().untagged(), ["globex", "lyon"], "replaced documents lose their automatic tags");
        assert!(eng.corpus().document("acme").unwrap().auto_tags.contains(&"business".to_string()));
        let lyon = eng.corpus().chunks_of("lyon")[0].id.clone();
        assert!(eng.ask_store().questions(&lyon).is_none_or(|q| q.is_empty()), "{:?}", eng.ask_store().questions(&lyon));
        assert_eq!(eng.ask_store().unatomized(eng.corpus()), [lyon]);
    });
}
