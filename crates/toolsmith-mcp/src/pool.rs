//! [`ToolPool`]: the threads tools run on, off the async executor's.
//!
//! The pool runs the server's blocking tools (sync functions, which may block for seconds): the
//! registry hands each such call to it through [`toolsmith::Offload`], and awaits its answer on
//! the executor. Async tools never come here; they are awaited where the request is handled.
//!
//! A tool call is a job; below the thread limit, a job never waits behind another job. Whenever
//! a job is queued, some worker that is not running a job is on its way to take it: one already
//! looking (the spinner, or one just woken), else a parked worker is woken, else a new one is
//! started. Threads are bounded by the caller's concurrency limit; with every thread running a
//! job, further jobs wait in the queue, in order, and each worker takes the next one as its job
//! ends. (The server bounds how many jobs it queues.)
//!
//! What makes it cheaper than a general-purpose blocking pool for short tool calls is that a
//! worker that runs dry spins for up to 100 µs before it parks, and only one worker spins
//! at a time (and none when the process may use only one CPU). A client that sends its next call within that window finds a thread already
//! awake: no futex wake, no sleeping CPU to rouse. A burst of calls is drained by the workers
//! that are awake, each waking at most one more, rather than one wake per call.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How long a worker that ran dry keeps looking before it parks.
///
/// Long enough to cover a client's turn around (read an answer, send the next call) on a
/// loaded machine; short enough that a pipelining client, whose next burst comes later, loses
/// little CPU to it. Spinning, not yielding: a yielding thread behind a busy process of lower
/// priority gets its CPU back only when that one's slice ends.
const SPIN: Duration = Duration::from_micros(100);

/// Whether waiting by spinning can pay on this machine: only when this process may run on more
/// than one CPU (its affinity and CPU quota allowing). On one CPU a spinning thread holds the
/// very CPU the thread it waits for needs, and every spin is a loss.
pub(crate) fn spinning_pays() -> bool {
    static PAYS: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        std::thread::available_parallelism().is_ok_and(|cpus| cpus.get() > 1)
    });
    *PAYS
}

/// How long a parked worker waits for a job before its thread ends.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

type Job = Box<dyn FnOnce() + Send + 'static>;

/// A pool of threads for tool calls, at most `max_threads` of them. Dropping it lets idle
/// workers end; a running job finishes first.
pub(crate) struct ToolPool {
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

impl ToolPool {
    pub(crate) fn new(max_threads: usize) -> Self {
        ToolPool {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
                queued: AtomicUsize::new(0),
                closed: AtomicBool::new(false),
                max_threads: max_threads.max(1),
            }),
        }
    }

    /// Queues `job` and makes sure a worker is on its way to it, or, with every thread running a
    /// job, that one will take it when its job ends.
    ///
    /// # Errors
    /// When no thread could be started for it and no thread is alive to take it later (the job
    /// is dropped).
    pub(crate) fn spawn(&self, job: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
        let inner = &self.inner;
        let mut state = inner.lock();
        state.queue.push_back(Box::new(job));
        inner.queued.fetch_add(1, Ordering::Release);
        let started = inner.ensure_looking(&mut state);
        if started.is_err() {
            state.queue.pop_back();
            inner.queued.fetch_sub(1, Ordering::Release);
        }
        started
    }
}

impl toolsmith::Offload for ToolPool {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) -> Result<(), String> {
        let picked_up = PICK_UP.with(|flag| flag.borrow_mut().take());
        let job = move || {
            if let Some(picked_up) = picked_up {
                picked_up.store(true, Ordering::Release);
            }
            job();
        };
        ToolPool::spawn(self, job)
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

    /// With jobs queued, makes sure one worker not running a job is on its way to them.
    fn ensure_looking(self: &Arc<Self>, state: &mut State) -> std::io::Result<()> {
        if state.queue.is_empty() || state.looking > 0 {
            return Ok(());
        }
        if state.parked > state.tokens {
            state.tokens += 1;
            state.looking += 1;
            self.wake.notify_one();
            return Ok(());
        }
        if state.threads < self.max_threads {
            let inner = Arc::clone(self);
            let started = std::thread::Builder::new()
                .name("toolsmith-tool".into())
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
        let mut state = self.lock();
        loop {
            if let Some(job) = state.queue.pop_front() {
                self.queued.fetch_sub(1, Ordering::Release);
                state.looking -= 1;
                // What is left of the queue must not wait behind this job, below the limit.
                // Should no thread start, this one takes the rest once its job is done.
                let _ = self.ensure_looking(&mut state);
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
            if state.looking == 1 && spinning_pays() {
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
        while dry.elapsed() < SPIN
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

    #[test]
    fn every_job_runs() {
        let pool = ToolPool::new(4);
        let (sent, received) = mpsc::channel();
        for i in 0..500 {
            let sent = sent.clone();
            pool.spawn(move || sent.send(i).unwrap()).unwrap();
        }
        let mut seen: Vec<i32> = (0..500)
            .map(|_| received.recv_timeout(NEVER).unwrap())
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..500).collect::<Vec<_>>());
    }

    #[test]
    fn a_job_never_waits_behind_a_running_one() {
        // At the limit too: two threads, two jobs, the first of which waits for the second.
        let pool = ToolPool::new(2);
        for _ in 0..50 {
            let (second_ran, wait) = mpsc::channel();
            let (first_done, done) = mpsc::channel();
            pool.spawn(move || first_done.send(wait.recv_timeout(NEVER)).unwrap())
                .unwrap();
            pool.spawn(move || second_ran.send(()).unwrap()).unwrap();
            assert_eq!(done.recv_timeout(NEVER).unwrap(), Ok(()));
        }
    }

    #[test]
    fn jobs_run_at_once_up_to_the_limit_on_no_more_threads() {
        let pool = ToolPool::new(3);
        let barrier = Arc::new(std::sync::Barrier::new(3));
        let (sent, received) = mpsc::channel();
        for _ in 0..3 {
            let (barrier, sent) = (Arc::clone(&barrier), sent.clone());
            pool.spawn(move || {
                barrier.wait();
                sent.send(()).unwrap();
            })
            .unwrap();
        }
        for _ in 0..3 {
            received.recv_timeout(NEVER).unwrap();
        }
        assert!(pool.inner.lock().threads <= 3);
    }

    #[test]
    fn jobs_beyond_the_limit_wait_for_a_thread_and_all_run() {
        let pool = ToolPool::new(2);
        let (release, released) = mpsc::channel::<()>();
        let released = Arc::new(Mutex::new(released));
        let (started, running) = mpsc::channel();
        for _ in 0..2 {
            let (released, started) = (Arc::clone(&released), started.clone());
            pool.spawn(move || {
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
            pool.spawn(move || sent.send(i).unwrap()).unwrap();
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
        assert!(pool.inner.lock().threads <= 2);
    }

    #[test]
    fn a_panicking_job_costs_its_answer_only() {
        let pool = ToolPool::new(1);
        let (sent, received) = mpsc::channel::<()>();
        pool.spawn(move || {
            let _sent = sent;
            panic!("a tool's bug");
        })
        .unwrap();
        assert_eq!(
            received.recv_timeout(NEVER),
            Err(mpsc::RecvTimeoutError::Disconnected)
        );
        let (sent, received) = mpsc::channel();
        pool.spawn(move || sent.send(7).unwrap()).unwrap();
        assert_eq!(received.recv_timeout(NEVER), Ok(7));
    }

    #[test]
    fn dropping_the_pool_ends_its_threads() {
        let pool = ToolPool::new(4);
        let (sent, received) = mpsc::channel();
        for _ in 0..8 {
            let sent = sent.clone();
            pool.spawn(move || sent.send(()).unwrap()).unwrap();
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
