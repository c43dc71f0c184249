//! Ctrl-C as a stream of events, registered once at start (so a Ctrl-C is never the default
//! "kill the process" once a task may exist).

/// The interrupt signal.
#[derive(Debug)]
pub(crate) struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupts {
    /// Registers for Ctrl-C (SIGINT).
    pub(crate) fn new() -> std::io::Result<Self> {
        Ok(Interrupts {
            #[cfg(unix)]
            signal: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?,
        })
    }

    /// The next Ctrl-C.
    pub(crate) async fn next(&mut self) {
        #[cfg(unix)]
        self.signal.recv().await;
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}
