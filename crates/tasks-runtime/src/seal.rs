//! The caller of a task, carried with its work sealed: a tool reads it as
//!
//! The design notes are on [`SealedPrincipal`](crate::SealedPrincipal).

use std::fmt;

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::scope::{Principal, Scope};

/// Bytes of the random nonce of each seal (XChaCha20-Poly1305's extended nonce).
pub const NONCE_BYTES: usize = 24;

/// The key that seals principals into stored work. Keep it as stable as the scope key: a task
/// re-run under another key sees no principal. It is never written to a store.
#[derive(Clone, PartialEq, Eq)]
pub struct PrincipalKey([u8; 32]);

impl fmt::Debug for PrincipalKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrincipalKey(..)")
    }
}

impl PrincipalKey {
    /// A key of 32 bytes (draw them from the OS random source).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        PrincipalKey(bytes)
    }

    /// A key derived from secret bytes (any length), e.g. the contents of the secret file the
    /// nodes of a server share: `HMAC-SHA256(secret, "mcp-tasks principal key v1")`,
    /// independent of the scope and `requestState` keys derived from the same secret.
    pub fn from_secret(secret: &[u8]) -> Self {
        let mut mac = <Hmac<Sha256> as hmac::KeyInit>::new_from_slice(secret)
            .expect("HMAC takes keys of any length");
        mac.update(b"mcp-tasks principal key v1");
        PrincipalKey(mac.finalize().into_bytes().into())
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(&self.0.into())
    }

    /// `principal` sealed for work owned by `scope`, with `nonce` (random, never reused with
    /// this key).
    pub fn seal(
        &self,
        principal: &Principal,
        scope: &Scope,
        nonce: [u8; NONCE_BYTES],
    ) -> SealedPrincipal {
        let payload = Payload {
            msg: principal.as_str().as_bytes(),
            aad: scope.as_str().as_bytes(),
        };
        let sealed = self
            .cipher()
            .encrypt(&XNonce::from(nonce), payload)
            .expect("XChaCha20-Poly1305 seals any message a principal can be");
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        SealedPrincipal(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }

    /// The principal `sealed` holds, when it was sealed under this key for `scope` and is
    /// intact; `None` otherwise (another key, another scope, altered or malformed text).
    pub fn open(&self, sealed: &SealedPrincipal, scope: &Scope) -> Option<Principal> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&sealed.0)
            .ok()?;
        if bytes.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let nonce: [u8; NONCE_BYTES] = nonce.try_into().ok()?;
        let payload = Payload {
            msg: ciphertext,
            aad: scope.as_str().as_bytes(),
        };
        let opened = self.cipher().decrypt(&XNonce::from(nonce), payload).ok()?;
        String::from_utf8(opened).ok().map(Principal::new)
    }
}

/// A principal sealed by [`PrincipalKey::seal`]: base64url text (no padding) of the 24-byte
/// nonce, the ciphertext and the 16-byte tag. What a store keeps in the work descriptor
/// (`sealedPrincipal`); it reveals only the principal's length.
///
/// # How it is sealed
///
/// The caller of a task, carried with its work sealed: a tool reads it as
/// [`ToolContext::principal`](crate::ToolContext::principal), on its first run and on a re-run
/// after recovery, while a store never holds it in clear.
///
/// A [`Principal`] is sealed with XChaCha20-Poly1305 under a [`PrincipalKey`] (derived from the
/// server secret, like the scope key), with a random 24-byte nonce and the task's scope as
/// associated data, so a sealed principal copied into another scope's work does not open. The
/// stored form ([`SealedPrincipal`]) is base64url without padding of the nonce followed by the
/// ciphertext and its 16-byte tag. A re-run whose key differs from the one that sealed (a
/// rotated secret, or a process without a stable secret) sees no principal.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SealedPrincipal(String);

impl fmt::Debug for SealedPrincipal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SealedPrincipal(len={})", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONCE: [u8; NONCE_BYTES] = [7; NONCE_BYTES];

    #[test]
    fn a_sealed_principal_opens_only_under_its_key_and_scope() {
        let key = PrincipalKey::from_secret(b"server secret");
        let scope = Scope::new("scope-of-alice");
        let sealed = key.seal(&Principal::new("alice@example.com"), &scope, NONCE);
        assert_eq!(
            key.open(&sealed, &scope).map(|p| p.as_str().to_owned()),
            Some("alice@example.com".to_owned())
        );
        let text = serde_json::to_string(&sealed).unwrap();
        assert!(!text.contains("alice"), "{text}");
        // 24 nonce bytes + 17 message bytes + 16 tag bytes, base64url: 76 characters.
        assert_eq!(text.len(), 76 + 2);
        assert_eq!(key.open(&sealed, &Scope::new("scope-of-bob")), None);
        let rotated = PrincipalKey::from_secret(b"another secret");
        assert_eq!(rotated.open(&sealed, &scope), None);
        let mut altered: String = serde_json::from_str(&text).unwrap();
        let last = if altered.ends_with('A') { "B" } else { "A" };
        altered.replace_range(altered.len() - 1.., last);
        let altered: SealedPrincipal =
            serde_json::from_value(serde_json::Value::String(altered)).unwrap();
        assert_eq!(key.open(&altered, &scope), None);
        let short: SealedPrincipal = serde_json::from_str("\"AAAA\"").unwrap();
        assert_eq!(key.open(&short, &scope), None);
        let garbage: SealedPrincipal = serde_json::from_str("\"not base64!\"").unwrap();
        assert_eq!(key.open(&garbage, &scope), None);
    }

    #[test]
    fn each_nonce_gives_another_text() {
        let key = PrincipalKey::from_secret(b"server secret");
        let scope = Scope::shared();
        let alice = Principal::new("alice");
        let one = key.seal(&alice, &scope, [1; NONCE_BYTES]);
        let two = key.seal(&alice, &scope, [2; NONCE_BYTES]);
        assert_ne!(one, two);
        assert_eq!(
            key.open(&two, &scope).map(|p| p.as_str().to_owned()),
            Some("alice".into())
        );
    }
}
