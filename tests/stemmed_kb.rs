#![cfg(not(target_arch = "wasm32"))]
//! A knowledge base whose documents are stemmed in their language (`DocumentInput.lang`, as a
//! site build sets it from `<html lang>`) is searched by a query's words as written and as their
//! stems in each of its languages (`Query::with_stems`): `kettles` finds an English document's
//! `kettl` (and its snippet marks `kettle`), a phrase and an exclusion hold for stemmed documents too, a document in no language
//! still matches as written — on a loaded engine, after it is opened again, opened lazily from
//! its index segments, and when the store was written before it named its languages. A base
//! without stemmed documents searches its words as written only. A search with `filter.lang`
//! returns documents in that language or in none, its words stemmed in that language alone.
use crate::common;

use webrag::config::Config;
use webrag::embed::hashing::HashingEmbedder;
use webrag::engine::{Engine, LazyEngine, SearchOptions};
use webrag::ports::{Collection, FixedClock, MemoryStore, NoProgress, Op, Record, Store};
use webrag::types::{DocumentInput, Format, Hit, SearchFilter, SearchMode};

type Emb = HashingEmbedder<'static>;
type Store_ = &'static MemoryStore;

fn embedder() -> Emb {
    HashingEmbedder::new(common::model())
}

fn config() -> Config {
    Config { lazy_open_chunks: 1, ..Config::default() }
}

fn doc(id: &str, lang: Option<&str>, text: &str) -> DocumentInput {
    DocumentInput { id: id.into(), text: text.into(), format: Format::Text, lang: lang.map(str::to_string), ..Default::default() }
}

fn docs_of(hits: &[Hit]) -> Vec<&str> {
    let mut d: Vec<&str> = hits.iter().map(|h| h.doc_id.as_str()).collect();
    d.sort();
    d.dedup();
    d
}

fn bm25() -> SearchOptions {
    SearchOptions::new(10, SearchMode::Bm25)
}

/// The stored `languages` meta record, as written.
async fn languages_record(store: Store_) -> Option<String> {
    let got = store.get_batch(&[(Collection::Meta, "languages".to_string())]).await.expect("read");
    got.into_iter().flatten().find_map(|r| if let Record::Meta(m) = r { Some(m.value) } else { None })
}

const EN: &str = "The copper kettle boils water on the stove. Owls hunt mice in the barn at night.";
const FR: &str = "Les maisons anciennes du village sont grandes et solides.";
const PLAIN: &str = "Kettles and teapots are sold in this shop.";

/// Every expectation of a stemmed base, by a search function of either residency.
macro_rules! assert_stemmed_search {
    ($search:expr) => {{
        assert_eq!(docs_of(&$search("kettles")), ["en", "plain"], "kettles: the English kettl and the untagged kettles");
        assert_eq!(docs_of(&$search("hunting owl")), ["en"]);
        assert_eq!(docs_of(&$search("maison")), ["fr"], "the French maisons, stemmed maison");
        assert_eq!(docs_of(&$search("\"owls hunt\"")), ["en"], "a phrase in a stemmed document");
        assert_eq!(docs_of(&$search("kettles -owl")), ["plain"], "an exclusion stems too");
    }};
}

#[test]
fn a_stemmed_knowledge_base_is_searched_by_stems_on_every_residency() {
    pollster::block_on(async {
        let store: Store_ = Box::leak(Box::new(MemoryStore::new()));
        let mut eng = Engine::open(store, embedder(), config(), Box::new(FixedClock(1.0))).await.expect("open");
        eng.add(vec![doc("en", Some("en-GB"), EN), doc("plain", None, PLAIN)], &mut NoProgress).await.expect("add");
        assert_eq!(languages_record(store).await.as_deref(), Some(r#"["en"]"#));
        eng.add(vec![doc("fr", Some("fr"), FR), doc("zh", Some("zh"), "水壶在炉子上")], &mut NoProgress).await.expect("add");
        assert_eq!(languages_record(store).await.as_deref(), Some(r#"["en","fr"]"#), "zh has no stemmer");
        let loaded = |q: &str| pollster::block_on(eng.search(q, &bm25())).expect("search");
        assert_stemmed_search!(loaded);
        // The snippet highlights a stemmed document's word by its stem.
        let hits = loaded("kettles");
        let marked = |doc: &str| -> Vec<String> {
            hits.iter().filter(|h| h.doc_id == doc).flat_map(|h| h.snippet.iter().filter(|p| p.hit).map(|p| p.text.clone())).collect()
        };
        assert_eq!(marked("en"), ["kettle"]);
        assert_eq!(marked("plain"), ["Kettles"]);
        eng.maintain_all(false).await.expect("maintain");
        drop(eng);

        let eng = Engine::open(store, embedder(), config(), Box::new(FixedClock(2.0))).await.expect("open again");
        let reopened = |q: &str| pollster::block_on(eng.search(q, &bm25())).expect("search");
        assert_stemmed_search!(reopened);
        drop(eng);

        let mut lazy = LazyEngine::open(store, embedder(), config(), Box::new(FixedClock(3.0))).await.expect("lazy open");
        assert!(lazy.is_lazy(), "read from the index segments");
        let mut lazily = |q: &str| pollster::block_on(lazy.search(q, &bm25())).expect("search");
        assert_stemmed_search!(lazily);
        // A write on the lazily opened base adds its language.
        lazy.add(vec![doc("de", Some("de"), "Die Häuser des Dorfes sind alt.")], &mut NoProgress).await.expect("add");
        assert_eq!(languages_record(store).await.as_deref(), Some(r#"["de","en","fr"]"#));
        assert_eq!(docs_of(&lazy.search("haus", &bm25()).await.expect("search")), ["de"], "Häuser, stemmed haus");
        assert!(lazy.is_lazy());
        drop(lazy);

        // A base written before it named its languages: the full open names them again.
        store.commit(vec![Op::Delete(Collection::Meta, "languages".into())]).await.expect("delete");
        let eng = Engine::open(store, embedder(), config(), Box::new(FixedClock(4.0))).await.expect("open");
        let repaired = |q: &str| pollster::block_on(eng.search(q, &bm25())).expect("search");
        assert_stemmed_search!(repaired);
        assert_eq!(languages_record(store).await.as_deref(), Some(r#"["de","en","fr"]"#));
    });
}

#[test]
fn a_base_without_stemmed_documents_searches_words_as_written() {
    pollster::block_on(async {
        let store: Store_ = Box::leak(Box::new(MemoryStore::new()));
        let mut eng = Engine::open(store, embedder(), config(), Box::new(FixedClock(1.0))).await.expect("open");
        eng.add(vec![doc("a", None, "We run every morning."), doc("b", Some("zh"), "Running shoes.")], &mut NoProgress).await.expect("add");
        assert_eq!(languages_record(store).await, None);
        assert_eq!(docs_of(&eng.search("running", &bm25()).await.expect("search")), ["b"], "running is not run here");
    });
}

#[test]
fn a_language_that_is_not_a_tag_is_an_invalid_option_and_nothing_is_written() {
    pollster::block_on(async {
        let store: Store_ = Box::leak(Box::new(MemoryStore::new()));
        let mut eng = Engine::open(store, embedder(), config(), Box::new(FixedClock(1.0))).await.expect("open");
        for bad in ["e", "english!", "-en", "", "x1"] {
            let err = eng.add(vec![doc("ok", Some("en"), EN), doc("bad", Some(bad), PLAIN)], &mut NoProgress).await.expect_err("not a tag");
            assert_eq!(err.code(), "INVALID_OPTION", "{bad:?}: {err}");
            assert!(err.to_string().contains("documents[\"bad\"].lang"), "{err}");
        }
        assert_eq!(eng.stats().documents, 0, "nothing of the batch");
        assert_eq!(languages_record(store).await, None);
    });
}

fn in_lang(lang: &str, mode: SearchMode) -> SearchOptions {
    SearchOptions { filter: Some(SearchFilter { lang: Some(lang.into()), ..Default::default() }), ..SearchOptions::new(10, mode) }
}

/// Every expectation of a search in one language, by a search function `(query, options)`.
macro_rules! assert_language_search {
    ($search:expr) => {{
        assert_eq!(docs_of(&$search("kettles", &in_lang("en", SearchMode::Bm25))), ["en", "plain"]);
        assert_eq!(docs_of(&$search("maison", &in_lang("en", SearchMode::Bm25))), Vec::<&str>::new(), "not the French page");
        assert_eq!(docs_of(&$search("maison", &in_lang("fr-CA", SearchMode::Bm25))), ["fr"], "fr-CA is fr");
        assert_eq!(
            docs_of(&$search("kettles", &in_lang("FR", SearchMode::Bm25))),
            ["plain"],
            "the page in no language, not the English one"
        );
        // Stemmed in French alone: the English stem of `hunting` (`hunt`) is not looked up, so the
        // untagged page's `hunt` does not match; in English it does.
        assert_eq!(docs_of(&$search("hunting", &in_lang("fr", SearchMode::Bm25))), Vec::<&str>::new());
        assert_eq!(docs_of(&$search("hunting", &in_lang("en", SearchMode::Bm25))), ["en", "hunt"]);
        assert_eq!(docs_of(&$search("kettles", &in_lang("de", SearchMode::Bm25))), ["plain"], "a language with no page");
        // Every retriever is restricted: the dense list too.
        for lang in ["fr", "en"] {
            let hits = $search("the copper kettle in the village", &in_lang(lang, SearchMode::Hybrid));
            assert!(!hits.is_empty());
            assert!(docs_of(&hits).iter().all(|d| [lang, "plain", "hunt"].contains(d)), "{lang}: {:?}", docs_of(&hits));
        }
    }};
}

#[test]
fn a_search_in_one_language_returns_its_documents_and_those_in_none() {
    pollster::block_on(async {
        let store: Store_ = Box::leak(Box::new(MemoryStore::new()));
        let mut eng = Engine::open(store, embedder(), config(), Box::new(FixedClock(1.0))).await.expect("open");
        let docs = vec![
            doc("en", Some("en"), EN),
            doc("fr", Some("fr"), FR),
            doc("plain", None, PLAIN),
            doc("hunt", None, "They hunt for bargains."),
        ];
        eng.add(docs, &mut NoProgress).await.expect("add");
        let loaded = |q: &str, o: &SearchOptions| pollster::block_on(eng.search(q, o)).expect("search");
        assert_language_search!(loaded);
        // Without `lang`: every language, stemmed in each.
        assert_eq!(docs_of(&loaded("hunting", &bm25())), ["en", "hunt"]);
        assert_eq!(docs_of(&loaded("maison", &bm25())), ["fr"]);
        for bad in ["x1", "", "english!"] {
            let err = eng.search("kettles", &in_lang(bad, SearchMode::Bm25)).await.expect_err("not a tag");
            assert_eq!(err.code(), "INVALID_OPTION", "{bad:?}: {err}");
            assert!(err.to_string().contains("filter.lang"), "{err}");
        }
        eng.maintain_all(false).await.expect("maintain");
        drop(eng);

        let mut lazy = LazyEngine::open(store, embedder(), config(), Box::new(FixedClock(2.0))).await.expect("lazy open");
        assert!(lazy.is_lazy(), "read from the index segments");
        let mut lazily = |q: &str, o: &SearchOptions| pollster::block_on(lazy.search(q, o)).expect("search");
        assert_language_search!(lazily);
        assert!(lazy.is_lazy(), "a search in one language reads the documents it needs, not the whole base");
    });
}
