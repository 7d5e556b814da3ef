//! [`Store`] on IndexedDB, through the `idb` crate. One object store per [`Collection`], key path
//! `id`; a commit is one `readwrite` transaction over every store it touches, so a batch is
//! written whole or not at all (an abort or a closed tab rolls it back).
//!
//! Versioning: the IndexedDB version is `10 × SCHEMA_VERSION` (room for minor upgrades). When
//! another tab holds an older version open and does not close it, opening fails promptly with
//! [`StoreError::Blocked`] instead of hanging. Our own connection closes itself when a newer
//! version is requested elsewhere (`versionchange`), so we never block others.
use std::cell::RefCell;
use std::rc::Rc;

use futures::FutureExt;
use idb::{Database, DatabaseEvent, Factory, KeyPath, ObjectStoreParams, TransactionMode, TransactionResult};
use wasm_bindgen::JsValue;

use crate::error::StoreError;
use crate::ports::{Collection, Contents, GENERATION_KEY, Op, Record, SCHEMA_VERSION, Store};
use js_sys::Reflect;
use wasm_bindgen::JsCast;

/// IndexedDB version of the current schema.
pub const IDB_VERSION: u32 = 10 * SCHEMA_VERSION;

/// An open IndexedDB knowledge base.
pub struct IdbStore {
    name: String,
    db: Rc<RefCell<Option<Database>>>,
}

fn backend(e: impl std::fmt::Debug) -> StoreError {
    let s = format!("{e:?}");
    if s.contains("QuotaExceeded") { StoreError::QuotaExceeded } else { StoreError::Backend { reason: s } }
}

fn to_js<T: serde::Serialize>(v: &T) -> Result<JsValue, StoreError> {
    let ser = serde_wasm_bindgen::Serializer::json_compatible().serialize_bytes_as_arrays(false);
    v.serialize(&ser).map_err(backend)
}

fn from_js<T: serde::de::DeserializeOwned>(c: Collection, v: JsValue) -> Result<T, StoreError> {
    let key = Reflect::get(&v, &"id".into()).ok().and_then(|k| k.as_string()).unwrap_or_default();
    serde_wasm_bindgen::from_value(v).map_err(|e| StoreError::Corrupt { collection: c.name().into(), key, reason: e.to_string() })
}

fn record_to_js(r: &Record) -> Result<JsValue, StoreError> {
    match r {
        Record::Meta(r) => to_js(r),
        Record::Document(r) => to_js(r),
        Record::Chunk(r) => to_js(r),
        Record::Vector(r) => to_js(r),
        Record::Posting(r) => to_js(r),
        Record::GraphNode(r) => to_js(r),
        Record::GraphEdge(r) => to_js(r),
        Record::Ann(r) => to_js(r),
        Record::Question(r) => to_js(r),
        Record::Memory(r) => to_js(r),
        Record::Trace(r) => to_js(r),
        Record::Segment(r) => to_js(r),
    }
}

fn record_from_js(c: Collection, v: JsValue) -> Result<Record, StoreError> {
    Ok(match c {
        Collection::Meta => Record::Meta(from_js(c, v)?),
        Collection::Documents => Record::Document(from_js(c, v)?),
        Collection::Chunks => Record::Chunk(from_js(c, v)?),
        Collection::Vectors => Record::Vector(from_js(c, v)?),
        Collection::Postings => Record::Posting(from_js(c, v)?),
        Collection::GraphNodes => Record::GraphNode(from_js(c, v)?),
        Collection::GraphEdges => Record::GraphEdge(from_js(c, v)?),
        Collection::Ann => Record::Ann(from_js(c, v)?),
        Collection::Questions => Record::Question(from_js(c, v)?),
        Collection::Memory => Record::Memory(from_js(c, v)?),
        Collection::Traces => Record::Trace(from_js(c, v)?),
        Collection::Segments => Record::Segment(from_js(c, v)?),
    })
}

impl IdbStore {
    /// Opens (creating or upgrading) the database `name`.
    ///
    /// Errors: [`StoreError::Blocked`] when another connection holds an older version open;
    /// [`StoreError::VersionTooNew`] when the database was written by a newer build.
    pub async fn open(name: &str) -> Result<Self, StoreError> {
        let factory = Factory::new().map_err(backend)?;
        let mut req = factory.open(name, Some(IDB_VERSION)).map_err(|e| {
            let s = format!("{e:?}");
            if s.contains("VersionError") {
                StoreError::VersionTooNew { name: name.into(), found: 0, supported: SCHEMA_VERSION }
            } else {
                backend(e)
            }
        })?;
        req.on_upgrade_needed(|event| {
            let Ok(db) = event.database() else { return };
            let existing = db.store_names();
            for c in Collection::ALL {
                if !existing.iter().any(|n| n == c.name()) {
                    let mut p = ObjectStoreParams::new();
                    p.key_path(Some(KeyPath::new_single("id")));
                    let _ = db.create_object_store(c.name(), p);
                }
            }
        });
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        req.on_blocked(move |_| {
            let _ = tx.send(());
        });
        let opened = req.into_future().fuse();
        let blocked = rx.fuse();
        futures::pin_mut!(opened, blocked);
        let db = futures::select! {
            r = opened => r.map_err(|e| {
                let s = format!("{e:?}");
                if s.contains("VersionError") {
                    StoreError::VersionTooNew { name: name.into(), found: 0, supported: SCHEMA_VERSION }
                } else {
                    backend(e)
                }
            })?,
            b = blocked => {
                if b.is_ok() {
                    return Err(StoreError::Blocked { name: name.into() });
                }
                opened.await.map_err(backend)?
            }
        };
        let cell: Rc<RefCell<Option<Database>>> = Rc::new(RefCell::new(None));
        let weak = Rc::downgrade(&cell);
        let mut db = db;
        db.on_version_change(move |_| {
            // A newer version is wanted elsewhere: close so we don't block it.
            if let Some(c) = weak.upgrade()
                && let Some(db) = c.borrow_mut().take()
            {
                db.close();
            }
        });
        *cell.borrow_mut() = Some(db);
        Ok(IdbStore { name: name.into(), db: cell })
    }

    fn db(&self) -> Result<std::cell::Ref<'_, Database>, StoreError> {
        let b = self.db.borrow();
        if b.is_none() {
            return Err(StoreError::Backend {
                reason: format!("database {:?} was closed for a newer version in another tab; reload", self.name),
            });
        }
        Ok(std::cell::Ref::map(b, |o| o.as_ref().expect("checked")))
    }

    /// Closes the connection.
    pub fn close(&self) {
        if let Some(db) = self.db.borrow_mut().take() {
            db.close();
        }
    }

    /// Deletes the database `name` entirely.
    pub async fn delete(name: &str) -> Result<(), StoreError> {
        let f = Factory::new().map_err(backend)?;
        f.delete(name).map_err(backend)?.await.map_err(backend)
    }
}

impl Store for IdbStore {
    async fn get(&self, collection: Collection, key: &str) -> Result<Option<Record>, StoreError> {
        let fut = {
            let db = self.db()?;
            let tx = db.transaction(&[collection.name()], TransactionMode::ReadOnly).map_err(backend)?;
            let store = tx.object_store(collection.name()).map_err(backend)?;
            store.get(JsValue::from_str(key)).map_err(backend)?
        };
        match fut.await.map_err(backend)? {
            Some(v) if !v.is_undefined() => Ok(Some(record_from_js(collection, v)?)),
            _ => Ok(None),
        }
    }

    async fn get_batch(&self, keys: &[(Collection, String)]) -> Result<Vec<Option<Record>>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut names: Vec<&str> = keys.iter().map(|(c, _)| c.name()).collect();
        names.sort();
        names.dedup();
        let futs = {
            let db = self.db()?;
            let tx = db.transaction(&names, TransactionMode::ReadOnly).map_err(backend)?;
            let mut v = Vec::with_capacity(keys.len());
            for (c, k) in keys {
                let store = tx.object_store(c.name()).map_err(backend)?;
                v.push((*c, store.get(JsValue::from_str(k)).map_err(backend)?));
            }
            v
        };
        let mut out = Vec::with_capacity(keys.len());
        for (c, f) in futs {
            out.push(match f.await.map_err(backend)? {
                Some(v) if !v.is_undefined() => Some(record_from_js(c, v)?),
                _ => None,
            });
        }
        Ok(out)
    }

    async fn load(&self) -> Result<Contents, StoreError> {
        let names: Vec<&str> = Collection::ALL.iter().map(|c| c.name()).collect();
        let futs = {
            let db = self.db()?;
            let tx = db.transaction(&names, TransactionMode::ReadOnly).map_err(backend)?;
            let mut v = Vec::new();
            for c in Collection::ALL {
                let store = tx.object_store(c.name()).map_err(backend)?;
                v.push((c, store.get_all(None, None).map_err(backend)?));
            }
            v
        };
        let mut out = Contents::default();
        for (c, f) in futs {
            for v in f.await.map_err(backend)? {
                match record_from_js(c, v)? {
                    Record::Meta(r) => out.meta.push(r),
                    Record::Document(r) => out.documents.push(r),
                    Record::Chunk(r) => out.chunks.push(r),
                    Record::Vector(r) => out.vectors.push(r),
                    Record::Posting(r) => out.postings.push(r),
                    Record::GraphNode(r) => out.graph_nodes.push(r),
                    Record::GraphEdge(r) => out.graph_edges.push(r),
                    Record::Ann(r) => out.ann.push(r),
                    Record::Question(r) => out.questions.push(r),
                    Record::Memory(r) => out.memory.push(r),
                    Record::Trace(r) => out.traces.push(r),
                    Record::Segment(r) => out.segments.push(r),
                }
            }
        }
        Ok(out)
    }

    async fn commit(&self, ops: Vec<Op>) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        let mut names: Vec<&str> = ops
            .iter()
            .map(|o| match o {
                Op::Put(r) => r.collection().name(),
                Op::Delete(c, _) => c.name(),
                Op::CheckGeneration(_) => Collection::Meta.name(),
            })
            .collect();
        names.sort();
        names.dedup();
        // Serialise everything first: an encoding failure must not leave a half transaction.
        let mut encoded = Vec::with_capacity(ops.len());
        let mut expected = None;
        for op in &ops {
            encoded.push(match op {
                Op::Put(r) => (r.collection(), Some(record_to_js(r)?), JsValue::from_str(r.key())),
                Op::Delete(c, k) => (*c, None, JsValue::from_str(k)),
                Op::CheckGeneration(g) => {
                    expected = Some(*g);
                    continue;
                }
            });
        }
        let tx = {
            let db = self.db()?;
            db.transaction(&names, TransactionMode::ReadWrite).map_err(backend)?
        };
        // The generation check is the transaction's first request; its success handler aborts
        // the whole transaction (every write after it included) when another engine committed.
        let conflict: Rc<std::cell::Cell<Option<u64>>> = Rc::default();
        let tx = match expected {
            Some(g) => {
                let raw: web_sys::IdbTransaction = tx.into();
                let req =
                    raw.object_store(Collection::Meta.name()).and_then(|s| s.get(&JsValue::from_str(GENERATION_KEY))).map_err(backend)?;
                let (seen, tx_in, req_in) = (conflict.clone(), raw.clone(), req.clone());
                let on_success = wasm_bindgen::closure::Closure::once_into_js(move || {
                    let found = req_in
                        .result()
                        .ok()
                        .and_then(|v| Reflect::get(&v, &"value".into()).ok())
                        .and_then(|v| v.as_string())
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(0);
                    if found != g {
                        seen.set(Some(found));
                        let _ = tx_in.abort();
                    }
                });
                req.set_onsuccess(Some(on_success.unchecked_ref()));
                idb::Transaction::from(raw)
            }
            None => tx,
        };
        let mut failed = None;
        for (c, value, key) in encoded {
            let store = match tx.object_store(c.name()) {
                Ok(s) => s,
                Err(e) => {
                    failed = Some(backend(e));
                    break;
                }
            };
            let r = match value {
                Some(v) => store.put(&v, None).map(|_| ()),
                None => store.delete(key).map(|_| ()),
            };
            if let Err(e) = r {
                failed = Some(backend(e));
                break;
            }
        }
        if let Some(e) = failed {
            let _ = tx.abort();
            return Err(e);
        }
        let done = match expected {
            // Committing explicitly would end the transaction before the check's handler ran.
            Some(_) => tx.await,
            None => tx.commit().map_err(backend)?.await,
        };
        if let Some(found) = conflict.get() {
            return Err(StoreError::Conflict { expected: expected.unwrap_or(0), found });
        }
        match done {
            Ok(TransactionResult::Committed) => Ok(()),
            Ok(TransactionResult::Aborted) => Err(StoreError::Aborted { reason: "transaction aborted".into() }),
            Err(e) => {
                let s = format!("{e:?}");
                Err(if s.contains("Quota") { StoreError::QuotaExceeded } else { StoreError::Aborted { reason: s } })
            }
        }
    }

    async fn clear(&self) -> Result<(), StoreError> {
        let names: Vec<&str> = Collection::ALL.iter().map(|c| c.name()).collect();
        let tx = {
            let db = self.db()?;
            db.transaction(&names, TransactionMode::ReadWrite).map_err(backend)?
        };
        for c in Collection::ALL {
            tx.object_store(c.name()).map_err(backend)?.clear().map_err(backend)?;
        }
        match tx.commit().map_err(backend)?.await.map_err(backend)? {
            TransactionResult::Committed => Ok(()),
            TransactionResult::Aborted => Err(StoreError::Aborted { reason: "clear aborted".into() }),
        }
    }
}
