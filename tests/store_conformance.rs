#![cfg(not(target_arch = "wasm32"))]
//! The Store conformance suite against the native implementations.
use crate::store_suite;

use webrag::error::StoreError;
use webrag::ports::{Collection, MemoryStore, Op, Store};

#[test]
fn memory_store_conforms() {
    pollster::block_on(store_suite::run(&MemoryStore::new()));
}

#[test]
fn file_store_conforms_and_persists() {
    let dir = std::env::temp_dir().join(format!("webrag-fs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("kb.json");
    pollster::block_on(async {
        let s = webrag::native::FileStore::open(&path).await.expect("open");
        store_suite::run(&s).await;
        s.commit(vec![Op::Delete(Collection::Documents, "x".into())]).await.expect("commit");
        let meta = webrag::schema::MetaRecord { id: "k".into(), value: "\"v\"".into() };
        s.commit(vec![Op::Put(webrag::ports::Record::Meta(meta.clone()))]).await.expect("commit");
        drop(s);
        let s = webrag::native::FileStore::open(&path).await.expect("reopen");
        assert_eq!(s.get(Collection::Meta, "k").await.expect("get"), Some(webrag::ports::Record::Meta(meta)));
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failed_commit_writes_nothing() {
    pollster::block_on(async {
        let s = MemoryStore::new();
        s.fail_next_commit(StoreError::QuotaExceeded);
        let meta = webrag::schema::MetaRecord { id: "k".into(), value: "1".into() };
        let r = s.commit(vec![Op::Put(webrag::ports::Record::Meta(meta))]).await;
        assert_eq!(r, Err(StoreError::QuotaExceeded));
        assert!(s.load().await.expect("load").meta.is_empty());
    });
}
