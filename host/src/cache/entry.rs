//! The file format of a cache entry, shared with the Python package
//! (`bindings/python/src/metis_memory/_cache.py`; docs/security.md, "The
//! compiled-component cache"):
//!
//! ```text
//! HEADER  (28 bytes)  "metis-memory cache entry v1\n"
//! MAC     (32 bytes)  HMAC-SHA256(key, HEADER || NAME || "\n" || PAYLOAD)
//! PAYLOAD             what wasmtime serialized (`Engine::precompile_component`)
//! ```
//!
//! `NAME` is the entry's file name, `component-{SHA-256 of the component}-{engine}.cwasm`,
//! so the MAC binds the component and the engine as well as the code: an entry moved to
//! another name fails, like one whose bytes were changed or that was made under another
//! key (another user's, another machine's, a repository's).

use sha2::{Digest, Sha256};

/// The first bytes of every entry (the version of this format).
pub(crate) const HEADER: &[u8; 28] = b"metis-memory cache entry v1\n";

/// Bytes of the MAC.
const MAC_BYTES: usize = 32;

/// The bytes of the entry named `name` holding `payload`, under `key`.
pub(crate) fn seal(key: &[u8; 32], name: &str, payload: &[u8]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(HEADER.len() + MAC_BYTES + payload.len());
    entry.extend_from_slice(HEADER);
    entry.extend_from_slice(&mac(key, name, payload));
    entry.extend_from_slice(payload);
    entry
}

/// Bytes of an entry before its payload: the header and the MAC.
pub(crate) const PREFIX_BYTES: usize = HEADER.len() + MAC_BYTES;

/// The payload of `entry`, the bytes of the file named `name`, if its header is this
/// format's and its MAC is right under `key`; otherwise why not.
pub(crate) fn open<'a>(key: &[u8; 32], name: &str, entry: &'a [u8]) -> Result<&'a [u8], String> {
    let (prefix, payload) = entry.split_at(entry.len().min(PREFIX_BYTES));
    check(key, name, prefix, payload)?;
    Ok(payload)
}

/// Whether `prefix` (the entry's first [`PREFIX_BYTES`]) and `payload` (the rest) make an
/// entry of this format whose MAC is right under `key` for the name `name`.
pub(crate) fn check(
    key: &[u8; 32],
    name: &str,
    prefix: &[u8],
    payload: &[u8],
) -> Result<(), String> {
    check_header(prefix)?;
    let tag = &prefix[HEADER.len()..];
    if tag.len() != MAC_BYTES {
        return Err("the cache file is truncated".into());
    }
    if !equal(tag, &mac(key, name, payload)) {
        return Err(
            "the cache file's MAC is wrong (changed, moved from another name, or not made \
             under this user's key)"
                .into(),
        );
    }
    Ok(())
}

/// Whether `prefix` starts with this format's header.
pub(crate) fn check_header(prefix: &[u8]) -> Result<(), String> {
    match prefix.starts_with(HEADER) {
        true => Ok(()),
        false => Err("the cache file is not a metis-memory cache entry (another format)".into()),
    }
}

fn mac(key: &[u8; 32], name: &str, payload: &[u8]) -> [u8; 32] {
    hmac_sha256(key, &[HEADER, name.as_bytes(), b"\n", payload])
}

/// HMAC-SHA256 (RFC 2104) of the concatenation of `parts`.
pub(crate) fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    for part in parts {
        inner.update(part);
    }
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Equal, in a time that does not depend on where they differ.
fn equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// RFC 4231's test cases 1, 2, 3 and 6 (a key longer than a block).
    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        let cases: [(&[u8], &[u8], &str); 4] = [
            (
                &[0x0b; 20],
                b"Hi There",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe",
                b"what do ya want for nothing?",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                &[0xaa; 20],
                &[0xdd; 50],
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            ),
            (
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
        ];
        for (key, data, expected) in cases {
            assert_eq!(hex(&hmac_sha256(key, &[data])), expected);
            // Parts are concatenated.
            let (a, b) = data.split_at(data.len() / 2);
            assert_eq!(hex(&hmac_sha256(key, &[a, b])), expected);
        }
    }

    /// The shared vector: `bindings/python/tests/test_cache_entry.py` checks the same
    /// bytes, so that an entry one host writes is one the other reads.
    #[test]
    fn the_entry_format_is_the_one_the_python_package_writes() {
        let key: [u8; 32] = std::array::from_fn(|i| i as u8);
        let name =
            "component-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef-test.cwasm";
        let entry = seal(&key, name, b"payload");
        assert_eq!(&entry[..28], b"metis-memory cache entry v1\n");
        assert_eq!(
            hex(&entry[28..60]),
            "f9db434f851c4af61e75e5b61494b20e39e3e216fa2d17c321c3ac7ebf9fafa2"
        );
        assert_eq!(&entry[60..], b"payload");
        assert_eq!(open(&key, name, &entry), Ok(&b"payload"[..]));
    }

    #[test]
    fn a_changed_moved_or_foreign_entry_is_refused() {
        let key = [1u8; 32];
        let name = "component-aa-rust-1.cwasm";
        let entry = seal(&key, name, b"compiled code");
        assert_eq!(open(&key, name, &entry), Ok(&b"compiled code"[..]));
        // Another key (another user's, a repository's).
        assert!(open(&[2u8; 32], name, &entry).is_err());
        // Another name: another component, another engine.
        assert!(open(&key, "component-bb-rust-1.cwasm", &entry).is_err());
        assert!(open(&key, "component-aa-rust-2.cwasm", &entry).is_err());
        // Any byte changed, a byte more or less.
        for at in 0..entry.len() {
            let mut changed = entry.clone();
            changed[at] ^= 1;
            assert!(open(&key, name, &changed).is_err(), "byte {at}");
        }
        assert!(open(&key, name, &entry[..entry.len() - 1]).is_err());
        let mut longer = entry.clone();
        longer.push(0);
        assert!(open(&key, name, &longer).is_err());
        for cut in [0, 10, HEADER.len(), HEADER.len() + 31] {
            assert!(open(&key, name, &entry[..cut]).is_err(), "cut at {cut}");
        }
    }
}
