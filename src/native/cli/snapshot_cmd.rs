//! `webrag search-snapshot`: a static snapshot searched natively, as `webrag/static` searches it
//! (the reference its page ranking is tested against).
use std::collections::HashMap;
use std::path::PathBuf;

use super::Models;
use crate::engine::SearchOptions;
use crate::native::page_rank::{self, Lists};
use crate::types::SearchMode;

/// The arguments of `webrag search-snapshot`.
#[derive(clap::Args)]
pub(super) struct SearchSnapshotArgs {
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
    /// Also the page results `webrag/static` shows for the keyword list and for the keyword and
    /// semantic lists fused (`keywordPages`, `hybridPages`: its ranking, without the prefix
    /// completion of a word being typed and without the graph walk).
    #[arg(long)]
    pages: bool,
}

/// `webrag search-snapshot`.
pub(super) async fn search_snapshot(models: &Models, a: SearchSnapshotArgs) -> crate::Result<()> {
    let SearchSnapshotArgs { dir, queries, k, keyword_only, pages } = a;
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
    let list = |top: &[(u32, f32)], k: usize| top.iter().take(k).map(|(c, s)| serde_json::json!([c, s])).collect::<Vec<_>>();
    // Pages group chunk lists of k × PER_PAGE, no page more than PER_PAGE of them (as the page
    // draws them when it has a pages file): each list is ranked whole, then cut.
    let per_page = pages && src.has_pages();
    let depth = if per_page { src.chunk_count().max(k) } else { k };
    let cut = |top: Vec<(u32, f32)>| -> crate::Result<Vec<(u32, f32)>> {
        if !per_page {
            return Ok(top);
        }
        let chunks: Vec<u32> = top.iter().map(|h| h.0).collect();
        let fragments = src.fragment_map(&chunks)?;
        let page = |c: u32| fragments.get(&c).and_then(|f| f.page);
        Ok(page_rank::cap_per_page(&top, k * page_rank::PER_PAGE, &page, page_rank::PER_PAGE))
    };
    for query in queries {
        let rank = async |mode: SearchMode, qv: Option<&[f32]>, k: usize| {
            crate::engine::source::rank(&src, &query, qv, &SearchOptions::new(k, mode)).await.map(|r| r.top)
        };
        let keyword = cut(rank(SearchMode::Bm25, None, depth).await?)?;
        let mut line = serde_json::json!({ "query": query, "keyword": list(&keyword, k) });
        let mut semantic = None;
        if let Some(e) = &embedder {
            let qv =
                crate::embed::Embedder::embed_checked(e, &[crate::engine::dense_query_text(&query).as_str()]).await?.into_iter().next();
            let dense = cut(rank(SearchMode::Dense, qv.as_deref(), depth).await?)?;
            line["semantic"] = list(&dense, k).into();
            semantic = Some(dense.iter().map(|(c, _)| *c).collect::<Vec<_>>());
            line["hybrid"] = list(&rank(SearchMode::Hybrid, qv.as_deref(), k).await?, k).into();
            line["vector"] = qv.into();
        }
        if pages {
            let kw: Vec<u32> = keyword.iter().map(|(c, _)| *c).collect();
            let scores: HashMap<u32, f64> = keyword.iter().map(|&(c, s)| (c, s as f64)).collect();
            line["keywordPages"] = snapshot_pages(&src, &query, k, Lists { keyword: kw.clone(), ..Lists::default() }, Some(&scores))?;
            // A semantic list of fusion weight 0 (the static tier's) is not fetched by the page.
            let counts = src.page_ranking().0.weights.get("dense").is_none_or(|w| *w != 0.0);
            if let Some(semantic) = semantic.filter(|_| counts) {
                line["hybridPages"] = snapshot_pages(&src, &query, k, Lists { keyword: kw, semantic, graph: Vec::new() }, None)?;
            }
        }
        println!("{line}");
    }
    Ok(())
}

/// The page results of one stage of `webrag search-snapshot --pages`.
fn snapshot_pages(
    src: &crate::native::snapshot_search::SnapshotSource,
    query: &str,
    k: usize,
    lists: Lists,
    scores: Option<&HashMap<u32, f64>>,
) -> crate::Result<serde_json::Value> {
    let mut chunks: Vec<u32> = lists.keyword.iter().chain(&lists.semantic).copied().collect();
    crate::sort::ascending(&mut chunks);
    chunks.dedup();
    let fragments = src.fragment_map(&chunks)?;
    let (fusion, fragment_size) = src.page_ranking();
    let fragment = |c: u32| fragments.get(&c);
    let page = |c: u32| fragments.get(&c).and_then(|f| f.page);
    let ranked = page_rank::rank(&page_rank::Stage {
        lists: &lists,
        scores,
        paths: None,
        group: page_rank::Group::Page,
        pages: if src.has_pages() { Some(&page) } else { None },
        fragment: &fragment,
        query,
        k,
        sections: 3,
        fusion: &fusion,
        fragment_size,
    });
    Ok(serde_json::to_value(ranked).unwrap_or_default())
}
