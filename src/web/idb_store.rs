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
use crate::ports::{Collection, Contents, GENERATION_KEY, Op, Record, Store};
use crate::schema::SCHEMA_VERSION;
use js_sys::Reflect;
use wasm_bindgen::JsCast;

/// IndexedDB version of the current schema.
pub const IDB_VERSION: u32 = 10 * SCHEMA_VERSION;

/// An open IndexedDB knowledge base.
pub struct IdbStore {
    name: String,
    db: Rc<RefCell<Option<Database>>>,
    /// Testing hook ([`IdbStore::abort_next_commit_after`]).
    abort_after: std::cell::Cell<Option<usize>>,
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
        Ok(IdbStore { name: name.into(), db: cell, abort_after: Default::default() })
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

    /// Testing hook: the next commit aborts its IndexedDB transaction (`IDBTransaction.abort()`)
    /// after issuing `ops` of its writes, as a crash or a browser abort mid-batch would; it
    /// fails with [`StoreError::Aborted`] and the browser rolls the whole batch back.
    pub fn abort_next_commit_after(&self, ops: usize) {
        self.abort_after.set(Some(ops));
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

/// Waits for a read-write transaction to end (it commits by itself once its requests are done):
/// `true` when it committed, `false` when it aborted (its `error` says why). Only `complete` and `abort` are
/// listened to, and both handlers are removed before they are dropped: the error events of an
/// abort's requests bubble to the transaction with nothing left to call.
async fn outcome(raw: &web_sys::IdbTransaction) -> bool {
    use wasm_bindgen::closure::Closure;
    let (send, recv) = futures::channel::oneshot::channel::<bool>();
    let send = Rc::new(RefCell::new(Some(send)));
    let handler = |done: bool| {
        let send = send.clone();
        Closure::<dyn FnMut()>::new(move || {
            if let Some(s) = send.borrow_mut().take() {
                let _ = s.send(done);
            }
        })
    };
    let (on_complete, on_abort) = (handler(true), handler(false));
    raw.set_oncomplete(Some(on_complete.as_ref().unchecked_ref()));
    raw.set_onabort(Some(on_abort.as_ref().unchecked_ref()));
    let committed = recv.await.unwrap_or(false);
    raw.set_oncomplete(None);
    raw.set_onabort(None);
    drop((on_complete, on_abort));
    committed
}

/// A commit's operations as IndexedDB requests: the object stores it touches, each put (with its
/// record as a JS value) or delete, and the generation it expects, if any.
struct Encoded {
    names: Vec<&'static str>,
    requests: Vec<(Collection, Option<JsValue>, JsValue)>,
    expected: Option<u64>,
}

/// Serialises every operation (a record that does not encode fails the commit before the
/// transaction opens).
fn encode(ops: &[Op]) -> Result<Encoded, StoreError> {
    let mut names: Vec<&'static str> = ops
        .iter()
        .map(|o| match o {
            Op::Put(r) => r.collection().name(),
            Op::Delete(c, _) => c.name(),
            Op::CheckGeneration(_) => Collection::Meta.name(),
        })
        .collect();
    crate::sort::ascending(&mut names);
    names.dedup();
    let mut requests = Vec::with_capacity(ops.len());
    let mut expected = None;
    for op in ops {
        requests.push(match op {
            Op::Put(r) => (r.collection(), Some(record_to_js(r)?), JsValue::from_str(r.key())),
            Op::Delete(c, k) => (*c, None, JsValue::from_str(k)),
            Op::CheckGeneration(g) => {
                expected = Some(*g);
                continue;
            }
        });
    }
    Ok(Encoded { names, requests, expected })
}

/// The generation check, the transaction's first request: its success handler aborts the whole
/// transaction (every write after it included) when another engine committed, and leaves the
/// generation it found in the returned cell.
fn check_generation(raw: &web_sys::IdbTransaction, g: u64) -> Result<Rc<std::cell::Cell<Option<u64>>>, StoreError> {
    let conflict: Rc<std::cell::Cell<Option<u64>>> = Rc::default();
    let req = raw.object_store(Collection::Meta.name()).and_then(|s| s.get(&JsValue::from_str(GENERATION_KEY))).map_err(backend)?;
    let (seen, tx_in, req_in) = (conflict.clone(), raw.clone(), req.clone());
    let on_success = wasm_bindgen::closure::Closure::once_into_js(move || {
        let found = req_in
            .result()
            .ok()
            .and_then(|v| Reflect::get(&v, &"value".into()).ok())
            .and_then(|v| v.as_string())
            .map_or(0, |v| crate::ports::parse_generation(&v));
        if found != g {
            seen.set(Some(found));
            let _ = tx_in.abort();
        }
    });
    req.set_onsuccess(Some(on_success.unchecked_ref()));
    Ok(conflict)
}

/// Issues the puts and deletes on the transaction. Raw requests, no handlers: only the
/// transaction's outcome matters (a handler dropped with its request would be called by an
/// abort's error events). `abort_after`: the test hook that aborts before request `i`.
fn issue(
    raw: &web_sys::IdbTransaction,
    requests: Vec<(Collection, Option<JsValue>, JsValue)>,
    abort_after: Option<usize>,
) -> Result<(), StoreError> {
    for (i, (c, value, key)) in requests.into_iter().enumerate() {
        if abort_after == Some(i) {
            let _ = raw.abort();
            break;
        }
        let store = raw.object_store(c.name()).map_err(backend)?;
        match value {
            Some(v) => store.put(&v).map(|_| ()),
            None => store.delete(&key).map(|_| ()),
        }
        .map_err(backend)?;
    }
    Ok(())
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
        crate::sort::ascending(&mut names);
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

    async fn scan(&self, collection: Collection) -> Result<Contents, StoreError> {
        let fut = {
            let db = self.db()?;
            let tx = db.transaction(&[collection.name()], TransactionMode::ReadOnly).map_err(backend)?;
            tx.object_store(collection.name()).map_err(backend)?.get_all(None, None).map_err(backend)?
        };
        let mut out = Contents::default();
        for v in fut.await.map_err(backend)? {
            out.push(record_from_js(collection, v)?);
        }
        Ok(out)
    }

    async fn scan_page(&self, collection: Collection, after: Option<&str>, limit: usize) -> Result<Vec<Record>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let fut = {
            let db = self.db()?;
            let tx = db.transaction(&[collection.name()], TransactionMode::ReadOnly).map_err(backend)?;
            // Keys after `after` (an open lower bound); IndexedDB orders string keys itself.
            let range = match after {
                Some(a) => Some(idb::Query::from(idb::KeyRange::lower_bound(&JsValue::from_str(a), Some(true)).map_err(backend)?)),
                None => None,
            };
            let limit = u32::try_from(limit).unwrap_or(u32::MAX);
            tx.object_store(collection.name()).map_err(backend)?.get_all(range, Some(limit)).map_err(backend)?
        };
        fut.await.map_err(backend)?.into_iter().map(|v| record_from_js(collection, v)).collect()
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
                out.push(record_from_js(c, v)?);
            }
        }
        Ok(out)
    }

    async fn commit(&self, ops: Vec<Op>) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        // Serialise everything first: an encoding failure must not leave a half transaction.
        let Encoded { names, requests, expected } = encode(&ops)?;
        let raw: web_sys::IdbTransaction = {
            let db = self.db()?;
            db.transaction(&names, TransactionMode::ReadWrite).map_err(backend)?.into()
        };
        let conflict = match expected {
            Some(g) => check_generation(&raw, g)?,
            None => Rc::default(),
        };
        if let Err(e) = issue(&raw, requests, self.abort_after.take()) {
            let _ = raw.abort();
            return Err(e);
        }
        let committed = outcome(&raw).await;
        if let Some(found) = conflict.get() {
            return Err(StoreError::Conflict { expected: expected.unwrap_or(0), found });
        }
        // An abort's reason is the transaction's error: QuotaExceededError when the browser
        // refused the space (it aborts the transaction at commit).
        let reason = raw.error().map(|e| (e.name(), e.message()));
        if reason.as_ref().is_some_and(|(n, _)| n == "QuotaExceededError") {
            return Err(StoreError::QuotaExceeded);
        }
        if committed {
            Ok(())
        } else {
            Err(StoreError::Aborted { reason: reason.map_or_else(|| "transaction aborted".into(), |(n, m)| format!("{n}: {m}")) })
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
