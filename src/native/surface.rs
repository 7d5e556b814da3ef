//! `webrag surface`: the option tables and the error tables of docs/api.md, the option
//! interfaces, error classes and result types of the page's TypeScript types
//! (`src/web/js/index.d.ts`), `webrag/static`'s `SnapshotError`, `Manifest`, option interfaces
//! and result types (`src/web/js/static.d.ts`) and the defaults, ranges and values its loader
//! checks options against (`src/web/js/static-text.js`), generated from the components' [`Doc`]
//! tables, [`crate::snapshot::loader`], [`crate::error::CODES`], [`crate::error::SNAPSHOT_CODES`]
//! and the result types' JSON Schema (`surface_types`), so each option's name, type, default,
//! range and meaning, each error code's class and meaning, and each result field's name, type and
//! meaning is written once, in Rust.
//!
//! A generated block sits between a begin marker naming it and an end marker:
//! `<!-- generated: engine-options (webrag surface) -->` … `<!-- end generated -->` in Markdown,
//! `// generated: options (webrag surface)` … `// end generated` in TypeScript. Everything
//! outside the blocks is written by hand. `tests/surface.rs` fails when a committed file differs
//! from what this module generates.
use std::path::{Path, PathBuf};

use crate::options::{Doc, Value};
use crate::snapshot::loader;

/// A file with generated blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `docs/api.md`.
    ApiMarkdown,
    /// `src/web/js/index.d.ts`.
    IndexTypes,
    /// `src/web/js/static.d.ts`.
    StaticTypes,
    /// `src/web/js/static-text.js`: the loader's option defaults, ranges and values.
    StaticText,
}

impl Target {
    /// Every file with generated blocks.
    pub const ALL: [Target; 4] = [Target::ApiMarkdown, Target::IndexTypes, Target::StaticTypes, Target::StaticText];

    /// The file, relative to the crate root.
    pub fn path(self) -> &'static str {
        match self {
            Target::ApiMarkdown => "docs/api.md",
            Target::IndexTypes => "src/web/js/index.d.ts",
            Target::StaticTypes => "src/web/js/static.d.ts",
            Target::StaticText => "src/web/js/static-text.js",
        }
    }

    fn markers(self, block: &str) -> (String, &'static str) {
        match self {
            Target::ApiMarkdown => (format!("<!-- generated: {block} (webrag surface) -->"), "<!-- end generated -->"),
            Target::IndexTypes | Target::StaticTypes | Target::StaticText => {
                (format!("// generated: {block} (webrag surface)"), "// end generated")
            }
        }
    }

    /// The blocks this file holds: name and generated text.
    pub fn blocks(self) -> Vec<(&'static str, String)> {
        match self {
            Target::ApiMarkdown => markdown_blocks(),
            Target::IndexTypes => typescript_blocks(),
            Target::StaticTypes => vec![
                ("snapshot-errors", snapshot_error_class()),
                ("manifest", super::surface_types::manifest_types()),
                ("loader-options", loader_option_interfaces()),
                ("loader-results", super::surface_types::loader_types()),
            ],
            Target::StaticText => vec![("loader-options", loader_option_checks())],
        }
    }
}

/// The `signal` option of the page's `search` (the web layer's own: an `AbortSignal`).
const SIGNAL: Doc = Doc::new(
    "signal",
    Value::Other { ts: "AbortSignal", default: "none", accepts: "`AbortSignal`" },
    "fired while the search waits behind other operations: it never runs (`CancelledError` `CANCELLED`)",
);

/// The ingest-time stages of `enrich`, each `true`, `false` or its options.
fn enrich_stages() -> [(&'static str, &'static [Doc], &'static str); 4] {
    [
        (
            "forwardSummaries",
            crate::ask::enhance::SummaryParams::DOCS,
            "forward summaries (PIKE-RAG's enhanced chunking); off unless asked",
        ),
        ("tags", crate::ask::enhance::TaggingParams::DOCS, "automatic tags per document; off unless asked"),
        ("atomize", crate::ask::ingest::AtomizeParams::DOCS, "knowledge atomizing (atomic questions per chunk); on by default"),
        ("mindMaps", crate::ask::ingest::MindMapParams::DOCS, "LLM mind maps with fact-check items; on by default"),
    ]
}

fn table(docs: &[Doc], extra: &[Doc]) -> String {
    let mut out = String::from("| option | default | range | meaning |\n|---|---|---|---|\n");
    Doc::markdown_rows(docs, "", &mut out);
    Doc::markdown_rows(extra, "", &mut out);
    out
}

/// A table of error codes: class (on its first row), code, when.
fn error_table(codes: &[crate::error::Code]) -> String {
    let mut out = String::from("| class | code | when |\n|---|---|---|\n");
    let mut last = "";
    for c in codes {
        let class = if c.class == last { String::new() } else { format!("`{}`", c.class) };
        out.push_str(&crate::options::markdown_row(&[&class, &format!("`{}`", c.code), c.when]));
        last = c.class;
    }
    out
}

/// `index.d.ts`'s error classes, each listing its codes, and the `ErrorCode` union.
fn error_classes() -> String {
    let codes: Vec<String> = crate::error::CODES.iter().map(|c| format!("'{}'", c.code)).collect();
    let mut out = format!("/** Every error code (docs/api.md, \"Errors\"). */\nexport type ErrorCode =\n  | {};\n", codes.join("\n  | "));
    let of = |class: &str| crate::error::CODES.iter().filter(|c| c.class == class).map(|c| c.code).collect::<Vec<_>>().join(", ");
    for &(class, summary) in crate::error::CLASSES.iter().rev() {
        if class == "WebRagError" {
            out.push_str(&format!(
                "/** {summary} with {}. */\nexport class WebRagError extends Error {{\n  /** Stable machine-readable code, e.g. `EMPTY_DOCUMENT`, `STORE_BLOCKED`. */\n  readonly code: ErrorCode;\n}}\n",
                of(class)
            ));
        } else {
            out.push_str(&format!("/** {summary}: {}. */\nexport class {class} extends WebRagError {{}}\n", of(class)));
        }
    }
    out
}

/// `static.d.ts`'s `SnapshotError`, listing its codes.
fn snapshot_error_class() -> String {
    let codes = crate::error::SNAPSHOT_CODES;
    let list: Vec<String> = codes.iter().map(|c| format!("`{}`", c.code)).collect();
    let union: Vec<String> = codes.iter().map(|c| format!("'{}'", c.code)).collect();
    format!(
        "/** What `webrag/static` rejects with (docs/api.md, \"Errors\"): {}. Not a `WebRagError`. */\nexport class SnapshotError extends Error {{\n  name: 'SnapshotError';\n  code: {};\n  /** The snapshot file concerned, relative to the snapshot folder. */\n  file: string;\n}}\n",
        list.join(", "),
        union.join(" | ")
    )
}

/// `static.d.ts`'s option interfaces of `webrag/static`'s methods.
fn loader_option_interfaces() -> String {
    let tables = loader::OPTION_TABLES.iter();
    tables.map(|(name, at, docs)| interface(&format!("The options of {at}."), name, docs, &[])).collect::<Vec<_>>().join("\n")
}

/// docs/api.md's option tables of `webrag/static`, one per method.
fn loader_option_tables() -> String {
    let tables = loader::OPTION_TABLES.iter();
    tables.map(|(_, at, docs)| format!("{at}:\n\n{}", table(docs, &[]))).collect::<Vec<_>>().join("\n")
}

/// The loader's defaults, ranges and values of its options, as JavaScript (`static-text.js`).
fn loader_option_checks() -> String {
    let ranges: Vec<String> = loader::RANGES.iter().map(|r| format!("{}: [{}, {}, {}]", r.name, r.default, r.min, r.max)).collect();
    let list = |values: Vec<String>| values.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ");
    let modes = list(super::surface_types::choices::<loader::StaticMode>());
    let groups = list(super::surface_types::choices::<loader::StaticGrouping>());
    format!(
        "/** The numeric options' `[default, min, max]`, by name (integers; src/snapshot/loader.rs). */\nexport const RANGES = {{ {} }};\n/** The values of the options that take one of a few, the default first. */\nexport const CHOICES = {{ mode: [{modes}], group: [{groups}] }};\n",
        ranges.join(", ")
    )
}

fn markdown_blocks() -> Vec<(&'static str, String)> {
    let mut enrich = String::from("| option | default | range | meaning |\n|---|---|---|---|\n");
    for (stage, docs, _) in enrich_stages() {
        Doc::markdown_rows(docs, &format!("{stage}."), &mut enrich);
    }
    vec![
        ("engine-options", table(crate::config::Config::DOCS, &[])),
        ("graph-options", table(crate::graph::GraphParams::DOCS, &[])),
        ("ann-options", table(crate::index::ann::AnnParams::DOCS, &[])),
        ("search-options", table(crate::engine::SearchOptions::DOCS, &[SIGNAL])),
        ("llm-config", table(crate::llm::LlmConfig::DOCS, &[])),
        ("decompose-options", table(crate::ask::DecomposeParams::DOCS, &[])),
        ("ask-options", table(crate::ask::pipeline::PipelineParams::DOCS, &[])),
        ("enrich-options", enrich),
        ("errors", error_table(crate::error::CODES)),
        ("snapshot-errors", error_table(crate::error::SNAPSHOT_CODES)),
        ("static-options", loader_option_tables()),
    ]
}

fn interface(comment: &str, name: &str, docs: &[Doc], extra: &[Doc]) -> String {
    let mut out = format!("/** {comment} */\nexport interface {name} {{\n");
    Doc::typescript_members(docs, "  ", &mut out);
    Doc::typescript_members(extra, "  ", &mut out);
    out.push_str("}\n");
    out
}

fn typescript_blocks() -> Vec<(&'static str, String)> {
    let mut enrich = String::from(
        "/** The ingest-time stages of `enrich()`: each `true`, `false` or its options. */\nexport interface EnrichStages {\n",
    );
    for (stage, docs, comment) in enrich_stages() {
        let c = crate::options::capitalised(comment);
        enrich.push_str(&format!("  /** {c}. */\n  {stage}?: boolean | {{\n"));
        Doc::typescript_members(docs, "    ", &mut enrich);
        enrich.push_str("  };\n");
    }
    enrich.push_str("}\n");
    let options = [
        interface("Engine options (all optional; docs/api.md, \"Engine options\").", "Options", crate::config::Config::DOCS, &[]),
        interface(
            "instant-distance HNSW (Malkov & Yashunin 2018). Bad values: InputError INVALID_OPTION `ann.<field>`.",
            "AnnOptions",
            crate::index::ann::AnnParams::DOCS,
            &[],
        ),
        interface(
            "Pseudo-graph options (docs/pseudo-graph.md). Thresholds are cosines.",
            "GraphOptions",
            crate::graph::GraphParams::DOCS,
            &[],
        ),
    ]
    .join("\n");
    vec![
        ("errors", error_classes()),
        ("options", options),
        (
            "search-options",
            interface("Options of `search()` (docs/api.md, \"Search\").", "SearchOptions", crate::engine::SearchOptions::DOCS, &[SIGNAL]),
        ),
        (
            "llm-config",
            interface(
                "An OpenAI-compatible chat endpoint (`POST {baseUrl}/chat/completions`).",
                "LlmConfig",
                crate::llm::LlmConfig::DOCS,
                &[],
            ),
        ),
        (
            "decompose-options",
            interface(
                "Knowledge-aware decomposition (PIKE-RAG Algorithm 1) options.",
                "DecomposeOptions",
                crate::ask::DecomposeParams::DOCS,
                &[],
            ),
        ),
        (
            "ask-options",
            format!(
                "/** Pipeline steps; each boolean overrides the preset. */\nexport interface PipelineSteps {{ {} }}\n{}",
                crate::ask::pipeline::Steps::NAMES.iter().map(|n| format!("{n}?: boolean;")).collect::<Vec<_>>().join(" "),
                interface("Ask-pipeline options (docs/ask-pipeline.md).", "AskOptions", crate::ask::pipeline::PipelineParams::DOCS, &[])
            ),
        ),
        ("enrich-stages", enrich),
        ("result-types", super::surface_types::result_types()),
    ]
}

/// `text` with each of `target`'s blocks replaced by its generated text.
///
/// Errors: a block whose begin or end marker is missing, named.
pub fn regenerate(target: Target, text: &str) -> Result<String, String> {
    let mut out = text.to_string();
    for (block, generated) in target.blocks() {
        let (begin, end) = target.markers(block);
        let missing = || format!("{}: no `{begin}` … `{end}` block", target.path());
        let start = out.find(&begin).ok_or_else(missing)? + begin.len();
        let start = start + out[start..].find('\n').ok_or_else(missing)? + 1;
        let stop = start + out[start..].find(end).ok_or_else(missing)?;
        out.replace_range(start..stop, &generated);
    }
    Ok(out)
}

/// The files under `root` whose generated blocks are stale, each with its generated text.
///
/// Errors: a file that cannot be read, or lacks a block.
pub fn stale(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let mut out = Vec::new();
    for target in Target::ALL {
        let path = root.join(target.path());
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let generated = regenerate(target, &text)?;
        if generated != text {
            out.push((path, generated));
        }
    }
    Ok(out)
}
