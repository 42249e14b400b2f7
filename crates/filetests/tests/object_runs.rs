//! Every `test run` file of the project's suite that passes natively also passes when its
//! functions are compiled to an ELF object, linked by `cc` with a generated driver and run
//! as a separate process (`object_run.rs`).

use std::path::Path;

use kestrel_filetests::{collect_files, object_run::run_via_object, run_file, Options, Outcome};

#[test]
fn run_files_pass_through_objects_linked_by_cc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let files = collect_files(&[root.join("semantics"), root.join("regressions")]).unwrap();
    let work = std::env::temp_dir().join(format!("kestrel-object-runs-{}", std::process::id()));
    let (mut passed, mut failed) = (0, Vec::new());
    for (i, file) in files.iter().enumerate() {
        let native = run_file(file, &Options::default());
        if !matches!(native.outcome, Outcome::Pass) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        match run_via_object(
            &text,
            &file.display().to_string(),
            &work.join(i.to_string()),
        ) {
            Outcome::Pass => passed += 1,
            Outcome::Skip(_) => {}
            Outcome::Fail(why) => failed.push(format!("{}: {}", file.display(), why.join("\n  "))),
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(passed >= 40, "only {passed} files ran through objects");
    eprintln!("{passed} run files passed through objects");
}
