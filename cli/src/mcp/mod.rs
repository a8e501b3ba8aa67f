//! `metis-memory mcp`: the memory served to an MCP client over stdio.
//!
//! The protocol runs on a tokio runtime (rmcp); every library call runs on one plain
//! thread that owns the workspace (`worker`); stdout carries only protocol messages
//! (`transport`), and everything else goes to stderr.

mod server;
mod transport;
mod worker;

use std::process::ExitCode;
use std::time::Duration;

use metis_memory::{AuditPolicy, Error, ScanPolicy, Workspace};
use rmcp::service::ServerInitializeError;

use server::MemoryServer;
use transport::LineTransport;
use worker::{MemoryWorker, WorkerDone};

/// How long the process waits at the end for a call still running on the worker (one
/// whose request was cancelled): a write finishes well within it.
const WORKER_WAIT: Duration = Duration::from_secs(60);

/// Serves `workspace` until the end of input: exit 0 then, 1 if the workspace cannot
/// be opened (said on stderr before anything is served) or the session fails.
pub fn serve(workspace: Workspace, scan: ScanPolicy, audit: AuditPolicy) -> ExitCode {
    let outcome = start(workspace, scan, audit).and_then(|(server, worker_done)| {
        let served = run(server);
        if !worker_done.wait(WORKER_WAIT) {
            complain!("metis-memory mcp: a memory call was still running at exit");
        }
        served
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            complain!("error: {message}");
            ExitCode::from(1)
        }
    }
}

/// Everything that can fail before the first message (a workspace named but missing is
/// refused before this, by `locate`, as for every command): its `.metis`, the
/// component (loaded now, so the first call is not slowed by it), the tool definitions.
fn start(
    workspace: Workspace,
    scan: ScanPolicy,
    audit: AuditPolicy,
) -> Result<(MemoryServer, WorkerDone), String> {
    let files = workspace.memory_files();
    // One connection is one conversation: stdio serves one client.
    let session = workspace.session().with_scan(scan).with_audit(audit);
    let (worker, worker_done) =
        MemoryWorker::start(session).map_err(|e| format!("cannot start the memory thread: {e}"))?;
    let definitions = worker
        // Like every call, this one checks `.metis`: a link, or something that is not a
        // directory, is refused here rather than on the first request.
        .run_blocking(|session| session.workspace().tool_definitions())
        .map_err(|_| "the memory thread failed as it started".to_owned())?
        .map_err(|e: Error| e.to_string())?;
    Ok((
        MemoryServer::new(worker, &definitions, &files)?,
        worker_done,
    ))
}

fn run(server: MemoryServer) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let outcome = runtime.block_on(async {
        let transport = LineTransport::new(tokio::io::stdin(), tokio::io::stdout());
        match rmcp::serve_server(server, transport).await {
            Ok(session) => session
                .waiting()
                .await
                .map(drop)
                .map_err(|e| format!("the session failed: {e}")),
            // The input ended before `initialize`: nothing was asked, nothing is wrong.
            Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(e) => Err(format!("the session failed to start: {e}")),
        }
    });
    // A read of stdin still pending (it runs on a blocking thread) must not hold the
    // exit; the input has ended or the session has failed by now.
    runtime.shutdown_timeout(Duration::from_millis(100));
    outcome
}
