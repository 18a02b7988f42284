//! The server's tool threads: toolsmith's [`ToolPool`] with the server's spin, and the note of
//! when a worker picks a call up.
//!
//! The pool runs the server's blocking tools (sync functions, which may block for seconds): the
//! registry hands each such call to it through [`toolsmith::Offload`], and awaits its answer on
//! the executor. Async tools never come here; they are awaited where the request is handled.
//! The pool itself (bounded threads, a queue at the limit, idle workers ending) is the facade's,
//! shared with the agent; what is the server's own is how long a worker that runs dry spins
//! ([`SPIN`]), and the pick-up note the server's wait for the answer reads.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use toolsmith::ToolPool;

/// How long a worker that ran dry keeps looking before it parks.
///
/// Long enough to cover a client's turn around (read an answer, send the next call) on a
/// loaded machine; short enough that a pipelining client, whose next burst comes later, loses
/// little CPU to it. Spinning, not yielding: a yielding thread behind a busy process of lower
/// priority gets its CPU back only when that one's slice ends.
const SPIN: Duration = Duration::from_micros(100);

/// The threads the server's blocking tools run on, at most `max_threads` of them.
pub(crate) struct ServerPool(ToolPool);

impl ServerPool {
    pub(crate) fn new(max_threads: usize) -> Self {
        ServerPool(ToolPool::new(max_threads).with_spin(SPIN))
    }

    /// Whether a worker that runs dry spins (more than one CPU for the process): whether the
    /// server's polling for a blocking tool's answer can pay.
    pub(crate) fn spins(&self) -> bool {
        self.0.spins()
    }
}

impl toolsmith::Offload for ServerPool {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) -> Result<(), String> {
        let picked_up = PICK_UP.with(|flag| flag.borrow_mut().take());
        let job = move || {
            if let Some(picked_up) = picked_up {
                picked_up.store(true, Ordering::Release);
            }
            job();
        };
        self.0
            .execute(job)
            .map_err(|error| format!("the server could not start a thread for it ({error})"))
    }
}

thread_local! {
    /// The flag the next job offloaded from this thread sets when a worker picks it up.
    static PICK_UP: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Runs `call` (which makes a call through the registry), so that a job it offloads to a pool
/// at once sets `picked_up` when a worker takes it: how the server knows whether a thread is
/// already running its call, and so how long polling for the answer can pay. A job offloaded
/// later (a layer that made the call wait) sets nothing, which only shortens the polling.
pub(crate) fn noting_pick_up<R>(picked_up: &Arc<AtomicBool>, call: impl FnOnce() -> R) -> R {
    PICK_UP.with(|flag| *flag.borrow_mut() = Some(Arc::clone(picked_up)));
    let made = call();
    PICK_UP.with(|flag| flag.borrow_mut().take());
    made
}
