//! The one thread every library call of `metis-memory mcp` runs on.
//!
//! The library drives the component through wasmtime's synchronous WASI bindings, which
//! must not be called from a thread of a tokio runtime (they block, and may try to start
//! a runtime of their own). So a plain thread owns the connection's [`Session`] (and its
//! [`Workspace`](metis_memory::Workspace)) for the server's whole life, which also lets
//! every read use the instance the library keeps for reads and moves the session one
//! call at a time, in the order the calls arrive; the protocol's async handlers send it
//! jobs and await the replies.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;

use metis_memory::Session;

type Job = Box<dyn FnOnce(&mut Session) + Send>;

/// The sending end of the worker's queue; the thread ends when this is dropped.
pub struct MemoryWorker {
    jobs: mpsc::Sender<Job>,
}

/// The worker thread is gone, or a job panicked before it replied.
#[derive(Debug)]
pub struct WorkerGone;

/// Disconnected when the worker thread has run its last job: the process waits for it,
/// so that it never exits in the middle of a write.
pub struct WorkerDone(mpsc::Receiver<()>);

impl WorkerDone {
    /// Waits until the worker has finished its queue (its sender is dropped with the
    /// server), or `limit` has passed; whether it finished.
    pub fn wait(self, limit: std::time::Duration) -> bool {
        matches!(
            self.0.recv_timeout(limit),
            Err(mpsc::RecvTimeoutError::Disconnected)
        )
    }
}

impl MemoryWorker {
    /// Starts the thread that owns `session`.
    pub fn start(mut session: Session) -> std::io::Result<(MemoryWorker, WorkerDone)> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (done, finished) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("metis-memory-calls".into())
            .spawn(move || {
                let _done = done;
                for job in queue {
                    // A panic in one call is a bug, but it must not end the server: the
                    // job's reply is dropped with it, which its caller sees as an error.
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut session)));
                }
            })?;
        Ok((MemoryWorker { jobs }, WorkerDone(finished)))
    }

    /// Runs `call` on the worker and waits for its result without blocking the runtime.
    pub async fn run<T: Send + 'static>(
        &self,
        call: impl FnOnce(&mut Session) -> T + Send + 'static,
    ) -> Result<T, WorkerGone> {
        self.submit(call)?.await.map_err(|_| WorkerGone)
    }

    /// Runs `call` on the worker and blocks this thread until it is done: for the checks
    /// made before the runtime starts (never from inside it).
    pub fn run_blocking<T: Send + 'static>(
        &self,
        call: impl FnOnce(&mut Session) -> T + Send + 'static,
    ) -> Result<T, WorkerGone> {
        self.submit(call)?.blocking_recv().map_err(|_| WorkerGone)
    }

    fn submit<T: Send + 'static>(
        &self,
        call: impl FnOnce(&mut Session) -> T + Send + 'static,
    ) -> Result<tokio::sync::oneshot::Receiver<T>, WorkerGone> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |session| {
            let _ = reply.send(call(session));
        });
        self.jobs.send(job).map_err(|_| WorkerGone)?;
        Ok(answer)
    }
}
