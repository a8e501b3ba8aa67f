//! Every relative link in the repository's documentation leads to a file of the
//! repository, and every `#anchor` to a heading of that file: a reader of a clone (or of the
//! packages' READMEs) can follow them all. Links to the web (`https:`, `mailto:`) are not
//! fetched.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The documents checked: README.md, every docs/*.md, and the other READMEs and reports.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut docs: Vec<PathBuf> = [
        "README.md",
        "BENCHMARKS.md",
        "MUTANTS.md",
        "bindings/python/README.md",
        "bindings/node/README.md",
        "tests/conformance/README.md",
    ]
    .iter()
    .map(|name| root.join(name))
    .collect();
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    docs
}

/// The text outside fenced code blocks and inline code spans, where links are links.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Drop inline code spans (`…`), keeping the link syntax around them.
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of `[text](target)` links in the prose.
fn link_targets(markdown: &str) -> Vec<String> {
    let text = prose(markdown);
    let mut targets = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').expect("a link's target is closed");
        targets.push(after[..end].trim().to_owned());
        rest = &after[end..];
    }
    targets
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens;
/// repeats get `-1`, `-2`, ….
fn anchors(markdown: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let slug: String = heading
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while seen.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        seen.insert(unique);
    }
    seen
}

/// Problems with one link of `doc`, if any.
fn check_link(doc: &Path, target: &str) -> Option<String> {
    if target.starts_with("https://")
        || target.starts_with("http://")
        || target.starts_with("mailto:")
    {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        doc.to_path_buf()
    } else {
        doc.parent().unwrap().join(path)
    };
    // Resolve `..` by hand: the link must stay inside the repository.
    let mut resolved = PathBuf::new();
    for component in file.components() {
        match component {
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    if !resolved.starts_with(root()) {
        return Some(format!("{target}: leads outside the repository"));
    }
    if !resolved.exists() {
        return Some(format!("{target}: {} does not exist", resolved.display()));
    }
    let anchor = anchor?;
    if resolved.extension().is_none_or(|e| e != "md") {
        return Some(format!(
            "{target}: an anchor into a file that is not markdown"
        ));
    }
    let headings = anchors(&std::fs::read_to_string(&resolved).unwrap());
    (!headings.contains(anchor))
        .then(|| format!("{target}: no heading #{anchor} in {}", resolved.display()))
}

#[test]
fn every_relative_link_in_the_docs_leads_into_the_repository() {
    let mut broken = Vec::new();
    let mut links = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for target in link_targets(&text) {
            links += 1;
            if let Some(problem) = check_link(&doc, &target) {
                broken.push(format!("{}: {problem}", doc.display()));
            }
        }
    }
    assert!(
        links > 50,
        "only {links} links found: is the parser broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_checker_finds_what_it_must() {
    let readme = root().join("README.md");
    assert_eq!(check_link(&readme, "docs/spec.md"), None);
    assert_eq!(check_link(&readme, "docs/spec.md#5-the-tools"), None);
    assert_eq!(check_link(&readme, "#install"), None);
    assert!(check_link(&readme, "../shared/spec/CONTRACT.md").is_some());
    assert!(check_link(&readme, "docs/nowhere.md").is_some());
    assert!(check_link(&readme, "docs/spec.md#no-such-heading").is_some());
    assert_eq!(
        link_targets("[a](x.md) `[b](y.md)` [c](z.md#q)\n```\n[d](w.md)\n```\n"),
        ["x.md", "z.md#q"]
    );
    let slugs = anchors("# A `b`: c\n## Cost per call\n## Cost per call\n");
    for slug in ["a-b-c", "cost-per-call", "cost-per-call-1"] {
        assert!(slugs.contains(slug), "{slug} in {slugs:?}");
    }
}
