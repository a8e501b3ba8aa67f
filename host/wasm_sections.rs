//! The sections of a WebAssembly binary, a core module's or a component's: read in one
//! place for the build (which drops the component's names) and the size report (which
//! measures its parts).

/// One section: its id, its contents, and its bytes whole (id and size included).
pub struct Section<'a> {
    pub id: u8,
    pub body: &'a [u8],
    pub whole: &'a [u8],
}

/// The custom sections' id.
pub const CUSTOM: u8 = 0;

/// The bytes before the first section: the magic number and the version or layer.
pub const HEADER: usize = 8;

/// The unsigned LEB128 number at `at`, which moves past it.
pub fn leb(bytes: &[u8], at: &mut usize) -> usize {
    let (mut value, mut shift) = (0usize, 0);
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte < 0x80 {
            return value;
        }
    }
}

/// The sections of `binary`, in order.
pub fn sections(binary: &[u8]) -> Vec<Section<'_>> {
    let mut out = Vec::new();
    let mut at = HEADER;
    while at < binary.len() {
        let start = at;
        let id = binary[at];
        at += 1;
        let size = leb(binary, &mut at);
        out.push(Section {
            id,
            body: &binary[at..at + size],
            whole: &binary[start..at + size],
        });
        at += size;
    }
    out
}

impl Section<'_> {
    /// A custom section's name.
    pub fn custom_name(&self) -> Option<&[u8]> {
        if self.id != CUSTOM {
            return None;
        }
        let mut at = 0;
        let len = leb(self.body, &mut at);
        self.body.get(at..at + len)
    }
}
