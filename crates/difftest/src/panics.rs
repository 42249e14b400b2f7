//! Panics inside an oracle as findings: a failed assertion in a debug build (or any other
//! panic of the compiler or the runtime) is reported like any other failure, with the
//! panic's message and place, and its case written as a test file.
//!
//! A panic unwinds through code that may have left state half-built (a JIT module, kept
//! compile memory), so a campaign does not run anything after one: it writes the case as
//! found, unminimized, and stops.
//!
//! [`run_caught`] runs an oracle under `catch_unwind`. While [`QuietPanics`] is installed
//! (a campaign installs it for its duration), a panic inside `run_caught` is not printed:
//! its message and location become the finding's message instead. A panic anywhere else
//! still goes to the hook that was installed before, so the harness's own bugs stay loud.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe, PanicHookInfo};

use kestrel_fuzzgen::{Outcome, TestCase};

use crate::coverage::Coverage;
use crate::oracle::Oracle;

thread_local! {
    /// Whether this thread is inside [`run_caught`].
    static CAUGHT: Cell<bool> = const { Cell::new(false) };
    /// The last caught panic's message with its location, as the quiet hook saw it.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// `oracle.run(case, seed, coverage)`, with a panic turned into an error naming it.
pub(crate) fn run_caught(
    oracle: &mut dyn Oracle,
    case: &TestCase,
    seed: u64,
    coverage: &mut Coverage,
) -> Result<Vec<Outcome>, String> {
    caught(|| oracle.run(case, seed, coverage)).unwrap_or_else(Err)
}

/// `f()`, or the message and place of its panic (quiet while [`QuietPanics`] is installed).
pub fn caught<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    let outer = CAUGHT.replace(true);
    let result = catch_unwind(AssertUnwindSafe(f));
    CAUGHT.set(outer);
    result.map_err(|payload| format!("{PREFIX}{}", message(&*payload)))
}

/// How a panic finding's message starts.
pub(crate) const PREFIX: &str = "panicked at ";

/// The caught panic's location and message: as the quiet hook recorded them, else the
/// payload's text alone.
fn message(payload: &(dyn Any + Send)) -> String {
    LAST.take().unwrap_or_else(|| {
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("(a payload that is not text)");
        format!("an unknown place: {text}")
    })
}

type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Sync + Send + 'static>;

/// The quiet panic hook, installed until dropped (then the previous hook is back).
pub struct QuietPanics {
    previous: Option<std::sync::Arc<Hook>>,
}

impl QuietPanics {
    /// Install the hook: panics inside [`run_caught`] are recorded, not printed.
    pub fn install() -> QuietPanics {
        let previous = std::sync::Arc::new(std::panic::take_hook());
        let outer = previous.clone();
        std::panic::set_hook(Box::new(move |info| {
            if CAUGHT.get() {
                // "file:line:col:\nmessage" without the "panicked at " the caller adds.
                let text = info.to_string();
                let text = text.strip_prefix("panicked at ").unwrap_or(&text);
                LAST.set(Some(text.replace('\n', " ")));
            } else {
                outer(info);
            }
        }));
        QuietPanics {
            previous: Some(previous),
        }
    }
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        let _ = std::panic::take_hook();
        if let Some(previous) = self.previous.take() {
            // The quiet hook held the other reference; it was dropped with `take_hook`.
            match std::sync::Arc::try_unwrap(previous) {
                Ok(hook) => std::panic::set_hook(hook),
                Err(shared) => std::panic::set_hook(Box::new(move |info| shared(info))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check_case, FindingKind};
    use crate::oracle::InterpreterOracle;

    /// An oracle whose every run fails an assertion.
    struct Panicking;

    impl Oracle for Panicking {
        fn name(&self) -> &'static str {
            "panicking"
        }
        fn baseline(&self) -> Option<&'static str> {
            Some("interpreter")
        }
        fn run(&mut self, _: &TestCase, _: u64, _: &mut Coverage) -> Result<Vec<Outcome>, String> {
            assert_eq!(1 + 1, 3, "the oracle's own assertion");
            unreachable!()
        }
    }

    #[test]
    fn a_panicking_oracle_is_an_error_finding_with_its_message_and_place() {
        let case = (0..)
            .find_map(|i| crate::campaign::regenerate(7, i, &Default::default()))
            .expect("a case");
        let mut oracles: Vec<Box<dyn Oracle>> =
            vec![Box::new(InterpreterOracle), Box::new(Panicking)];
        let quiet = QuietPanics::install();
        let finding = check_case(&case, &mut oracles, 1, &mut Coverage::default())
            .expect_err("the oracle panicked");
        drop(quiet);
        assert_eq!(finding.kind, FindingKind::Error);
        assert_eq!(finding.oracle, "panicking");
        let m = &finding.message;
        assert!(
            m.starts_with("panicked at crates/difftest/src/panics.rs:"),
            "{m}"
        );
        assert!(m.contains("the oracle's own assertion"), "{m}");
        // Without the quiet hook the payload's text is still the message.
        let finding = check_case(&case, &mut oracles, 1, &mut Coverage::default())
            .expect_err("the oracle panicked");
        assert!(
            finding.message.contains("the oracle's own assertion"),
            "{}",
            finding.message
        );
    }
}
