//! Static-site mode: `webrag index <site> --out <site>/webrag` (the real binary and model) on a
//! small site of HTML and Markdown pages: byte-identical output on an unchanged site, what is
//! indexed and what is skipped, URLs, the graph files, a changed page touching only its shards,
//! stale files removed; with `--llm-url` (the scripted OpenAI-compatible server on 127.0.0.1),
//! the ingest-time LLM stages in the snapshot, and a model error leaving the last snapshot intact.
#![cfg(not(target_arch = "wasm32"))]
use crate::common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

fn site(dir: &Path) {
    let page = |title: &str, body: &str| {
        format!(
            "<!doctype html><html><head><title>{title}</title><script>var hidden = 'scriptword';</script></head><body>\
<nav>navword menu</nav><main><h1>{title}</h1>{body}<div data-webrag-ignore>ignoredword</div></main><footer>footerword</footer></body></html>"
        )
    };
    std::fs::create_dir_all(dir.join("birds")).unwrap();
    std::fs::write(dir.join("index.html"), page("Home", "<p>Welcome to the owl and heron pages.</p>")).unwrap();
    std::fs::write(
        dir.join("birds/index.html"),
        page("Birds", "<h2>Owls</h2><p>Owls hunt at night with silent flight.</p><h2>Herons</h2><p>Herons wade in shallow water.</p>"),
    )
    .unwrap();
    std::fs::write(dir.join("birds/kestrel.html"), page("Kestrel", "<p>The kestrel hovers before it dives on voles.</p>")).unwrap();
    std::fs::write(dir.join("notes.md"), "# Notes\n\nMarkdown pages are indexed too: 自然语言处理.\n").unwrap();
    std::fs::write(dir.join("style.css"), "body { color: red }").unwrap();
}

fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(p.strip_prefix(root).unwrap().display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn index(site: &Path, out: &Path) -> String {
    index_with(site, out, &[]).0
}

/// Runs the `webrag` binary.
fn webrag<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_webrag")).args(args).output().expect("run webrag")
}

/// `webrag index <site> --out <out> --cache <out>.cache <extra>`, unchecked.
fn index_output(site: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let cache = out.with_extension("cache");
    let mut args: Vec<&std::ffi::OsStr> =
        vec!["index".as_ref(), site.as_os_str(), "--out".as_ref(), out.as_os_str(), "--cache".as_ref(), cache.as_os_str()];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    webrag(args)
}

/// `webrag index <site> --out <out> --cache <out>.cache <extra>`: (stdout, stderr).
fn index_with(site: &Path, out: &Path, extra: &[&str]) -> (String, String) {
    let o = index_output(site, out, extra);
    assert!(o.status.success(), "webrag index failed: {}", String::from_utf8_lossy(&o.stderr));
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A graph file (gzipped `WRG1`): its JSON header and the vector block after it.
fn graph_file(gz: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(gz).read_to_end(&mut raw).unwrap();
    assert_eq!(&raw[..4], b"WRG1");
    let len = u32::from_le_bytes(raw[4..8].try_into().unwrap()) as usize;
    (serde_json::from_slice(&raw[8..8 + len]).unwrap(), raw[8 + len..].to_vec())
}

/// The file of page `i` of a series, by its directory page.
fn shard(files: &BTreeMap<String, Vec<u8>>, manifest: &serde_json::Value, kind: &str, prefix: &str, i: usize) -> String {
    let page = &files[manifest[kind]["dirs"][i / 256].as_str().unwrap()];
    let h: String = page[4 * (i % 256)..4 * (i % 256) + 4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}/{i}-{h}.{}", manifest[kind]["ext"].as_str().unwrap())
}

#[test]
fn llm_stages_at_index_time_reach_the_snapshot_and_a_model_error_keeps_the_last_one() {
    let dir: PathBuf = std::env::temp_dir().join(format!("webrag-site-llm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    site(&dir);
    let out = dir.join("webrag");
    let s = common::llm_server::LlmServer::start();
    s.rules(serde_json::json!([
        { "match": "Task: atomize", "reply": { "content": "{\"questions\": [\"When do owls hunt?\", \"Where do herons wade?\"]}" } },
        { "match": "Task: fact-check items", "reply": { "content": "{\"items\": [\"Owls hunt at night with silent flight.\", \"Herons wade in shallow water.\"]}" } },
        { "match": "Topic: <data>Birds</data>", "reply": { "content": "{\"Birds\": {\"Night hunters\": \"Owls hunt at night with silent flight.\", \"Waders\": \"Herons wade in shallow water.\"}}" } },
        { "match": "Task: mind map", "reply": { "content": "no map today" } },
        { "match": "Your reply could not be used", "reply": { "content": "still no map" } }
    ]));
    let run = |extra: &[&str]| {
        let url = s.base_url();
        index_output(&dir, &out, &[&["--llm-url", url.as_str(), "--llm-model", "scripted"], extra].concat())
    };
    let o = run(&[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("atomized 5 chunks: 10 questions")
            && said.contains("LLM mind maps for 1 pages")
            && said.contains("3 structural fallbacks"),
        "{said}"
    );
    let log = s.log();
    let prompts: Vec<String> =
        log.iter().map(|r| r["body"]["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string()).collect();
    let atomize = prompts.iter().filter(|p| p.starts_with("Task: atomize")).count();
    assert_eq!(atomize, 5, "a request per chunk");
    assert_eq!(log[0]["body"]["model"], "scripted");

    let files = tree(&out);
    let manifest: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    // Atomic questions: two rows per chunk join the chunks' rows in the IVF lists.
    let chunks = manifest["chunks"].as_u64().unwrap();
    assert_eq!((chunks, manifest["vectors"]["questions"].as_u64()), (5, Some(10)));
    // The LLM's mind map is the page's graph file (its routes are not headings of the page); a
    // page whose map was unreadable keeps its structural map.
    let birds = graph_file(&files[&shard(&files, &manifest, "graph", "g", 1)]).0;
    let labels: Vec<&str> = birds["nodes"].as_array().unwrap().iter().map(|n| n[2].as_str().unwrap()).collect();
    assert!(labels.contains(&"Night hunters") && labels.contains(&"Waders"), "{labels:?}");
    let kestrel = graph_file(&files[&shard(&files, &manifest, "graph", "g", 2)]).0;
    assert_eq!(kestrel["nodes"][0][2], "Kestrel");
    assert!(kestrel["nodes"].as_array().unwrap().iter().any(|n| n[2].as_str().unwrap().contains("kestrel hovers")), "{kestrel}");

    // A model error (401) stops the build before anything is written: the snapshot is intact.
    s.reset();
    s.rules(serde_json::json!([{ "match": "Task:", "reply": { "status": 401 } }]));
    std::fs::write(
        dir.join("birds/kestrel.html"),
        "<html><head><title>Kestrel</title></head><body><p>The kestrel hovers over meadows.</p></body></html>",
    )
    .unwrap();
    let o = run(&[]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error [LLM_UNAUTHORIZED]"), "{err}");
    assert_eq!(tree(&out), files, "the last snapshot is untouched");
    // The LLM stages need vectors.
    let o = run(&["--vectors", "none"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("INVALID_OPTION"), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

fn gunzip(b: &[u8]) -> serde_json::Value {
    let mut s = String::new();
    flate2::read::GzDecoder::new(b).read_to_string(&mut s).unwrap();
    serde_json::from_str(&s).unwrap()
}

#[test]
fn an_unchanged_site_gives_byte_identical_snapshots_and_chrome_is_not_indexed() {
    let dir: PathBuf = std::env::temp_dir().join(format!("webrag-site-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    site(&dir);
    let out = dir.join("webrag");
    let said = index(&dir, &out);
    assert!(said.contains("snapshot of 4 pages"), "{said}");
    // The manifest is written last (a reader never finds it naming a shard not yet there), and no
    // half-written file is left beside the snapshot.
    let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let manifest_at = mtime(&out.join("manifest.json"));
    for (name, _) in tree(&out) {
        assert!(!name.ends_with(".tmp"), "{name} left behind");
        assert!(mtime(&out.join(&name)) <= manifest_at, "{name} was written after manifest.json");
    }
    let first = tree(&out);
    index(&dir, &out);
    assert_eq!(tree(&out), first, "a second build of the unchanged site is byte-identical");

    let manifest: serde_json::Value = serde_json::from_slice(&first["manifest.json"]).unwrap();
    assert_eq!(
        (manifest["format"].as_str(), manifest["version"].as_u64(), manifest["documents"].as_u64()),
        (Some("webrag-snapshot"), Some(3), Some(4))
    );
    // Every shard exists under the name its directory page gives, and names carry content hashes.
    let shard_names =
        |kind: &str, prefix: &str, count: usize| -> Vec<String> { (0..count).map(|i| shard(&first, &manifest, kind, prefix, i)).collect() };
    let terms_files = shard_names("terms", "t", manifest["terms"]["shards"].as_u64().unwrap() as usize);
    let frag_files = shard_names("fragments", "f", manifest["fragments"]["count"].as_u64().unwrap() as usize);
    let mut named: Vec<String> = terms_files.clone();
    named.extend(frag_files.clone());
    named.extend(shard_names("vectors", "v", manifest["vectors"]["lists"].as_u64().unwrap() as usize));
    named.push(manifest["vectors"]["centroids"].as_str().unwrap().to_string());
    let graph_files = shard_names("graph", "g", manifest["graph"]["topics"].as_u64().unwrap() as usize);
    assert_eq!(graph_files.len(), 4, "a graph file per page");
    named.extend(graph_files.clone());
    let word_files = shard_names("words", "w", manifest["words"]["blocks"].as_u64().unwrap() as usize);
    assert!(!word_files.is_empty(), "the vocabulary's blocks");
    named.extend(word_files);
    named.push(manifest["words"]["index"].as_str().unwrap().to_string());
    named.push(manifest["pages"].as_str().unwrap().to_string());
    for key in ["terms", "fragments", "vectors", "graph", "words"] {
        named.extend(manifest[key]["dirs"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()));
    }
    for f in &named {
        use sha2::Digest;
        let bytes = first.get(f).unwrap_or_else(|| panic!("{f} exists"));
        let h: String = sha2::Sha256::digest(bytes).iter().take(4).map(|b| format!("{b:02x}")).collect();
        assert!(f.contains(&format!("-{h}.")), "{f} is named by its hash {h}");
    }
    assert_eq!(named.len() + 1, first.len(), "nothing else in the folder");
    // Terms: body text in, navigation, footer, script and data-webrag-ignore out.
    let mut terms = std::collections::BTreeSet::new();
    for f in &terms_files {
        let shard = gunzip(&first[f]);
        terms.extend(shard["t"].as_object().unwrap().keys().cloned());
    }
    for t in ["owls", "kestrel", "heron", "markdown", "自然", "语言"] {
        assert!(terms.contains(t), "{t} is indexed");
    }
    for t in ["navword", "footerword", "scriptword", "ignoredword"] {
        assert!(!terms.contains(t), "{t} is not indexed");
    }
    // Fragments carry titles and URLs (index.html → its folder).
    let mut urls = Vec::new();
    for f in &frag_files {
        for row in gunzip(&first[f])["c"].as_array().unwrap() {
            urls.push(row[1].as_str().unwrap().to_string());
        }
    }
    urls.dedup();
    assert_eq!(urls, vec!["/", "/birds/", "/birds/kestrel.html", "/notes.md"]);
    // Graph files (pages in URL order): `WRG1`, a JSON header with the mind map (topic → route →
    // fact, facts naming their chunk), then one int8 vector per node.
    let (header, vecs) = graph_file(&first[&graph_files[1]]);
    let nodes = header["nodes"].as_array().unwrap();
    let label = |n: &serde_json::Value| n[2].as_str().unwrap().to_string();
    assert_eq!((nodes[0][0].as_i64(), nodes[0][1].as_i64(), label(&nodes[0])), (Some(-1), Some(0), "Birds".to_string()), "the topic first");
    let owls = nodes.iter().position(|n| label(n) == "Owls").expect("a route per heading");
    let fact = nodes.iter().find(|n| n[0].as_i64() == Some(owls as i64)).expect("a fact under Owls");
    assert_eq!((fact[1].as_i64(), label(fact).as_str()), (Some(2), "Owls hunt at night with silent flight."));
    let chunk0 = header["chunk0"].as_u64().unwrap();
    assert!(fact[3].as_u64().unwrap() >= chunk0, "the fact's chunk is one of the page's");
    assert_eq!((&vecs[..4], u32::from_le_bytes(vecs[4..8].try_into().unwrap()) as usize), (&b"WRV1"[..], nodes.len()));

    // A changed page: new shard names where its content went, the old files are gone.
    std::fs::write(
        dir.join("birds/kestrel.html"),
        "<html><head><title>Kestrel</title></head><body><p>The kestrel hovers over meadows.</p></body></html>",
    )
    .unwrap();
    index(&dir, &out);
    let second = tree(&out);
    assert_ne!(second, first);
    assert_eq!(second.len(), first.len(), "no stale shard is left (the same number of files)");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--device gpu` embeds on the GPU adapter (lavapipe here) and `--device cpu` on the CPU; both
/// say so, and their snapshots agree wherever the vectors do not enter (manifest shape, term
/// shards, fragments); the vector and graph files have the same names' kinds and sizes.
#[test]
fn index_device_gpu_and_cpu_give_the_same_snapshot_shape() {
    if std::env::var_os("WEBRAG_SKIP_GPU").is_some() {
        eprintln!("WEBRAG_SKIP_GPU set: skipping");
        return;
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("webrag-site-device-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    site(&dir);
    let run = |device: &str| {
        let out = dir.join(format!("webrag-{device}"));
        let o = webrag(["index", dir.to_str().unwrap(), "--out", out.to_str().unwrap(), "--device", device]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "--device {device} failed: {err}");
        (tree(&out), err)
    };
    let (cpu, cpu_said) = run("cpu");
    let (gpu, gpu_said) = run("gpu");
    assert!(cpu_said.contains("embedding on the CPU"), "{cpu_said}");
    assert!(gpu_said.contains("embedding on the GPU ("), "{gpu_said}");
    assert!(!gpu_said.contains("GPU_LOST") && !gpu_said.contains("GPU lost"), "{gpu_said}");
    let kind = |name: &str| name.split(['/', '-']).next().unwrap_or("").to_string();
    let shape = |t: &BTreeMap<String, Vec<u8>>| -> Vec<(String, bool)> {
        t.keys().map(|k| (kind(k), k.starts_with("t/") || k.starts_with("f/"))).collect()
    };
    assert_eq!(shape(&cpu), shape(&gpu), "same kinds of files");
    for (name, bytes) in &cpu {
        if name.starts_with("t/") || name.starts_with("f/") {
            assert_eq!(gpu.get(name), Some(bytes), "{name}: keyword files do not depend on the device");
        }
    }
    let bad = webrag(["index", dir.to_str().unwrap(), "--out", dir.join("x").to_str().unwrap(), "--device", "tpu"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("tpu"), "the bad value is named");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An incremental build (the build cache) embeds only what changed and writes the snapshot a
/// build from scratch writes; a damaged cache file falls back to a build from scratch.
#[test]
fn an_incremental_build_reuses_unchanged_pages_and_equals_a_build_from_scratch() {
    let dir: PathBuf = std::env::temp_dir().join(format!("webrag-site-incr-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    site(&dir);
    let out = dir.join("webrag");
    let (_, said) = index_with(&dir, &out, &[]);
    assert!(said.contains("0 unchanged pages reused, 4 pages added or changed"), "{said}");
    let cache: Vec<PathBuf> = std::fs::read_dir(out.with_extension("cache")).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(cache.len(), 1, "one cache file: {cache:?}");
    // One page changed, one removed, one added.
    std::fs::write(
        dir.join("birds/kestrel.html"),
        "<html><head><title>Kestrel</title></head><body><p>The kestrel hovers over meadows.</p></body></html>",
    )
    .unwrap();
    std::fs::remove_file(dir.join("notes.md")).unwrap();
    std::fs::write(dir.join("birds/wren.md"), "# Wren\n\nThe wren sings loudly for its size.\n").unwrap();
    let (_, said) = index_with(&dir, &out, &[]);
    assert!(said.contains("build cache: 4 pages from"), "{said}");
    assert!(said.contains("2 unchanged pages reused, 2 pages added or changed (2 chunks embedded), 1 removed"), "{said}");
    let fresh = dir.join("fresh");
    let (_, said) = index_with(&dir, &fresh, &["--no-cache"]);
    assert!(said.contains("0 unchanged pages reused, 4 pages added or changed") && !said.contains("build cache"), "{said}");
    assert!(!fresh.with_extension("cache").exists(), "--no-cache writes no cache");
    assert_eq!(tree(&out), tree(&fresh), "the incremental snapshot is the one a build from scratch writes");
    // A damaged cache file: a warning, a build from scratch, the same snapshot.
    std::fs::write(&cache[0], b"not a knowledge base").unwrap();
    let (_, said) = index_with(&dir, &out, &[]);
    assert!(said.contains("not used") && said.contains("0 unchanged pages reused"), "{said}");
    assert_eq!(tree(&out), tree(&fresh));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A page with no text to index (an empty file, a page of scripts only) is skipped with a
/// warning instead of failing the build; heading permalink marks (`¶`, a lone `#`) are not part
/// of the headings the results show.
#[test]
fn pages_without_text_are_skipped_and_permalink_marks_dropped() {
    let dir = std::env::temp_dir().join(format!("webrag-site-skip-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("blank.md"), "").unwrap();
    std::fs::write(site.join("scripts.html"), "<html><head><title>Scripts</title></head><body><script>var x = 1;</script></body></html>")
        .unwrap();
    std::fs::write(
        site.join("doc.html"),
        "<title>Doc</title><h2>Install<a class=\"headerlink\" href=\"#install\">¶</a></h2><p>Run the installer.</p>\
         <h3>Usage <a href=\"#usage\">#</a></h3><p>Use it well.</p>",
    )
    .unwrap();
    let out = dir.join("out");
    let (_, stderr) = index_with(&site, &out, &["--vectors", "none", "--no-cache"]);
    assert!(stderr.contains("warning: skipped /blank.md: no text to index"), "{stderr}");
    assert!(stderr.contains("warning: skipped /scripts.html: no text to index"), "{stderr}");
    let files = tree(&out);
    let manifest: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    assert_eq!(manifest["documents"], 1);
    let frag = gunzip(&files[&shard(&files, &manifest, "fragments", "f", 0)]);
    let headings: Vec<&str> = frag["c"].as_array().unwrap().iter().map(|c| c[2].as_str().unwrap()).collect();
    assert!(headings.iter().all(|h| !h.contains('¶') && !h.ends_with('#')), "{headings:?}");
    assert!(headings.contains(&"Install › Usage"), "{headings:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The crawl reads the site and nothing else: a link out of the site, a broken link and a link
/// loop are left out with a warning (the loop ends at once), a link to a folder inside the site
/// is read once, and a file that is not UTF-8 text (a binary named `.html`) is left out with a
/// warning instead of failing the build.
#[cfg(unix)]
#[test]
fn the_crawl_reads_only_the_site() {
    use std::os::unix::fs::symlink;
    let dir = std::env::temp_dir().join(format!("webrag-site-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (site, outside) = (dir.join("site"), dir.join("outside"));
    std::fs::create_dir_all(site.join("docs")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.html"), "<title>Secret</title><p>Private text outside the site.</p>").unwrap();
    std::fs::write(site.join("docs/page.html"), "<title>Page</title><p>Kettles boil water.</p>").unwrap();
    std::fs::write(site.join("binary.html"), [0xff, 0xfe, 0x00, 0x81, 0x9f, 0x00, 0xc3]).unwrap();
    symlink(&outside, site.join("out-link")).unwrap();
    symlink(outside.join("secret.html"), site.join("secret.html")).unwrap();
    symlink(&site, site.join("docs/loop")).unwrap();
    symlink(site.join("docs"), site.join("again")).unwrap();
    symlink(dir.join("nowhere"), site.join("broken.html")).unwrap();
    // Over the 8 MiB a page may be: not read (sparse, so the test writes nothing).
    std::fs::File::create(site.join("huge.html")).unwrap().set_len((8 << 20) + 1).unwrap();
    // A named pipe named `.html` (reading it would wait for a writer for ever) and a name that is
    // not UTF-8 (no URL names it).
    assert!(std::process::Command::new("mkfifo").arg(site.join("pipe.html")).status().unwrap().success());
    use std::os::unix::ffi::OsStrExt;
    let latin1 = site.join(std::ffi::OsStr::from_bytes(b"caf\xe9.html"));
    std::fs::write(&latin1, "<title>Cafe</title><p>Coffee.</p>").unwrap();
    let out = dir.join("out");
    let (_, stderr) = index_with(&site, &out, &["--vectors", "none", "--no-cache"]);
    for (path, why) in [
        ("out-link", "a link to outside the site"),
        ("secret.html", "a link to outside the site"),
        ("broken.html", "a broken link"),
        ("binary.html", "not UTF-8 text"),
        ("huge.html", "8388609 bytes, larger than a page may be (8388608: maxDocumentBytes)"),
        ("pipe.html", "not a regular file"),
    ] {
        assert!(stderr.contains(&format!("warning: skipped {}: {why}", site.join(path).display())), "{path}: {stderr}");
    }
    assert!(stderr.contains(&format!("warning: skipped {}: its name is not UTF-8 (no URL names it)", latin1.display())), "{stderr}");
    let loops = stderr.matches("a folder already read (a link)").count();
    assert_eq!(loops, 2, "docs/loop and one of docs, again: {stderr}");
    let files = tree(&out);
    let manifest: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    assert_eq!(manifest["documents"], 1, "{stderr}");
    let frag = gunzip(&files[&shard(&files, &manifest, "fragments", "f", 0)]);
    // The folder is read where the crawl meets it first, in path order: through `again`.
    assert_eq!(frag["c"][0][1], "/again/page.html", "the one page read is the site's own");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Outside a desktop session (no `XDG_RUNTIME_DIR`), the default `--device auto` probe says in
/// one plain line which path embeds, with no error lines from the system's Vulkan layers (Mesa's
/// device-select layer printed `error: XDG_RUNTIME_DIR is invalid…` twice).
#[test]
fn the_device_probe_prints_one_plain_line_outside_a_desktop_session() {
    let dir = std::env::temp_dir().join(format!("webrag-site-probe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("a.md"), "# Probe\n\nA page about the device probe.\n").unwrap();
    let out = dir.join("out");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_webrag"))
        .args(["index".as_ref(), site.as_os_str(), "--out".as_ref(), out.as_os_str(), "--no-cache".as_ref()])
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("NODEVICE_SELECT")
        .output()
        .expect("run webrag");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(!stderr.contains("XDG_RUNTIME_DIR") && !stderr.contains("error"), "{stderr}");
    assert_eq!(stderr.lines().filter(|l| l.starts_with("embedding on")).count(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn filters_and_sort_keys_are_written_per_key_and_follow_a_changed_page_through_the_build_cache() {
    let dir = std::env::temp_dir().join(format!("webrag-site-fields-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    let page = |title: &str, tags: &[&str], rank: &str, size: &str| {
        let tags: String = tags.iter().map(|t| format!("<li data-webrag-filter=\"tag\">{t}</li>")).collect();
        format!(
            "<html><head><title>{title}</title><meta data-webrag-sort=\"rank[content]\" content=\"{rank}\"></head><body><main>\
             <h1>{title}</h1><p data-webrag-sort=\"size:{size}\" data-webrag-meta=\"size:{size}\">About {title}.</p><ul>{tags}</ul></main></body></html>"
        )
    };
    std::fs::write(site.join("a.html"), page("Alpha", &["owl", "night"], "10", "b")).unwrap();
    std::fs::write(site.join("b.html"), page("Beta", &["owl"], "1.0", "a")).unwrap();
    std::fs::write(site.join("c.html"), page("Gamma", &["heron"], "1", "10")).unwrap();
    std::fs::write(site.join("d.html"), page("Delta", &[], "02", "9")).unwrap();
    let out = dir.join("out");
    index_with(&site, &out, &["--vectors", "none"]);
    let files = tree(&out);
    let manifest: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    let file = |list: &str, key: &str| -> serde_json::Value {
        let entry =
            manifest[list].as_array().unwrap().iter().find(|e| e["key"] == key).unwrap_or_else(|| panic!("{list} {key}: {manifest}"));
        gunzip(&files[entry["file"].as_str().unwrap()])
    };
    // Pages are numbered by URL: a, b, c, d. Values in code point order, pages delta-coded.
    assert_eq!(file("filters", "tag"), serde_json::json!({ "v": [["heron", [2]], ["night", [0]], ["owl", [0, 1]]] }));
    assert_eq!(manifest["filters"][0]["pages"], 3, "a page without a tag is not counted");
    // Every rank is a number: compared as numbers, "1" and "1.0" one group (the first page's spelling).
    assert_eq!(file("sort", "rank"), serde_json::json!({ "o": [["1.0", [1, 2]], ["02", [3]], ["10", [0]]] }));
    // A value that is not a number makes the key's order code point order ("10" < "9" < "a" < "b").
    assert_eq!(file("sort", "size"), serde_json::json!({ "o": [["10", [2]], ["9", [3]], ["a", [1]], ["b", [0]]] }));
    let numeric: Vec<_> = manifest["sort"].as_array().unwrap().iter().map(|s| (s["key"].clone(), s["numeric"].clone())).collect();
    assert_eq!(numeric, [(serde_json::json!("rank"), serde_json::json!(true)), (serde_json::json!("size"), serde_json::json!(false))]);
    assert_eq!(manifest["filters"].as_array().unwrap().len(), 1);
    // Metadata rides in the fragment files, by page number.
    let frag = files.iter().find(|(n, _)| n.starts_with("f/0-")).map(|(_, b)| gunzip(b)).unwrap();
    assert_eq!(frag["m"]["2"], serde_json::json!({ "size": "10" }));
    // A page whose tags change is rebuilt from the build cache with its new filters; the stale files go.
    std::fs::write(site.join("b.html"), page("Beta", &["heron"], "1.0", "a")).unwrap();
    let (_, err) = index_with(&site, &out, &["--vectors", "none"]);
    assert!(err.contains("3 unchanged pages reused"), "{err}");
    let files = tree(&out);
    let manifest: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    let tag = manifest["filters"].as_array().unwrap().iter().find(|e| e["key"] == "tag").unwrap();
    assert_eq!(
        gunzip(&files[tag["file"].as_str().unwrap()]),
        serde_json::json!({ "v": [["heron", [1, 1]], ["night", [0]], ["owl", [0]]] })
    );
    assert_eq!(
        files.keys().filter(|n| n.starts_with("x/")).count(),
        1,
        "the old tag file is removed: {:?}",
        files.keys().collect::<Vec<_>>()
    );
    // A key per page does not make a file per page: at most MAX_SNAPSHOT_KEYS keys, those most pages carry.
    let many: String = (0..64).map(|i| format!("k{i}:v, ")).collect();
    std::fs::write(site.join("e.html"), format!("<title>Epsilon</title><p data-webrag-filter=\"{many}\">Many keys.</p>")).unwrap();
    index_with(&site, &out, &["--vectors", "none"]);
    let files = tree(&out);
    let manifest: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    let keys: Vec<&str> = manifest["filters"].as_array().unwrap().iter().map(|f| f["key"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), webrag::snapshot::MAX_SNAPSHOT_KEYS);
    assert!(keys.contains(&"tag"), "the key on 3 pages is kept: {keys:?}");
    assert_eq!(files.keys().filter(|n| n.starts_with("x/")).count(), webrag::snapshot::MAX_SNAPSHOT_KEYS);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pages_are_stemmed_in_their_html_lang_and_the_manifest_says_which_page_is_in_which() {
    let dir = std::env::temp_dir().join(format!("webrag-site-langs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    let page = |lang: &str, title: &str, text: &str| {
        let lang = if lang.is_empty() { String::new() } else { format!(" lang=\"{lang}\"") };
        format!(
            "<!doctype html><html{lang}><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p></main></body></html>"
        )
    };
    std::fs::write(site.join("a.html"), page("en-GB", "Reading", "Reading files and running jobs.")).unwrap();
    std::fs::write(site.join("b.html"), page("fr", "Maisons", "Les maisons continuellement.")).unwrap();
    std::fs::write(site.join("c.html"), page("en", "Owls", "Owls hunting.")).unwrap();
    std::fs::write(site.join("d.html"), page("", "Plain", "Running files unstemmed.")).unwrap();
    std::fs::write(site.join("e.html"), page("zh-CN", "中文", "自然语言 running")).unwrap();
    let out = dir.join("out");
    index_with(&site, &out, &["--vectors", "none"]);
    let files = tree(&out);
    let manifest: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    let langs = &manifest["languages"];
    assert_eq!(
        langs["values"],
        serde_json::json!([
            { "lang": "en", "stemmed": true, "pages": 2 },
            { "lang": "", "stemmed": false, "pages": 1 },
            { "lang": "fr", "stemmed": true, "pages": 1 },
            { "lang": "zh", "stemmed": false, "pages": 1 },
        ]),
        "{manifest}"
    );
    // Pages are numbered by URL (a..e); the file is a filter's form, delta-coded.
    assert_eq!(
        gunzip(&files[langs["file"].as_str().unwrap()]),
        serde_json::json!({ "v": [["", [3]], ["en", [0, 2]], ["fr", [1]], ["zh", [4]]] })
    );
    // Every term of every shard: stems of the English and French pages, the other pages' words as written.
    let terms: std::collections::BTreeSet<String> = files
        .iter()
        .filter(|(n, _)| n.starts_with("t/") && n.ends_with(".json.gz"))
        .flat_map(|(_, b)| gunzip(b)["t"].as_object().unwrap().keys().cloned().collect::<Vec<_>>())
        .collect();
    for t in ["read", "file", "run", "job", "maison", "continuel", "hunt", "owl", "running", "files", "unstemmed", "自然"] {
        assert!(terms.contains(t), "{t}: {terms:?}");
    }
    for t in ["reading", "jobs", "maisons", "hunting"] {
        assert!(!terms.contains(t), "{t} is stemmed");
    }
    // `search-snapshot` stems a query's words in the pages' languages: `hunting` finds the
    // English page's `hunt`, `maisons` the French page's `maison`; `unstemmed` the untagged page.
    let o = webrag([
        "search-snapshot".as_ref(),
        out.as_os_str(),
        "hunting".as_ref(),
        "maisons".as_ref(),
        "unstemmed".as_ref(),
        "--keyword-only".as_ref(),
    ]);
    assert!(o.status.success(), "search-snapshot: {}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for line in &lines {
        assert_eq!(line["keyword"].as_array().map(Vec::len), Some(1), "{line}");
    }
    // One language: no file.
    for f in ["b.html", "d.html", "e.html"] {
        std::fs::remove_file(site.join(f)).unwrap();
    }
    index_with(&site, &out, &["--vectors", "none"]);
    let manifest: serde_json::Value = serde_json::from_slice(&tree(&out)["manifest.json"]).unwrap();
    assert_eq!(manifest["languages"], serde_json::json!({ "values": [{ "lang": "en", "stemmed": true, "pages": 2 }] }));
    let _ = std::fs::remove_dir_all(&dir);
}
