//! A site build holds one batch of its pages at a time, not the site: the heap a build of a
//! site of large pages takes (counted by this binary's allocator) is bounded by a batch
//! (`snapshot::SITE_BATCH_BYTES`) and the largest page, not by the sum of the pages. A binary of
//! its own: the allocator counts every thread's allocations, so no other test may run beside it.
#![cfg(not(target_arch = "wasm32"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

mod common;

/// The system allocator, counting the bytes held now and the most held since [`Counting::reset`].
struct Counting {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Counting {
    fn add(&self, n: usize) {
        let now = self.now.fetch_add(n, Ordering::Relaxed) + n;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }
    fn sub(&self, n: usize) {
        self.now.fetch_sub(n, Ordering::Relaxed);
    }
    /// The bytes held now; the peak starts again from them.
    fn reset(&self) -> usize {
        let now = self.now.load(Ordering::Relaxed);
        self.peak.store(now, Ordering::Relaxed);
        now
    }
}

// SAFETY: every call is passed on to `System` unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.add(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
        self.sub(layout.size());
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.add(layout.size());
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.add(new_size);
            self.sub(layout.size());
        }
        p
    }
}

#[global_allocator]
static HEAP: Counting = Counting { now: AtomicUsize::new(0), peak: AtomicUsize::new(0) };

/// 64 pages of 1 MiB each (64 MiB, eight times a batch's bytes), mostly markup that holds no
/// text (a script, as a site generator's bundled pages carry), each with a paragraph of its own.
#[test]
fn a_site_build_holds_a_batch_of_pages_not_the_site() {
    const PAGES: usize = 64;
    const PAGE: usize = 1 << 20;
    let dir = std::env::temp_dir().join(format!("webrag-site-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let site = dir.join("site");
    std::fs::create_dir_all(site.join("docs")).unwrap();
    let filler = "var chart = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144];\n".repeat(PAGE / 58);
    let mut sum = 0;
    for i in 0..PAGES {
        let page = format!(
            "<!doctype html><html><head><title>Page {i}</title><script>{filler}</script></head>\
             <body><h1>Station {i}</h1><p>Kettle number {i} boils water for the harbour crew at dawn.</p></body></html>"
        );
        sum += page.len();
        std::fs::write(site.join(format!("docs/page-{i:03}.html")), page).unwrap();
    }
    drop(filler);
    // Loaded before the count starts: the tokenizer the keyword build chunks with.
    let model = common::model();
    let params = webrag::snapshot::SnapshotParams { vectors: false, graph: false, ..Default::default() };
    let out = dir.join("out");
    let before = HEAP.reset();
    let summary = pollster::block_on(async {
        let (crawled, left) = webrag::native::site::crawl(&site, &out, webrag::snapshot::max_page_bytes()).unwrap();
        assert!(left.is_empty(), "{left:?}");
        let mut files = webrag::native::site::SiteFiles { site: &site };
        let sorted = webrag::snapshot::sort_pages(crawled, &mut files, None);
        assert_eq!(sorted.pages.len(), PAGES, "{:?} {:?}", sorted.empty, sorted.unread);
        let build = webrag::native::site::SiteBuild {
            out: &out,
            params: &params,
            fields: &sorted.fields,
            llm: None,
            cache: None,
            mode: "none",
            t0: std::time::Instant::now(),
        };
        build.run(webrag::embed::hashing::HashingEmbedder::new(model), sorted.pages, &mut files).await.unwrap()
    });
    let held = HEAP.peak.load(Ordering::Relaxed) - before;
    eprintln!("pages {sum} bytes; the build's peak heap {held} bytes over what was held before it");
    assert_eq!(summary.documents, PAGES);
    // Holding the site would take its 64 MiB at least (every page's text at once); one batch is
    // 8 MiB of pages.
    assert!(held < sum / 3, "the build held {held} bytes at its peak for {sum} bytes of pages");
    std::fs::remove_dir_all(&dir).unwrap();
}
