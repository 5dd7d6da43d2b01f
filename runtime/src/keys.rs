//! The embedded authorization server's signing key: an Ed25519 key kept in the data directory
//! (created on first run, mode 0600), used to mint access tokens and to verify them.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::SigningKey;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey, spki::der::pem::LineEnding};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// File name of the signing key inside the data directory.
pub const KEY_FILE: &str = "signing-key.pem";

/// Claims of an access token minted by the embedded authorization server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    /// Issuer: the server's public URL.
    pub iss: String,
    /// The user.
    pub sub: String,
    /// Resources the token is for.
    pub aud: Vec<String>,
    /// Expiry, epoch seconds.
    pub exp: i64,
    /// Issued at, epoch seconds.
    pub iat: i64,
    /// Token id.
    pub jti: String,
    /// Space-separated scopes.
    pub scope: String,
    /// The user's tenant.
    pub tenant: String,
    /// Rate-limit plan (prospector), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

/// The signing key and what is derived from it.
pub struct SigningKeys {
    signing: SigningKey,
    encoding: EncodingKey,
    decoding: DecodingKey,
    kid: String,
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("SigningKeys").field("kid", &self.kid).finish_non_exhaustive()
    }
}

fn create_private_file(path: &Path, contents: &[u8]) -> Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).with_context(|| format!("creating {}", path.display()))?;
    f.write_all(contents)?;
    f.sync_all()?;
    Ok(())
}

impl SigningKeys {
    /// Loads the key from `data_dir`, creating the directory and a new key on first run.
    pub fn load_or_create(data_dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(data_dir).with_context(|| format!("creating data directory {}", data_dir.display()))?;
        let path: PathBuf = data_dir.join(KEY_FILE);
        if !path.exists() {
            let key = SigningKey::generate(&mut rand::rngs::OsRng);
            let pem = key.to_pkcs8_pem(LineEnding::LF).context("encoding the signing key")?;
            // Another process may have created it meanwhile; then use theirs.
            if let Err(e) = create_private_file(&path, pem.as_bytes())
                && !path.exists()
            {
                return Err(e);
            }
        }
        let pem = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let signing = SigningKey::from_pkcs8_pem(&pem)
            .with_context(|| format!("{} is not an Ed25519 PKCS#8 key", path.display()))?;
        Ok(Self::from_key(signing))
    }

    fn from_key(signing: SigningKey) -> Self {
        let der = signing.to_pkcs8_der().map(|d| d.as_bytes().to_vec()).unwrap_or_default();
        let public = signing.verifying_key().to_bytes();
        let kid = URL_SAFE_NO_PAD.encode(&Sha256::digest(public)[..12]);
        SigningKeys {
            encoding: EncodingKey::from_ed_der(&der),
            decoding: DecodingKey::from_ed_der(&public),
            kid,
            signing,
        }
    }

    /// Key id published in token headers and in the JWKS.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public key as a JWK.
    pub fn public_jwk(&self) -> serde_json::Value {
        let x = URL_SAFE_NO_PAD.encode(self.signing.verifying_key().to_bytes());
        serde_json::json!({ "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": self.kid, "x": x })
    }

    /// Signs `claims` as a compact JWT.
    pub fn mint(&self, claims: &Claims) -> Result<String> {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(self.kid.clone());
        header.typ = Some("at+jwt".into());
        jsonwebtoken::encode(&header, claims, &self.encoding).context("signing the token")
    }

    /// Verifies a JWT naming one of `audiences`, issued by `issuer`. Only EdDSA is accepted (so
    /// never `none`).
    pub fn verify(
        &self,
        token: &str,
        issuer: &str,
        audiences: &[String],
    ) -> Result<Claims, jsonwebtoken::errors::Error> {
        let mut v = Validation::new(Algorithm::EdDSA);
        v.set_issuer(&[issuer]);
        v.set_audience(audiences);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.leeway = 5;
        v.validate_nbf = true;
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &v).map(|d| d.claims)
    }
}

/// Builds the claims of a token minted by `specwright token`.
pub fn claims(
    issuer: &str,
    sub: &str,
    tenant: &str,
    scope: &str,
    audience: Vec<String>,
    ttl_seconds: i64,
    plan: Option<String>,
) -> Claims {
    let now = chrono::Utc::now().timestamp();
    Claims {
        iss: issuer.to_string(),
        sub: sub.to_string(),
        aud: audience,
        exp: now + ttl_seconds,
        iat: now,
        jti: uuid::Uuid::new_v4().to_string(),
        scope: scope.split_whitespace().collect::<Vec<_>>().join(" "),
        tenant: tenant.to_string(),
        plan,
    }
}
