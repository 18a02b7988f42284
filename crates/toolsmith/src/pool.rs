//! [`ToolPool`]: a bounded pool of threads for blocking tools, the [`Offload`] the MCP server
//! and the agent share. Plain threads, a lock and a condition variable: no async runtime.
//!
//! A tool call is a job; below the thread limit, a job never waits behind another job. Whenever
//! a job is queued, some worker that is not running a job is on its way to take it: one already
//! looking (the spinner, or one just woken), else a parked worker is woken, else a new one is
//! started. Threads are bounded by the pool's limit; with every thread running a job, further
//! jobs wait in the queue, in order, and each worker takes the next one as its job ends. One
//! exception keeps the queue from deadlocking: a job queued by a job of the same pool (a sync
//! tool that runs an agent, whose sync tools come back here), while every thread is busy, gets
//! a thread of its own beyond the limit, since the thread that queued it waits for it.
//!
//! What makes it cheaper than a general-purpose blocking pool for short tool calls is that a
//! worker that runs dry may spin for a while ([`ToolPool::with_spin`]) before it parks, and
//! only one worker spins at a time (and none when the process may use only one CPU). A call
//! that comes within that window finds a thread already awake: no futex wake, no sleeping CPU to
//! rouse. A burst of calls is drained by the workers that are awake, each waking at most one
//! more, rather than one wake per call. A worker idle for [`KEEP_ALIVE`] ends.

use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::Offload;

/// How long a parked worker waits for a job before its thread ends.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

type Job = Box<dyn FnOnce() + Send + 'static>;

thread_local! {
    /// The pool this thread is a worker of (its address; 0 for none): what tells a job queued
    /// from inside one of the pool's own jobs.
    static WORKER_OF: Cell<usize> = const { Cell::new(0) };
}

/// A pool of threads for blocking tool calls, at most `max_threads` of them (see the module's
/// text for the one exception), each ending after ten seconds without a job. An
/// [`Offload`]: give it to [`Registry::with_offload`](crate::Registry::with_offload). Dropping
/// it lets idle workers end; a running job finishes first, and jobs still queued are run.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Arguments, Context, Registry, ToolPool};
///
/// /// Says hello.
/// #[toolsmith::tool]
/// fn greet(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// let mut registry = Registry::new().with_offload(Arc::new(ToolPool::new(4)));
/// registry.add(Arc::new(Greet))?;
/// let output = registry.call_blocking("greet", Arguments::Text(r#"{"name": "Ada"}"#), Context::new())?;
/// assert_eq!(output.as_text(), "Hello, Ada!");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ToolPool {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    /// Parked workers wait here for a wake token.
    wake: Condvar,
    /// Jobs in the queue, readable without the lock: what the spinner watches.
    queued: AtomicUsize,
    closed: AtomicBool,
    max_threads: usize,
    /// How long a worker that ran dry keeps looking before it parks (zero: not at all).
    spin: Duration,
    name: String,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    /// Workers alive.
    threads: usize,
    /// Workers parked on `wake`.
    parked: usize,
    /// Wakes given to parked workers and not yet taken.
    tokens: usize,
    /// Workers on their way to the queue: the spinner, and woken or new workers that have not
    /// yet looked. While one exists, a queued job needs no new wake.
    looking: usize,
}

/// Whether waiting by spinning can pay on this machine: only when this process may run on more
/// than one CPU (its affinity and CPU quota allowing). On one CPU a spinning thread holds the
/// very CPU the thread it waits for needs, and every spin is a loss.
fn spinning_pays() -> bool {
    static PAYS: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        std::thread::available_parallelism().is_ok_and(|cpus| cpus.get() > 1)
    });
    *PAYS
}

impl ToolPool {
    /// A pool of at most `max_threads` threads (at least one), none started yet, whose workers
    /// park as soon as they run dry.
    pub fn new(max_threads: usize) -> Self {
        ToolPool {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
                queued: AtomicUsize::new(0),
                closed: AtomicBool::new(false),
                max_threads: max_threads.max(1),
                spin: Duration::ZERO,
                name: "toolsmith-tool".to_owned(),
            }),
        }
    }

    /// The same pool, whose one worker that runs dry first spins for `spin` before it parks
    /// (none spins when the process may use only one CPU): for callers whose next call often
    /// comes within that time (an MCP client's next request), which then finds a thread awake
    /// instead of waking one. Set before the pool's first job.
    #[must_use]
    pub fn with_spin(mut self, spin: Duration) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.spin = spin;
        }
        self
    }

    /// The same pool, its threads named `name` (`toolsmith-tool` unless set). Set before the
    /// pool's first job.
    #[must_use]
    pub fn with_thread_name(mut self, name: impl Into<String>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.name = name.into();
        }
        self
    }

    /// Whether a worker of this pool spins when it runs dry: a spin is set, and the process
    /// may use more than one CPU. A caller waiting for a job's answer may then poll for it a
    /// while too, the job's thread being awake on another CPU.
    pub fn spins(&self) -> bool {
        !self.inner.spin.is_zero() && spinning_pays()
    }

    /// The most threads the pool starts (but for jobs queued by its own jobs).
    pub fn max_threads(&self) -> usize {
        self.inner.max_threads
    }

    /// The threads alive now, running a job or idle.
    pub fn threads(&self) -> usize {
        self.inner.lock().threads
    }

    /// Whether a job queued now would wait for another to end: every thread the pool may
    /// start is running a job. A caller whose jobs may block for long (or forever) can run
    /// a job elsewhere then, rather than queue it behind them.
    pub fn is_saturated(&self) -> bool {
        let state = self.inner.lock();
        state.threads >= self.inner.max_threads && state.parked + state.looking == 0
    }

    /// Queues `job` and makes sure a worker is on its way to it, or, with every thread running a
    /// job, that one will take it when its job ends.
    ///
    /// # Errors
    /// When no thread could be started for it and no thread is alive to take it later (the job
    /// is dropped).
    pub fn execute(&self, job: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
        let inner = &self.inner;
        let mut state = inner.lock();
        state.queue.push_back(Box::new(job));
        inner.queued.fetch_add(1, Ordering::Release);
        // A job of this pool's own waits for the job it queues: should every thread be busy,
        // the queue alone could leave every thread such a waiter.
        let nested = WORKER_OF.with(Cell::get) == inner.address();
        let started = inner.ensure_looking(&mut state, nested);
        if started.is_err() {
            state.queue.pop_back();
            inner.queued.fetch_sub(1, Ordering::Release);
        }
        started
    }
}

impl Offload for ToolPool {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) -> Result<(), String> {
        self.execute(job)
            .map_err(|error| format!("no thread could be started for the call ({error})"))
    }
}

impl fmt::Debug for ToolPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.lock();
        f.debug_struct("ToolPool")
            .field("max_threads", &self.inner.max_threads)
            .field("threads", &state.threads)
            .field("queued", &state.queue.len())
            .field("spin", &self.inner.spin)
            .finish()
    }
}

impl Drop for ToolPool {
    fn drop(&mut self) {
        self.inner.closed.store(true, Ordering::Release);
        let _state = self.inner.lock();
        self.inner.wake.notify_all();
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A job runs outside the lock and no code under it panics; a poisoned lock still holds
        // a consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn address(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// With jobs queued, makes sure one worker not running a job is on its way to them; with
    /// `beyond_limit`, starting a thread past the limit if need be.
    fn ensure_looking(
        self: &Arc<Self>,
        state: &mut State,
        beyond_limit: bool,
    ) -> std::io::Result<()> {
        if state.queue.is_empty() || state.looking > 0 {
            return Ok(());
        }
        if state.parked > state.tokens {
            state.tokens += 1;
            state.looking += 1;
            self.wake.notify_one();
            return Ok(());
        }
        if state.threads < self.max_threads || beyond_limit {
            let inner = Arc::clone(self);
            let started = std::thread::Builder::new()
                .name(self.name.clone())
                .spawn(move || inner.work());
            match started {
                Ok(_) => {
                    state.threads += 1;
                    state.looking += 1;
                }
                // Every live thread is running a job: the first to finish takes this one.
                Err(_) if state.threads > 0 => {}
                Err(error) => return Err(error),
            }
        }
        // At the limit every thread is running a job: the first to finish takes this one.
        Ok(())
    }

    /// A worker's life. It starts counted as looking.
    fn work(self: Arc<Self>) {
        WORKER_OF.with(|worker| worker.set(self.address()));
        let mut state = self.lock();
        loop {
            if let Some(job) = state.queue.pop_front() {
                self.queued.fetch_sub(1, Ordering::Release);
                state.looking -= 1;
                // What is left of the queue must not wait behind this job, below the limit.
                // Should no thread start, this one takes the rest once its job is done.
                let _ = self.ensure_looking(&mut state, false);
                drop(state);
                // The registry's job catches the tool's panic and sends it as the answer; this
                // keeps the worker (and the pool's count of threads) alive should any job
                // panic past that.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                state = self.lock();
                state.looking += 1;
                continue;
            }
            if self.closed.load(Ordering::Acquire) {
                state.looking -= 1;
                break;
            }
            // Dry. The only worker looking spins before it parks (with another CPU to run
            // the rest of the process on); any other parks at once.
            let dry = Instant::now();
            if state.looking == 1 && !self.spin.is_zero() && spinning_pays() {
                drop(state);
                self.spin(dry);
                state = self.lock();
                if !state.queue.is_empty() || self.closed.load(Ordering::Acquire) {
                    continue;
                }
            }
            state.looking -= 1;
            state.parked += 1;
            let deadline = Instant::now() + KEEP_ALIVE;
            let mut expired = false;
            while state.tokens == 0 && !self.closed.load(Ordering::Acquire) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    expired = true;
                    break;
                }
                state = self
                    .wake
                    .wait_timeout(state, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            state.parked -= 1;
            if state.tokens > 0 {
                // Woken: whoever gave the token counted this worker as looking.
                state.tokens -= 1;
            } else if expired || self.closed.load(Ordering::Acquire) {
                break;
            } else {
                state.looking += 1;
            }
        }
        state.threads -= 1;
    }

    /// Spins, without the lock, from `dry` until a job is queued, the pool closes, or the spin
    /// is over.
    fn spin(&self, dry: Instant) {
        while dry.elapsed() < self.spin
            && self.queued.load(Ordering::Acquire) == 0
            && !self.closed.load(Ordering::Acquire)
        {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::mpsc;

    use super::*;

    /// Long enough never to be reached unless the pool is broken.
    const NEVER: Duration = Duration::from_secs(20);

    fn pools(max_threads: usize) -> [ToolPool; 2] {
        [
            ToolPool::new(max_threads),
            ToolPool::new(max_threads).with_spin(Duration::from_micros(100)),
        ]
    }

    #[test]
    fn a_pool_is_saturated_only_while_every_thread_it_may_start_runs_a_job() {
        let pool = ToolPool::new(2);
        assert!(!pool.is_saturated(), "no thread started yet");
        let (release, held) = mpsc::channel::<()>();
        let held = Arc::new(Mutex::new(held));
        let (started, running) = mpsc::channel();
        for _ in 0..2 {
            let (held, started) = (Arc::clone(&held), started.clone());
            pool.execute(move || {
                started.send(()).unwrap();
                let _ = held.lock().unwrap().recv_timeout(NEVER);
            })
            .unwrap();
        }
        running.recv_timeout(NEVER).unwrap();
        running.recv_timeout(NEVER).unwrap();
        assert!(pool.is_saturated());
        release.send(()).unwrap();
        release.send(()).unwrap();
        let deadline = Instant::now() + NEVER;
        while pool.is_saturated() {
            assert!(Instant::now() < deadline, "the threads never came free");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn every_job_runs() {
        for pool in pools(4) {
            let (sent, received) = mpsc::channel();
            for i in 0..500 {
                let sent = sent.clone();
                pool.execute(move || sent.send(i).unwrap()).unwrap();
            }
            let mut seen: Vec<i32> = (0..500)
                .map(|_| received.recv_timeout(NEVER).unwrap())
                .collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..500).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_job_never_waits_behind_a_running_one() {
        // At the limit too: two threads, two jobs, the first of which waits for the second.
        for pool in pools(2) {
            for _ in 0..50 {
                let (second_ran, wait) = mpsc::channel();
                let (first_done, done) = mpsc::channel();
                pool.execute(move || first_done.send(wait.recv_timeout(NEVER)).unwrap())
                    .unwrap();
                pool.execute(move || second_ran.send(()).unwrap()).unwrap();
                assert_eq!(done.recv_timeout(NEVER).unwrap(), Ok(()));
            }
        }
    }

    #[test]
    fn jobs_run_at_once_up_to_the_limit_on_no_more_threads() {
        for pool in pools(3) {
            let barrier = Arc::new(std::sync::Barrier::new(3));
            let (sent, received) = mpsc::channel();
            for _ in 0..3 {
                let (barrier, sent) = (Arc::clone(&barrier), sent.clone());
                pool.execute(move || {
                    barrier.wait();
                    sent.send(()).unwrap();
                })
                .unwrap();
            }
            for _ in 0..3 {
                received.recv_timeout(NEVER).unwrap();
            }
            assert!(pool.threads() <= 3);
        }
    }

    #[test]
    fn jobs_beyond_the_limit_wait_for_a_thread_and_all_run() {
        for pool in pools(2) {
            let (release, released) = mpsc::channel::<()>();
            let released = Arc::new(Mutex::new(released));
            let (started, running) = mpsc::channel();
            for _ in 0..2 {
                let (released, started) = (Arc::clone(&released), started.clone());
                pool.execute(move || {
                    started.send(()).unwrap();
                    let released = released.lock().unwrap();
                    released.recv_timeout(NEVER).unwrap();
                })
                .unwrap();
            }
            for _ in 0..2 {
                running.recv_timeout(NEVER).unwrap();
            }
            let (sent, received) = mpsc::channel();
            for i in 0..100 {
                let sent = sent.clone();
                pool.execute(move || sent.send(i).unwrap()).unwrap();
            }
            // Both threads are taken: the queued jobs wait.
            assert_eq!(
                received.recv_timeout(Duration::from_millis(50)),
                Err(mpsc::RecvTimeoutError::Timeout)
            );
            release.send(()).unwrap();
            release.send(()).unwrap();
            let mut seen: Vec<i32> = (0..100)
                .map(|_| received.recv_timeout(NEVER).unwrap())
                .collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..100).collect::<Vec<_>>());
            assert!(pool.threads() <= 2);
        }
    }

    #[test]
    fn a_job_queued_by_a_job_of_a_full_pool_still_runs() {
        // One thread, taken by a job that waits for a job it queues: the queue alone would
        // never get to it.
        let pool = Arc::new(ToolPool::new(1));
        let (sent, received) = mpsc::channel();
        let inner_pool = Arc::clone(&pool);
        pool.execute(move || {
            let (inner_sent, inner_received) = mpsc::channel();
            inner_pool
                .execute(move || inner_sent.send("inner").unwrap())
                .unwrap();
            sent.send(inner_received.recv_timeout(NEVER)).unwrap();
        })
        .unwrap();
        assert_eq!(received.recv_timeout(NEVER).unwrap(), Ok("inner"));
    }

    #[test]
    fn a_panicking_job_costs_its_answer_only() {
        let pool = ToolPool::new(1);
        let (sent, received) = mpsc::channel::<()>();
        pool.execute(move || {
            let _sent = sent;
            panic!("a tool's bug");
        })
        .unwrap();
        assert_eq!(
            received.recv_timeout(NEVER),
            Err(mpsc::RecvTimeoutError::Disconnected)
        );
        let (sent, received) = mpsc::channel();
        pool.execute(move || sent.send(7).unwrap()).unwrap();
        assert_eq!(received.recv_timeout(NEVER), Ok(7));
    }

    #[test]
    fn dropping_the_pool_ends_its_threads() {
        for pool in pools(4) {
            let (sent, received) = mpsc::channel();
            for _ in 0..8 {
                let sent = sent.clone();
                pool.execute(move || sent.send(()).unwrap()).unwrap();
            }
            for _ in 0..8 {
                received.recv_timeout(NEVER).unwrap();
            }
            let inner = Arc::downgrade(&pool.inner);
            drop(pool);
            let deadline = Instant::now() + NEVER;
            while inner.upgrade().is_some() {
                assert!(Instant::now() < deadline, "a worker outlived its pool");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}
