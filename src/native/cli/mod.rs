//! `webrag` command line: index, search, eval.
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::Config;
use crate::embed::DevicePreference;
use crate::engine::{Engine, SearchOptions};
use crate::native::{FileStore, default_model_dir, eval};
use crate::ports::SystemClock;
use crate::types::{DocumentInput, Format, Grouping, ProgressEvent, SearchMode};
use clap::{Parser, Subcommand};

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
}

impl FilterArgs {
    fn filter(&self) -> Option<crate::types::SearchFilter> {
        let f = crate::types::SearchFilter { tags: self.tags.clone(), doc_ids: self.doc_ids.clone(), meta: Default::default() };
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
    /// Matrix PGR vs the reference reverse DFS on 1k, 10k and 100k fact paths.
    BenchGraph(BenchGraphArgs),
    /// Embedding engine figures, CPU and GPU paths at batch 1, 8, 32, 128 and 256, against the
    /// PyTorch reference (tests/bench/torch_embed.py) where python3 imports torch.
    BenchEmbed(BenchEmbedArgs),
}

/// The arguments of `webrag index`.
#[derive(clap::Args)]
struct IndexArgs {
    /// Files or directories (searched recursively); with --out, the site's root directory.
    paths: Vec<PathBuf>,
    /// Knowledge-base file (JSON).
    #[arg(long, default_value = "target/webrag-kb.json")]
    db: PathBuf,
    /// Static-site mode: write the snapshot (manifest.json + content-hashed shards) here,
    /// e.g. <site>/webrag.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Static-site mode: `chunks` (embed every chunk with the model: semantic search),
    /// `static` (embed every chunk with the static model distilled from it, `webrag distill`:
    /// no forward pass, and the page embeds queries from the token rows the snapshot ships,
    /// without a model), `none` (keyword search only; no model run, fast) or `hashing`
    /// (vector shards of the real sizes and layout from the hashing embedder, for benchmarks
    /// of bytes only).
    #[arg(long, default_value = "chunks", value_parser = ["chunks", "static", "none", "hashing"])]
    vectors: String,
    /// With `--vectors static`: the static model file (`webrag distill`'s output). Default:
    /// `webrag-static.wrs` in the model folder when it is there, else the model is distilled
    /// first (256 dimensions, tens of seconds).
    #[arg(long)]
    static_model: Option<PathBuf>,
    /// Static-site mode: leave out the graph shards (the pseudo-graph's mind maps; written
    /// by default when there are vectors).
    #[arg(long)]
    no_graph: bool,
    /// Static-site mode: also write the whole knowledge base as a knowledge-base file
    /// (`kb-{hash}.webrag-kb.gz`, named by the manifest's `kb`) that a visitor's page imports
    /// with `importKb()` to ask questions over the site offline.
    #[arg(long)]
    kb: bool,
    /// Static-site mode: an OpenAI-compatible endpoint (up to the API version, e.g.
    /// http://127.0.0.1:8000/v1) for the ingest-time LLM stages: knowledge atomizing (atomic
    /// questions join the vector lists) and LLM mind maps (the graph shards). Needs vectors.
    #[arg(long)]
    llm_url: Option<String>,
    /// The endpoint's model name.
    #[arg(long, default_value = "gpt-4o-mini")]
    llm_model: String,
    /// The environment variable holding the endpoint's API key (none: no key is sent).
    #[arg(long, default_value = "WEBRAG_LLM_KEY")]
    llm_key_env: String,
    /// Where the model runs: auto (a hardware GPU adapter when there is one, else the CPU on
    /// every core), cpu, or gpu (any adapter, lavapipe included; an error without one).
    #[arg(long, default_value = "auto")]
    device: DevicePreference,
    /// Store the index segments a lazy open reads (docs/vector-index.md) once the knowledge
    /// base has this many chunks; 0: never.
    #[arg(long, default_value_t = crate::config::Config::LAZY_OPEN_CHUNKS.count())]
    lazy_open_chunks: usize,
    /// A tag for every file indexed (repeatable), for `search --tag` and `ask --tag`.
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// Static-site mode: the build cache, a folder (default: $XDG_CACHE_HOME/webrag/sites,
    /// else ~/.cache/webrag/sites). A build keeps its knowledge base there (one file per
    /// output folder, model and mode) and the next reuses it: pages whose content is
    /// unchanged keep their vectors, graph and LLM results; only changed pages are embedded.
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Static-site mode: build from scratch, neither reading nor writing the build cache.
    #[arg(long)]
    no_cache: bool,
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

/// The arguments of `webrag search-snapshot`.
#[derive(clap::Args)]
struct SearchSnapshotArgs {
    /// The snapshot folder (`index --out`'s).
    dir: PathBuf,
    /// Queries.
    queries: Vec<String>,
    /// Chunks a list.
    #[arg(short, long, default_value_t = 10)]
    k: usize,
    /// Keyword only (no model run).
    #[arg(long)]
    keyword_only: bool,
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

/// The arguments of `webrag eval`.
#[derive(clap::Args)]
struct EvalArgs {
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
        Cmd::BenchGraph(a) => {
            let BenchGraphArgs { runs } = a;
            crate::native::bench_graph::run(&[1_000, 10_000, 100_000], runs.max(1))
        }
        Cmd::BenchEmbed(a) => bench_embed(&models, a).await?,
    }
    Ok(())
}

/// `webrag index --out`: a built static site into a snapshot.
async fn index_site(models: &Models, a: IndexArgs, out: PathBuf) -> crate::Result<()> {
    let IndexArgs { paths, vectors, static_model, no_graph, kb, llm_url, llm_model, llm_key_env, device, cache, no_cache, .. } = a;
    let [site] = paths.as_slice() else {
        return Err(crate::error::InputError::InvalidOption {
            name: "paths".into(),
            reason: "static-site mode indexes one directory (the site root)".into(),
        }
        .into());
    };
    let t0 = Instant::now();
    // The static model is weighted by the site's pages as they are sorted (one parse of each).
    let mut static_m = if vectors == "static" { Some(load_static_model(&models.dir, static_model.as_deref())?) } else { None };
    let (crawled, left) = crate::native::site::crawl(site, &out, crate::snapshot::max_page_bytes())?;
    for l in &left {
        eprintln!("warning: skipped {}: {}", l.path.display(), l.why);
    }
    let mut files = crate::native::site::SiteFiles { site };
    let crate::snapshot::SitePages { pages, empty, noindex, unread } = crate::snapshot::sort_pages(crawled, &mut files, static_m.as_mut());
    for (page, why) in &unread {
        eprintln!("warning: skipped {}: {why}", site.join(&page.path).display());
    }
    eprintln!("crawled {} pages under {}", pages.len() + empty.len() + noindex.len(), site.display());
    for id in &empty {
        eprintln!("warning: skipped {id}: no text to index");
    }
    if !noindex.is_empty() {
        eprintln!("left out {} pages marked <meta name=\"robots\" content=\"noindex\">: {}", noindex.len(), noindex.join(", "));
    }
    let llm = match llm_url {
        Some(_) if vectors == "none" => {
            return Err(crate::error::InputError::InvalidOption {
                name: "llm-url".into(),
                reason: "the LLM stages need vectors (--vectors chunks)".into(),
            }
            .into());
        }
        Some(base_url) => {
            let cfg = crate::llm::LlmConfig {
                base_url,
                model: llm_model,
                api_key: std::env::var(&llm_key_env).unwrap_or_default(),
                ..Default::default()
            };
            cfg.validate()?;
            Some(cfg)
        }
        None => None,
    };
    let p =
        crate::native::site::SnapshotParams { vectors: vectors != "none", graph: vectors != "none" && !no_graph, kb, ..Default::default() };
    let p = if vectors == "static" { p.static_tier() } else { p };
    // A static model is weighted by the whole site, so a page's vectors depend on every
    // other page: no build cache (embedding costs what tokenizing does anyway).
    let cache = if no_cache || vectors == "static" { None } else { Some(cache.unwrap_or_else(crate::native::site::default_cache_dir)) };
    let build = crate::native::site::SiteBuild { out: &out, params: &p, llm, cache: cache.as_deref(), mode: &vectors, t0 };
    let summary = if vectors == "chunks" {
        build.run(models.open(device).await?, pages, &mut files).await?
    } else if let Some(m) = static_m {
        build.run(m, pages, &mut files).await?
    } else {
        // Keyword only: the tokenizer still bounds the chunks; no model runs.
        let model = models.cpu()?;
        build.run(crate::embed::hashing::HashingEmbedder::new(&model), pages, &mut files).await?
    };
    println!(
        "snapshot of {} pages ({} chunks) in {}: {} term shards, {} fragment files, {} vector lists, {} graph files, {} bytes; {:.1} s",
        summary.documents,
        summary.chunks,
        out.display(),
        summary.term_shards,
        summary.fragments,
        summary.lists,
        summary.topics,
        summary.bytes,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `webrag index`: files into a knowledge-base file.
async fn index_kb(models: &Models, a: IndexArgs) -> crate::Result<()> {
    let IndexArgs { paths, db, device, lazy_open_chunks, tags, .. } = a;
    let t0 = Instant::now();
    let embedder = models.open(device).await?;
    let config = Config { lazy_open_chunks, ..Config::default() };
    config.validate()?;
    let mut eng = Engine::open(FileStore::open(&db).await?, embedder, config, Box::new(SystemClock)).await?;
    let mut files = Vec::new();
    for p in &paths {
        collect(p, &mut files);
    }
    let mut docs = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).map_err(|e| crate::embed::file_error(&f.display().to_string(), e))?;
        let id = f.display().to_string();
        let text = crate::engine::decode_utf8(&id, bytes)?;
        docs.push(DocumentInput {
            id: id.clone(),
            title: None,
            text,
            format: Format::Auto,
            url: Some(id),
            tags: tags.clone(),
            meta: Default::default(),
        });
    }
    let mut last = 0;
    let report = eng
        .add(docs, &mut |e: ProgressEvent| {
            if matches!(e.phase, crate::types::Phase::Embed | crate::types::Phase::Graph) && (e.done >= last + 32 || e.done < last) {
                last = e.done;
                let what = if e.phase == crate::types::Phase::Embed { "chunks" } else { "mind-map nodes" };
                eprintln!("embedded {}/{} {what}", e.done, e.total);
            }
        })
        .await?;
    for step in eng.maintain_all(false).await? {
        if step.collection == crate::engine::Sealed::Segments {
            eprintln!("stored the index segments of {} chunks ({} records)", step.vectors, step.segments);
        } else {
            eprintln!(
                "sealed {} {} vectors into an HNSW segment ({} merged; {} segments)",
                step.vectors, step.collection, step.merged, step.segments
            );
        }
    }
    let s = eng.stats();
    println!(
        "indexed {} files ({} new, {} replaced, {} unchanged, {} chunks written) into {} in {:.1}s; store holds {} documents, {} chunks",
        files.len(),
        report.added.len(),
        report.replaced.len(),
        report.unchanged.len(),
        report.chunks,
        db.display(),
        t0.elapsed().as_secs_f64(),
        s.documents,
        s.chunks
    );
    Ok(())
}

/// `webrag enrich`.
async fn enrich(models: &Models, a: EnrichArgs) -> crate::Result<()> {
    let EnrichArgs { llm, no_atomize, no_mind_maps, forward_summaries, tags, vocabulary, trace, db } = a;
    let model = crate::llm::openai::OpenAiClient::new(llm.config(), crate::native::http::UreqTransport)?;
    let mut eng = Engine::open(FileStore::open(&db).await?, models.cpu()?, Config::default(), Box::new(SystemClock)).await?;
    let defaults = crate::ask::ingest::EnrichParams::default();
    let p = crate::ask::ingest::EnrichParams {
        forward_summaries: forward_summaries.then(Default::default),
        tags: tags.then(|| crate::ask::enhance::TaggingParams { vocabulary: vocabulary.clone(), ..Default::default() }),
        atomize: defaults.atomize.filter(|_| !no_atomize),
        mind_maps: defaults.mind_maps.filter(|_| !no_mind_maps),
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

/// `webrag search-snapshot`.
async fn search_snapshot(models: &Models, a: SearchSnapshotArgs) -> crate::Result<()> {
    let SearchSnapshotArgs { dir, queries, k, keyword_only } = a;
    let src = crate::native::snapshot_search::SnapshotSource::open(&dir)?;
    let embedder = match keyword_only || src.model_id().is_empty() {
        true => None,
        false => Some(models.cpu()?),
    };
    if let Some(e) = embedder.as_ref().filter(|e| crate::embed::Embedder::model_id(*e) != src.model_id()) {
        let reason =
            format!("the snapshot's vectors are of {}, the model folder's {}", src.model_id(), crate::embed::Embedder::model_id(e));
        return Err(crate::error::InputError::InvalidOption { name: "model".into(), reason }.into());
    }
    let list = |r: crate::engine::source::Ranking| r.top.into_iter().map(|(c, s)| serde_json::json!([c, s])).collect::<Vec<_>>();
    for query in queries {
        let rank = async |mode: SearchMode, qv: Option<&[f32]>| {
            crate::engine::source::rank(&src, &query, qv, &SearchOptions::new(k, mode)).await.map(list)
        };
        let mut line = serde_json::json!({ "query": query, "keyword": rank(SearchMode::Bm25, None).await? });
        if let Some(e) = &embedder {
            let qv =
                crate::embed::Embedder::embed_checked(e, &[crate::engine::dense_query_text(&query).as_str()]).await?.into_iter().next();
            line["semantic"] = rank(SearchMode::Dense, qv.as_deref()).await?.into();
            line["hybrid"] = rank(SearchMode::Hybrid, qv.as_deref()).await?.into();
            line["vector"] = qv.into();
        }
        println!("{line}");
    }
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

/// `webrag eval`: each dataset ([`eval_set`]), then the report's tables.
async fn eval(models: &Models, a: EvalArgs) -> crate::Result<()> {
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
