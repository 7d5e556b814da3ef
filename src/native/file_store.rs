//! A [`Store`] kept in one JSON file, rewritten atomically (write to a temp file, then rename)
//! on every commit. Meant for the CLI's small knowledge bases; the browser uses IndexedDB.
use std::path::PathBuf;

use crate::error::StoreError;
use crate::ports::{Collection, Contents, GENERATION_KEY, MemoryStore, Op, Record, Store, check_generation, generation_in};

/// JSON-file store: a [`MemoryStore`] mirrored to `path`.
pub struct FileStore {
    path: PathBuf,
    mem: MemoryStore,
}

impl FileStore {
    /// Opens (or creates on first commit) the store at `path`.
    pub async fn open(path: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let path = path.into();
        let mem = MemoryStore::new();
        if path.exists() {
            let bytes = std::fs::read(&path).map_err(|e| StoreError::Backend { reason: e.to_string() })?;
            let c: Contents = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
                collection: "*".into(),
                key: path.display().to_string(),
                reason: e.to_string(),
            })?;
            mem.commit(c.into_ops()).await?;
        }
        Ok(FileStore { path, mem })
    }

    async fn flush(&self) -> Result<(), StoreError> {
        let c = self.mem.load().await?;
        let bytes = serde_json::to_vec(&c).map_err(|e| StoreError::Backend { reason: e.to_string() })?;
        let tmp = self.path.with_extension("tmp");
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Backend { reason: e.to_string() })?;
        }
        std::fs::write(&tmp, bytes).map_err(|e| StoreError::Backend { reason: e.to_string() })?;
        std::fs::rename(&tmp, &self.path).map_err(|e| StoreError::Backend { reason: e.to_string() })
    }
}

impl Store for FileStore {
    async fn get(&self, collection: Collection, key: &str) -> Result<Option<Record>, StoreError> {
        self.mem.get(collection, key).await
    }
    async fn get_batch(&self, keys: &[(Collection, String)]) -> Result<Vec<Option<Record>>, StoreError> {
        self.mem.get_batch(keys).await
    }
    async fn scan(&self, collection: Collection) -> Result<Contents, StoreError> {
        self.mem.scan(collection).await
    }
    async fn scan_page(&self, collection: Collection, after: Option<&str>, limit: usize) -> Result<Vec<Record>, StoreError> {
        self.mem.scan_page(collection, after, limit).await
    }
    async fn load(&self) -> Result<Contents, StoreError> {
        self.mem.load().await
    }
    async fn commit(&self, ops: Vec<Op>) -> Result<(), StoreError> {
        // Write the new state to disk first; apply in memory only if the rename succeeded.
        let stored = generation_in(self.mem.get(Collection::Meta, GENERATION_KEY).await?.as_ref());
        check_generation(stored, &ops)?;
        let shadow = MemoryStore::new();
        let mut all = self.mem.load().await?.into_ops();
        all.extend(ops.iter().filter(|o| !matches!(o, Op::CheckGeneration(_))).cloned());
        shadow.commit(all).await?;
        let tmp_store = FileStore { path: self.path.clone(), mem: shadow };
        tmp_store.flush().await?;
        self.mem.commit(ops).await
    }
    async fn clear(&self) -> Result<(), StoreError> {
        self.mem.clear().await?;
        self.flush().await
    }
}
