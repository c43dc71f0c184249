//! Server child processes: start one, wait for the URL it prints as its first stdout line, read
//! its memory and CPU time, and kill it when dropped.

use std::fs::File;
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::procfs;

/// How long a server may take to print its URL.
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long a server may take to stop after SIGTERM.
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// A running server child process.
pub(crate) struct ServerProcess {
    child: Child,
    /// Kept open so the child never writes to a closed pipe.
    _stdout: ChildStdout,
    url: String,
    name: String,
}

impl ServerProcess {
    /// Starts `command` (its stderr goes to `log`) and waits for its first stdout line, the URL.
    pub(crate) fn start(name: &str, mut command: Command, log: &Path) -> Result<Self, String> {
        let log_file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            return Err(format!("{name}: no stdout"));
        };
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let read = reader.read_line(&mut line).map(|_| line.trim().to_owned());
            let _ = sender.send((read, reader.into_inner()));
        });
        let (line, stdout) = match receiver.recv_timeout(START_LIMIT) {
            Ok((Ok(line), stdout)) if line.starts_with("http://") => (line, stdout),
            other => {
                let _ = child.kill();
                let _ = child.wait();
                let seen = match other {
                    Ok((Ok(line), _)) => format!("printed {line:?}"),
                    Ok((Err(e), _)) => e.to_string(),
                    Err(_) => "timed out".to_owned(),
                };
                return Err(format!(
                    "{name} did not print its URL ({seen}); see {}",
                    log.display()
                ));
            }
        };
        Ok(ServerProcess {
            child,
            _stdout: stdout,
            url: line,
            name: name.to_owned(),
        })
    }

    /// The URL the server printed (`http://127.0.0.1:<port>/mcp`).
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The process id (of the server itself: `taskset -c` execs it in place).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server at once (SIGKILL, as `kill -9` does: no graceful stop, no hand-over)
    /// and reaps it; returns the instant just before the signal was sent.
    pub(crate) fn kill(&mut self) -> Result<tokio::time::Instant, String> {
        let at = tokio::time::Instant::now();
        self.child
            .kill()
            .map_err(|e| format!("kill -9 {}: {e}", self.name))?;
        self.child
            .wait()
            .map_err(|e| format!("reap {}: {e}", self.name))?;
        Ok(at)
    }

    /// Resident memory in bytes.
    pub(crate) fn rss(&self) -> Result<u64, String> {
        procfs::rss_bytes(self.pid()).map_err(|e| format!("{}: VmRSS: {e}", self.name))
    }
}

impl Drop for ServerProcess {
    /// Asks the server to stop (SIGTERM, so it shuts down gracefully and tools such as
    /// valgrind wrapped around it write their reports), then kills it after [`STOP_LIMIT`].
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return; // already reaped (killed): its pid may be another process's by now
        }
        let asked = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        let deadline = std::time::Instant::now() + STOP_LIMIT;
        while asked && std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
