//! Ingest-time LLM stages (knowledge atomizing, LLM mind maps) and the whole ask pipeline,
//! through the real OpenAI-compatible client against the scripted server over HTTP on
//! 127.0.0.1, on engines with the real model: resumable atomizing, FCI verification with
//! bounded regeneration and the structural fallback, every pipeline step with its trace, the
//! retrieval trigger, presets, cancellation, and nothing stored lost on faults.
#![cfg(not(target_arch = "wasm32"))]
use crate::common;

use common::llm_server::LlmServer;
use serde_json::json;
use webrag::ask::ingest::{AtomizeParams, MindMapParams, atomize, build_mind_maps, rouge_l};
use webrag::ask::pipeline::{NoWeb, PipelineParams, run};
use webrag::ask::{DecomposeParams, TraceEvent, Via, decompose};
use webrag::config::Config;
use webrag::embed::Embedder;
use webrag::engine::{Engine, Exclusive};
use webrag::llm::{Cancel, WithCancel};
use webrag::native::http::UreqTransport;
use webrag::ports::{FixedClock, MemoryStore, NoProgress};
use webrag::types::{DocumentInput, Format};

type Eng<'a> = Engine<&'a MemoryStore, &'static webrag::embed::CpuEmbedder>;

fn doc(id: &str, title: &str, text: &str) -> DocumentInput {
    DocumentInput { id: id.into(), title: Some(title.into()), text: text.into(), format: Format::Text, ..Default::default() }
}

const ACME: &str = "Acme Corporation was founded by Jane Roe in 1931 in Springfield.";
const ROE: &str = "Jane Roe was an engineer born in Lyon, France, who later moved to Springfield.";
const LYON: &str = "Lyon is a city in France at the confluence of the Rhône and the Saône.";
const TEA: &str = "Green tea is made from leaves that are steamed or pan-fired soon after picking.";

async fn engine(store: &MemoryStore) -> Eng<'_> {
    let mut eng = Engine::open(store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
    eng.add(
        vec![doc("acme", "Acme Corporation", ACME), doc("lyon", "Lyon", LYON), doc("roe", "Jane Roe", ROE), doc("tea", "Green tea", TEA)],
        &mut NoProgress,
    )
    .await
    .expect("add");
    eng
}

fn client(s: &LlmServer) -> impl webrag::llm::LanguageModel {
    s.client()
}

fn q(list: &[&str]) -> serde_json::Value {
    json!({ "content": json!({ "questions": list }).to_string() })
}

#[test]
fn atomizing_indexes_questions_and_an_interrupted_pass_resumes_where_it_stopped() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store).await;
        assert_eq!(eng.ask_store().unatomized(eng.corpus()).len(), 4);
        let s = LlmServer::start();
        // Chunks in document order: acme, lyon, roe, tea; two per commit. The third call fails
        // with a 500 (no retries configured): the pass ends with LLM_HTTP after committing
        // acme, lyon (first batch) and tea (its batch-mate).
        s.script(json!([
            q(&["Who founded Acme Corporation?", "When was Acme Corporation founded?"]),
            q(&["Which rivers meet at Lyon?"]),
            { "status": 500 },
            q(&["How is green tea made?"])
        ]));
        let p = AtomizeParams { batch: 2, ..Default::default() };
        let mut events: Vec<TraceEvent> = Vec::new();
        let mut phases = Vec::new();
        let e = atomize(
            &Exclusive::new(&mut eng),
            &client(&s),
            &p,
            None,
            &FixedClock(0.0),
            &mut |ev: webrag::types::ProgressEvent| phases.push((ev.done, ev.total)),
            &mut |ev| events.push(ev),
        )
        .await
        .unwrap_err();
        assert_eq!(e.code(), "LLM_HTTP");
        assert_eq!(phases, vec![(0, 4), (2, 4), (4, 4)]);
        assert_eq!(events.iter().map(|e| e.step.as_str()).collect::<Vec<_>>(), vec!["atomize", "atomize"]);
        let roe = eng.corpus().chunk_ids("roe")[0].clone();
        assert_eq!(eng.ask_store().unatomized(eng.corpus()), vec![roe.clone()], "only the failed chunk is left");
        assert_eq!(eng.stats().questions, 4);
        assert_eq!(eng.stats().documents, 4, "nothing stored is lost");
        let prompt = s.log()[0]["body"]["messages"][1]["content"].as_str().unwrap().to_string();
        assert!(
            prompt.starts_with("Task: atomize\nDocument: <data>Acme Corporation</data>\nPassage: <data>Acme Corporation was founded"),
            "{prompt}"
        );

        // The questions are stored: a reopened engine has them and resumes with the one chunk.
        drop(eng);
        let mut eng = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("reopen");
        assert_eq!(eng.stats().questions, 4);
        assert_eq!(eng.ask_store().questions(&eng.corpus().chunk_ids("acme")[0].clone()).unwrap().len(), 2);
        assert_eq!(eng.ask_store().unatomized(eng.corpus()), vec![roe.clone()]);
        let before = s.log().len();
        // An unreadable reply (twice: the repair attempt too) leaves the chunk for later.
        s.script(json!([{ "content": "no idea" }, { "content": "still no JSON" }]));
        let r = atomize(&Exclusive::new(&mut eng), &client(&s), &p, None, &FixedClock(0.0), &mut NoProgress, &mut |_| {}).await.unwrap();
        assert_eq!((r.chunks, r.failed.clone(), r.remaining), (0, vec![roe.clone()], 1));
        s.script(json!([q(&["Where was Jane Roe born?"])]));
        let r = atomize(&Exclusive::new(&mut eng), &client(&s), &p, None, &FixedClock(0.0), &mut NoProgress, &mut |_| {}).await.unwrap();
        assert_eq!((r.chunks, r.questions, r.remaining), (1, 1, 0));
        assert_eq!(s.log().len(), before + 3, "the resumed passes asked only about the chunk left");

        // Search mode `atomic`: query → questions → chunks (b) fused with query → chunks (a).
        let hits = eng
            .search("Which rivers meet at Lyon?", &webrag::engine::SearchOptions::new(2, webrag::types::SearchMode::Atomic))
            .await
            .unwrap();
        assert_eq!(hits[0].doc_id, "lyon");
        assert!(
            hits[0].scores.atomic.unwrap() > 0.99 && hits[0].scores.atomic_rank == Some(1) && hits[0].scores.dense.is_some(),
            "{:?}",
            hits[0].scores
        );

        // Path (b): the decomposer's candidates now come from atomic questions.
        s.script(json!([
            { "content": "{\"decompose\": true, \"questions\": [\"In which city was Jane Roe born?\"]}" },
            { "content": "{\"choice\": 0, \"answer\": \"Lyon\"}" },
            { "content": "{\"decompose\": false}" }
        ]));
        let t = decompose(&client(&s), &mut eng, "Where was Jane Roe born?", &DecomposeParams::default(), &FixedClock(0.0), &mut |_| {})
            .await
            .unwrap();
        let first = &t.rounds[0].candidates[0];
        assert_eq!((first.via, first.question.as_str(), first.chunk_id.as_str()), (Via::Atomic, "Where was Jane Roe born?", roe.as_str()));
        assert_eq!(t.context, vec![roe.clone()]);

        // Replacing a document drops its questions (store and index); removing one too.
        eng.add(vec![doc("roe", "Jane Roe", "Jane Roe was an engineer.")], &mut NoProgress).await.unwrap();
        assert_eq!((eng.stats().questions, eng.ask_store().unatomized(eng.corpus()).len()), (4, 1));
        eng.remove(&["acme".to_string()]).await.unwrap();
        assert_eq!(eng.stats().questions, 2);
        drop(eng);
        let eng = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("reopen");
        assert_eq!((eng.stats().questions, eng.stats().atomized_chunks), (2, 2));
    });
}

#[test]
fn llm_mind_maps_verify_fact_check_items_regenerate_and_fall_back() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store).await;
        let s = LlmServer::start();
        let items = |v: &[&str]| json!({ "content": json!({ "items": v }).to_string() });
        // Documents in id order: acme, lyon, roe, tea (one chunk each).
        s.script(json!([
            // acme: the first items are not in the text (verification fails), the regeneration is.
            items(&["Bananas are yellow and rich in potassium."]),
            items(&["Acme Corporation was founded by Jane Roe in 1931.", "Acme Corporation was founded in Springfield."]),
            { "content": "```json\n{\"Acme Corporation\": {\"History\": {\"Founding\": [\"Founded by Jane Roe\", \"in 1931\"], \"Place\": \"Founded in Springfield.\"}}}\n```" },
            // lyon: verified at once; the mind map stays unreadable after its repair → structural.
            items(&["Lyon is a city in France.", "Lyon is at the confluence of the Rhône and the Saône."]),
            { "content": "a mind map, roughly" },
            { "content": "{\"Lyon\": {}}" },
            // roe: the endpoint refuses: the pass ends, acme and lyon stay done.
            { "status": 401 }
        ]));
        let mut events: Vec<TraceEvent> = Vec::new();
        let e = build_mind_maps(
            &Exclusive::new(&mut eng),
            &client(&s),
            &MindMapParams::default(),
            None,
            &FixedClock(0.0),
            &mut NoProgress,
            &mut |ev| events.push(ev),
        )
        .await
        .unwrap_err();
        assert_eq!(e.code(), "LLM_UNAUTHORIZED");
        let fci = &events[0].output[0];
        assert_eq!(fci["verified"], true);
        let scores = fci["scores"].as_array().unwrap();
        assert_eq!(scores.len(), 2, "one regeneration: {fci}");
        assert!(
            scores[0][0].as_f64().unwrap() < 0.15 && scores[1][0].as_f64().unwrap() >= 0.15 && scores[1][1].as_f64().unwrap() >= 0.85,
            "{scores:?}"
        );
        let regen = s.log()[1]["body"]["messages"][1]["content"].as_str().unwrap().to_string();
        assert!(regen.contains("did not match the text closely enough (ROUGE-L"), "{regen}");

        assert_eq!(eng.corpus().document("acme").unwrap().mind_map, Some(webrag::schema::MindMapKind::Llm));
        let map = eng.graph().mind_map("acme").expect("acme's map");
        let paths: Vec<Vec<String>> = map.fact_paths().into_iter().map(|p| p.0.into_iter().map(String::from).collect()).collect();
        assert_eq!(
            paths,
            vec![vec!["History", "Founding", "Founded by Jane Roe; in 1931"], vec!["History", "Place", "Founded in Springfield."]]
        );
        assert_eq!(eng.corpus().document("lyon").unwrap().mind_map, Some(webrag::schema::MindMapKind::StructuralFallback));
        assert!(eng.graph().mind_map("lyon").unwrap().facts() > 0, "the structural map stays");
        assert_eq!(eng.corpus().document("roe").unwrap().mind_map, None);
        // The LLM facts are searchable through the graph, with chunk provenance.
        let qv = eng.embedder().embed_checked(&["When was Acme founded?"]).await.unwrap().pop().unwrap();
        let gs = eng.graph_search("When was Acme founded?", &qv, 3);
        assert_eq!(gs.hits[0].doc_id, "acme");
        assert_eq!(gs.hits[0].chunk_id, eng.corpus().chunk_ids("acme")[0]);
        // Persisted: a reopened engine has the LLM map and resumes with roe and tea.
        drop(eng);
        let mut eng = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("reopen");
        assert_eq!(eng.graph().mind_map("acme").unwrap().fact_paths().len(), 2);
        s.script(json!([
            items(&["Jane Roe was an engineer born in Lyon, France.", "Jane Roe later moved to Springfield."]),
            { "content": "{\"Jane Roe\": {\"Life\": {\"Birth\": \"Born in Lyon, France.\", \"Career\": \"An engineer.\"}}}" },
            items(&["Green tea is made from leaves steamed or pan-fired soon after picking."]),
            { "content": "{\"Green tea\": {\"Making\": \"Leaves are steamed or pan-fired after picking.\"}}" }
        ]));
        let before = s.log().len();
        let r = build_mind_maps(
            &Exclusive::new(&mut eng),
            &client(&s),
            &MindMapParams::default(),
            None,
            &FixedClock(0.0),
            &mut NoProgress,
            &mut |_| {},
        )
        .await
        .unwrap();
        assert_eq!((r.documents, r.fallbacks.len(), r.unverified_chunks), (2, 0, 0));
        assert_eq!(s.log().len(), before + 4);
        assert_eq!(eng.corpus().document("roe").unwrap().mind_map, Some(webrag::schema::MindMapKind::Llm));
        assert!(rouge_l("Jane Roe was an engineer born in Lyon", ROE) > 0.5);
    });
}

fn pipeline_script() -> serde_json::Value {
    json!([
        { "content": "{\"question\": \"Where was the founder of Acme Corporation born?\", \"queries\": [\"Acme Corporation founder\"]}" },
        { "content": "{\"route\": \"both\"}" },
        { "content": "{\"keyPoints\": [\"founder of Acme Corporation\", \"birthplace of Jane Roe\"]}" },
        { "content": "{\"decompose\": true, \"questions\": [\"Where was Jane Roe born?\"]}" },
        { "content": "{\"choice\": 0, \"answer\": \"Lyon\"}" },
        { "content": "{\"decompose\": false}" },
        { "content": "{\"sufficient\": false, \"queries\": [\"Lyon France city\"]}" },
        { "content": "{\"query\": \"\\\"Lyon\\\" city^2 -tea\"}" },
        { "content": "{\"relevant\": true}" },
        { "content": "{\"document\": \"Lyon is a large city in France, where two rivers meet.\"}" },
        // One label per source, filled in by the test from the filter prompt.
    ])
}

#[test]
fn the_ask_preset_runs_every_step_traces_them_and_updates_memory() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store).await;
        let s = LlmServer::start();
        s.script(pipeline_script());
        // Filter: the scripted labels drop the graph's source (third); then the answer.
        s.rules(json!([
            { "match": "Task: filter", "times": 1, "reply": { "content": "{\"labels\": [\"entailment\", \"neutral\", \"contradiction\", \"entailment\"]}" } },
            { "match": "Task: answer", "times": 1, "reply": { "stream": ["Jane Roe, ", "Acme's founder [S1], ", "was born in Lyon [S2].", "\nConfidence: high"] } }
        ]));
        let mut events: Vec<TraceEvent> = Vec::new();
        let mut tokens = String::new();
        // (The summarize step has its own test, tests/ask_presets.rs.)
        let steps = json!({"summarize": false}).as_object().unwrap().clone();
        let p = PipelineParams { keep_trace: true, steps, ..Default::default() };
        let r = run(
            &client(&s),
            &mut eng,
            None::<&NoWeb>,
            "Where was Acme's founder born?",
            &p,
            &FixedClock(0.0),
            &mut |t| tokens.push_str(t),
            &mut |e| events.push(e),
        )
        .await
        .unwrap();
        let steps: Vec<&str> = events.iter().map(|e| e.step.as_str()).collect();
        assert_eq!(
            steps,
            vec![
                "rewrite",
                "route",
                "retrieve",
                "keyPoints",
                "propose",
                "retrieve",
                "select",
                "propose",
                "verify",
                "sparse",
                "dense",
                "filter",
                "answer",
                "memory"
            ],
        );
        assert_eq!(r.clarified, "Where was the founder of Acme Corporation born?");
        assert_eq!(r.route, webrag::ask::pipeline::Route::Both);
        // Key points went to PGR together.
        assert_eq!(events[3].output["keyPoints"], json!(["founder of Acme Corporation", "birthplace of Jane Roe"]));
        // The sparse searcher used the BM25 syntax the model wrote.
        assert_eq!(events[9].output["queries"], json!(["\"Lyon\" city^2 -tea"]));
        let log = s.log();
        let filter_prompt = log
            .iter()
            .find_map(|l| l["body"]["messages"][1]["content"].as_str().filter(|c| c.starts_with("Task: filter")))
            .unwrap()
            .to_string();
        assert_eq!(filter_prompt.matches("<data>").count(), 8, "four sources (title and text) were judged: {filter_prompt}");
        assert!(
            filter_prompt.contains("[2] <data>Acme Corporation, Jane Roe, Green tea</data> <data>Acme Corporation\n  - "),
            "the graph's mind-map context: {filter_prompt}"
        );
        let vias: Vec<&str> = r.context.iter().map(|c| c.via.as_str()).collect();
        assert_eq!(
            vias,
            vec!["decompose", "rewrite", "sparse"],
            "decomposition's sources first; the contradiction (the graph's source) was filtered out; neutral kept (lenient)"
        );
        let a = r.answer.as_ref().unwrap();
        assert_eq!(tokens, "Jane Roe, Acme's founder [S1], was born in Lyon [S2].", "withheld: the final text once, no confidence line");
        assert_eq!(a.citations, vec![r.context[0].source.id.clone(), r.context[1].source.id.clone()]);
        // Memory: the answered sub-question and the answer; the trace was kept.
        assert_eq!(r.remembered, 2);
        let titles: Vec<String> = eng.ask_store().memory().into_iter().map(|m| m.title).collect();
        assert_eq!(titles, vec!["Where was Jane Roe born?".to_string(), "Where was the founder of Acme Corporation born?".to_string()]);
        assert_eq!(eng.ask_store().traces().len(), 1);
        let kept: serde_json::Value = serde_json::from_str(&eng.ask_store().traces()[0].json).unwrap();
        assert_eq!(kept["events"].as_array().unwrap().len(), steps.len());
        // Exported as kept (one line per trace), and as SFT pairs: one per sub-question, plus
        // the final "no more decomposition" pair.
        use webrag::ask::{TraceFormat, export_traces};
        assert_eq!(export_traces(eng.ask_store().traces(), TraceFormat::Events), format!("{}\n", eng.ask_store().traces()[0].json));
        let sft = export_traces(eng.ask_store().traces(), "sft".parse().unwrap());
        let pairs: Vec<serde_json::Value> = sft.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let subs = kept["trajectory"]["rounds"].as_array().unwrap().iter().filter(|r| !r["subQuestion"].is_null()).count();
        assert_eq!(pairs.len(), subs + 1, "{sft}");
        assert_eq!(pairs.last().unwrap()["completion"], "<decompose>False</decompose>");
        assert_eq!("csv".parse::<TraceFormat>().unwrap_err().to_string(), "invalid option format: \"csv\" is not \"events\" or \"sft\"");

        // Retrieval trigger: with θ = 2 the two memory entries answer a close question, no
        // retrieval and no other step runs.
        s.reset();
        s.script(json!([{ "content": "{\"labels\": [\"entailment\", \"neutral\"]}" }, { "content": "Lyon [S1].\nConfidence: high" }]));
        let p = PipelineParams { theta: 2, ..Default::default() };
        let mut steps = Vec::new();
        let r = run(
            &client(&s),
            &mut eng,
            None::<&NoWeb>,
            "Where was Jane Roe, the founder of Acme, born?",
            &p,
            &FixedClock(0.0),
            &mut |_| {},
            &mut |e| steps.push(e.step),
        )
        .await
        .unwrap();
        assert_eq!(r.route, webrag::ask::pipeline::Route::Memory);
        assert_eq!(steps, vec!["trigger", "filter", "answer"], "the trigger fired: no rewrite, retrieval or decomposition");
        assert!(r.context.iter().all(|c| c.via == "memory") && r.context.len() == 2);
        assert_eq!(eng.ask_store().memory().len(), 2, "an answer from memory is not remembered again");
    });
}

#[test]
fn the_search_preset_makes_no_model_call_and_steps_switch_individually() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store).await;
        let s = LlmServer::start();
        let p: PipelineParams = serde_json::from_value(json!({"preset": "search"})).unwrap();
        let r = run(&client(&s), &mut eng, None::<&NoWeb>, "Who founded Acme Corporation?", &p, &FixedClock(0.0), &mut |_| {}, &mut |_| {})
            .await
            .unwrap();
        assert!(r.answer.is_none());
        assert!(s.log().is_empty(), "no model call");
        assert!(r.context.iter().any(|c| eng.corpus().chunk(&c.source.id).is_some_and(|ch| ch.doc_id == "acme")));
        // The search preset with only the answer on: one call.
        s.script(json!([{ "content": "Jane Roe [S2].\nConfidence: medium" }]));
        let p: PipelineParams = serde_json::from_value(json!({"preset": "search", "steps": {"answer": true}})).unwrap();
        let r = run(&client(&s), &mut eng, None::<&NoWeb>, "Who founded Acme Corporation?", &p, &FixedClock(0.0), &mut |_| {}, &mut |_| {})
            .await
            .unwrap();
        assert_eq!(s.log().len(), 1);
        assert!(r.answer.unwrap().known);
        // Bad options are typed errors.
        let p: PipelineParams = serde_json::from_value(json!({"steps": {"rewrit": false}})).unwrap();
        let e = run(&client(&s), &mut eng, None::<&NoWeb>, "q", &p, &FixedClock(0.0), &mut |_| {}, &mut |_| {}).await.unwrap_err();
        assert_eq!(e.code(), "INVALID_OPTION");
        let e = serde_json::from_value::<PipelineParams>(json!({"preset": "chat"})).unwrap_err().to_string();
        assert!(e.contains("unknown variant `chat`") && e.contains("`light`") && e.contains("`L4`"), "{e}");
        let e = webrag::error::Error::from("chat".parse::<webrag::ask::pipeline::Preset>().unwrap_err());
        assert_eq!(e.code(), "INVALID_OPTION");
        assert!(e.to_string().contains("\"light\""), "{e}");
    });
}

#[test]
fn unreadable_step_output_takes_the_documented_fallbacks_and_cancel_stops_the_run() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store).await;
        let s = LlmServer::start();
        // Every structured step answers prose (twice: the repair too); the answer is readable.
        s.rules(json!([
            { "match": "Task: answer", "reply": { "content": "Jane Roe [S1].\nConfidence: high" } },
            { "match": "Task: propose", "reply": { "content": "{\"decompose\": false}" } },
            { "match": "Task:", "reply": { "content": "I would rather not use JSON." } }
        ]));
        let mut events: Vec<TraceEvent> = Vec::new();
        let p: PipelineParams = serde_json::from_value(json!({"steps": {"memory": false}})).unwrap();
        let r = run(&client(&s), &mut eng, None::<&NoWeb>, "Who founded Acme Corporation?", &p, &FixedClock(0.0), &mut |_| {}, &mut |e| {
            events.push(e)
        })
        .await
        .unwrap();
        assert_eq!(r.clarified, "Who founded Acme Corporation?", "rewrite fallback: the question as is");
        assert_eq!(r.route, webrag::ask::pipeline::Route::Both, "route fallback: both");
        let kp = events.iter().find(|e| e.step == "keyPoints").unwrap();
        assert_eq!(kp.output["keyPoints"], json!(["Who founded Acme Corporation?"]), "key-point fallback: the question");
        let v = events.iter().find(|e| e.step == "verify").unwrap();
        assert_eq!(v.output["sufficient"], true, "verify fallback: sufficient");
        let f = events.iter().find(|e| e.step == "filter").unwrap();
        assert!(f.output["labels"].is_null() && !r.context.is_empty(), "filter fallback: keep all");
        assert!(r.answer.unwrap().known);
        assert_eq!(eng.stats().documents, 4);

        // Cancellation: once cancelled (here when the route event arrives), no further call is
        // made and the run ends with LLM_CANCELLED.
        s.reset();
        s.rules(json!([{ "match": "Task:", "reply": { "content": "{\"route\": \"both\", \"question\": \"q\", \"queries\": []}" } }]));
        let cancel = Cancel::new();
        let model = WithCancel { inner: client(&s), cancel: cancel.clone() };
        let e = run(
            &model,
            &mut eng,
            None::<&NoWeb>,
            "Who founded Acme?",
            &PipelineParams::default(),
            &FixedClock(0.0),
            &mut |_| {},
            &mut |e| {
                if e.step == "route" {
                    cancel.cancel();
                }
            },
        )
        .await
        .unwrap_err();
        assert_eq!(e.code(), "LLM_CANCELLED");
        assert_eq!(s.log().len(), 2, "rewrite and route only");
    });
}

/// The knowledge filter (ERM4 §3.2): `strict` keeps only the sources labelled `entailment`,
/// `lenient` (the default) keeps `neutral` ones too.
#[test]
fn the_strict_filter_drops_a_neutral_source_the_lenient_one_keeps_it() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store).await;
        let s = LlmServer::start();
        let mut kept = Vec::new();
        for strength in ["lenient", "strict"] {
            s.reset();
            s.rules(json!([
                { "match": "Task: filter", "reply": { "fillLabels": ["entailment", "neutral"] } },
                { "match": "Task: answer", "reply": { "content": "Jane Roe founded Acme Corporation [S1].\nConfidence: high" } }
            ]));
            let p: PipelineParams = serde_json::from_value(json!({
                "knowledgeFilter": strength,
                "steps": {"trigger": false, "rewrite": false, "route": false, "keyPoints": false, "decompose": false, "verify": false, "filter": true, "memory": false}
            }))
            .unwrap();
            let mut labels = serde_json::Value::Null;
            let r =
                run(&client(&s), &mut eng, None::<&NoWeb>, "Who founded Acme Corporation?", &p, &FixedClock(0.0), &mut |_| {}, &mut |e| {
                    if e.step == "filter" {
                        labels = e.output["labels"].clone();
                    }
                })
                .await
                .unwrap();
            assert_eq!(labels[0], "entailment", "{strength}: {labels}");
            assert!(labels.as_array().is_some_and(|l| l.len() > 1), "{strength}: more than one source was judged: {labels}");
            kept.push(r.context.iter().map(|c| c.source.id.clone()).collect::<Vec<_>>());
            assert!(r.answer.unwrap().known, "{strength}");
        }
        let (lenient, strict) = (&kept[0], &kept[1]);
        assert!(lenient.len() > 1, "lenient keeps the neutral sources: {lenient:?}");
        assert_eq!(strict.len(), 1, "strict drops them: {strict:?}");
        assert_eq!(strict[0], lenient[0], "the entailed source stays");
    });
}

/// Every shape a 200 reply (or a web searcher) can take ends the question in an answer or in
/// "I don't know." with its sources, never in an error.
#[test]
fn every_reply_shape_ends_in_an_answer_or_i_dont_know() {
    use webrag::ask::answer::UNKNOWN;
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store).await;
        let s = LlmServer::start();
        // The search, then the answer: one model call.
        let p: PipelineParams = serde_json::from_value(
            json!({"steps": {"trigger": false, "rewrite": false, "route": false, "keyPoints": false, "decompose": false, "verify": false, "filter": false, "memory": false}}),
        )
        .unwrap();
        let answer = "Jane Roe founded Acme Corporation [S1].\nConfidence: high";
        let cases = [
            ("reasoning_content, content null", json!({ "deltas": [{ "content": null, "reasoning_content": answer }] }), true, "answer"),
            (
                "a tool call, no content",
                json!({ "deltas": [{ "content": null, "tool_calls": [{ "index": 0, "id": "c", "type": "function", "function": { "name": "f", "arguments": "{}" } }] }] }),
                false,
                "answer",
            ),
            ("a stream cut short", json!({ "stream": ["Jane ", "Roe "], "truncate": true }), false, "fallback"),
            ("a connection dropped mid-stream", json!({ "stream": ["Jane ", "Roe "], "reset": true }), false, "fallback"),
            ("an error event in the stream", json!({ "body": "data: {\"error\": {\"message\": \"overloaded\"}}\n\n" }), false, "fallback"),
            ("a body that is not a stream", json!({ "body": "<html>gateway</html>" }), false, "fallback"),
        ];
        for (what, reply, known, last) in cases {
            s.reset();
            s.script(json!([reply]));
            let mut steps = Vec::new();
            let r =
                run(&client(&s), &mut eng, None::<&NoWeb>, "Who founded Acme Corporation?", &p, &FixedClock(0.0), &mut |_| {}, &mut |e| {
                    steps.push(e.step)
                })
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let a = r.answer.unwrap_or_else(|| panic!("{what}: no answer"));
            assert_eq!(a.known, known, "{what}: {a:?}");
            if !known {
                assert_eq!(a.text, UNKNOWN, "{what}");
            } else {
                assert!(a.text.contains("Jane Roe"), "{what}: {a:?}");
            }
            assert!(!a.sources.is_empty() && r.context.iter().any(|c| c.source.id.starts_with("acme")), "{what}: the sources stay");
            assert_eq!(steps.last().map(|s| s.as_str()), Some(last), "{what}: {steps:?}");
        }
        // A web searcher that fails (an HTTP error, a 200 that is not its JSON): "I don't know."
        // over a search of the knowledge base, trace step `fallback`.
        for path in ["/search?status=500", "/search?notjson"] {
            s.reset();
            s.script(json!([{ "content": "{\"route\": \"web\"}" }]));
            let web = web_searcher(&s, path, 5_000);
            let mut steps = Vec::new();
            let r = run(
                &client(&s),
                &mut eng,
                Some(&web),
                "What is Acme doing today?",
                &web_params(),
                &FixedClock(0.0),
                &mut |_| {},
                &mut |e| steps.push(e.step),
            )
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
            assert_eq!(steps, vec!["route", "fallback"], "{path}");
            let a = r.answer.expect("an answer");
            assert_eq!((a.text.as_str(), a.known), (UNKNOWN, false), "{path}");
            assert!(r.context.iter().any(|c| c.via == "search" && c.source.id.starts_with("acme")), "{path}: {:?}", r.context);
        }
        assert_eq!(eng.stats().documents, 4, "nothing stored is lost");
    });
}

/// The web searcher at the scripted server's `path` (`/search`, or `/search?hang`: no answer).
fn web_searcher(s: &LlmServer, path: &str, timeout_ms: u64) -> webrag::ask::pipeline::HttpWebSearch<UreqTransport> {
    use webrag::ask::pipeline::{HttpWebSearch, WebSearchConfig};
    HttpWebSearch {
        cfg: WebSearchConfig { url: format!("http://127.0.0.1:{}{path}", s.port), headers: Default::default(), timeout_ms },
        transport: UreqTransport,
    }
}

/// The steps of a web-routed question: no trigger, rewrite, verify, filter or memory.
fn web_params() -> PipelineParams {
    serde_json::from_value(json!({"steps": {"trigger": false, "rewrite": false, "verify": false, "filter": false, "memory": false}}))
        .unwrap()
}

#[test]
fn routing_to_the_web_searcher_answers_from_its_results() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = engine(&store).await;
        let s = LlmServer::start();
        s.script(json!([
            { "content": "{\"route\": \"web\"}" },
            { "content": "Acme opened an office in Lyon [S1].\nConfidence: high" }
        ]));
        let web = web_searcher(&s, "/search", 5_000);
        let p = web_params();
        let mut steps = Vec::new();
        let r = run(&client(&s), &mut eng, Some(&web), "What is Acme doing today?", &p, &FixedClock(0.0), &mut |_| {}, &mut |e| {
            steps.push(e.step)
        })
        .await
        .unwrap();
        assert_eq!(r.route, webrag::ask::pipeline::Route::Web);
        assert_eq!(steps, vec!["route", "web", "answer"]);
        assert_eq!((r.context[0].source.id.as_str(), r.context[0].via.as_str()), ("web:1", "web"));
        assert!(r.context[0].source.text.contains("What is Acme doing today?"));
        assert_eq!(r.answer.unwrap().citations, vec!["web:1".to_string()]);
        let route_prompt = s.log()[0]["body"]["messages"][1]["content"].as_str().unwrap().to_string();
        assert!(route_prompt.contains("\"web\""), "web is offered only with a searcher: {route_prompt}");
        // Without a searcher, "web" is not a valid route: the repair, then the fallback (both).
        s.script(json!([{ "content": "{\"route\": \"web\"}" }, { "content": "{\"route\": \"web\"}" }, { "content": "x [S1].\nConfidence: high" }]));
        let p: PipelineParams = serde_json::from_value(json!({"steps": {"trigger": false, "rewrite": false, "keyPoints": false, "decompose": false, "verify": false, "filter": false, "memory": false}})).unwrap();
        let r = run(&client(&s), &mut eng, None::<&NoWeb>, "What is Acme doing today?", &p, &FixedClock(0.0), &mut |_| {}, &mut |_| {})
            .await
            .unwrap();
        assert_eq!(r.route, webrag::ask::pipeline::Route::Both);
        // A web search past its timeout ends the question in "I don't know." over a search of
        // the knowledge base, as a timed-out model call does.
        s.reset();
        s.script(json!([{ "content": "{\"route\": \"web\"}" }]));
        let hanging = web_searcher(&s, "/search?hang", 300);
        let p = web_params();
        let mut steps = Vec::new();
        let r = run(&client(&s), &mut eng, Some(&hanging), "What is Acme doing today?", &p, &FixedClock(0.0), &mut |_| {}, &mut |e| {
            steps.push(e.step)
        })
        .await
        .expect("a timed-out web search is not an error");
        assert_eq!(steps, vec!["route", "timeout"]);
        let a = r.answer.expect("an answer");
        assert_eq!((a.text.as_str(), a.known), (webrag::ask::answer::UNKNOWN, false));
        assert!(r.context.iter().any(|c| c.via == "search" && c.source.id.starts_with("acme")), "{:?}", r.context);
        assert_eq!(s.log().len(), 2, "the route call and the web search");
    });
}

#[test]
fn a_flooding_web_searcher_stops_at_its_cap() {
    use webrag::ask::pipeline::WebSearch;
    let s = LlmServer::start();
    let web = web_searcher(&s, "/search?flood=200000000", 60_000);
    let t = std::time::Instant::now();
    let r = pollster::block_on(web.search("q", 3));
    let limit = webrag::ask::web::WEB_REPLY_BYTES as u64;
    assert_eq!(r, Err(webrag::error::LlmError::ReplyTooLarge { part: webrag::error::ReplyPart::Body, limit }));
    assert!(t.elapsed().as_secs() < 30, "read for {:?}", t.elapsed());
}

/// Query-side tagging (`steps.queryTags`, PIKE-RAG §4.2): the model picks from the knowledge
/// base's tags those the question's documents carry; the question's search then ranks documents
/// with one of them first, without shutting the others out. A tag not in the list is dropped;
/// no call when no document has a tag or the run's scope names tags; an unreadable reply leaves
/// the plain ranking.
#[test]
fn query_tags_rank_the_chosen_tags_documents_first() {
    pollster::block_on(async {
        let s = LlmServer::start();
        let params = |extra: serde_json::Value| -> PipelineParams {
            let mut p = json!({"preset": "light", "steps": {"queryTags": true}});
            if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
                p.extend(e.clone());
            }
            serde_json::from_value(p).unwrap()
        };
        let answer = json!({ "content": "Jane Roe founded it [S1].\nConfidence: high" });
        let question = "Who founded Acme Corporation?";
        let ask = async |eng: &mut Eng<'_>, p: &PipelineParams| {
            let mut events: Vec<TraceEvent> = Vec::new();
            let r =
                run(&client(&s), eng, None::<&NoWeb>, question, p, &FixedClock(0.0), &mut |_| {}, &mut |e| events.push(e)).await.unwrap();
            (r.context.iter().map(|c| c.source.id.clone()).collect::<Vec<_>>(), events)
        };
        // No document has a tag: the step asks nothing.
        let store = MemoryStore::new();
        let mut eng = engine(&store).await;
        s.script(json!([answer]));
        let (plain, events) = ask(&mut eng, &params(json!({}))).await;
        assert_eq!(plain[0], "acme#0", "{plain:?}");
        let qt = events.iter().find(|e| e.step == "queryTags").expect("traced");
        assert_eq!((qt.input["offered"].as_u64(), qt.output["tags"].as_array().map(Vec::len)), (Some(0), Some(0)));
        assert_eq!(s.log().len(), 1, "only the answer was asked");

        // Tagged documents: the model's choice ranks Lyon first; Acme stays in the context.
        let store = MemoryStore::new();
        let mut eng = Engine::open(&store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
        let tagged = |id: &str, title: &str, text: &str, tags: &[&str]| DocumentInput {
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..doc(id, title, text)
        };
        eng.add(
            vec![
                tagged("acme", "Acme Corporation", ACME, &["Companies"]),
                tagged("lyon", "Lyon", LYON, &["places"]),
                tagged("roe", "Jane Roe", ROE, &["people"]),
                doc("tea", "Green tea", TEA),
            ],
            &mut NoProgress,
        )
        .await
        .expect("add");
        s.reset();
        s.script(json!([{ "content": "{\"tags\": [\"Places\", \"not a tag\", \"places\"]}" }, answer]));
        let (boosted, events) = ask(&mut eng, &params(json!({}))).await;
        let steps: Vec<String> = events.iter().map(|e| e.step.to_string()).collect();
        assert_eq!(steps, ["queryTags", "keyPoints", "search", "answer"]);
        let qt = &events[0];
        assert_eq!(qt.output["tags"], json!(["places"]), "normalised, deduplicated, only tags of the list");
        assert_eq!(qt.input["offered"], json!(3));
        let prompt = s.log()[0]["body"]["messages"][1]["content"].as_str().unwrap().to_string();
        assert!(
            prompt.starts_with("Task: query tags") && ["\"companies\"", "\"people\"", "\"places\""].iter().all(|t| prompt.contains(t)),
            "{prompt}"
        );
        assert_eq!(boosted[0], "lyon#0", "{boosted:?}");
        assert!(boosted.contains(&"acme#0".to_string()), "other documents stay: {boosted:?}");
        assert_eq!(boosted.len(), plain.len());

        // A scope that names tags: the step asks nothing.
        s.reset();
        s.script(json!([answer]));
        let (scoped, _) = ask(&mut eng, &params(json!({"filter": {"tags": ["companies"]}}))).await;
        assert!(scoped[0] == "acme#0" && scoped.iter().all(|c| c == "acme#0" || c.starts_with("graph:")), "{scoped:?}");
        assert_eq!(s.log().len(), 1);

        // Unreadable, twice (the repair too): no tags, the plain ranking.
        s.reset();
        s.script(json!([{ "content": "places, I think" }, { "content": "still places" }, answer]));
        let (unread, events) = ask(&mut eng, &params(json!({}))).await;
        assert_eq!(events[0].output["tags"], json!([]));
        assert_eq!(unread[0], "acme#0", "{unread:?}");
    });
}
