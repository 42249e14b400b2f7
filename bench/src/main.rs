//! `kestrel-bench SUBCOMMAND [ARGS]`: side-by-side measurements against Kestrel's peers.
//!
//! Each subcommand lives in its own module with a `run(args) -> Result<(), String>`;
//! `main` only dispatches.

mod code_speed;
mod compile_speed;
mod emit_clif;
mod malloc_settings;
mod peak_alloc;
mod regalloc;
mod scaling;
mod wasm_bench;
mod wasm_fuzz;

#[global_allocator]
static ALLOCATOR: peak_alloc::Counting = peak_alloc::Counting;

type Subcommand = fn(&[String]) -> Result<(), String>;

/// (name, what it measures, entry point)
const SUBCOMMANDS: &[(&str, &str, Subcommand)] = &[
    (
        "regalloc",
        "Kestrel's allocator vs regalloc2 0.15.2 (ion and fastalloc) on generated functions",
        regalloc::run,
    ),
    (
        "compile-speed",
        "Kestrel's compile time vs Cranelift 0.135.8 (opt none) on the same functions",
        compile_speed::run,
    ),
    (
        "emit-clif",
        "Writes the CLIF Wasmtime 48 gives Cranelift for Wasm programs (a compile-speed corpus)",
        emit_clif::run,
    ),
    (
        "code-speed",
        "Run time of Kestrel's code vs Cranelift 0.135.8's (both opt speed) on small kernels",
        code_speed::run,
    ),
    (
        "scaling",
        "Compile time and peak memory of Kestrel and Cranelift as generated functions double",
        scaling::run,
    ),
    (
        "wasm",
        "Kestrel's Wasm engine vs Wasmtime 48: compile and run time of Sightglass and C programs",
        wasm_bench::run,
    ),
    (
        "wasm-fuzz",
        "Kestrel's Wasm engine (both bounds-check modes) vs Wasmtime 48 on wasm-smith modules",
        wasm_fuzz::run,
    ),
];

fn usage() -> String {
    let mut text = String::from("usage: kestrel-bench <subcommand> [options]\n\nsubcommands:\n");
    for (name, what, _) in SUBCOMMANDS {
        text.push_str(&format!("  {name:<14} {what}\n"));
    }
    text
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprint!("{}", usage());
        std::process::exit(2);
    };
    match SUBCOMMANDS.iter().find(|(n, _, _)| n == name) {
        Some((_, _, run)) => {
            if let Err(err) = run(&args[1..]) {
                eprintln!("kestrel-bench {name}: {err}");
                std::process::exit(1);
            }
        }
        None => {
            eprint!("unknown subcommand `{name}`\n\n{}", usage());
            std::process::exit(2);
        }
    }
}
