//! Log levels of `notifications/message` (MCP 2026-07-28 logging, "Log Levels" and "Per-request
//! log level": <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging>;
//! RFC 5424 severities).
//!
//! A request opts into log notifications with `_meta["io.modelcontextprotocol/logLevel"]`;
//! without it the server sends none for that request. Messages below the requested level are
//! not sent.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A syslog severity, ordered from least (`Debug`) to most severe (`Emergency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The wire spelling (`"debug"` … `"emergency"`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text is not one of the eight level names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown log level")]
pub struct UnknownLogLevel;

impl FromStr for LogLevel {
    type Err = UnknownLogLevel;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == text)
            .ok_or(UnknownLogLevel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order_by_severity() {
        for level in LogLevel::ALL {
            assert_eq!(level.as_str().parse::<LogLevel>(), Ok(level));
            assert_eq!(serde_json::to_value(level).unwrap(), level.as_str());
        }
        assert!(LogLevel::Debug < LogLevel::Info && LogLevel::Alert < LogLevel::Emergency);
        assert_eq!("INFO".parse::<LogLevel>(), Err(UnknownLogLevel));
        assert_eq!("".parse::<LogLevel>(), Err(UnknownLogLevel));
    }
}
