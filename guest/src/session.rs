//! The WIT `session` record and the core's session: the component only converts, the
//! core decides how a session moves.

use alloc::vec::Vec;

use metis_memory_core::session::Session as CoreSession;
use metis_memory_core::tool_call::OwnWrite as CoreOwnWrite;

use crate::metis::memory::types::{FileVersion, OwnWrite, Session};

impl From<Session> for CoreSession {
    fn from(session: Session) -> Self {
        let versions = |list: Vec<FileVersion>| {
            list.into_iter()
                .map(|version| (version.file.into(), version.sha256))
                .collect()
        };
        CoreSession {
            seen: versions(session.seen),
            withheld: session.withheld.into_iter().map(Into::into).collect(),
            shown: versions(session.shown),
            own: session
                .own_writes
                .into_iter()
                .map(|write| CoreOwnWrite {
                    file: write.file.into(),
                    before_hash: write.before_sha256,
                    after_hash: write.after_sha256,
                })
                .collect(),
        }
    }
}

impl From<CoreSession> for Session {
    fn from(session: CoreSession) -> Self {
        let versions = |list: Vec<(metis_memory_core::MemoryFile, alloc::string::String)>| {
            list.into_iter()
                .map(|(file, sha256)| FileVersion {
                    file: file.into(),
                    sha256,
                })
                .collect()
        };
        Session {
            seen: versions(session.seen),
            withheld: session.withheld.into_iter().map(Into::into).collect(),
            shown: versions(session.shown),
            own_writes: session
                .own
                .into_iter()
                .map(|write| OwnWrite {
                    file: write.file.into(),
                    before_sha256: write.before_hash,
                    after_sha256: write.after_hash,
                })
                .collect(),
        }
    }
}
