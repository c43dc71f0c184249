//! Where a node draws its randomness: one source per runtime
//!
//! The design notes are on [`Randomness`](crate::Randomness).

use std::sync::{Arc, Mutex};

use rand::{Rng as _, SeedableRng as _};

/// A source of random bytes.
pub trait Entropy: Send + Sync + 'static {
    /// Fills `bytes` with random bytes.
    ///
    /// # Errors
    /// When the source has nothing to give (an operating system without a random source).
    fn fill(&self, bytes: &mut [u8]) -> Result<(), EntropyError>;
}

/// The source had no randomness to give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no randomness available: {0}")]
pub struct EntropyError(pub String);

/// The operating system's CSPRNG (`getrandom`): the default source.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsEntropy;

impl Entropy for OsEntropy {
    fn fill(&self, bytes: &mut [u8]) -> Result<(), EntropyError> {
        getrandom::fill(bytes).map_err(|error| EntropyError(error.to_string()))
    }
}

/// A repeatable sequence of bytes from a seed (ChaCha12, `rand`'s `StdRng`), for tests: the
/// same seed draws the same task ids, node ids and nonces in the same order. Never use it in
/// production: whoever knows the seed knows every id and key.
#[derive(Debug)]
pub struct SeededEntropy {
    rng: Mutex<rand::rngs::StdRng>,
}

impl SeededEntropy {
    /// The sequence of `seed`.
    pub fn new(seed: u64) -> Self {
        SeededEntropy {
            rng: Mutex::new(rand::rngs::StdRng::seed_from_u64(seed)),
        }
    }
}

impl Entropy for SeededEntropy {
    fn fill(&self, bytes: &mut [u8]) -> Result<(), EntropyError> {
        crate::lock::lock(&self.rng).fill_bytes(bytes);
        Ok(())
    }
}

/// A shared handle on a runtime's [`Entropy`] source: cheap to clone, equal to its clones
/// (two handles are equal when they share one source). `Default` is [`OsEntropy`].
///
/// # One source per runtime
///
/// Where a node draws its randomness: one source per runtime
/// ([`RuntimeConfig::entropy`](crate::RuntimeConfig::entropy)), used for every task id, node
/// id, key, nonce and session id the runtime or its transport draws, so a test can make them
/// all repeatable with one seed.
///
/// The default is the operating system's CSPRNG ([`OsEntropy`]). [`SeededEntropy`] draws a
/// repeatable sequence from a seed: for tests only (its output is predictable to anyone who
/// knows the seed, and two runtimes seeded alike draw the same task ids).
#[derive(Clone)]
pub struct Randomness(Arc<dyn Entropy>);

impl Randomness {
    /// A handle on `source`.
    pub fn new(source: impl Entropy) -> Self {
        Randomness(Arc::new(source))
    }

    /// Fills `bytes` from the source.
    ///
    /// # Errors
    /// When the source has nothing to give.
    pub fn fill(&self, bytes: &mut [u8]) -> Result<(), EntropyError> {
        self.0.fill(bytes)
    }

    /// `N` fresh random bytes.
    ///
    /// # Errors
    /// When the source has nothing to give.
    pub fn bytes<const N: usize>(&self) -> Result<[u8; N], EntropyError> {
        let mut bytes = [0u8; N];
        self.fill(&mut bytes)?;
        Ok(bytes)
    }
}

impl Default for Randomness {
    fn default() -> Self {
        Randomness::new(OsEntropy)
    }
}

impl PartialEq for Randomness {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Randomness {}

impl std::fmt::Debug for Randomness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Randomness(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_draws_the_same_bytes_every_time() {
        let a = Randomness::new(SeededEntropy::new(7));
        let b = Randomness::new(SeededEntropy::new(7));
        let first: [u8; 16] = a.bytes().unwrap();
        assert_eq!(first, b.bytes::<16>().unwrap());
        assert_ne!(first, a.bytes::<16>().unwrap(), "the sequence moves on");
        assert_ne!(
            first,
            Randomness::new(SeededEntropy::new(8))
                .bytes::<16>()
                .unwrap()
        );
    }

    #[test]
    fn the_os_source_draws_distinct_bytes() {
        let os = Randomness::default();
        assert_ne!(os.bytes::<16>().unwrap(), os.bytes::<16>().unwrap());
    }

    #[test]
    fn handles_are_equal_to_their_clones_only() {
        let a = Randomness::default();
        assert_eq!(a, a.clone());
        assert_ne!(a, Randomness::default());
    }
}
