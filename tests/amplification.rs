#![cfg(not(target_arch = "wasm32"))]
//! Memory of `add` against its input, measured by a counting global allocator (this test binary
//! holds one test, so no other thread allocates while it measures): hostile documents — a
//! title or headings hundreds of KB long, padded Markdown tables, thousands of tiny sections,
//! list items and sentences, unclosed HTML headings, long unbroken words — each added to a
//! fresh knowledge base (hashing vectors of the model's width, graph on).
//!
//! Checked per shape: the peak heap during `add` stays within [`PEAK_PER_BYTE`] × the input
//! bytes + [`PER_UNIT`] × the vectors it makes + [`SLACK`], and doubling the input at most
//! 2.5 × the peak (linear, not quadratic). `WEBRAG_AMPLIFICATION=print` prints the table.
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use webrag::config::Config;
use webrag::embed::hashing::HashingEmbedder;
use webrag::engine::Engine;
use webrag::ports::{FixedClock, MemoryStore, NoProgress};
use webrag::types::{DocumentInput, Format};

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            PEAK.fetch_max(NOW.fetch_add(l.size(), Relaxed) + l.size(), Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        NOW.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                PEAK.fetch_max(NOW.fetch_add(new - l.size(), Relaxed) + new - l.size(), Relaxed);
            } else {
                NOW.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Heap bytes per input byte `add` may peak at, on top of the per-vector term (the largest seen:
/// 28 for an unbroken word, which the BERT normalizer holds with an offset pair per character).
const PEAK_PER_BYTE: usize = 32;
/// Fixed heap `add` may take beyond the two terms (batch buffers).
const SLACK: usize = 2 << 20;
/// Heap bytes per vector (chunk or graph node) `add` may peak at: the vector (4 × 384 bytes), its
/// int8 copy, its store record (base64) and index entries.
const PER_UNIT: usize = 16 * 1024;

/// One hostile shape at scale `n`: (title, text, format).
fn shape(name: &str, n: usize) -> (Option<String>, String, Format) {
    let md = Format::Markdown;
    match name {
        "long title" => (Some("Owls ".repeat(n * 20)), "Owls hunt at night. ".repeat(n / 2), md),
        "long headings" => ((None), (1..=6).map(|l| format!("{} {}\n\nbody {l}.\n\n", "#".repeat(l), "word ".repeat(n * 4))).collect(), md),
        "padded table" => (None, format!("{}|\n{}|\n{}", "|h".repeat(n), "|-".repeat(n), "|x\n".repeat(n * 4)), md),
        "tiny sections" => (None, (0..n).map(|i| format!("## s{i}\nx{i}\n")).collect(), md),
        "tiny items" => (None, (0..n * 4).map(|i| format!("- a{i}\n")).collect(), md),
        "tiny sentences" => (None, (0..n * 4).map(|i| format!("A{i}. ")).collect(), Format::Text),
        "nested lists" => (None, (0..n).map(|i| format!("{}- item {i}\n", "  ".repeat(i % 60))).collect(), md),
        "unclosed html headings" => {
            (None, (0..n).map(|i| format!("<h{}>Heading {i}<p>Text {i} about owls.", 1 + i % 6)).collect(), Format::Html)
        }
        "long words" => (None, "x".repeat(n * 40), Format::Text),
        _ => unreachable!(),
    }
}

const SHAPES: &[&str] = &[
    "long title",
    "long headings",
    "padded table",
    "tiny sections",
    "tiny items",
    "tiny sentences",
    "nested lists",
    "unclosed html headings",
    "long words",
];

/// (input bytes, peak heap bytes during `add`, vectors made).
fn measure(title: Option<String>, text: String, format: Format) -> (usize, usize, usize) {
    let emb = HashingEmbedder::new(common::model());
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = Engine::open(&store, &emb, Config::default(), Box::new(FixedClock(1.0))).await.expect("open");
        let bytes = text.len() + title.as_ref().map_or(0, String::len);
        let doc = DocumentInput { id: "d".into(), title, text, format, ..Default::default() };
        let base = NOW.load(Relaxed);
        PEAK.store(base, Relaxed);
        let added = e.add(vec![doc], &mut NoProgress).await;
        let peak = PEAK.load(Relaxed) - base;
        let units = match added {
            Ok(_) => e.stats().chunks + e.graph().counts().iter().sum::<usize>(),
            Err(err) => panic!("add failed: {err}"),
        };
        (bytes, peak, units)
    })
}

#[test]
fn add_holds_memory_linear_in_the_input() {
    common::model();
    let print = std::env::var("WEBRAG_AMPLIFICATION").is_ok_and(|v| v == "print");
    let mut failures = Vec::new();
    for name in SHAPES {
        let mut last = None;
        for n in [2_000, 4_000] {
            let (t, x, f) = shape(name, n);
            let (bytes, peak, units) = measure(t, x, f);
            let bound = PEAK_PER_BYTE * bytes + PER_UNIT * units + SLACK;
            if print {
                println!(
                    "{name:>24} n={n:>5}: {bytes:>9} B in, {units:>6} vectors, peak {:>8.1} MB = {:>6.1}x input, {:>6.0} B/vector",
                    peak as f64 / 1e6,
                    peak as f64 / bytes as f64,
                    peak as f64 / units.max(1) as f64
                );
            }
            if peak > bound {
                failures.push(format!("{name} n={n}: peak {peak} B over the bound {bound} B ({bytes} B in, {units} vectors)"));
            }
            if let Some((b0, p0)) = last
                && (peak as f64) > 2.5 * p0 as f64 * (bytes as f64 / b0 as f64) / 2.0 + (4 << 20) as f64
            {
                failures.push(format!("{name}: peak {p0} B at {b0} B in, {peak} B at {bytes} B in (superlinear)"));
            }
            last = Some((bytes, peak));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    generated_documents_stay_within_the_bound();
}

/// The `amplification` fuzz target: documents mixing the hostile pieces at random sizes, for
/// `WEBRAG_FUZZ_SECONDS` (default 2), each within the bound of [`add_holds_memory_linear_in_the_input`].
fn generated_documents_stay_within_the_bound() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestRng, TestRunner};
    let piece = (0..9usize, 1..400usize).prop_map(|(k, n)| match k {
        0 => format!("# {}\n\n", "Owls ".repeat(n * 20)),
        1 => format!("{}|\n{}|\n{}", "|h".repeat(n), "|-".repeat(n), "|x\n".repeat(n)),
        2 => (0..n).map(|i| format!("## s{i}\nx\n")).collect(),
        3 => (0..n).map(|i| format!("- a{i}\n")).collect(),
        4 => (0..n).map(|i| format!("{}- i{i}\n", "  ".repeat(i % 40))).collect(),
        5 => (0..n).map(|i| format!("<h{}>H{i}<p>owls {i}", 1 + i % 6)).collect(),
        6 => "y".repeat(n * 50),
        7 => format!("{}\n---\n\n", "long setext heading ".repeat(n)),
        _ => "Owls hunt at night. They eat mice. ".repeat(n),
    });
    let doc = (prop::collection::vec(piece, 1..6), proptest::option::of(1..2000usize), any::<bool>());
    let secs: f64 = std::env::var("WEBRAG_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let start = std::time::Instant::now();
    let (mut runs, mut round) = (0u64, 0u64);
    while runs == 0 || start.elapsed().as_secs_f64() < secs {
        let mut seed = [7u8; 32];
        seed[..8].copy_from_slice(&round.to_le_bytes());
        let cfg = PtConfig { cases: 4, failure_persistence: None, max_shrink_iters: 64, ..PtConfig::default() };
        let mut runner = TestRunner::new_with_rng(cfg, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
        let result = runner.run(&doc, |(pieces, title, html)| {
            let text = pieces.concat();
            let format = if html { Format::Html } else { Format::Markdown };
            let (bytes, peak, units) = measure(title.map(|n| "T ".repeat(n * 50)), text, format);
            let bound = PEAK_PER_BYTE * bytes + PER_UNIT * units + SLACK;
            prop_assert!(peak <= bound, "peak {peak} B over {bound} B ({bytes} B in, {units} vectors)");
            Ok(())
        });
        if let Err(e) = result {
            panic!("fuzz amplification: round {round} failed: {e}");
        }
        runs += 4;
        round += 1;
    }
    println!("fuzz amplification: {runs} executions in {:.0} s, 0 failures", start.elapsed().as_secs_f64());
}
