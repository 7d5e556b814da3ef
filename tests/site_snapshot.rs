//! Static-site mode: `webrag index <site> --out <site>/webrag` (the real binary and model) on a
//! small site of HTML and Markdown pages: byte-identical output on an unchanged site, what is
//! indexed and what is skipped, URLs, a changed page touching only its shards, stale files
//! removed.
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
    std::fs::write(dir.join("birds/index.html"), page("Birds", "<h2>Owls</h2><p>Owls hunt at night with silent flight.</p><h2>Herons</h2><p>Herons wade in shallow water.</p>")).unwrap();
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
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_webrag")).arg("index").arg(site).arg("--out").arg(out).output().expect("run webrag");
    assert!(o.status.success(), "webrag index failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
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
    let first = tree(&out);
    index(&dir, &out);
    assert_eq!(tree(&out), first, "a second build of the unchanged site is byte-identical");

    let manifest: serde_json::Value = serde_json::from_slice(&first["manifest.json"]).unwrap();
    assert_eq!((manifest["format"].as_str(), manifest["version"].as_u64(), manifest["documents"].as_u64()), (Some("webrag-snapshot"), Some(2), Some(4)));
    // Every shard exists under the name its directory page gives, and names carry content hashes.
    let shard_names = |kind: &str, prefix: &str, count: usize| -> Vec<String> {
        let k = &manifest[kind];
        let pages: Vec<&str> = k["dirs"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
        (0..count)
            .map(|i| {
                let page = &first[pages[i / 256]];
                let h: String = page[4 * (i % 256)..4 * (i % 256) + 4].iter().map(|b| format!("{b:02x}")).collect();
                format!("{prefix}/{i}-{h}.{}", k["ext"].as_str().unwrap())
            })
            .collect()
    };
    let terms_files = shard_names("terms", "t", manifest["terms"]["shards"].as_u64().unwrap() as usize);
    let frag_files = shard_names("fragments", "f", manifest["fragments"]["count"].as_u64().unwrap() as usize);
    let mut named: Vec<String> = terms_files.clone();
    named.extend(frag_files.clone());
    named.extend(shard_names("vectors", "v", manifest["vectors"]["lists"].as_u64().unwrap() as usize));
    named.push(manifest["vectors"]["centroids"].as_str().unwrap().to_string());
    for key in ["terms", "fragments", "vectors"] {
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

    // A changed page: new shard names where its content went, the old files are gone.
    std::fs::write(dir.join("birds/kestrel.html"), "<html><head><title>Kestrel</title></head><body><p>The kestrel hovers over meadows.</p></body></html>").unwrap();
    index(&dir, &out);
    let second = tree(&out);
    assert_ne!(second, first);
    assert_eq!(second.len(), first.len(), "no stale shard is left (the same number of files)");
    let _ = std::fs::remove_dir_all(&dir);
}
