//! The README shows the WIT: keep it the WIT.

#[test]
fn readme_shows_every_wit_file_verbatim() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    for name in ["world.wit", "types.wit", "store.wit"] {
        let wit = std::fs::read_to_string(format!("{root}/wit/{name}")).unwrap();
        assert!(
            readme.contains(&format!("```wit\n{wit}```")),
            "README.md does not show wit/{name} as it is"
        );
    }
}
