//! Server child processes: start one, wait for the URL it prints as its first stdout line, read
//! its memory, and stop it when dropped.

use std::fs::File;
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::procfs;

/// How long a server may take to print its URL, and to stop after SIGTERM.
const START_LIMIT: Duration = Duration::from_secs(30);
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// A running server child process, its stdout kept open so it never writes to a closed pipe.
pub(crate) struct ServerProcess {
    child: Child,
    _stdout: ChildStdout,
    url: String,
    name: String,
}

impl ServerProcess {
    /// Starts `command` (its stderr goes to `log`) and waits for its first stdout line, the URL.
    pub(crate) fn start(name: &str, mut command: Command, log: &Path) -> Result<Self, String> {
        let log_file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let command = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let stdout = child.stdout.take().ok_or(format!("{name}: no stdout"))?;
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let (mut reader, mut line) = (BufReader::new(stdout), String::new());
            let read = reader.read_line(&mut line).map(|_| line.trim().to_owned());
            let _ = sender.send((read, reader.into_inner()));
        });
        let seen = match receiver.recv_timeout(START_LIMIT) {
            Ok((Ok(url), _stdout)) if url.starts_with("http://") => {
                let name = name.to_owned();
                return Ok(ServerProcess {
                    child,
                    _stdout,
                    url,
                    name,
                });
            }
            Ok((Ok(line), _)) => format!("printed {line:?}"),
            Ok((Err(e), _)) => e.to_string(),
            Err(_) => "timed out".to_owned(),
        };
        let _ = child.kill();
        let _ = child.wait();
        Err(format!(
            "{name} did not print its URL ({seen}); see {}",
            log.display()
        ))
    }

    /// The URL the server printed (`http://127.0.0.1:<port>/mcp`).
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The process id (of the server itself: `taskset -c` execs it in place).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server at once (SIGKILL: no graceful stop, no hand-over) and reaps it; the
    /// instant just before the signal was sent.
    pub(crate) fn kill(&mut self) -> Result<tokio::time::Instant, String> {
        let at = tokio::time::Instant::now();
        let name = &self.name;
        self.child
            .kill()
            .map_err(|e| format!("kill -9 {name}: {e}"))?;
        self.child.wait().map_err(|e| format!("reap {name}: {e}"))?;
        Ok(at)
    }

    /// Resident memory in bytes.
    pub(crate) fn rss(&self) -> Result<u64, String> {
        procfs::rss_bytes(self.pid()).map_err(|e| format!("{}: {e}", self.name))
    }
}

impl Drop for ServerProcess {
    /// Asks the server to stop (SIGTERM, so it shuts down gracefully and tools such as
    /// valgrind wrapped around it write their reports), then kills it after [`STOP_LIMIT`].
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return; // already reaped (killed): its pid may be another process's by now
        }
        let term = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        let deadline = Instant::now() + STOP_LIMIT;
        while term.as_ref().is_ok_and(|s| s.success()) && Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
