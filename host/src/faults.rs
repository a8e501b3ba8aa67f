//! Fault injection at the WASI boundary, for tests of crash safety and of the lock.
//!
//! Fuel only runs out inside the guest's own code, so a trap from the fuel budget never
//! lands *between* two filesystem calls' effects on disk. Here every `wasi:filesystem/types`
//! call the guest makes goes first through a hook that can let it run, fail it with an
//! error code, or trap the instance right there; a hook may also block (standing in for a
//! stopped or swapped-out process) until the test lets it go on.
//!
//! Built only with the `fault-injection` feature, which this crate's own tests turn on.
//! Production builds link WASI directly.

use std::fmt;
use std::sync::Arc;

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{
    self as fs, Advice, Descriptor, DescriptorFlags, DescriptorStat, DescriptorType,
    DirectoryEntry, DirectoryEntryStream, Filesize, MetadataHashValue, NewTimestamp, OpenFlags,
    PathFlags,
};
use wasmtime_wasi::p2::bindings::sync::io::streams::{
    Error as StreamError, InputStream, OutputStream,
};
use wasmtime_wasi::p2::{FsError, FsResult};

/// The error a failed call returns (the code the guest sees).
pub use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;

static INSTANCES_MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many instances of the component this process has made so far: reads on a kept
/// instance make none.
pub fn instances_made() -> u64 {
    INSTANCES_MADE.load(std::sync::atomic::Ordering::Relaxed)
}

/// One more instance made (the runtime says so as it makes each).
pub(crate) fn count_instance() {
    INSTANCES_MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// One filesystem call the guest is about to make.
#[derive(Clone, Copy, Debug)]
pub struct WasiCall<'a> {
    /// 0 for the instance's first filesystem call, then 1, 2, …
    pub index: u64,
    /// The WIT name: `open-at`, `write`, `rename-at`, `drop-descriptor`, …
    pub function: &'static str,
    /// The path the call names, if any (for `link-at` and `rename-at`, the source).
    pub path: Option<&'a str>,
    /// The second path of `link-at` and `rename-at`: where the source goes.
    pub to: Option<&'a str>,
}

/// What the hook makes of a call instead of running it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The call fails with this code, as the filesystem would have failed it. Calls that
    /// cannot fail in WASI (resource drops, `is-same-object`) trap instead.
    Fail(ErrorCode),
    /// The instance traps at this call: the process is gone, as far as the disk can tell.
    Trap,
}

/// What a hook is: called before each filesystem call, from the thread making the call.
type Decide = dyn Fn(&WasiCall<'_>) -> Option<Fault> + Send + Sync;

/// Decides each call: `None` runs it. The hook may block before answering.
#[derive(Clone)]
pub struct FaultHook(Arc<Decide>);

impl FaultHook {
    pub fn new(hook: impl Fn(&WasiCall<'_>) -> Option<Fault> + Send + Sync + 'static) -> Self {
        FaultHook(Arc::new(hook))
    }
}

impl fmt::Debug for FaultHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FaultHook")
    }
}

/// The hook and the call counter of one instance.
pub(crate) struct FaultState {
    hook: Option<FaultHook>,
    calls: u64,
}

impl FaultState {
    pub(crate) fn new(hook: Option<FaultHook>) -> Self {
        FaultState { hook, calls: 0 }
    }
}

/// `wasi:filesystem/types` as the guest sees it under a hook.
pub(crate) struct Faulty;

impl HasData for Faulty {
    type Data<'a> = FaultyFilesystem<'a>;
}

pub(crate) struct FaultyFilesystem<'a> {
    pub(crate) inner: WasiFilesystemCtxView<'a>,
    pub(crate) state: &'a mut FaultState,
}

impl FaultyFilesystem<'_> {
    /// Asks the hook about the next call.
    fn fault(
        &mut self,
        function: &'static str,
        path: Option<&str>,
        to: Option<&str>,
    ) -> Option<Fault> {
        let index = self.state.calls;
        self.state.calls += 1;
        let hook = self.state.hook.as_ref()?;
        (hook.0)(&WasiCall {
            index,
            function,
            path,
            to,
        })
    }

    fn check(
        &mut self,
        function: &'static str,
        path: Option<&str>,
        to: Option<&str>,
    ) -> FsResult<()> {
        match self.fault(function, path, to) {
            None => Ok(()),
            Some(Fault::Fail(code)) => Err(code.into()),
            Some(Fault::Trap) => Err(FsError::trap(injected(function))),
        }
    }

    /// For the calls that cannot return a filesystem error.
    fn check_infallible(&mut self, function: &'static str) -> wasmtime::Result<()> {
        match self.fault(function, None, None) {
            None => Ok(()),
            Some(_) => Err(injected(function)),
        }
    }
}

fn injected(function: &str) -> wasmtime::Error {
    wasmtime::Error::msg(format!("fault injected at wasi:filesystem {function}"))
}

impl fs::Host for FaultyFilesystem<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<fs::ErrorCode> {
        fs::Host::convert_error_code(&mut self.inner, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<StreamError>,
    ) -> wasmtime::Result<Option<fs::ErrorCode>> {
        fs::Host::filesystem_error_code(&mut self.inner, err)
    }
}

/// Each method asks the hook, then runs the real call.
impl fs::HostDescriptor for FaultyFilesystem<'_> {
    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Filesize,
    ) -> FsResult<Resource<InputStream>> {
        self.check("read-via-stream", None, None)?;
        self.inner.read_via_stream(fd, offset)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Filesize,
    ) -> FsResult<Resource<OutputStream>> {
        self.check("write-via-stream", None, None)?;
        self.inner.write_via_stream(fd, offset)
    }

    fn append_via_stream(&mut self, fd: Resource<Descriptor>) -> FsResult<Resource<OutputStream>> {
        self.check("append-via-stream", None, None)?;
        self.inner.append_via_stream(fd)
    }

    fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Filesize,
        len: Filesize,
        advice: Advice,
    ) -> FsResult<()> {
        self.check("advise", None, None)?;
        self.inner.advise(fd, offset, len, advice)
    }

    fn sync_data(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.check("sync-data", None, None)?;
        self.inner.sync_data(fd)
    }

    fn get_flags(&mut self, fd: Resource<Descriptor>) -> FsResult<DescriptorFlags> {
        self.check("get-flags", None, None)?;
        self.inner.get_flags(fd)
    }

    fn get_type(&mut self, fd: Resource<Descriptor>) -> FsResult<DescriptorType> {
        self.check("get-type", None, None)?;
        self.inner.get_type(fd)
    }

    fn set_size(&mut self, fd: Resource<Descriptor>, size: Filesize) -> FsResult<()> {
        self.check("set-size", None, None)?;
        self.inner.set_size(fd, size)
    }

    fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: NewTimestamp,
        mtim: NewTimestamp,
    ) -> FsResult<()> {
        self.check("set-times", None, None)?;
        self.inner.set_times(fd, atim, mtim)
    }

    fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: Filesize,
        offset: Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        self.check("read", None, None)?;
        self.inner.read(fd, len, offset)
    }

    fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: Filesize,
    ) -> FsResult<Filesize> {
        self.check("write", None, None)?;
        self.inner.write(fd, buf, offset)
    }

    fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<DirectoryEntryStream>> {
        self.check("read-directory", None, None)?;
        self.inner.read_directory(fd)
    }

    fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.check("sync", None, None)?;
        self.inner.sync(fd)
    }

    fn create_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        self.check("create-directory-at", Some(&path), None)?;
        self.inner.create_directory_at(fd, path)
    }

    fn stat(&mut self, fd: Resource<Descriptor>) -> FsResult<DescriptorStat> {
        self.check("stat", None, None)?;
        self.inner.stat(fd)
    }

    fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
    ) -> FsResult<DescriptorStat> {
        self.check("stat-at", Some(&path), None)?;
        self.inner.stat_at(fd, path_flags, path)
    }

    fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
        atim: NewTimestamp,
        mtim: NewTimestamp,
    ) -> FsResult<()> {
        self.check("set-times-at", Some(&path), None)?;
        self.inner.set_times_at(fd, path_flags, path, atim, mtim)
    }

    fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        self.check("link-at", Some(&old_path), Some(&new_path))?;
        self.inner
            .link_at(fd, old_path_flags, old_path, new_descriptor, new_path)
    }

    fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
        oflags: OpenFlags,
        flags: DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        self.check("open-at", Some(&path), None)?;
        self.inner.open_at(fd, path_flags, path, oflags, flags)
    }

    fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        self.check("readlink-at", Some(&path), None)?;
        self.inner.readlink_at(fd, path)
    }

    fn remove_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        self.check("remove-directory-at", Some(&path), None)?;
        self.inner.remove_directory_at(fd, path)
    }

    fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        self.check("rename-at", Some(&old_path), Some(&new_path))?;
        self.inner.rename_at(fd, old_path, new_fd, new_path)
    }

    fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        self.check("symlink-at", Some(&src_path), Some(&dest_path))?;
        self.inner.symlink_at(fd, src_path, dest_path)
    }

    fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        self.check("unlink-file-at", Some(&path), None)?;
        self.inner.unlink_file_at(fd, path)
    }

    fn is_same_object(
        &mut self,
        a: Resource<Descriptor>,
        b: Resource<Descriptor>,
    ) -> wasmtime::Result<bool> {
        self.check_infallible("is-same-object")?;
        self.inner.is_same_object(a, b)
    }

    fn metadata_hash(&mut self, fd: Resource<Descriptor>) -> FsResult<MetadataHashValue> {
        self.check("metadata-hash", None, None)?;
        self.inner.metadata_hash(fd)
    }

    fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
    ) -> FsResult<MetadataHashValue> {
        self.check("metadata-hash-at", Some(&path), None)?;
        self.inner.metadata_hash_at(fd, path_flags, path)
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.check_infallible("drop-descriptor")?;
        fs::HostDescriptor::drop(&mut self.inner, fd)
    }
}

impl fs::HostDirectoryEntryStream for FaultyFilesystem<'_> {
    fn read_directory_entry(
        &mut self,
        stream: Resource<DirectoryEntryStream>,
    ) -> FsResult<Option<DirectoryEntry>> {
        self.check("read-directory-entry", None, None)?;
        self.inner.read_directory_entry(stream)
    }

    fn drop(&mut self, stream: Resource<DirectoryEntryStream>) -> wasmtime::Result<()> {
        self.check_infallible("drop-directory-entry-stream")?;
        fs::HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}
