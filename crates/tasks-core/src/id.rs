//! Task identifiers.

use std::fmt;
use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::protocol::MAX_TASK_ID_BYTES;

/// Number of random bytes in a server-minted task id (encodes to 32 base64url characters).
pub const TASK_ID_RANDOM_BYTES: usize = 24;

/// Why a string is not a valid [`TaskId`]; each maps to a fixed -32602 message (the messages
/// and the 256-byte limit are this server's choice; see [`crate::plan::parse_task_ref`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskIdError {
    /// The id is the empty string.
    #[error("A non-empty taskId is required")]
    Empty,
    /// The id is longer than [`MAX_TASK_ID_BYTES`] (256) bytes.
    #[error("taskId is longer than 256 bytes")]
    TooLong,
}

/// A task id: a non-empty string of at most 256 bytes.
///
/// Server-minted ids come from [`TaskId::from_random_bytes`]: 24 random bytes (the caller draws
/// them from a CSPRNG) encoded as base64url without padding, 32 characters. Ids received from
/// clients are only length-checked; any other content is simply an unknown id.
///
/// A clone shares the text: the store's key, the task, the runtime's maps and every status
/// event hold one allocation per id between them.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(Arc<str>);

impl TaskId {
    /// Validates a client-supplied id.
    ///
    /// # Errors
    /// [`TaskIdError::Empty`] or [`TaskIdError::TooLong`].
    pub fn parse(value: &str) -> Result<Self, TaskIdError> {
        if value.is_empty() {
            Err(TaskIdError::Empty)
        } else if value.len() > MAX_TASK_ID_BYTES {
            Err(TaskIdError::TooLong)
        } else {
            Ok(TaskId(value.into()))
        }
    }

    /// Mints an id from caller-supplied random bytes (base64url, no padding).
    pub fn from_random_bytes(bytes: [u8; TASK_ID_RANDOM_BYTES]) -> Self {
        TaskId(URL_SAFE_NO_PAD.encode(bytes).into())
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TaskId({:?})", &*self.0)
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for TaskId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for TaskId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl Serialize for TaskId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        TaskId::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_ids_are_32_url_safe_characters() {
        let id = TaskId::from_random_bytes([0xfb; TASK_ID_RANDOM_BYTES]);
        assert_eq!(id.as_str().len(), 32);
        assert_eq!(id.as_str(), "-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7");
    }

    #[test]
    fn length_bounds() {
        assert_eq!(TaskId::parse(""), Err(TaskIdError::Empty));
        assert!(TaskId::parse(&"a".repeat(256)).is_ok());
        assert_eq!(TaskId::parse(&"a".repeat(257)), Err(TaskIdError::TooLong));
        // 86 three-byte characters are 258 bytes although only 86 chars.
        assert_eq!(TaskId::parse(&"€".repeat(86)), Err(TaskIdError::TooLong));
    }
}
