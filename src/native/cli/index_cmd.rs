//! `webrag index`: its arguments, and its two uses — a built static site into a snapshot
//! (`--out`, [`crate::snapshot`] over [`crate::native::site`]) and files into a knowledge base
//! (`--db`).
use std::path::PathBuf;
use std::time::Instant;

use super::{Models, collect, load_static_model};
use crate::config::Config;
use crate::embed::DevicePreference;
use crate::engine::Engine;
use crate::native::FileStore;
use crate::ports::SystemClock;
use crate::types::{DocumentInput, Format, ProgressEvent};

/// The arguments of `webrag index`.
#[derive(clap::Args)]
pub(super) struct IndexArgs {
    /// Files or directories (searched recursively); with --out, the site's root directory.
    paths: Vec<PathBuf>,
    /// Knowledge-base file (JSON).
    #[arg(long, default_value = "target/webrag-kb.json")]
    db: PathBuf,
    /// Static-site mode: write the snapshot (manifest.json + content-hashed shards) here,
    /// e.g. <site>/webrag.
    #[arg(long)]
    pub(super) out: Option<PathBuf>,
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
    /// Static-site mode: where the site is served (`/docs/`, `https://example.org/docs/`), for
    /// the search box's links. Default: found from where --out is inside the site (`../` for
    /// <site>/webrag), so a site served under a sub-path links to its own pages.
    #[arg(long)]
    site_url: Option<String>,
}

/// `path` made absolute and with its `.` and `..` removed, without reading the file system (as
/// Node's `path.resolve`, which `npx webrag index` uses for the same `siteRoot`).
fn lexical(path: &std::path::Path) -> std::io::Result<PathBuf> {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in std::path::absolute(path)?.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// `webrag index --out`: a built static site into a snapshot.
pub(super) async fn index_site(models: &Models, a: IndexArgs, out: PathBuf) -> crate::Result<()> {
    let IndexArgs {
        paths, vectors, static_model, no_graph, kb, llm_url, llm_model, llm_key_env, device, cache, no_cache, site_url, ..
    } = a;
    let [site] = paths.as_slice() else {
        return Err(crate::error::InputError::InvalidOption {
            name: "paths".into(),
            reason: "static-site mode indexes one directory (the site root)".into(),
        }
        .into());
    };
    let site_root = match site_url {
        Some(u) => Some(crate::snapshot::check_site_url("site-url", &u)?),
        None => match (lexical(site), lexical(&out)) {
            (Ok(s), Ok(o)) => crate::snapshot::site_root(&s, &o),
            _ => None,
        },
    };
    let t0 = Instant::now();
    // The static model is weighted by the site's pages as they are sorted (one parse of each).
    let mut static_m = if vectors == "static" { Some(load_static_model(&models.dir, static_model.as_deref())?) } else { None };
    let (crawled, left) = crate::native::site::crawl(site, &out, crate::snapshot::max_page_bytes())?;
    for l in &left {
        eprintln!("warning: skipped {}: {}", l.path.display(), l.why);
    }
    let mut files = crate::native::site::SiteFiles { site };
    let crate::snapshot::SitePages { pages, empty, noindex, search, unread, fields } =
        crate::snapshot::sort_pages(crawled, &mut files, static_m.as_mut());
    for (page, why) in &unread {
        eprintln!("warning: skipped {}: {why}", site.join(&page.path).display());
    }
    eprintln!("crawled {} pages under {}", pages.len() + empty.len() + noindex.len() + search.len(), site.display());
    for id in &empty {
        eprintln!("warning: skipped {id}: no text to index");
    }
    if !noindex.is_empty() {
        eprintln!("left out {} pages marked <meta name=\"robots\" content=\"noindex\">: {}", noindex.len(), noindex.join(", "));
    }
    if !search.is_empty() {
        eprintln!("left out {} search pages (a search box and little text): {}", search.len(), search.join(", "));
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
    let p = crate::native::site::SnapshotParams {
        vectors: vectors != "none",
        graph: vectors != "none" && !no_graph,
        kb,
        site_root,
        ..Default::default()
    };
    let p = if vectors == "static" { p.static_tier() } else { p };
    // A static model is weighted by the whole site, so a page's vectors depend on every
    // other page: no build cache (embedding costs what tokenizing does anyway).
    let cache = if no_cache || vectors == "static" { None } else { Some(cache.unwrap_or_else(crate::native::site::default_cache_dir)) };
    let build = crate::native::site::SiteBuild { out: &out, params: &p, fields: &fields, llm, cache: cache.as_deref(), mode: &vectors, t0 };
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
pub(super) async fn index_kb(models: &Models, a: IndexArgs) -> crate::Result<()> {
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
            lang: None,
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
