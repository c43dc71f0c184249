//! A server binary as a child process: its URL read from its first stdout line, signals sent
//! with `kill`, killed (SIGKILL) when dropped.
//!
//! Used by the fixture's tests (`tasks-fixture`) and `examples/rmcp-app`'s (`rmcp-app`): each
//! passes its binary, `env!("CARGO_BIN_EXE_…")`, to [`Fixture::start`]. Both print their URL
//! first and take the same store flags.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::client::Client;

/// A running server process (the fixture or `rmcp-app`); killed (SIGKILL) when dropped.
#[derive(Debug)]
pub struct Fixture {
    /// The process.
    pub child: Child,
    /// Its MCP endpoint, as it printed it.
    pub url: String,
    /// The file its stderr goes to.
    pub log: PathBuf,
}

impl Fixture {
    /// Starts `binary` with `args` (plus `--listen 127.0.0.1:0`), its stderr into `log`, and
    /// waits (up to 60 s) for the URL it prints.
    ///
    /// # Panics
    /// When it does not start; the panic shows its log.
    pub fn start(binary: &str, args: &[String], log: &Path) -> Fixture {
        let stderr = std::fs::File::create(log).expect("a log file");
        let mut child = Command::new(binary)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|error| panic!("{binary} does not start: {error}"));
        let stdout = child.stdout.take().expect("stdout");
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        match receiver.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line.starts_with("http://") => Fixture {
                child,
                url: line.trim().to_owned(),
                log: log.to_owned(),
            },
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{binary} printed no URL; its log:\n{}",
                    std::fs::read_to_string(log).unwrap_or_default()
                );
            }
        }
    }

    /// Sends `signal` (e.g. `KILL`, `STOP`, `CONT`, `TERM`) to the process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Waits (up to `limit`) for the process to exit; whether it did.
    pub fn wait_exit(&mut self, limit: Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A client of this node.
    pub fn client(&self) -> Client {
        Client::of_node(&self.url)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return; // already reaped: its pid may belong to another process by now
        }
        // A stopped process must be continued to die promptly.
        let _ = Command::new("kill")
            .arg("-CONT")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
