//! Late chunking (Günther et al. 2024, arXiv 2409.04701): a span's vector pooled from its whole
//! text's forward pass, as the pseudo-graph's facts get theirs at ingest.
#![cfg(not(target_arch = "wasm32"))]
mod common;

use webrag::embed::Embedder;

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

const PREFIX: &str = "Barn owl > Diet";
const FACTS: [&str; 4] = [
    "Barn owls hunt small mammals such as voles and shrews at night.",
    "The species was first described by Giovanni Scopoli in 1769.",
    "Its heart-shaped face collects sound like a satellite dish.",
    "Farmers in Malaysia put up nest boxes to control rats in oil palm plantations.",
];

#[test]
fn a_pool_of_every_token_is_the_text_vector() {
    let m = common::model();
    let text = format!("{PREFIX}\n{}", FACTS.join(" "));
    let out = m.embed_late_sync(&[&text], &[vec![vec![(0, text.len())]]]);
    let whole = m.embed_sync(&[&text]).expect("embed").remove(0);
    assert!(cos(&out[0].0, &whole) > 0.99999);
    let pooled = out[0].1[0].as_ref().expect("pooled");
    assert!(cos(pooled, &whole) > 0.99999, "{}", cos(pooled, &whole));
}

#[test]
fn each_fact_pooled_in_context_is_nearest_its_own_sentence() {
    let m = common::model();
    let text = format!("{PREFIX}\n{}", FACTS.join(" "));
    let prefix = (0, PREFIX.len());
    let pools: Vec<Vec<(usize, usize)>> = FACTS
        .iter()
        .map(|f| {
            let at = text.find(f).expect("fact in text");
            vec![prefix, (at, at + f.len())]
        })
        .collect();
    let out = m.embed_late_sync(&[&text], &[pools]);
    let own: Vec<String> = FACTS.iter().map(|f| format!("{PREFIX}\n{f}")).collect();
    let refs: Vec<&str> = own.iter().map(String::as_str).collect();
    let separate = m.embed_sync(&refs).expect("embed");
    for (i, late) in out[0].1.iter().enumerate() {
        let late = late.as_ref().expect("pooled");
        let sims: Vec<f32> = separate.iter().map(|s| cos(late, s)).collect();
        let best = sims.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|(k, _)| k);
        assert_eq!(best, Some(i), "fact {i}: similarities to the separate passes {sims:?}");
        assert!(sims[i] > 0.7, "fact {i}: {}", sims[i]);
    }
}

#[test]
fn a_span_past_the_truncation_gets_no_vector() {
    let m = common::model();
    let long = "word ".repeat(400);
    let text = format!("{long}tail sentence here.");
    let at = text.find("tail").expect("tail");
    let out = m.embed_late_sync(&[&text], &[vec![vec![(at, text.len())], vec![(0, 4)]]]);
    assert!(out[0].1[0].is_none(), "past 256 tokens");
    assert!(out[0].1[1].is_some());
    assert_eq!(out[0].0.len(), m.dim());
}
