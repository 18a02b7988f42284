//! Ctrl-C while `toolsmith call` runs a tool: [`Interrupt`] turns SIGINT into the call's
//! cancellation, and says when to stop waiting for the tool.
//!
//! The first SIGINT cancels the call's [`CancellationToken`] (the tool sees it through its
//! context); the command then waits for the tool to answer for up to [`GRACE`], or until a
//! second SIGINT. SIGINT is watched only while a call runs: outside one, it does what it did
//! before (ends the process), so a program that runs the CLI in-process keeps its Ctrl-C. While
//! the tool's question to the person at the terminal is open ([`Interrupt::prompting`]), SIGINT
//! ends the process at once too: a read of the terminal cannot be cancelled, and a person who
//! presses Ctrl-C at a prompt means to stop.

use std::time::Duration;

use toolsmith::CancellationToken;

/// How long a cancelled call has to answer before the command ends without its answer.
pub const GRACE: Duration = Duration::from_secs(2);

/// SIGINT watched for one call, until dropped.
pub struct Interrupt {
    /// Cancelled at the first SIGINT: give it to the call's context.
    cancel: CancellationToken,
    /// Cancelled [`GRACE`] after the first SIGINT, or at a second one: the command stops
    /// waiting for the tool.
    give_up: CancellationToken,
    /// The handler, held until the call ends (dropping it unregisters it).
    #[cfg(unix)]
    _watch: Option<unix::Watch>,
}

impl Interrupt {
    /// Starts watching SIGINT.
    ///
    /// # Errors
    /// When the handler or its watcher cannot be installed; the call can still run, and Ctrl-C
    /// then ends the process as it would have.
    pub fn watch() -> std::io::Result<Interrupt> {
        let cancel = CancellationToken::new();
        let give_up = CancellationToken::new();
        #[cfg(unix)]
        let watch = Some(unix::Watch::start(cancel.clone(), give_up.clone())?);
        Ok(Interrupt {
            cancel,
            give_up,
            #[cfg(unix)]
            _watch: watch,
        })
    }

    /// A watch of nothing: never interrupted.
    pub fn never() -> Interrupt {
        Interrupt {
            cancel: CancellationToken::new(),
            give_up: CancellationToken::new(),
            #[cfg(unix)]
            _watch: None,
        }
    }

    /// The call's cancellation.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// SIGINT's default action back (the process ends) until the returned guard is dropped:
    /// held while the terminal asks the person a tool's question.
    pub fn prompting(&self) -> Prompting {
        #[cfg(unix)]
        if self._watch.is_some() {
            unix::prompt_opened();
            return Prompting { open: true };
        }
        Prompting { open: false }
    }

    /// Whether SIGINT arrived.
    pub fn is_interrupted(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// `call`'s output, or `None` once the command gives up on it after an interrupt.
    pub async fn until_given_up<F: std::future::Future>(&self, call: F) -> Option<F::Output> {
        let mut call = std::pin::pin!(call);
        let mut give_up = std::pin::pin!(self.give_up.cancelled());
        std::future::poll_fn(|cx| {
            if let std::task::Poll::Ready(output) = call.as_mut().poll(cx) {
                return std::task::Poll::Ready(Some(output));
            }
            give_up.as_mut().poll(cx).map(|()| None)
        })
        .await
    }
}

/// A question open at the terminal, from [`Interrupt::prompting`]: SIGINT ends the process
/// while it lives.
pub struct Prompting {
    open: bool,
}

impl Drop for Prompting {
    fn drop(&mut self) {
        #[cfg(unix)]
        if self.open {
            unix::prompt_closed();
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::io::Read;
    use std::net::Shutdown;
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex, PoisonError};

    use signal_hook::consts::SIGINT;
    use signal_hook::{SigId, flag, low_level};
    use toolsmith::CancellationToken;

    use super::GRACE;

    /// The calls watching SIGINT in this process, the questions open at the terminal, and the
    /// flag that gives SIGINT its default action back when no call runs or a question is open.
    struct Watchers {
        running: usize,
        prompting: usize,
        /// True while no call runs, or a question is open; registered once, before any call's
        /// own handler.
        idle: Option<Arc<AtomicBool>>,
    }

    impl Watchers {
        /// Sets `idle` as the calls and questions now say.
        fn settle(&self) {
            if let Some(idle) = &self.idle {
                idle.store(self.running == 0 || self.prompting > 0, Ordering::SeqCst);
            }
        }
    }

    static WATCHERS: Mutex<Watchers> = Mutex::new(Watchers {
        running: 0,
        prompting: 0,
        idle: None,
    });

    /// A question opened at the terminal: SIGINT ends the process until it is closed.
    pub(super) fn prompt_opened() {
        let mut watchers = WATCHERS.lock().unwrap_or_else(PoisonError::into_inner);
        watchers.prompting += 1;
        watchers.settle();
    }

    /// The question answered (or given up): SIGINT cancels the call again.
    pub(super) fn prompt_closed() {
        let mut watchers = WATCHERS.lock().unwrap_or_else(PoisonError::into_inner);
        watchers.prompting = watchers.prompting.saturating_sub(1);
        watchers.settle();
    }

    /// One call's handler: a byte written to a socket at each SIGINT, read by a thread.
    pub(super) struct Watch {
        id: SigId,
        /// The reading end, to wake the thread at the end of the call.
        reader: UnixStream,
    }

    impl Watch {
        pub(super) fn start(
            cancel: CancellationToken,
            give_up: CancellationToken,
        ) -> std::io::Result<Watch> {
            let (mut read, write) = UnixStream::pair()?;
            let reader = read.try_clone()?;
            {
                let mut watchers = WATCHERS.lock().unwrap_or_else(PoisonError::into_inner);
                if watchers.idle.is_none() {
                    // Unregistering a handler leaves SIGINT ignored, not its default back:
                    // this one stays, and ends the process whenever no call runs.
                    let idle = Arc::new(AtomicBool::new(false));
                    flag::register_conditional_default(SIGINT, Arc::clone(&idle))?;
                    watchers.idle = Some(idle);
                }
                watchers.running += 1;
                watchers.settle();
            }
            let id = match low_level::pipe::register(SIGINT, write) {
                Ok(id) => id,
                Err(error) => {
                    finished();
                    return Err(error);
                }
            };
            let watching = std::thread::Builder::new()
                .name("toolsmith-sigint".to_owned())
                .spawn(move || {
                    if !next_signal(&mut read) {
                        return;
                    }
                    cancel.cancel();
                    // A second SIGINT, or the grace passing, ends the wait for the tool.
                    if read.set_read_timeout(Some(GRACE)).is_ok() {
                        next_signal(&mut read);
                    }
                    give_up.cancel();
                });
            let watch = Watch { id, reader };
            // On an error the watch is dropped, which unregisters the handler.
            watching.map(|_| watch)
        }
    }

    /// Waits for the next signal's byte: false at the end of the call (or a read error).
    fn next_signal(read: &mut UnixStream) -> bool {
        let mut byte = [0u8; 1];
        loop {
            match read.read(&mut byte) {
                Ok(n) => return n == 1,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    /// One call fewer watching; with none left, SIGINT ends the process again.
    fn finished() {
        let mut watchers = WATCHERS.lock().unwrap_or_else(PoisonError::into_inner);
        watchers.running = watchers.running.saturating_sub(1);
        watchers.settle();
    }

    impl Drop for Watch {
        fn drop(&mut self) {
            low_level::unregister(self.id);
            // The thread, waiting for a byte, reads the end of the stream.
            let _ = self.reader.shutdown(Shutdown::Both);
            finished();
        }
    }
}
