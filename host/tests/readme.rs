//! The docs show the WIT: keep it the WIT. `docs/api.md` holds the listing the README
//! links to.

#[test]
fn api_doc_shows_every_wit_file_verbatim() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let doc = std::fs::read_to_string(format!("{root}/docs/api.md")).unwrap();
    let mut shown = 0;
    for entry in std::fs::read_dir(format!("{root}/wit")).unwrap() {
        let path = entry.unwrap().path();
        let wit = std::fs::read_to_string(&path).unwrap();
        assert!(
            doc.contains(&format!("```wit\n{wit}```")),
            "docs/api.md does not show {} as it is",
            path.display()
        );
        shown += 1;
    }
    assert_eq!(shown, 4, "every WIT file is in docs/api.md");
}

#[test]
fn readme_links_the_api_doc() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    assert!(
        readme.contains("](docs/api.md)"),
        "README.md should link docs/api.md, where the WIT is shown"
    );
}

#[test]
fn conformance_readme_states_the_case_count() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/conformance");
    let (mut cases, mut suites) = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let suite: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            cases += suite["cases"].as_array().unwrap().len();
            suites += 1;
        }
    }
    let readme = std::fs::read_to_string(format!("{dir}/README.md")).unwrap();
    let claim = format!("{cases} cases in {suites} suites");
    assert!(
        readme.contains(&claim),
        "tests/conformance/README.md should say \"{claim}\""
    );
}

/// The README's cost table is `BENCHMARKS.md`'s summary, copied by `scripts/bench`: a
/// figure edited by hand in one and not the other fails here.
#[test]
fn readme_cost_table_is_the_benchmarks_summary() {
    let root = env!("CARGO_MANIFEST_DIR").to_owned() + "/..";
    let block = |name: &str| {
        let text = std::fs::read_to_string(format!("{root}/{name}")).unwrap();
        let (begin, end) = ("<!-- bench-summary:begin -->", "<!-- bench-summary:end -->");
        let start = text
            .find(begin)
            .unwrap_or_else(|| panic!("{name}: no {begin}"));
        let stop = text.find(end).unwrap_or_else(|| panic!("{name}: no {end}"));
        text[start..stop].to_owned()
    };
    let summary = block("BENCHMARKS.md");
    assert!(summary.lines().count() >= 6, "{summary}");
    assert_eq!(block("README.md"), summary);
}
