//! Node identity and task leases.

use std::fmt;

/// One process incarnation: 16 random bytes drawn at start-up (never a host name or a pid,
/// which repeat across restarts). A node that lost its lease registers again under a new id.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId([u8; 16]);

impl NodeId {
    /// A node id from the OS random source.
    ///
    /// # Errors
    /// When the OS has no randomness to give.
    pub fn random() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)?;
        Ok(NodeId(bytes))
    }

    /// A node id with the given bytes (stores reading them back, tests).
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        NodeId(bytes)
    }

    /// The id's bytes.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeId({self})")
    }
}

/// A worker's right to write one task: the task's owner and generation as of the claim (or the
/// creation). `generation` is the fencing token: it grows by one at every takeover, so a write
/// carrying an older one is refused. `attempt` counts the runs of the task's tool that have
/// started (1 for the first run; a claim leaves it, the re-run's start raises it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// The node that holds the task.
    pub node: NodeId,
    /// The fencing token.
    pub generation: u64,
    /// Which run of the task this is (1 for the first); for a claim not yet started, the last
    /// run's.
    pub attempt: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_lowercase_hex() {
        let id = NodeId::from_bytes([0xab; 16]);
        assert_eq!(id.to_string(), "ab".repeat(16));
        assert_eq!(format!("{id:?}"), format!("NodeId({})", "ab".repeat(16)));
    }

    #[test]
    fn random_ids_differ() {
        assert_ne!(NodeId::random().unwrap(), NodeId::random().unwrap());
    }
}
