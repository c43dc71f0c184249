//! Ctrl-C, registered once at start. Where something can be cancelled or stopped cleanly (a
//! call in flight, a task being followed, a cancel being confirmed) the code [`arm`]s the
//! handler and the first Ctrl-C is handed to it ([`Interrupts::next`]); anywhere else, and
//! for any later Ctrl-C, the process ends at once with exit code 130.
//!
//! [`arm`]: Interrupts::arm

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::exit::Exit;

/// The interrupt signal.
#[derive(Debug)]
pub(crate) struct Interrupts {
    handed: mpsc::UnboundedReceiver<()>,
    armed: Arc<AtomicBool>,
}

impl Interrupts {
    /// Registers for Ctrl-C (SIGINT). Must run inside the tokio runtime.
    pub(crate) fn new() -> std::io::Result<Self> {
        #[cfg(unix)]
        let mut signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let (hand, handed) = mpsc::unbounded_channel();
        let armed = Arc::new(AtomicBool::new(false));
        let flag = armed.clone();
        tokio::spawn(async move {
            let mut first = true;
            loop {
                #[cfg(unix)]
                if signal.recv().await.is_none() {
                    return;
                }
                #[cfg(not(unix))]
                if tokio::signal::ctrl_c().await.is_err() {
                    return;
                }
                if first && flag.load(Ordering::SeqCst) {
                    first = false;
                    let _ = hand.send(());
                } else {
                    crate::say!("\nInterrupted.");
                    std::process::exit(i32::from(Exit::Interrupted as u8));
                }
            }
        });
        Ok(Interrupts { handed, armed })
    }

    /// From now on the first Ctrl-C goes to [`Interrupts::next`] instead of ending the process.
    pub(crate) fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    /// The first Ctrl-C after [`Interrupts::arm`] (never, if not armed).
    pub(crate) async fn next(&mut self) {
        if self.handed.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}
