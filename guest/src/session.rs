//! The WIT `session` record and the core's session: the component only converts, the
//! core decides how a session moves.

use alloc::vec::Vec;

use metis_memory_core::session::Session as CoreSession;

use crate::metis::memory::types::{FileVersion, Session};

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
        }
    }
}
