//! Encryption at rest: an envelope keyring.
//!
//! - **Master keys** (key-encryption keys) come from `SPECWRIGHT_MASTER_KEY` (one base64 key) or
//!   the file `master.key` in the data directory (created on first run, mode 0600). The file holds
//!   one `<id> <base64 key>` line per key, newest first; the first is the primary.
//! - **Data keys** live in the database, each wrapped (AES-256-GCM) by a master key. One data key is
//!   active for new writes; older ones stay to decrypt older versions.
//! - **Sealing**: every secret version is AES-256-GCM encrypted under a data key with a fresh
//!   96-bit random nonce and associated data binding tenant, credential key and version, so a
//!   ciphertext moved to another row does not decrypt.
//!
//! Rotation (`specwright keys rotate`) adds a new primary master key, re-wraps every data key under
//! it and activates a new data key, in one transaction. Running servers keep working: they hold
//! unwrapped data keys in memory and reload the key file when they meet a master key they lack.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use anyhow::{Context, Result, anyhow, bail};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;
use sqlx::AnyConnection;
use sqlx::Row;
use zeroize::{Zeroize, Zeroizing};

use runtime::store::{Store, Tx, now_ms};

/// File of master keys inside the data directory.
pub const MASTER_KEY_FILE: &str = "master.key";
const NONCE_LEN: usize = 12;

/// A 256-bit key that never prints and is wiped from memory when dropped.
#[derive(Clone)]
struct SecretKey([u8; 32]);

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

impl SecretKey {
    fn random() -> Self {
        let mut key = SecretKey([0u8; 32]);
        rand::rngs::OsRng.fill_bytes(&mut key.0);
        key
    }

    /// The key from exactly 32 bytes, copied in place (no stray copy on the stack).
    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let mut key = SecretKey([0u8; 32]);
        (bytes.len() == key.0.len()).then(|| key.0.copy_from_slice(bytes))?;
        Some(key)
    }

    /// The cipher; its key schedule is wiped when dropped (aes-gcm's `zeroize` feature).
    fn cipher(&self) -> Aes256Gcm {
        Aes256Gcm::new_from_slice(&self.0).expect("an AES-256 key is 32 bytes")
    }
}

/// Encrypts `plaintext` under `key` with `aad`; output is `nonce || ciphertext+tag`.
fn seal_with(key: &SecretKey, plaintext: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
    let mut nonce = [0u8; NONCE_LEN];
    rand::rngs::OsRng.fill_bytes(&mut nonce);
    let ct = key
        .cipher()
        .encrypt(&Nonce::from(nonce), Payload { msg: plaintext, aad })
        .map_err(|_| anyhow!("encryption failed"))?;
    let mut out = Vec::with_capacity(NONCE_LEN + ct.len());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&ct);
    Ok(out)
}

/// Decrypts the output of [`seal_with`]; fails when the key, the data or the `aad` differ.
fn open_with(key: &SecretKey, sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
    if sealed.len() < NONCE_LEN + 16 {
        bail!("sealed value is too short");
    }
    let (nonce, ct) = sealed.split_at(NONCE_LEN);
    let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| anyhow!("bad nonce"))?;
    key.cipher()
        .decrypt(&Nonce::from(nonce), Payload { msg: ct, aad })
        .map_err(|_| anyhow!("the value does not decrypt (wrong key or moved ciphertext)"))
}

/// Associated data of one secret version: length-prefixed so no two triples collide.
pub fn secret_aad(tenant: &str, key: &str, version: i64) -> Vec<u8> {
    format!("specwright/secret/v1|{}:{tenant}|{}:{key}|{version}", tenant.len(), key.len()).into_bytes()
}

fn data_key_aad(id: &str) -> Vec<u8> {
    format!("specwright/data-key/v1|{id}").into_bytes()
}

/// Where master keys come from. Its `Debug` never shows a key.
#[derive(Clone)]
pub enum MasterKeySource {
    /// One key given in configuration (`SPECWRIGHT_MASTER_KEY`), id `env`; wiped when dropped.
    Env(Zeroizing<String>),
    /// The key file.
    File(PathBuf),
}

impl std::fmt::Debug for MasterKeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MasterKeySource::Env(_) => f.write_str("Env(..)"),
            MasterKeySource::File(path) => f.debug_tuple("File").field(path).finish(),
        }
    }
}

fn parse_key(b64: &str) -> Result<SecretKey> {
    let bytes = Zeroizing::new(STANDARD.decode(b64.trim()).context("the master key is not base64")?);
    SecretKey::from_bytes(&bytes).ok_or_else(|| anyhow!("the master key must be 32 bytes (base64 of 32 random bytes)"))
}

/// Reads master keys, newest first.
fn read_master_keys(source: &MasterKeySource) -> Result<Vec<(String, SecretKey)>> {
    match source {
        MasterKeySource::Env(b64) => Ok(vec![("env".to_string(), parse_key(b64)?)]),
        MasterKeySource::File(path) => {
            let text =
                Zeroizing::new(std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?);
            let mut keys = Vec::new();
            for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
                let (id, b64) = line
                    .split_once(' ')
                    .ok_or_else(|| anyhow!("{}: lines must be `<id> <base64 key>`", path.display()))?;
                keys.push((id.to_string(), parse_key(b64)?));
            }
            if keys.is_empty() {
                bail!("{} holds no key", path.display());
            }
            Ok(keys)
        }
    }
}

fn key_line(id: &str, key: &SecretKey) -> Zeroizing<String> {
    let encoded = Zeroizing::new(STANDARD.encode(key.0));
    let mut line = Zeroizing::new(String::with_capacity(id.len() + encoded.len() + 2));
    line.push_str(id);
    line.push(' ');
    line.push_str(&encoded);
    line.push('\n');
    line
}

/// The master key source for a data directory: the environment variable when set, else the key
/// file (created with a first key when missing).
pub fn master_key_source(data_dir: &Path) -> Result<MasterKeySource> {
    if let Ok(k) = std::env::var("SPECWRIGHT_MASTER_KEY") {
        return Ok(MasterKeySource::Env(Zeroizing::new(k)));
    }
    let path = data_dir.join(MASTER_KEY_FILE);
    if !path.exists() {
        std::fs::create_dir_all(data_dir)?;
        // Processes starting together on a new directory keep one first key between them: two
        // would otherwise each seal data keys under a master key the other overwrote.
        runtime::files::create_once(&path, key_line(&format!("mk-{}", now_ms()), &SecretKey::random()).as_bytes())?;
    }
    Ok(MasterKeySource::File(path))
}

/// The keyring: master keys and unwrapped data keys, cached in memory.
#[derive(Debug)]
pub struct Keyring {
    source: MasterKeySource,
    masters: RwLock<Vec<(String, SecretKey)>>,
    data_keys: RwLock<HashMap<String, SecretKey>>,
}

impl Keyring {
    /// Loads the master keys and makes sure an active data key exists.
    pub async fn load(store: &Store, source: MasterKeySource) -> Result<Keyring> {
        let masters = read_master_keys(&source)?;
        let ring = Keyring { source, masters: RwLock::new(masters), data_keys: RwLock::new(HashMap::new()) };
        let mut tx = store.begin().await?;
        let active: Option<String> =
            sqlx::query("SELECT id FROM data_keys WHERE active = 1").fetch_optional(&mut *tx).await?.map(|r| r.get(0));
        match active {
            None => drop(ring.create_data_key(&mut tx).await?),
            // Refuse to start, rather than fail every request that seals or opens a secret, when
            // the master keys given are not the ones this database's data keys are wrapped by.
            Some(id) => drop(ring.data_key(&mut tx, &id).await.with_context(|| {
                let given = match &ring.source {
                    MasterKeySource::Env(_) => "SPECWRIGHT_MASTER_KEY".to_string(),
                    MasterKeySource::File(path) => path.display().to_string(),
                };
                format!(
                    "the vault's active data key {id} cannot be unwrapped with the master keys of {given}: \
                     they are not the keys of this database"
                )
            })?),
        }
        tx.commit().await?;
        Ok(ring)
    }

    fn master(&self, id: &str) -> Option<SecretKey> {
        self.masters.read().ok()?.iter().find(|(k, _)| k == id).map(|(_, v)| v.clone())
    }

    fn primary(&self) -> Result<(String, SecretKey)> {
        self.masters
            .read()
            .map_err(|_| anyhow!("keyring lock poisoned"))?
            .first()
            .cloned()
            .ok_or_else(|| anyhow!("no master key"))
    }

    /// Creates a data key wrapped by the primary master key and makes it the only active one.
    async fn create_data_key(&self, tx: &mut Tx) -> Result<String> {
        let (master_id, master) = self.primary()?;
        let id = format!("dk-{}", uuid::Uuid::now_v7());
        let key = SecretKey::random();
        let wrapped = seal_with(&master, &key.0, &data_key_aad(&id))?;
        sqlx::query("UPDATE data_keys SET active = 0 WHERE active = 1").execute(&mut **tx).await?;
        sqlx::query(
            "INSERT INTO data_keys (id, master_key_id, wrapped, active, created_at) VALUES ($1, $2, $3, 1, $4)",
        )
        .bind(&id)
        .bind(&master_id)
        .bind(wrapped)
        .bind(now_ms())
        .execute(&mut **tx)
        .await?;
        Ok(id)
    }

    /// The unwrapped data key `id`, loading it (and re-reading the key file) when not cached.
    async fn data_key(&self, db: &mut AnyConnection, id: &str) -> Result<SecretKey> {
        if let Some(k) = self.data_keys.read().ok().and_then(|m| m.get(id).cloned()) {
            return Ok(k);
        }
        let row = sqlx::query("SELECT master_key_id, wrapped FROM data_keys WHERE id = $1")
            .bind(id)
            .fetch_optional(db)
            .await?
            .ok_or_else(|| anyhow!("unknown data key {id}"))?;
        let master_id: String = row.get(0);
        let wrapped: Vec<u8> = row.get(1);
        let master = match self.master(&master_id) {
            Some(m) => m,
            None => {
                // Rotated by another process: the key file has the new master key.
                let fresh = read_master_keys(&self.source)?;
                if let Ok(mut w) = self.masters.write() {
                    *w = fresh;
                }
                self.master(&master_id).ok_or_else(|| anyhow!("master key {master_id} is not configured"))?
            }
        };
        let raw = Zeroizing::new(open_with(&master, &wrapped, &data_key_aad(id))?);
        let key = SecretKey::from_bytes(&raw).ok_or_else(|| anyhow!("data key {id} has the wrong length"))?;
        if let Ok(mut m) = self.data_keys.write() {
            m.insert(id.to_string(), key.clone());
        }
        Ok(key)
    }

    /// Seals one secret version under the active data key; returns (data key id, sealed bytes).
    pub async fn seal(
        &self,
        tx: &mut Tx,
        tenant: &str,
        key: &str,
        version: i64,
        plaintext: &[u8],
    ) -> Result<(String, Vec<u8>)> {
        let id: String = sqlx::query("SELECT id FROM data_keys WHERE active = 1")
            .fetch_optional(&mut **tx)
            .await?
            .map(|r| r.get(0))
            .ok_or_else(|| anyhow!("no active data key"))?;
        let dk = self.data_key(tx, &id).await?;
        Ok((id, seal_with(&dk, plaintext, &secret_aad(tenant, key, version))?))
    }

    /// Opens one secret version; fails if the sealed bytes belong to another row. `db` reads the
    /// data key when it is not cached (data keys never change once written).
    pub async fn open(
        &self,
        db: &mut AnyConnection,
        data_key_id: &str,
        tenant: &str,
        key: &str,
        version: i64,
        sealed: &[u8],
    ) -> Result<Vec<u8>> {
        let dk = self.data_key(db, data_key_id).await?;
        open_with(&dk, sealed, &secret_aad(tenant, key, version))
    }
}

/// `specwright keys rotate`: a new primary master key, every data key re-wrapped under it, and a
/// new active data key. Old master keys stay in the file so running servers can still unwrap
/// what they cached; old data keys stay so every old version still decrypts.
pub async fn rotate(store: &Store, data_dir: &Path) -> Result<RotationReport> {
    rotate_with_progress(store, data_dir, |_, _| {}).await
}

/// As [`rotate`], calling `progress(done, total)` as data keys are re-wrapped: once before the
/// first, then after every hundredth and the last.
pub async fn rotate_with_progress(
    store: &Store,
    data_dir: &Path,
    progress: impl Fn(usize, usize),
) -> Result<RotationReport> {
    let source = master_key_source(data_dir)?;
    let MasterKeySource::File(path) = &source else {
        bail!("SPECWRIGHT_MASTER_KEY is set: key rotation works on the master key file; unset it to rotate");
    };
    let old = read_master_keys(&source)?;
    let new_id = format!("mk-{}", now_ms());
    let new_key = SecretKey::random();
    let line = key_line(&new_id, &new_key);
    let kept = Zeroizing::new(std::fs::read_to_string(path)?);
    // Sized up front: a growing string would leave copies of the keys behind in freed memory.
    let mut text = Zeroizing::new(String::with_capacity(line.len() + kept.len()));
    text.push_str(&line);
    text.push_str(&kept);
    let mut tx = store.begin().await?;
    let rows = sqlx::query("SELECT id, master_key_id, wrapped FROM data_keys").fetch_all(&mut *tx).await?;
    let mut rewrapped = 0;
    let total = rows.len();
    progress(0, total);
    for row in rows {
        let id: String = row.get(0);
        let master_id: String = row.get(1);
        let wrapped: Vec<u8> = row.get(2);
        let master = old
            .iter()
            .find(|(k, _)| *k == master_id)
            .map(|(_, v)| v)
            .ok_or_else(|| anyhow!("master key {master_id} is missing from {}", path.display()))?;
        let raw = Zeroizing::new(open_with(master, &wrapped, &data_key_aad(&id))?);
        let again = seal_with(&new_key, &raw, &data_key_aad(&id))?;
        sqlx::query("UPDATE data_keys SET master_key_id = $1, wrapped = $2 WHERE id = $3")
            .bind(&new_id)
            .bind(again)
            .bind(&id)
            .execute(&mut *tx)
            .await?;
        rewrapped += 1;
        if rewrapped % 100 == 0 || rewrapped == total {
            progress(rewrapped, total);
        }
    }
    // Write the key file before committing: if the commit fails, the extra key is harmless; the
    // other order could leave data keys wrapped by a key no file holds.
    runtime::files::replace_private(path, text.as_bytes())?;
    let ring = Keyring {
        source: source.clone(),
        masters: RwLock::new(read_master_keys(&source)?),
        data_keys: RwLock::new(HashMap::new()),
    };
    let data_key = ring.create_data_key(&mut tx).await?;
    tx.commit().await?;
    Ok(RotationReport { master_key: new_id, data_key, rewrapped })
}

/// What a rotation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotationReport {
    /// The new primary master key's id.
    pub master_key: String,
    /// The new active data key's id.
    pub data_key: String,
    /// Data keys re-wrapped under the new master key.
    pub rewrapped: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn master_keys_never_print_and_must_be_32_bytes() {
        let b64 = STANDARD.encode([7u8; 32]);
        let source = MasterKeySource::Env(Zeroizing::new(b64.clone()));
        assert_eq!(format!("{source:?}"), "Env(..)");
        assert_eq!(format!("{:?}", parse_key(&b64).unwrap()), "SecretKey(..)");
        let short = parse_key(&STANDARD.encode([7u8; 31])).unwrap_err().to_string();
        assert!(short.contains("must be 32 bytes"), "{short}");
        assert!(key_line("mk-1", &parse_key(&b64).unwrap()).starts_with(&format!("mk-1 {b64}")));
    }

    // Two processes starting on a new data directory must not each make a master key, one
    // overwriting the other's after data keys were sealed under it.
    #[test]
    fn starters_racing_on_a_new_directory_share_one_master_key() {
        if std::env::var_os("SPECWRIGHT_MASTER_KEY").is_some() {
            return;
        }
        for _ in 0..10 {
            let dir = tempfile::tempdir().unwrap();
            let files: Vec<String> = std::thread::scope(|s| {
                let starters: Vec<_> = (0..8)
                    .map(|_| {
                        s.spawn(|| match master_key_source(dir.path()).unwrap() {
                            MasterKeySource::File(path) => std::fs::read_to_string(path).unwrap(),
                            MasterKeySource::Env(_) => unreachable!("no key in the environment"),
                        })
                    })
                    .collect();
                starters.into_iter().map(|t| t.join().unwrap()).collect()
            });
            assert!(files.iter().all(|f| *f == files[0] && f.starts_with("mk-")), "{files:?}");
        }
    }

    #[test]
    fn a_sealed_value_opens_only_with_its_own_associated_data() {
        let k = SecretKey::random();
        let sealed = seal_with(&k, b"hunter2", &secret_aad("acme", "db", 1)).unwrap();
        assert_eq!(open_with(&k, &sealed, &secret_aad("acme", "db", 1)).unwrap(), b"hunter2");
        for (t, key, v) in [("other", "db", 1), ("acme", "db2", 1), ("acme", "db", 2), ("acm", "edb", 1)] {
            assert!(open_with(&k, &sealed, &secret_aad(t, key, v)).is_err(), "({t}, {key}, {v}) must not open it");
        }
        assert!(open_with(&SecretKey::random(), &sealed, &secret_aad("acme", "db", 1)).is_err(), "another key");
    }

    #[test]
    fn nonces_do_not_repeat() {
        let k = SecretKey::random();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            let s = seal_with(&k, b"x", b"a").unwrap();
            assert!(seen.insert(s[..NONCE_LEN].to_vec()), "nonce repeated");
        }
    }
}
