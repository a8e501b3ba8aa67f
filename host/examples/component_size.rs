//! The component's size by part against the budgets CI enforces (`scripts/check-size`
//! runs this): prints each part and exits 1 when a part, or the whole, is over.

#[path = "bench/size.rs"]
mod size;
// Shared with the build, which uses all of it.
#[allow(dead_code)]
#[path = "../wasm_sections.rs"]
mod wasm_sections;

fn main() {
    let component = metis_memory::COMPONENT_WASM;
    let mut over = false;
    println!("{:>8} {:>8}  part", "bytes", "budget");
    for (part, bytes, budget) in size::parts(component) {
        let mark = if bytes > budget { "  OVER" } else { "" };
        over |= bytes > budget;
        println!("{bytes:>8} {budget:>8}  {part}{mark}");
    }
    let total = component.len();
    let mark = if total > size::TOTAL_BUDGET {
        "  OVER"
    } else {
        ""
    };
    over |= total > size::TOTAL_BUDGET;
    println!(
        "{total:>8} {:>8}  the component (this release's target {}, heading for {} bytes){mark}",
        size::TOTAL_BUDGET,
        size::RELEASE_TARGET,
        size::TARGET
    );
    if over {
        eprintln!(
            "the component is over its size budget: find what grew (a part's bytes above) before raising a budget in host/examples/bench/size.rs"
        );
        std::process::exit(1);
    }
}
