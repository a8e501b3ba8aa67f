//! Holding every write to a workspace off while the host does work of its own (the
//! component's `store.write-hold`): `metis-memory sync` runs git's merge under it, so no
//! agent's write lands while git rewrites the memory files.

use wasmtime::Store;
use wasmtime::component::ResourceAny;

use crate::runtime::{Call, Ctx, Instance, owned_instance, trap};
use crate::token::owner_token;
use crate::{Error, Workspace};

/// The write locks of a workspace's two files, held until dropped. Renew it at least
/// every second ([`renew`](Self::renew)): a lock's lease is 3 seconds, after which the
/// next writer takes it for a dead writer's.
pub struct WriteHold {
    store: Store<Ctx>,
    memory: Instance,
    hold: Option<ResourceAny>,
    fuel: u64,
}

impl Workspace {
    /// Takes the write locks of both files, waiting as a write does: from then on every
    /// writer, in any host, waits for the hold as for another writer, and is refused
    /// `busy` after its wait. A workspace without `.metis/` has nothing to hold.
    pub fn hold_writes(&self) -> Result<WriteHold, Error> {
        let opened = self.open_metis_dir()?.ok_or_else(|| {
            Error::Workspace(format!("{} does not exist", self.metis_dir().display()))
        })?;
        let call = Call {
            metis_dir: Some(&opened),
            global_dir: None,
            settings: self.settings(),
            limits: self.limits,
            owner: owner_token(),
            #[cfg(feature = "fault-injection")]
            fault_hook: None,
        };
        let (mut store, memory) = owned_instance(call)?;
        let acquired = memory
            .workspace(&mut store)
            .and_then(|workspace| {
                let api = memory.metis_memory_store().workspace();
                api.call_hold_writes(&mut store, workspace)
            })
            .map_err(trap)?;
        let mut held = WriteHold {
            store,
            memory,
            hold: None,
            fuel: self.limits.fuel,
        };
        held.hold = Some(acquired?);
        Ok(held)
    }
}

impl WriteHold {
    /// Renews the locks' lease. `busy` if one is no longer ours: it was broken, so a
    /// write may have landed during the work it guarded.
    pub fn renew(&mut self) -> Result<(), Error> {
        let Some(hold) = self.hold else {
            return Ok(());
        };
        self.store.set_fuel(self.fuel).map_err(trap)?;
        let renewed = self
            .memory
            .metis_memory_store()
            .write_hold()
            .call_renew(&mut self.store, hold)
            .map_err(trap)?;
        Ok(renewed?)
    }
}

impl Drop for WriteHold {
    /// Releases the locks (the component moves each aside, checks it is still ours, and
    /// removes it). If that traps, the locks expire after their lease, as a crashed
    /// writer's do.
    fn drop(&mut self) {
        if let Some(hold) = self.hold.take() {
            let _ = self.store.set_fuel(self.fuel);
            let _ = hold.resource_drop(&mut self.store);
        }
    }
}
