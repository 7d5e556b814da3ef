//! `webrag eval`: its arguments, the run over each dataset (HotpotQA, MuSiQue: index or read the
//! cache, recall of every retriever, the snapshot's vectors, the static model, decomposition,
//! answers and fusion tuning as the flags ask) and the report's tables
//! ([`crate::native::eval`] measures; this runs and prints).
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{Models, load_static_model};
use crate::embed::DevicePreference;
use crate::engine::Engine;
use crate::native::eval;

/// The arguments of `webrag eval`.
#[derive(clap::Args)]
pub(super) struct EvalArgs {
    /// Directory holding hotpotqa/ and musique/.
    #[arg(long, default_value = "../shared/data")]
    data: PathBuf,
    /// Only this dataset (hotpotqa or musique).
    #[arg(long)]
    dataset: Option<String>,
    /// Only the first N questions of each set, over their own passages (HotpotQA's `context`,
    /// MuSiQue's `paragraphs`): a smaller pool for a quick run; its recall is not comparable with
    /// the whole set's.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    questions: Option<usize>,
    /// Also write the rows as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Keep each indexed set in this folder and reuse it on the next run (saves re-embedding
    /// when only search options change).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Graph options as JSON (`lateChunking` at indexing, the others at search), e.g. '{"maxTopics":12,"pgr":{"support":0.03,"continueThreshold":0.05}}'.
    #[arg(long)]
    graph: Option<String>,
    /// Also run knowledge-aware decomposition (PIKE-RAG Algorithm 1) on MuSiQue with the
    /// oracle decomposer (MuSiQue's own question_decomposition) and print the share of gold
    /// passages in the final context.
    #[arg(long)]
    decompose: bool,
    /// Also run the ask pipeline under every preset on MuSiQue with the scripted oracle as
    /// the model, and print each preset's LLM calls and tokens per question, and the
    /// retrieval trigger's firing rates per τ.
    #[arg(long)]
    ask: bool,
    /// With --decompose: write the trajectories as SFT pairs (<decompose> format, JSONL) here.
    #[arg(long)]
    sft: Option<PathBuf>,
    /// Also choose the fusion weights (BM25, dense, graph) on the even-numbered questions of
    /// each set and print recall on the odd-numbered ones (held out).
    #[arg(long)]
    tune_fusion: bool,
    /// Where the model runs: auto, cpu or gpu (as for `index`).
    #[arg(long, default_value = "auto")]
    device: DevicePreference,
    /// Also embed the questions with this model folder (e.g. `webrag quantize`'s output; on
    /// the CPU) while the passages keep --model's vectors, as a page's query encoder does,
    /// and print recall with it beside the full model's.
    #[arg(long)]
    query_model: Option<PathBuf>,
    /// Also index each set with the static model distilled from --model (this file, or
    /// `webrag-static.wrs` in the model folder, else distilled first) and print its recall
    /// beside the model's.
    #[arg(long, num_args = 0..=1)]
    static_model: Option<Option<PathBuf>>,
    /// Also score the ask pipeline's answers with a real model at `--llm-url` (e.g. the server
    /// of `./webrag.sh llm-real`) against a naive retrieve-then-read baseline with the same model
    /// (the top 5 hybrid passages in one plain prompt): exact match, token F1, answer recall,
    /// withheld shares, unsupported shown answers, model calls and seconds per question.
    #[arg(long, requires = "llm_url")]
    answers: bool,
    /// Write forward summaries (PIKE-RAG §4.2, `enrich`'s stage) with the model at `--llm-url`
    /// for every chunk after a passage's first, then measure every retriever again: rows with
    /// BM25 settings `default, forward summaries` beside the `default` ones (before --answers,
    /// which then reads the summarised index).
    #[arg(long, requires = "llm_url")]
    forward_summaries: bool,
    /// Tag every passage with the model at `--llm-url` (`enrich --tags`, any short tag; kept in
    /// `--cache`), then, with --answers, score each preset also with `steps.queryTags` on
    /// (PIKE-RAG's query-side tagging): rows `<preset> + queryTags`.
    #[arg(long, requires = "llm_url")]
    tags: bool,
    /// With --answers or --forward-summaries: an OpenAI-compatible endpoint, up to the API version.
    #[arg(long)]
    llm_url: Option<String>,
    /// With --answers: the endpoint's model name.
    #[arg(long, default_value = "default")]
    llm_model: String,
    /// With --answers: the environment variable holding the endpoint's API key.
    #[arg(long, default_value = "WEBRAG_LLM_KEY")]
    llm_key_env: String,
    /// With --answers: milliseconds an LLM call may take.
    #[arg(long, default_value_t = 120_000)]
    llm_timeout_ms: u64,
    /// With --answers: tokens an LLM reply may have at most.
    #[arg(long, default_value_t = 256)]
    llm_max_tokens: u32,
    /// With --answers: the presets whose answers are scored, comma-separated.
    #[arg(long, default_value = "light", value_delimiter = ',')]
    presets: Vec<String>,
    /// With --answers: questions per dataset (the first ones with a gold answer).
    #[arg(long, default_value_t = 30)]
    answer_questions: usize,
}

/// `webrag eval`: each dataset ([`eval_set`]), then the report's tables.
pub(super) async fn eval(models: &Models, a: EvalArgs) -> crate::Result<()> {
    let graph: Option<crate::graph::GraphParams> = a
        .graph
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .map_err(|e| crate::error::InputError::InvalidOption { name: "graph".into(), reason: e.to_string() })?;
    let query_embedder = a.query_model.as_deref().map(|d| models.load(d)).transpose()?;
    let mut report = EvalReport::default();
    for name in ["hotpotqa", "musique"] {
        if a.dataset.as_deref().is_none_or(|d| d == name) {
            eval_set(models, &a, name, graph, query_embedder.as_ref(), &mut report).await?;
        }
    }
    report.print(&a);
    if let Some(p) = &a.json {
        let json = if report.answers.is_empty() {
            serde_json::to_string_pretty(&report.rows)
        } else {
            serde_json::to_string_pretty(&serde_json::json!({"recall": report.rows, "answers": report.answers}))
        };
        std::fs::write(p, json.unwrap_or_default()).map_err(|e| crate::embed::file_error(&p.display().to_string(), e))?;
    }
    Ok(())
}

/// What `webrag eval` measured, the rows of its tables.
#[derive(Default)]
struct EvalReport {
    rows: Vec<eval::EvalRow>,
    snapshot_rows: Vec<eval::EvalRow>,
    decomposition: Vec<eval::DecomposeRow>,
    asked: Vec<crate::native::eval_ask::AskRow>,
    trigger: Vec<crate::native::eval_ask::TriggerRow>,
    answers: Vec<crate::native::eval_answers::AnswerRow>,
    fusion_sets: Vec<(String, Vec<crate::native::eval_fusion::Fusable>)>,
    query_rows: Vec<eval::EvalRow>,
    static_rows: Vec<eval::EvalRow>,
    static_fusion_sets: Vec<(String, Vec<crate::native::eval_fusion::Fusable>)>,
}

/// One dataset of `webrag eval`: indexed (or read from `--cache`), recall of every retriever,
/// the snapshot's vectors, and what the flags add.
async fn eval_set(
    models: &Models,
    a: &EvalArgs,
    name: &str,
    graph: Option<crate::graph::GraphParams>,
    query_embedder: Option<&crate::embed::CpuEmbedder>,
    out: &mut EvalReport,
) -> crate::Result<()> {
    let dir = a.data.join(name);
    let set = if name == "hotpotqa" { eval::load_hotpotqa(&dir) } else { eval::load_musique(&dir) }
        .map_err(|e| crate::embed::file_error(&dir.display().to_string(), e))?;
    let set = match a.questions {
        Some(n) => set.first(n),
        None => set,
    };
    let t0 = Instant::now();
    let cache_file = a.cache.as_ref().map(|d| {
        let _ = std::fs::create_dir_all(d);
        // Vectors of another arithmetic, or facts with passes of their own, are other
        // vectors.
        let late = graph.is_none_or(|g| g.late_chunking);
        let precision = if models.precision == crate::embed::Precision::F32 { String::new() } else { format!("-{:?}", models.precision) };
        let subset = a.questions.map_or(String::new(), |n| format!("-q{n}"));
        // Tags written by the model stay in their own file (re-read: no call for a tagged passage).
        let tags = if a.tags { "-tags" } else { "" };
        d.join(format!("{name}{precision}{subset}{tags}{}.json", if late { "-late" } else { "" }))
    });
    // `--graph`'s ingest options (lateChunking) act at indexing; the rest at search.
    let ingest = crate::config::Config { graph: graph.unwrap_or_default(), ..crate::config::Config::default() };
    let mut eng = eval::build_with(&set, models.open(a.device).await?, cache_file.as_deref(), ingest.clone()).await?;
    if let Some(g) = graph {
        eng.set_search_config(&crate::config::Config { graph: g, ..eng.config().clone() })?;
    }
    eprintln!("{name}: indexed {} passages ({} chunks) in {:.1}s", set.passages.len(), eng.stats().chunks, t0.elapsed().as_secs_f64());
    out.rows.extend(eval::evaluate_both(&set, &mut eng).await?);
    if let Some(file) = &a.static_model {
        let t1 = Instant::now();
        // Weighted by the passages, as a site build weights it by the site.
        let mut sm = load_static_model(&models.dir, file.as_deref())?;
        sm.weight_by_corpus(set.passages.iter().map(|(_, t)| t.as_str()));
        let mut st = eval::build_with(&set, sm, None, ingest).await?;
        if let Some(g) = graph {
            st.set_search_config(&crate::config::Config { graph: g, ..st.config().clone() })?;
        }
        eprintln!("{name}: indexed with the static model in {:.1}s", t1.elapsed().as_secs_f64());
        out.static_rows.extend(eval::evaluate(&set, &st, "default").await?);
        out.snapshot_rows.extend(eval::evaluate_snapshot_vectors(&set, &st, st.embedder(), ", the static model").await?);
        if a.tune_fusion {
            out.static_fusion_sets.push((name.to_string(), crate::native::eval_fusion::lists(&set, &st).await?));
        }
    }
    if a.tune_fusion {
        out.fusion_sets.push((name.to_string(), crate::native::eval_fusion::lists(&set, &eng).await?));
    }
    out.snapshot_rows.extend(eval::evaluate_snapshot_vectors(&set, &eng, eng.embedder(), "").await?);
    if let Some(q) = query_embedder {
        out.query_rows.extend(eval::evaluate_with(&set, &eng, "default", q).await?);
        out.snapshot_rows.extend(eval::evaluate_snapshot_vectors(&set, &eng, q, ", query by --query-model").await?);
    }
    if name == "musique" {
        eval_musique(a, &set, &dir, &mut eng, out).await?;
    }
    let Some(url) = a.llm_url.as_ref().filter(|_| a.answers || a.forward_summaries || a.tags) else { return Ok(()) };
    let cfg = crate::llm::LlmConfig {
        base_url: url.clone(),
        model: a.llm_model.clone(),
        api_key: std::env::var(&a.llm_key_env).unwrap_or_default(),
        timeout_ms: a.llm_timeout_ms,
        max_tokens: a.llm_max_tokens,
        ..Default::default()
    };
    let model = crate::llm::openai::OpenAiClient::new(cfg, crate::native::http::UreqTransport)?;
    if a.forward_summaries {
        let t1 = Instant::now();
        let p = crate::ask::enhance::SummaryParams::default();
        let clock = crate::ports::FixedClock(0.0);
        let r = crate::ask::enhance::forward_summaries(
            &crate::engine::Exclusive::new(&mut eng),
            &model,
            &p,
            None,
            &clock,
            &mut crate::ports::NoProgress,
            &mut |_| {},
        )
        .await?;
        eprintln!("{name}: {} forward summaries ({} unreadable) in {:.1}s", r.chunks, r.failed.len(), t1.elapsed().as_secs_f64());
        out.rows.extend(eval::evaluate(&set, &eng, "default, forward summaries").await?);
    }
    if a.tags {
        let t1 = Instant::now();
        let r = crate::ask::enhance::auto_tag(
            &crate::engine::Exclusive::new(&mut eng),
            &model,
            &crate::ask::enhance::TaggingParams::default(),
            None,
            &crate::ports::FixedClock(0.0),
            &mut crate::ports::NoProgress,
            &mut |_| {},
        )
        .await;
        // What was tagged is kept even when the stage stopped early: the next run goes on from there.
        if let Some(p) = &cache_file {
            eval::save_cache(&eng, p).await?;
        }
        let r = r?;
        let kinds = crate::types::tag_counts(eng.corpus().document_records()).len();
        eprintln!(
            "{name}: {} passages tagged now ({} tags; {} unreadable, {} left untagged), {kinds} distinct tags in all, in {:.1}s",
            r.documents,
            r.tags,
            r.failed.len(),
            r.remaining,
            t1.elapsed().as_secs_f64()
        );
    }
    if a.answers {
        let presets = a.presets.iter().map(|p| p.parse::<crate::ask::pipeline::Preset>()).collect::<Result<Vec<_>, _>>()?;
        let answers = crate::native::eval_answers::evaluate_answers(&set, &mut eng, &model, &presets, a.tags, a.answer_questions);
        out.answers.extend(answers.await?);
    }
    Ok(())
}

/// MuSiQue's `--ask` and `--decompose` runs, with its oracle decomposer.
async fn eval_musique<E: crate::embed::Embedder>(
    a: &EvalArgs,
    set: &eval::EvalSet,
    dir: &Path,
    eng: &mut Engine<crate::ports::MemoryStore, E>,
    out: &mut EvalReport,
) -> crate::Result<()> {
    if a.ask {
        let oracle =
            crate::native::oracle::MusiqueOracle::load(dir).map_err(|e| crate::embed::file_error(&dir.display().to_string(), e))?;
        out.asked = crate::native::eval_ask::evaluate_presets(set, eng, &oracle).await?;
        let theta = crate::ask::pipeline::PipelineParams::THETA.count();
        out.trigger = crate::native::eval_ask::calibrate_trigger(set, eng.embedder(), &oracle, theta).await?;
    }
    if a.decompose {
        let oracle =
            crate::native::oracle::MusiqueOracle::load(dir).map_err(|e| crate::embed::file_error(&dir.display().to_string(), e))?;
        let mut params = crate::ask::DecomposeParams::default();
        if let Ok(j) = std::env::var("WEBRAG_DECOMPOSE") {
            params = serde_json::from_str(&j)
                .map_err(|e| crate::error::InputError::InvalidOption { name: "WEBRAG_DECOMPOSE".into(), reason: e.to_string() })?;
        }
        let (row, trajectories) = eval::evaluate_decomposition(set, eng, &oracle, &params).await?;
        out.decomposition.push(row);
        if let Some(p) = &a.sft {
            std::fs::write(p, crate::ask::sft_jsonl(&trajectories)).map_err(|e| crate::embed::file_error(&p.display().to_string(), e))?;
        }
    }
    Ok(())
}

impl EvalReport {
    /// The tables, each after the one before.
    fn print(&self, a: &EvalArgs) {
        self.print_recall();
        self.print_fusion(a);
        self.print_query_and_static(a);
        self.print_snapshot();
        self.print_pipeline();
    }

    /// Recall of every retriever, against the references.
    fn print_recall(&self) {
        println!("| dataset | retriever | BM25 settings | R@2 | R@5 | R@10 | reference R@5 | Δ R@5 | questions |");
        println!("|---|---|---|---|---|---|---|---|---|");
        for r in &self.rows {
            let (refr, delta) = match r.reference_r5 {
                Some(x) => (format!("{x:.1}"), format!("{:+.1}", r.r5 - x)),
                None => ("".into(), "".into()),
            };
            // Dense rows name no BM25 settings, only what else the index had (`default, forward summaries`).
            let settings = match (r.retriever == "dense", r.bm25.split_once(", ")) {
                (true, Some((_, extra))) => extra,
                (true, None) => "—",
                _ => r.bm25.as_str(),
            };
            println!(
                "| {} | {} | {} | {:.1} | {:.1} | {:.1} | {} | {} | {} |",
                r.dataset, r.retriever, settings, r.r2, r.r5, r.r10, refr, delta, r.questions
            );
        }
    }

    /// With `--tune-fusion`: the weights chosen and their held-out recall.
    fn print_fusion(&self, a: &EvalArgs) {
        let engine = crate::config::Config::default().fusion_weights;
        for (label, sets, shipped) in
            [("", &self.fusion_sets, engine), (" (the static model)", &self.static_fusion_sets, crate::snapshot::STATIC_FUSION_WEIGHTS)]
        {
            if !a.tune_fusion || sets.is_empty() {
                continue;
            }
            let t = crate::native::eval_fusion::tune(sets, crate::config::Config::default().rrf_k, shipped);
            let w = t.weights;
            println!();
            println!(
                "Fusion weights{label} chosen on the even-numbered questions, no cascade (mean of R@2, R@5, R@10: {:.1}; equal weights {:.1}): bm25 {}, dense {}, graph {}. Graph cascade chosen there with equal weights ({:.1}; the default {:.1}): keep {}, candidates {}. Held out (odd-numbered questions):",
                t.tuning.0,
                t.tuning.1,
                w.bm25,
                w.dense,
                w.graph,
                t.cascade_tuning.0,
                t.cascade_tuning.1,
                t.cascade.keep,
                t.cascade.candidates
            );
            println!();
            println!("| dataset | retriever | R@2 | R@5 | R@10 |");
            println!("|---|---|---|---|---|");
            for (d, r, r2, r5, r10) in &t.rows {
                println!("| {d} | {r} | {r2:.1} | {r5:.1} | {r10:.1} |");
            }
        }
    }

    /// With `--query-model` and `--static-model`: their recall beside the model's.
    fn print_query_and_static(&self, a: &EvalArgs) {
        if let Some(dir) = &a.query_model {
            crate::native::eval::print_query_rows(dir, &self.rows, &self.query_rows);
        }
        if !self.static_rows.is_empty() {
            println!();
            println!("The static model (distilled from the model: no forward pass) against the model, webrag's BM25 defaults:");
            println!();
            println!("| dataset | retriever | R@2 | R@5 | R@10 | the model's R@5 | Δ R@5 |");
            println!("|---|---|---|---|---|---|---|");
            for r in self.static_rows.iter().filter(|r| r.retriever != "bm25") {
                let base = self
                    .rows
                    .iter()
                    .find(|b| b.dataset == r.dataset && b.retriever == r.retriever && b.bm25 == r.bm25)
                    .map_or(f64::NAN, |b| b.r5);
                println!(
                    "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:+.1} |",
                    r.dataset,
                    r.retriever,
                    r.r2,
                    r.r5,
                    r.r10,
                    base,
                    r.r5 - base
                );
            }
        }
    }

    /// The snapshot's vectors against f32.
    fn print_snapshot(&self) {
        println!();
        println!(
            "Static-site snapshot vectors (int8 as written, IVF as static.js reads them; int4 and product quantization as alternatives) against f32, all exact except the IVF row:"
        );
        println!();
        println!("| dataset | vectors | R@2 | R@5 | R@10 | Δ R@5 vs f32 exact |");
        println!("|---|---|---|---|---|---|");
        // Each evaluation's self.rows start with its f32 row, the base of the self.rows after it.
        let mut base = 0.0;
        for r in &self.snapshot_rows {
            if r.retriever.starts_with("dense f32") {
                base = r.r5;
            }
            println!("| {} | {} | {:.1} | {:.1} | {:.1} | {:+.1} |", r.dataset, r.retriever, r.r2, r.r5, r.r10, r.r5 - base);
        }
    }

    /// With `--decompose` and `--ask`: the decomposition and the presets.
    fn print_pipeline(&self) {
        if !self.decomposition.is_empty() {
            println!();
            println!(
                "Knowledge-aware self.decomposition (PIKE-RAG Algorithm 1) with the oracle decomposer (MuSiQue's question_decomposition; picks the first candidate containing the hop's answer):"
            );
            println!();
            println!(
                "| dataset | rounds N / candidates K / retriever | gold passages in the final context (mean per question) | pooled | mean / max context chunks | stops: nothing proposed / found / selected / rounds / unreadable | questions |"
            );
            println!("|---|---|---|---|---|---|---|");
            for d in &self.decomposition {
                println!(
                    "| {} | {} / {} / {} | {:.1}% | {:.1}% | {:.2} / {} | {} / {} / {} / {} / {} | {} |",
                    d.dataset,
                    d.params.rounds,
                    d.params.candidates,
                    d.params.retriever.name(),
                    d.gold_in_context,
                    d.gold_pooled,
                    d.mean_context,
                    d.max_context,
                    d.stops[0],
                    d.stops[1],
                    d.stops[2],
                    d.stops[3],
                    d.stops[4],
                    d.questions
                );
            }
        }
        if !self.asked.is_empty() {
            println!();
            crate::native::eval_ask::print(&self.asked);
            println!();
            crate::native::eval_ask::print_trigger(&self.trigger, crate::ask::pipeline::PipelineParams::THETA.count());
        }
        if !self.answers.is_empty() {
            println!();
            crate::native::eval_answers::print(&self.answers);
        }
    }
}
