//! `webrag` command line: index, search, eval.
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::Config;
use crate::embed::DevicePreference;
use crate::engine::{Engine, SearchOptions};
use crate::native::{FileStore, default_model_dir};
use crate::ports::SystemClock;
use crate::types::{Grouping, SearchMode};
use clap::{Parser, Subcommand};

mod eval_cmd;
mod index_cmd;
mod snapshot_cmd;
use eval_cmd::{EvalArgs, eval};
use index_cmd::{IndexArgs, index_kb, index_site};
use snapshot_cmd::{SearchSnapshotArgs, search_snapshot};

#[derive(Parser)]
#[command(name = "webrag", version, about = "Retrieval-augmented generation in the browser: native CLI")]
struct Cli {
    /// Model directory (config.json, tokenizer.json, model.safetensors).
    #[arg(long, global = true)]
    model: Option<PathBuf>,
    /// Arithmetic of the CPU forward pass's linear layers: f32, or int8 (int8 weights × 7-bit
    /// activations, exact i32 sums; 1.05–1.4× the f32 speed on AVX2 without VNNI; its error
    /// and recall cost in docs/benchmarks.md). The GPU path computes in f32 (or f16) either way.
    #[arg(long, global = true, default_value = "f32")]
    precision: crate::embed::Precision,
    #[command(subcommand)]
    cmd: Cmd,
}

/// Which documents `search` and `ask` may use ([`crate::types::SearchFilter`]).
#[derive(clap::Args, Debug)]
struct FilterArgs {
    /// Only documents with this tag, given or automatic (repeatable: any of them).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// Only this document (repeatable).
    #[arg(long = "doc")]
    doc_ids: Vec<String>,
    /// Only documents in this language (a BCP 47 tag) or in none, the query stemmed in it alone.
    #[arg(long)]
    lang: Option<String>,
}

impl FilterArgs {
    fn filter(&self) -> Option<crate::types::SearchFilter> {
        let f = crate::types::SearchFilter {
            tags: self.tags.clone(),
            doc_ids: self.doc_ids.clone(),
            meta: Default::default(),
            lang: self.lang.clone(),
        };
        (!f.is_empty()).then_some(f)
    }
}

/// The OpenAI-compatible endpoint of `enrich` and `ask`.
#[derive(clap::Args, Debug)]
struct LlmArgs {
    /// An OpenAI-compatible endpoint, up to the API version (e.g. http://127.0.0.1:8000/v1).
    #[arg(long)]
    llm_url: String,
    /// The endpoint's model name.
    #[arg(long, default_value = "gpt-4o-mini")]
    llm_model: String,
    /// The environment variable holding the endpoint's API key (none: no key is sent).
    #[arg(long, default_value = "WEBRAG_LLM_KEY")]
    llm_key_env: String,
    /// Milliseconds an LLM call may take (a slow local model needs more).
    #[arg(long, default_value_t = 60_000)]
    llm_timeout_ms: u64,
    /// Tokens an LLM reply may have at most.
    #[arg(long, default_value_t = 1024)]
    llm_max_tokens: u32,
}

impl LlmArgs {
    /// The client configuration (the key read from `llm_key_env`).
    fn config(self) -> crate::llm::LlmConfig {
        crate::llm::LlmConfig {
            base_url: self.llm_url,
            model: self.llm_model,
            api_key: std::env::var(&self.llm_key_env).unwrap_or_default(),
            timeout_ms: self.llm_timeout_ms,
            max_tokens: self.llm_max_tokens,
            ..Default::default()
        }
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Index files or directories (.md, .markdown, .html, .htm, .txt) into a knowledge-base file;
    /// with `--out`, index a built static site (one directory) into a snapshot for the browser.
    Index(IndexArgs),
    /// Search a knowledge-base file.
    Search(SearchArgs),
    /// Rank a built static-site snapshot's chunks with the engine's search, as `webrag/static`
    /// reads the snapshot (BM25 from its quantized postings; with the snapshot's model, dense from
    /// its int8 IVF lists and hybrid by RRF): one JSON line a query, `{"query", "vector",
    /// "keyword", "semantic", "hybrid"}`, each list `[[chunk, score]…]` best first (a reference
    /// for the page's loader; the e2e suite checks `static.js` against it).
    SearchSnapshot(SearchSnapshotArgs),
    /// Run the ingest-time LLM stages over a knowledge-base file (docs/ask-pipeline.md): knowledge
    /// atomizing, then LLM mind maps; each does only what is left, so running it again resumes.
    Enrich(EnrichArgs),
    /// Ask a question of a knowledge-base file with an OpenAI-compatible endpoint: the ask
    /// pipeline (docs/ask-pipeline.md; `--preset ask` runs every step, `light` one retrieval and
    /// one answer call, `L1`..`L4` PIKE-RAG's task levels, `search` no model call) or, with `--decompose`, knowledge-aware decomposition alone. Prints the
    /// answer (or the trajectory) as JSON; `--trace` prints each step's trace event to stderr.
    Ask(AskArgs),
    /// Write a knowledge base as one knowledge-base file (docs/kb-file.md), e.g. for
    /// `importKb()` in a browser.
    Export(ExportArgs),
    /// Replace a knowledge base with the one in a knowledge-base file (from `exportKb()` or
    /// `webrag export`); the file is checked whole first.
    Import(ImportArgs),
    /// Write a smaller copy of the model (--model) for a page's query encoder: model.safetensors
    /// as int8 with per-row scales (about a quarter of the bytes) or f16 (half), config.json and
    /// tokenizer.json copied; prints the sizes and the cosine between the two models' embeddings
    /// of a few sentences. Its recall cost: `webrag eval --query-model OUT`.
    Quantize(QuantizeArgs),
    /// Distill a static embedding model from the model (--model), by the Model2Vec method: every
    /// vocabulary token through the model, PCA to --dim components, SIF weights by Zipf rank,
    /// int8 rows; with --train, the rows then trained against the model on a corpus (tokenlearn).
    /// A text's vector is then the normalised mean of its word pieces' rows: no forward pass
    /// (`index --vectors static`, and queries in `webrag/static` without a model).
    Distill(DistillArgs),
    /// Recall@2/5/10 of bm25, dense and hybrid on HotpotQA and MuSiQue train100.
    Eval(EvalArgs),
    /// Native speed figures (embedding, ingest, search latency at 1k and 17,364 documents).
    Bench(BenchArgs),
    /// Search latency natively at 120k chunks (the CRUD news articles twice, hashing vectors,
    /// graph off): ingest, sealing, reopen and p50 / p95 per mode. The page's figures come from
    /// `tests/e2e/bench-scale.mjs`.
    BenchScale(BenchScaleArgs),
    /// Regenerate the generated blocks of docs/api.md, src/web/js/index.d.ts and
    /// src/web/js/static.d.ts from the Rust definitions (src/native/surface.rs), run from the
    /// crate root; with --check, change nothing and fail when a file is stale.
    Surface(SurfaceArgs),
    /// The BM25 analyzer's terms of each line of standard input, as a JSON array a line (a
    /// reference for `webrag/static`'s analyzer: the e2e suite checks its stemmed terms against
    /// these); with `--lang`, stemmed in that language (a BCP 47 tag; one without a Snowball
    /// stemmer analyses as none).
    Analyze(AnalyzeArgs),
    /// Matrix PGR vs the reference reverse DFS on 1k, 10k and 100k fact paths.
    BenchGraph(BenchGraphArgs),
    /// Embedding engine figures, CPU and GPU paths at batch 1, 8, 32, 128 and 256, against the
    /// PyTorch reference (tests/bench/torch_embed.py) where python3 imports torch.
    BenchEmbed(BenchEmbedArgs),
}

/// The arguments of `webrag search`.
#[derive(clap::Args)]
struct SearchArgs {
    /// The query (supports "phrases", -term, term^2).
    query: String,
    /// Knowledge-base file.
    #[arg(long, default_value = "target/webrag-kb.json")]
    db: PathBuf,
    /// Hits.
    #[arg(short, long, default_value_t = 5)]
    k: usize,
    /// bm25, dense, hybrid, graph, hybrid+graph or atomic.
    #[arg(long, default_value = "hybrid", value_parser = ["bm25", "dense", "hybrid", "graph", "hybrid+graph", "atomic"])]
    mode: String,
    /// Read the query as plain text (no phrases, -term or ^ boosts).
    #[arg(long)]
    literal: bool,
    /// One hit per document (its best chunk, its other matching chunks as sections).
    #[arg(long)]
    documents: bool,
    #[command(flatten)]
    filter: FilterArgs,
}

/// The arguments of `webrag enrich`.
#[derive(clap::Args)]
struct EnrichArgs {
    #[command(flatten)]
    llm: LlmArgs,
    /// Skip knowledge atomizing.
    #[arg(long)]
    no_atomize: bool,
    /// Skip the LLM mind maps.
    #[arg(long)]
    no_mind_maps: bool,
    /// Also write forward summaries (PIKE-RAG enhanced chunking; each chunk embedded again).
    #[arg(long)]
    forward_summaries: bool,
    /// Also tag each document (PIKE-RAG auto-tagging).
    #[arg(long)]
    tags: bool,
    /// With --tags: a tag to choose from (repeatable; none: any short tag).
    #[arg(long = "vocabulary")]
    vocabulary: Vec<String>,
    /// Only this document (its id; repeatable; none: every document).
    #[arg(long = "document")]
    documents: Vec<String>,
    /// Print each step's trace event and progress (JSON, one per line) to stderr.
    #[arg(long)]
    trace: bool,
    /// Knowledge-base file.
    #[arg(long, default_value = "target/webrag-kb.json")]
    db: PathBuf,
}

/// The arguments of `webrag ask`.
#[derive(clap::Args)]
struct AskArgs {
    /// The question.
    question: String,
    #[command(flatten)]
    llm: LlmArgs,
    /// The pipeline's preset: search, light, L1, L2, L3, L4 or ask (docs/ask-pipeline.md,
    /// "Presets").
    #[arg(long, default_value = "ask")]
    preset: crate::ask::pipeline::Preset,
    /// Run knowledge-aware decomposition alone (PIKE-RAG Algorithm 1) and print its trajectory.
    #[arg(long)]
    decompose: bool,
    /// Print each step's trace event (JSON, one per line) to stderr.
    #[arg(long)]
    trace: bool,
    #[command(flatten)]
    filter: FilterArgs,
    /// Knowledge-base file.
    #[arg(long, default_value = "target/webrag-kb.json")]
    db: PathBuf,
}

/// The arguments of `webrag export`.
#[derive(clap::Args)]
struct ExportArgs {
    /// The file to write (gzip-compressed JSON).
    out: PathBuf,
    /// Knowledge-base file.
    #[arg(long, default_value = "target/webrag-kb.json")]
    db: PathBuf,
}

/// The arguments of `webrag import`.
#[derive(clap::Args)]
struct ImportArgs {
    /// The knowledge-base file.
    file: PathBuf,
    /// Knowledge-base file to replace.
    #[arg(long, default_value = "target/webrag-kb.json")]
    db: PathBuf,
}

/// The arguments of `webrag quantize`.
#[derive(clap::Args)]
struct QuantizeArgs {
    /// The folder to write.
    out: PathBuf,
    /// int8 or f16.
    #[arg(long, default_value = "int8")]
    format: crate::embed::WeightFormat,
}

/// The arguments of `webrag distill`.
#[derive(clap::Args)]
struct DistillArgs {
    /// The file to write (conventionally `webrag-static.wrs` in the model folder, where
    /// `index --vectors static` looks first).
    out: PathBuf,
    /// Dimensions of a row (PCA components), 1 up to the model's (384 for all-MiniLM-L6-v2).
    #[arg(long, default_value_t = crate::embed::static_model::DEFAULT_DIM)]
    dim: usize,
    /// Then train the rows against the model on this corpus (one text a line; the tokenlearn
    /// method, `crate::embed::tokenlearn`): `tests/models/static_corpus.py` writes the one the
    /// package's static model is trained on (src/web/model/README.md).
    #[arg(long)]
    train: Option<PathBuf>,
    /// With --train: passes over the corpus (1 to 8).
    #[arg(long, default_value_t = 3)]
    epochs: usize,
    /// With --train: Adam's step size.
    #[arg(long, default_value_t = 2e-3)]
    learning_rate: f32,
    /// With --train: texts per minibatch.
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// With --train: keep the model's vectors of the corpus in this file, and reuse them when
    /// the model and the corpus are the same (a second run only trains).
    #[arg(long)]
    cache: Option<PathBuf>,
}

/// The arguments of `webrag bench`.
#[derive(clap::Args)]
struct BenchArgs {
    /// The shared folder (embeddings/, data/).
    #[arg(long, default_value = "../shared")]
    shared: PathBuf,
}

/// The arguments of `webrag bench-scale`.
#[derive(clap::Args)]
struct BenchScaleArgs {
    /// The shared folder (data/crud_news).
    #[arg(long, default_value = "../shared")]
    shared: PathBuf,
}

/// The arguments of `webrag surface`.
#[derive(clap::Args)]
struct SurfaceArgs {
    /// Only check: exit with an error naming each stale file.
    #[arg(long)]
    check: bool,
}

/// The arguments of `webrag analyze`.
#[derive(clap::Args)]
struct AnalyzeArgs {
    /// The text's language (BCP 47: `en`, `fr-CA`): its words are stemmed when it has a
    /// Snowball stemmer.
    #[arg(long)]
    lang: Option<String>,
}

/// The arguments of `webrag bench-graph`.
#[derive(clap::Args)]
struct BenchGraphArgs {
    /// Runs per size (the median is printed).
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

/// The arguments of `webrag bench-embed`.
#[derive(clap::Args)]
struct BenchEmbedArgs {
    /// The shared folder (embeddings/).
    #[arg(long, default_value = "../shared")]
    shared: PathBuf,
    /// Sentences for the GPU rows on a software adapter (lavapipe is slow).
    #[arg(long, default_value_t = 16)]
    software_sentences: usize,
    /// Sentences for the CPU rows (0: no CPU rows).
    #[arg(long, default_value_t = 256)]
    cpu_sentences: usize,
    /// Sentences for the GPU rows on a hardware adapter (0: all of them).
    #[arg(long, default_value_t = 0)]
    gpu_sentences: usize,
    /// CPU thread counts, e.g. 1,2,16 (default: 1, 2 and every core).
    #[arg(long, value_delimiter = ',')]
    threads: Vec<usize>,
    /// Leave out the PyTorch reference.
    #[arg(long)]
    no_torch: bool,
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path).into_iter().flatten().flatten().map(|e| e.path()).collect();
        entries.sort();
        for e in entries {
            collect(&e, out);
        }
    } else if let Some(ext) = path.extension().and_then(|e| e.to_str())
        && ["md", "markdown", "html", "htm", "txt"].contains(&ext.to_ascii_lowercase().as_str())
    {
        out.push(path.to_path_buf());
    }
}

/// The static model of `index --vectors static` and `eval --static-model`: `file`, else
/// `webrag-static.wrs` in the model folder when it is there, else distilled from the model now.
fn load_static_model(model_dir: &Path, file: Option<&Path>) -> crate::Result<crate::embed::StaticModel> {
    let default = model_dir.join("webrag-static.wrs");
    match file {
        Some(f) => crate::native::distill::load_static(model_dir, f),
        None if default.is_file() => crate::native::distill::load_static(model_dir, &default),
        None => {
            let t0 = Instant::now();
            let m = crate::native::distill::distill_dir(model_dir, crate::embed::static_model::DEFAULT_DIM, &mut |_, _| {})?;
            eprintln!(
                "distilled the static model from {} in {:.1} s (`webrag distill {}` keeps it)",
                model_dir.display(),
                t0.elapsed().as_secs_f64(),
                default.display()
            );
            Ok(m)
        }
    }
}

/// Entry point of the `webrag` binary.
pub fn main() {
    quiet_device_select();
    let cli = Cli::parse();
    if let Err(e) = pollster::block_on(run(cli)) {
        eprintln!("error [{}]: {e}", e.code());
        std::process::exit(1);
    }
}

/// Outside a desktop session (no `XDG_RUNTIME_DIR`: a server, a container, CI), Mesa's Vulkan
/// device-select layer, which picks the GPU that drives the display, asks Wayland for it and
/// prints `error: XDG_RUNTIME_DIR is invalid or not set in the environment.` at each instance
/// the device probe makes. There is no display to pick for, so the layer is switched off
/// (`NODEVICE_SELECT=1`, Mesa's own switch) unless the user set it; adapters are enumerated as
/// before, and the probe's one line says which path embeds.
fn quiet_device_select() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() && std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: called first thing in `main`, before the binary starts any thread.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}

/// The model folder (`--model`) and arithmetic (`--precision`) every command's embedder loads with.
struct Models {
    dir: PathBuf,
    precision: crate::embed::Precision,
}

impl Models {
    /// The CPU embedder of the model folder `dir`.
    fn load(&self, dir: &Path) -> crate::Result<crate::embed::CpuEmbedder> {
        let mut e = crate::native::load_embedder(dir)?;
        e.set_precision(self.precision);
        Ok(e)
    }

    /// The CPU embedder of `--model`.
    fn cpu(&self) -> crate::Result<crate::embed::CpuEmbedder> {
        self.load(&self.dir)
    }

    /// The engine's embedder of `--model` on `device`.
    async fn open(&self, device: DevicePreference) -> crate::Result<crate::embed::DeviceEmbedder> {
        crate::native::open_embedder(self.cpu()?, device).await
    }
}

async fn run(cli: Cli) -> crate::Result<()> {
    let models = Models { dir: cli.model.clone().unwrap_or_else(default_model_dir), precision: cli.precision };
    match cli.cmd {
        Cmd::Index(a) => match a.out.clone() {
            Some(out) => index_site(&models, a, out).await?,
            None => index_kb(&models, a).await?,
        },
        Cmd::Enrich(a) => enrich(&models, a).await?,
        Cmd::Ask(a) => ask(&models, a).await?,
        Cmd::Export(a) => export(&models, a).await?,
        Cmd::Import(a) => import(&models, a).await?,
        Cmd::SearchSnapshot(a) => search_snapshot(&models, a).await?,
        Cmd::Search(a) => search(&models, a).await?,
        Cmd::Distill(a) => distill(&models, a).await?,
        Cmd::Eval(a) => eval(&models, a).await?,
        Cmd::Quantize(a) => quantize(&models, a).await?,
        Cmd::Bench(a) => bench(&models, a).await?,
        Cmd::BenchScale(a) => bench_scale(&models, a).await?,
        Cmd::Surface(a) => surface(&models, a).await?,
        Cmd::Analyze(a) => analyze(a)?,
        Cmd::BenchGraph(a) => {
            let BenchGraphArgs { runs } = a;
            crate::native::bench_graph::run(&[1_000, 10_000, 100_000], runs.max(1))
        }
        Cmd::BenchEmbed(a) => bench_embed(&models, a).await?,
    }
    Ok(())
}

/// `webrag enrich`.
async fn enrich(models: &Models, a: EnrichArgs) -> crate::Result<()> {
    let EnrichArgs { llm, no_atomize, no_mind_maps, forward_summaries, tags, vocabulary, documents, trace, db } = a;
    let model = crate::llm::openai::OpenAiClient::new(llm.config(), crate::native::http::UreqTransport)?;
    let mut eng = Engine::open(FileStore::open(&db).await?, models.cpu()?, Config::default(), Box::new(SystemClock)).await?;
    let defaults = crate::ask::ingest::EnrichParams::default();
    let p = crate::ask::ingest::EnrichParams {
        forward_summaries: forward_summaries.then(Default::default),
        tags: tags.then(|| crate::ask::enhance::TaggingParams { vocabulary: vocabulary.clone(), ..Default::default() }),
        atomize: defaults.atomize.filter(|_| !no_atomize),
        mind_maps: defaults.mind_maps.filter(|_| !no_mind_maps),
        documents: (!documents.is_empty()).then_some(documents),
    };
    let mut progress = |ev: crate::types::ProgressEvent| {
        if trace {
            eprintln!("{}", serde_json::to_string(&ev).unwrap_or_default());
        }
    };
    let mut on_trace = |ev: crate::ask::TraceEvent| {
        if trace {
            eprintln!("{}", serde_json::to_string(&ev).unwrap_or_default());
        }
    };
    let r = crate::ask::ingest::enrich(&crate::engine::Exclusive::new(&mut eng), &model, &p, &SystemClock, &mut progress, &mut on_trace)
        .await?;
    println!("{}", serde_json::to_string(&r).unwrap_or_default());
    Ok(())
}

/// `webrag ask`.
async fn ask(models: &Models, a: AskArgs) -> crate::Result<()> {
    let AskArgs { question, llm, preset, decompose, trace, filter, db } = a;
    let model = crate::llm::openai::OpenAiClient::new(llm.config(), crate::native::http::UreqTransport)?;
    let mut eng = Engine::open(FileStore::open(&db).await?, models.cpu()?, Config::default(), Box::new(SystemClock)).await?;
    let mut on_trace = |ev: crate::ask::TraceEvent| {
        if trace {
            eprintln!("{}", serde_json::to_string(&ev).unwrap_or_default());
        }
    };
    let out = if decompose {
        let p = crate::ask::DecomposeParams::default();
        let scope = filter.filter();
        let mut kb = crate::ask::Scoped { kb: &mut eng, filter: scope.as_ref() };
        serde_json::to_string(&crate::ask::decompose(&model, &mut kb, &question, &p, &SystemClock, &mut on_trace).await?)
    } else {
        let filter = filter.filter().map(crate::ask::params::AskFilter::Scope);
        let p = crate::ask::pipeline::PipelineParams { preset, filter, ..Default::default() };
        let web: Option<&crate::ask::pipeline::NoWeb> = None;
        let r = crate::ask::pipeline::run(&model, &mut eng, web, &question, &p, &SystemClock, &mut |_| {}, &mut on_trace).await?;
        serde_json::to_string(&r)
    };
    println!("{}", out.unwrap_or_default());
    Ok(())
}

/// `webrag export`.
async fn export(models: &Models, a: ExportArgs) -> crate::Result<()> {
    let ExportArgs { out, db } = a;
    let eng = Engine::open(FileStore::open(&db).await?, models.cpu()?, Config::default(), Box::new(SystemClock)).await?;
    let bytes = eng.export_kb().await?;
    std::fs::write(&out, &bytes).map_err(|e| crate::error::StoreError::Backend { reason: format!("{}: {e}", out.display()) })?;
    let s = eng.stats();
    println!("exported {} documents, {} chunks to {} ({} bytes)", s.documents, s.chunks, out.display(), bytes.len());
    Ok(())
}

/// `webrag import`.
async fn import(models: &Models, a: ImportArgs) -> crate::Result<()> {
    let ImportArgs { file, db } = a;
    let bytes = std::fs::read(&file).map_err(|e| crate::error::InputError::InvalidKbFile { reason: format!("{}: {e}", file.display()) })?;
    let mut eng = Engine::open(FileStore::open(&db).await?, models.cpu()?, Config::default(), Box::new(SystemClock)).await?;
    let s = eng.import_kb(&bytes).await?;
    println!("imported {} documents, {} chunks into {}", s.documents, s.chunks, db.display());
    Ok(())
}

/// `webrag search`.
async fn search(models: &Models, a: SearchArgs) -> crate::Result<()> {
    let SearchArgs { query, db, k, mode, literal, documents, filter } = a;
    let mode = match mode.as_str() {
        "bm25" => SearchMode::Bm25,
        "dense" => SearchMode::Dense,
        "graph" => SearchMode::Graph,
        "hybrid+graph" => SearchMode::HybridGraph,
        "atomic" => SearchMode::Atomic,
        _ => SearchMode::Hybrid,
    };
    let embedder = models.cpu()?;
    let eng = Engine::open(FileStore::open(&db).await?, embedder, Config::default(), Box::new(SystemClock)).await?;
    let group = if documents { Grouping::Document } else { Grouping::Chunk };
    let hits = eng.search(&query, &SearchOptions { k, mode, literal, filter: filter.filter(), group }).await?;
    for (i, h) in hits.iter().enumerate() {
        let snippet: String = h.snippet.iter().map(|p| if p.hit { format!("[{}]", p.text) } else { p.text.clone() }).collect();
        println!(
            "{:2}. {} — {} (score {:.4}; bm25 {:?}, dense {:?})",
            i + 1,
            h.title,
            h.heading_path.join(" > "),
            h.score,
            h.scores.bm25,
            h.scores.dense
        );
        println!("    {}", snippet.replace('\n', " "));
        for sec in &h.sections {
            let snippet: String = sec.snippet.iter().map(|p| if p.hit { format!("[{}]", p.text) } else { p.text.clone() }).collect();
            println!("    § {} (score {:.4}): {}", sec.heading_path.join(" > "), sec.score, snippet.replace('\n', " "));
        }
    }
    if hits.is_empty() {
        println!("no hits");
    }
    Ok(())
}

/// `webrag distill`.
async fn distill(models: &Models, a: DistillArgs) -> crate::Result<()> {
    let DistillArgs { out, dim, train, epochs, learning_rate, batch, cache } = a;
    let t0 = Instant::now();
    let mut last = 0;
    let m = if let Some(corpus) = train {
        let text =
            std::fs::read_to_string(&corpus).map_err(|e| crate::embed::file_error("corpus", format!("{}: {e}", corpus.display())))?;
        let texts: Vec<String> = text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect();
        let params = crate::embed::tokenlearn::TrainParams { dim, epochs, learning_rate, batch };
        let mut last = (crate::embed::tokenlearn::Stage::Targets, usize::MAX);
        let (m, report) = crate::native::distill::train_dir(&models.dir, &texts, cache.as_deref(), params, &mut |stage, done, total| {
            let tenth = done * 10 / total.max(1);
            if (stage, tenth) != last {
                last = (stage, tenth);
                eprintln!("training: {stage:?} {done} of {total} ({:.0} s)", t0.elapsed().as_secs_f64());
            }
        })?;
        println!(
            "trained on {} texts of {} ({} held out): held-out mean cosine to the model {:.4} before, after each epoch {}",
            report.texts,
            corpus.display(),
            report.held_out,
            report.cosine_before,
            report.cosine_after.iter().map(|c| format!("{c:.4}")).collect::<Vec<_>>().join(" ")
        );
        m
    } else {
        crate::native::distill::distill_dir(&models.dir, dim, &mut |done, total| {
            if done * 10 / total.max(1) != last {
                last = done * 10 / total.max(1);
                eprintln!("distilling: {done} of {total} tokens through the model");
            }
        })?
    };
    let bytes = m.to_bytes();
    std::fs::write(&out, &bytes).map_err(|e| crate::embed::file_error(&out.display().to_string(), e))?;
    println!(
        "static model of {} tokens × {} dimensions from {} in {}: {} bytes; {:.1} s",
        m.header().rows,
        m.header().dim,
        models.dir.display(),
        out.display(),
        bytes.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `webrag quantize`.
async fn quantize(models: &Models, a: QuantizeArgs) -> crate::Result<()> {
    let QuantizeArgs { out, format } = a;
    let r = crate::native::quantize::quantize(&models.dir, &out, format)?;
    println!(
        "{}: model.safetensors {} → {} bytes ({:.1}%, {}); cosine with {} on {} sentences: min {:.5}, mean {:.5}",
        out.display(),
        r.source_bytes,
        r.bytes,
        100.0 * r.bytes as f64 / r.source_bytes.max(1) as f64,
        format.name(),
        models.dir.display(),
        crate::native::quantize::SENTENCES.len(),
        r.min_cosine,
        r.mean_cosine
    );
    Ok(())
}

/// `webrag bench`.
async fn bench(models: &Models, a: BenchArgs) -> crate::Result<()> {
    let BenchArgs { shared } = a;
    let model = models.cpu()?;
    crate::native::bench::run(&model, &shared).await?;
    Ok(())
}

/// `webrag bench-scale`.
async fn bench_scale(models: &Models, a: BenchScaleArgs) -> crate::Result<()> {
    let BenchScaleArgs { shared } = a;
    let model = models.cpu()?;
    crate::native::bench::scale(&model, &shared).await?;
    Ok(())
}

/// `webrag surface`.
fn analyze(a: AnalyzeArgs) -> crate::Result<()> {
    use std::io::{BufRead, Write};
    let lang = a.lang.as_deref().and_then(crate::text::Language::from_tag);
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let io = |e: std::io::Error| crate::error::StoreError::Backend { reason: format!("webrag analyze: {e}") };
    for line in std::io::stdin().lock().lines() {
        let terms = crate::text::analyze_in(&line.map_err(io)?, lang);
        writeln!(out, "{}", serde_json::Value::from(terms)).map_err(io)?;
    }
    out.flush().map_err(io)?;
    Ok(())
}

async fn surface(_: &Models, a: SurfaceArgs) -> crate::Result<()> {
    let SurfaceArgs { check } = a;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stale = match crate::native::surface::stale(root) {
        Ok(stale) => stale,
        Err(reason) => {
            eprintln!("webrag surface: {reason}");
            std::process::exit(1);
        }
    };
    if stale.is_empty() {
        println!("the generated blocks are up to date");
    }
    for (path, text) in &stale {
        if check {
            eprintln!("stale: {} (run `./webrag.sh surface`)", path.display());
        } else {
            std::fs::write(path, text).map_err(|e| crate::embed::file_error(&path.display().to_string(), e))?;
            println!("wrote {}", path.display());
        }
    }
    if check && !stale.is_empty() {
        std::process::exit(1);
    }
    Ok(())
}

/// `webrag bench-embed`.
async fn bench_embed(models: &Models, a: BenchEmbedArgs) -> crate::Result<()> {
    let BenchEmbedArgs { shared, software_sentences, cpu_sentences, gpu_sentences, threads, no_torch } = a;
    let p = crate::native::bench_embed::Params { shared, software_sentences, cpu_sentences, gpu_sentences, threads, no_torch };
    crate::native::bench_embed::run(&models.dir, &p).await?;
    Ok(())
}
