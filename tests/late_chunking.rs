//! Late chunking (Günther et al. 2024, arXiv 2409.04701): a span's vector pooled from its whole
//! text's forward pass, as the pseudo-graph's facts get theirs at ingest.
#![cfg(not(target_arch = "wasm32"))]
use crate::common;

use webrag::embed::Embedder;

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

const PREFIX: &str = "Barn owl > Diet";
const FACTS: [&str; 2] =
    ["Barn owls hunt small mammals such as voles and shrews at night.", "Its heart-shaped face collects sound like a satellite dish."];

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

/// Three passages (prefix, facts) on other subjects, and a question on one fact of each.
const PASSAGES: [(&str, [&str; 3]); 3] = [
    (
        "Barn owl > Diet",
        [
            "Barn owls hunt small mammals such as voles and shrews at night.",
            "The species was first described by Giovanni Scopoli in 1769.",
            "Its heart-shaped face collects sound like a satellite dish.",
        ],
    ),
    (
        "Suez Canal > History",
        [
            "The canal opened in November 1869 after ten years of construction.",
            "It connects the Mediterranean Sea to the Red Sea.",
            "Egypt nationalised the canal company in 1956.",
        ],
    ),
    (
        "Sourdough > Baking",
        [
            "A starter of flour and water ferments with wild yeast and lactic acid bacteria.",
            "The dough is often proofed overnight in a cool place.",
            "Steam in the oven keeps the crust soft while the loaf rises.",
        ],
    ),
];
const QUESTIONS: [(&str, usize, usize); 3] = [
    ("Who first described the barn owl species?", 0, 1),
    ("When was the Suez company nationalised?", 1, 2),
    ("Why do bakers put steam in the oven?", 2, 2),
];

#[test]
fn facts_pooled_in_context_stay_apart_and_questions_find_their_passage() {
    let m = common::model();
    let texts: Vec<String> = PASSAGES.iter().map(|(p, fs)| format!("{p}\n{}", fs.join(" "))).collect();
    let pools: Vec<Vec<Vec<(usize, usize)>>> = PASSAGES
        .iter()
        .zip(&texts)
        .map(|((p, fs), t)| {
            fs.iter()
                .map(|f| {
                    let at = t.find(f).expect("fact in text");
                    vec![(0, p.len()), (at, at + f.len())]
                })
                .collect()
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let out = m.embed_late_sync(&refs, &pools);
    let late: Vec<(usize, usize, &Vec<f32>)> = out
        .iter()
        .enumerate()
        .flat_map(|(p, (_, fs))| fs.iter().enumerate().map(move |(f, v)| (p, f, v.as_ref().expect("pooled"))))
        .collect();
    // The facts of a passage stay apart (not its vector three times).
    for (i, a) in late.iter().enumerate() {
        for b in late[i + 1..].iter().filter(|b| b.0 == a.0) {
            assert!(cos(a.2, b.2) < 0.95, "facts {:?} and {:?} pooled alike: {}", (a.0, a.1), (b.0, b.1), cos(a.2, b.2));
        }
    }
    // Each question's nearest late-chunked fact is in its passage.
    for (q, passage, fact) in QUESTIONS {
        let qv = m.embed_sync(&[q]).expect("embed").remove(0);
        let best = late.iter().max_by(|a, b| cos(&qv, a.2).total_cmp(&cos(&qv, b.2))).expect("facts");
        assert_eq!(best.0, passage, "{q:?}: nearest fact {:?} (wanted {:?})", (best.0, best.1), (passage, fact));
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
