//! The static tier of site snapshots (`webrag index --vectors static`, docs/static-site.md): a
//! snapshot built with a static model ships its vocabulary and token rows, and `webrag/static`
//! (plain JavaScript, run here in Node) turns a query into the same word-piece ids and the same
//! vector as the engine's [`StaticModel`]: on hand-picked edge cases, HotpotQA passages and random
//! hostile strings (seed printed). And the distilled and the trained model of the real encoder keep meaning:
//! paraphrases closer than unrelated sentences.
#![cfg(not(target_arch = "wasm32"))]
use crate::common;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use webrag::embed::{StaticModel, WordPiece};

fn tokenizer() -> WordPiece {
    WordPiece::from_bytes(&common::model_files().tokenizer, 256).expect("tokenizer")
}

/// A static model with random rows over the real vocabulary (what the parity needs: any rows).
fn random_model(seed: u64) -> StaticModel {
    let tok = tokenizer();
    let dim = 32;
    let mut rng = SmallRng::seed_from_u64(seed);
    let rows: Vec<f32> = (0..tok.id_bound() as usize * dim).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    StaticModel::from_rows("test/random", tok, dim, &rows, webrag::embed::static_model::Weighting::SifZipf).expect("model")
}

fn texts(seed: u64) -> Vec<String> {
    let mut out: Vec<String> = [
        "",
        "Hello, World!",
        "Crème brûlée à la carte; naïve café",
        "İstanbul ǅemal ΣΊΣΥΦΟΣ ß ﬁ",
        "tabs\tand\nnewlines\r\nand\u{00A0}nbsp\u{2003}em-space",
        "NUL\u{0}and\u{FFFD}replacement\u{200B}zero-width\u{00AD}soft-hyphen",
        "emoji 👩‍👩‍👧 🇫🇷 ✈️ and 1️⃣",
        "中文分词测试，标点。日本語のテキスト、カタカナ。한국어 텍스트",
        "[CLS] literal [MASK] tokens[SEP]inside and [UNK][PAD]",
        "supercalifragilisticexpialidocious antidisestablishmentarianism unaffable",
        "don't U.S.A. 3.14 1,000 a:b snake_case e-mail",
        "\u{0301}leading combining mark, e\u{0301} decomposed, ḗ composed",
        "𝐌𝐚𝐭𝐡 𝔉𝔯𝔞𝔨𝔱𝔲𝔯 and astral 𠀀𪚥",
        "parse command line arguments",
        "Owls hunt at night with silent flight.",
        "Herons wade in shallow water and spear fish.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    out.push("x".repeat(101));
    // 40 real passages: HotpotQA's (title → sentences) where `../shared` is beside the checkout,
    // else paragraphs of this repository's docs.
    match common::shared_or("data/hotpotqa/train100_corpus.json", "paragraphs of the repository's docs instead") {
        Some(path) => {
            let corpus: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(&std::fs::read(path).expect("HotpotQA corpus")).expect("HotpotQA corpus");
            let passages = corpus.iter().take(40).map(|(title, sentences)| {
                let text: String = sentences.as_array().expect("sentences").iter().filter_map(|s| s.as_str()).collect();
                format!("{title}\n{text}")
            });
            out.extend(passages);
        }
        None => out.extend(common::own_passages(40).into_iter().map(|(heading, text)| format!("{heading}\n{text}"))),
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let alphabet: Vec<char> =
        "aZé\u{0301}ß İ中文。，、！?.,;:'\"()[]{}-_/\\ \t\n\r\u{0}\u{7}\u{FFFD}\u{200B}\u{00A0}\u{E000}😀🇫\u{FE0F}#@$%^&*~`|<>+=0123456789ᵃ①ﬁ"
            .chars()
            .collect();
    let words = ["[MASK]", "[SEP]", "running", "unaffable", "Ω", "##ing", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"];
    for _ in 0..400 {
        let mut s = String::new();
        for _ in 0..rng.random_range(0..40) {
            if rng.random_bool(0.15) {
                s.push_str(words[rng.random_range(0..words.len())]);
            } else {
                s.push(alphabet[rng.random_range(0..alphabet.len())]);
            }
        }
        out.push(s);
    }
    out
}

#[test]
fn the_page_embeds_queries_from_the_snapshot_as_the_engine_does() {
    let seed: u64 = std::env::var("WEBRAG_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("seed {seed} (WEBRAG_SEED={seed} repeats this run)");
    let tmp = std::env::temp_dir().join(format!("webrag-static-tier-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let site = tmp.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("index.html"), "<title>Owls</title><h1>Owls</h1><p>Owls hunt at night with silent flight.</p>").unwrap();
    std::fs::write(site.join("heron.md"), "# Herons\n\nHerons wade in shallow water and spear fish.\n").unwrap();
    let mut model = random_model(seed);
    let model_file = tmp.join("static.wrs");
    std::fs::write(&model_file, model.to_bytes()).unwrap();
    // The build weights the model by the site's text: so does the reference here.
    let docs: Vec<_> = ["index.html", "heron.md"]
        .iter()
        .map(|p| webrag::snapshot::page_document(p, std::fs::read(site.join(p)).unwrap()).unwrap())
        .collect();
    webrag::snapshot::weight_static_model(&mut model, &docs);
    let out = tmp.join("out");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_webrag"))
        .args(["index".as_ref(), site.as_os_str(), "--out".as_ref(), out.as_os_str(), "--no-cache".as_ref(), "--vectors".as_ref()])
        .args(["static".as_ref(), "--static-model".as_ref(), model_file.as_os_str()])
        .output()
        .expect("run webrag");
    assert!(o.status.success(), "webrag index --vectors static: {}", String::from_utf8_lossy(&o.stderr));
    let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["model"]["id"], "test/random+static");
    assert_eq!(manifest["model"]["dim"], 32);
    assert!(manifest["static"]["vocab"]["shards"].as_u64().unwrap() > 1, "{}", manifest["static"]);
    // The chunk vectors as int4, two to a byte (`WRV4`), in the lists; the graph files' node
    // vectors as sign bits (`WRB1`); the graph search reads the seed pages alone.
    assert_eq!(manifest["vectors"]["quant"], "int4");
    let gunzip = |p: std::path::PathBuf| {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap()), &mut b).unwrap();
        b
    };
    assert_eq!(manifest["graph"]["maxTopics"], manifest["graph"]["seedTopics"]);
    for (dir, magic) in [("v", b"WRV4"), ("g", b"WRB1")] {
        // The lists and graph files, not the centroids (`c-…`) or the directory files (`d…bin`).
        let files: Vec<_> = std::fs::read_dir(out.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name().unwrap().to_string_lossy().ends_with(".bin.gz") && !p.file_name().unwrap().to_string_lossy().starts_with("c-")
            })
            .collect();
        let blocks = files.len();
        let found = files.iter().map(|p| gunzip(p.clone())).filter(|b| b.windows(4).any(|w| w == magic)).count();
        assert_eq!(
            (found, blocks > 0),
            (blocks, true),
            "{dir}/: every list or graph file holds a {} block",
            String::from_utf8_lossy(magic)
        );
    }

    let texts = texts(seed);
    let texts_file = tmp.join("texts.json");
    std::fs::write(&texts_file, serde_json::to_vec(&texts).unwrap()).unwrap();
    let o = std::process::Command::new("node")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/static-embed.mjs"))
        .arg(&out)
        .arg(&texts_file)
        .output()
        .expect("node (installed by ./webrag.sh setup)");
    assert!(o.status.success(), "node: {}", String::from_utf8_lossy(&o.stderr));
    let got: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON from the page's code");
    let unk = model.tokenizer().spec().unk;
    let mut mismatches = Vec::new();
    for (text, g) in texts.iter().zip(got["out"].as_array().unwrap()) {
        let want_ids: Vec<u64> = model.tokenizer().pieces(text).into_iter().map(|(id, _)| id as u64).collect();
        let got_ids: Vec<u64> = g["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        if want_ids != got_ids {
            mismatches.push(format!("{text:?}: engine {want_ids:?}, page {got_ids:?}"));
            continue;
        }
        let want = model.embed_one(text);
        let got: Vec<f32> = g["vector"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        let known = want_ids.iter().any(|id| *id != unk as u64);
        let close = want.len() == got.len() && want.iter().zip(&got).all(|(a, b)| (a - b).abs() < 1e-5);
        assert!(close, "{text:?} (known pieces: {known}): engine {:?}… page {:?}…", &want[..4], &got[..4.min(got.len())]);
    }
    // The int4 lists read back in the page: a page's own sentence finds that page, at a cosine
    // near its own (misread values score near 0).
    for (text, heron) in [("Owls hunt at night with silent flight.", false), ("Herons wade in shallow water and spear fish.", true)] {
        let i = texts.iter().position(|t| t == text).expect("a probe text");
        let nearest = &got["out"][i]["nearest"];
        let (url, score) = (nearest["url"].as_str().unwrap_or(""), nearest["score"].as_f64().unwrap_or(0.0));
        assert!(url.contains("heron") == heron && score > 0.6, "{text:?}: nearest chunk {nearest}");
    }
    assert!(mismatches.is_empty(), "{} of {} texts tokenized differently:\n{}", mismatches.len(), texts.len(), mismatches.join("\n"));
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_static_model_file_round_trips_and_bad_files_are_typed_errors() {
    let m = random_model(7);
    let bytes = m.to_bytes();
    let back = StaticModel::from_bytes(tokenizer(), &bytes).expect("read back");
    assert_eq!(back.to_bytes(), bytes);
    assert_eq!(back.embed_one("owls at night"), m.embed_one("owls at night"));
    let err = |b: &[u8]| StaticModel::from_bytes(tokenizer(), b).err().map(|e| e.code().to_string());
    assert_eq!(err(b"").as_deref(), Some("MODEL_WEIGHTS_CORRUPT"));
    assert_eq!(err(&bytes[..bytes.len() - 1]).as_deref(), Some("MODEL_WEIGHTS_CORRUPT"), "cut");
    let mut other = bytes.clone();
    other[..4].copy_from_slice(b"WRSX");
    assert_eq!(err(&other).as_deref(), Some("MODEL_WEIGHTS_CORRUPT"), "magic");
    let mut huge = bytes.clone();
    huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(err(&huge).as_deref(), Some("MODEL_WEIGHTS_CORRUPT"), "header length past the file");
    assert!(m.embed_one("").iter().all(|x| *x == 0.0), "no piece: zeros");
}

const MEANING_PAIRS: [(&str, &str, &str); 4] = [
    ("How do owls hunt at night?", "Owls catch their prey in the dark.", "The stock market fell sharply on Monday."),
    ("parse command line arguments", "reading the options given to a program", "a recipe for chocolate cake"),
    ("the capital of France", "Paris is the largest city of France", "photosynthesis in green plants"),
    ("football match results", "the team won the soccer game", "installing a kitchen sink"),
];

/// The paraphrase's cosine to the query minus the unrelated sentence's, per pair.
fn meaning_margins(m: &StaticModel) -> Vec<f64> {
    MEANING_PAIRS
        .iter()
        .map(|&(q, near, far)| {
            let [q, near, far] = [q, near, far].map(|t| m.embed_one(t));
            common::cosine(&q, &near) - common::cosine(&q, &far)
        })
        .collect()
}

/// The Pearson correlation between the model's and `m`'s cosines over all pairs of `texts`
/// (`m` weighted by the texts' idf, as a site build weights it).
fn similarity_agreement(m: &mut StaticModel, texts: &[String]) -> f64 {
    m.weight_by_corpus(texts.iter().map(String::as_str));
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let teacher = common::model().embed_sync(&refs).expect("embed");
    let student: Vec<Vec<f32>> = texts.iter().map(|t| m.embed_one(t)).collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..texts.len() {
        for j in i + 1..texts.len() {
            a.push(common::cosine(&teacher[i], &teacher[j]));
            b.push(common::cosine(&student[i], &student[j]));
        }
    }
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let (va, vb): (f64, f64) = (a.iter().map(|x| (x - ma).powi(2)).sum(), b.iter().map(|y| (y - mb).powi(2)).sum());
    cov / (va * vb).sqrt()
}

#[test]
fn the_shipped_static_model_is_trained_and_agrees_with_its_encoder_more_than_the_distilled_one() {
    let mut shipped =
        StaticModel::from_bytes(tokenizer(), include_bytes!("../src/web/model/webrag-static.wrs")).expect("the shipped model");
    let h = shipped.header().clone();
    assert_eq!(
        (h.source.as_str(), h.rows, h.dim, h.weighting.as_str()),
        ("sentence-transformers/all-MiniLM-L6-v2", 30_522, 256, "tokenlearn")
    );
    let margins = meaning_margins(&shipped);
    assert!(margins.iter().all(|d| *d > 0.05), "paraphrase margins {margins:?}");
    // Texts it was not trained on (this repository's docs): the pairs the encoder finds similar,
    // the trained model finds more similar than the distilled one does.
    let texts: Vec<String> = doc_sentences().into_iter().step_by(7).take(150).collect();
    let mut distilled = distilled();
    let (a, b) = (similarity_agreement(&mut shipped, &texts), similarity_agreement(&mut distilled, &texts));
    eprintln!("agreement with the encoder over {} docs sentences' pairs: trained {a:.3}, distilled {b:.3}", texts.len());
    assert!(a > b + 0.05, "trained {a:.3} should agree with the encoder more than the distilled {b:.3}");
}

/// The real encoder distilled to 256 dimensions (as `webrag distill` writes it: through its
/// file's bytes), once for the tests that need it: every vocabulary token through the encoder is
/// most of this binary's time.
fn distilled() -> StaticModel {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let bytes = BYTES
        .get_or_init(|| webrag::embed::distill::distill(common::model(), tokenizer(), 256, &mut |_, _| {}).expect("distill").to_bytes());
    StaticModel::from_bytes(tokenizer(), bytes).expect("the distilled model's file")
}

#[test]
fn the_distilled_model_keeps_meaning() {
    let m = distilled();
    assert_eq!((m.header().rows, m.header().dim), (30_522, 256));
    let margins = meaning_margins(&m);
    assert!(margins.iter().all(|d| *d > 0.05), "paraphrase margins {margins:?}");
}

/// Sentences of this repository's docs (every checkout has them): a corpus for a training test.
fn doc_sentences() -> Vec<String> {
    let mut out = Vec::new();
    let mut files: Vec<_> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/docs")).expect("docs").flatten().map(|e| e.path()).collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("doc");
        for line in text.lines().filter(|l| l.len() > 40 && !l.starts_with('|') && !l.starts_with("```")) {
            out.extend(line.split(". ").map(str::trim).filter(|s| s.split_whitespace().count() >= 5).map(str::to_string));
        }
    }
    out
}

#[test]
fn training_moves_held_out_texts_toward_the_encoder() {
    use webrag::embed::tokenlearn::{TrainParams, train};
    let texts: Vec<String> = doc_sentences().into_iter().take(1500).collect();
    assert!(texts.len() >= 1000, "{} sentences", texts.len());
    let params = TrainParams { dim: 64, epochs: 2, ..TrainParams::default() };
    let (m, report) = train(common::model(), tokenizer(), &texts, params, &mut |_, _, _| {}).expect("train");
    assert_eq!((m.header().rows, m.header().dim, m.header().weighting.as_str()), (30_522, 64, "tokenlearn"));
    assert_eq!(report.held_out, texts.len().div_ceil(50));
    // The held-out sentences (never trained on) end closer to the encoder's vectors.
    assert!(
        report.cosine_after[1] > report.cosine_before + 0.05,
        "held-out cosine {:.3} before, {:.3} after",
        report.cosine_before,
        report.cosine_after[1]
    );
    // Bad settings are typed errors, nothing trained.
    let code =
        |p: TrainParams, t: &[String]| train(common::model(), tokenizer(), t, p, &mut |_, _, _| {}).err().map(|e| e.code().to_string());
    let bad = Some("INVALID_OPTION".to_string());
    assert_eq!(code(TrainParams { dim: 0, ..params }, &texts), bad, "dim 0");
    assert_eq!(code(TrainParams { dim: 385, ..params }, &texts), bad, "dim past the model's");
    assert_eq!(code(TrainParams { epochs: 0, ..params }, &texts), bad, "no epoch");
    assert_eq!(code(TrainParams { learning_rate: f32::NAN, ..params }, &texts), bad, "NaN step");
    assert_eq!(code(params, &texts[..99]), bad, "too few texts");
}
