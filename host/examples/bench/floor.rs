//! The floor: the core's own decisions compiled natively, with `std::fs` doing the same
//! checked read and the same durable atomic write as the component (a temporary file
//! created exclusively, written and synced, renamed over the file, the directory synced).
//! What it leaves out is what only the component does: the sandbox, the lock between
//! processes, the instance.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use metis_memory_core::tool_call::{CallOptions, ToolRefusal, run_tool_call};
use metis_memory_core::{Edit, MemoryFile, StoreError, WriteResult, plan_write};

fn core_file(file: metis_memory::MemoryFile) -> MemoryFile {
    file.core()
}

pub struct Floor {
    metis: PathBuf,
    /// Whether writes take the component's lock file first (exclusive create of a
    /// pending file, hard link to the lock name, unlink; released by a rename aside and
    /// an unlink), to show what the lock between processes costs by itself.
    with_lock: bool,
}

impl Floor {
    pub fn new(metis: &Path) -> Floor {
        fs::create_dir_all(metis).unwrap();
        Floor {
            metis: metis.to_path_buf(),
            with_lock: false,
        }
    }

    pub fn with_lock(metis: &Path) -> Floor {
        Floor {
            with_lock: true,
            ..Floor::new(metis)
        }
    }

    fn lock(&self, file: MemoryFile) {
        if !self.with_lock {
            return;
        }
        let pending = self.metis.join(format!(".{}.lock.floor", file.file_name()));
        let mut f = File::options()
            .write(true)
            .create_new(true)
            .open(&pending)
            .unwrap();
        f.write_all(b"0123456789abcdef\n").unwrap();
        fs::hard_link(
            &pending,
            self.metis.join(format!(".{}.lock", file.file_name())),
        )
        .unwrap();
        fs::remove_file(&pending).unwrap();
    }

    fn unlock(&self, file: MemoryFile) {
        if !self.with_lock {
            return;
        }
        let lock = self.metis.join(format!(".{}.lock", file.file_name()));
        let aside = self
            .metis
            .join(format!(".{}.lock.floor.aside", file.file_name()));
        fs::rename(&lock, &aside).unwrap();
        fs::remove_file(&aside).unwrap();
    }

    fn path(&self, file: MemoryFile) -> PathBuf {
        self.metis.join(file.file_name())
    }

    /// The file's bytes, with the component's checks: a regular file (looked at before
    /// it is opened, so a FIFO never blocks), not followed if a link, size-checked, and
    /// checked again once open.
    pub fn read_bytes(&self, file: MemoryFile) -> Result<Vec<u8>, StoreError> {
        let path = self.path(file);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() && meta.len() <= file.read_limit() => {}
            Ok(_) => return Err(StoreError::NotARegularFile { file }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => panic!("{e}"),
        }
        let mut f = match File::options()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
        {
            Ok(f) => f,
            Err(_) => return Err(StoreError::NotARegularFile { file }),
        };
        let meta = f.metadata().unwrap();
        if !meta.is_file() || meta.len() > file.read_limit() {
            return Err(StoreError::NotARegularFile { file });
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        f.read_to_end(&mut bytes).unwrap();
        Ok(bytes)
    }

    pub fn read(&self, file: metis_memory::MemoryFile) -> String {
        String::from_utf8(self.read_bytes(core_file(file)).unwrap()).unwrap()
    }

    pub fn assemble(&self, base: &str) -> String {
        let user = self.read(metis_memory::MemoryFile::User);
        let memory = self.read(metis_memory::MemoryFile::Memory);
        metis_memory_core::assemble_system_prompt(base, &user, &memory)
    }

    pub fn write(
        &self,
        file: metis_memory::MemoryFile,
        edit: Edit<'_>,
    ) -> Result<WriteResult, StoreError> {
        let file = core_file(file);
        self.lock(file);
        let planned = plan_write(file, edit, None, || self.read_bytes(file));
        if let Ok(planned) = &planned {
            self.replace(file, &planned.after);
        }
        self.unlock(file);
        Ok(planned?.result())
    }

    fn replace(&self, file: MemoryFile, bytes: &[u8]) {
        let temp = self.metis.join(format!(".{}.floor.tmp", file.file_name()));
        let mut f = File::options()
            .write(true)
            .create_new(true)
            .open(&temp)
            .unwrap();
        f.write_all(bytes).unwrap();
        f.sync_all().unwrap();
        drop(f);
        fs::rename(&temp, self.path(file)).unwrap();
        File::open(&self.metis).unwrap().sync_all().unwrap();
    }

    pub fn tool_call(&self, name: &str, input: &str) -> Result<String, ToolRefusal> {
        let options = CallOptions::scan_all();
        run_tool_call(
            name,
            input.to_owned(),
            &options,
            |file, edit, if_unchanged, vet| {
                let planned = plan_write(file, edit, if_unchanged, || self.read_bytes(file))?;
                vet(
                    &planned.before,
                    std::str::from_utf8(&planned.after).unwrap(),
                )?;
                self.replace(file, &planned.after);
                Ok(planned.result())
            },
        )
        .map(|success| success.text)
    }
}
