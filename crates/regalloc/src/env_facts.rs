//! Facts about a [`MachineEnv`] that every allocation consults: its allocatable and scratch
//! registers as sets, the fewest registers of any class, and each register's place in its
//! class's list.
//!
//! Requires: nothing. Guarantees: the facts describe exactly the environment passed to
//! [`EnvCache::facts`] last.
//!
//! Cost: O(registers) when the environment differs from the previous call's, else a
//! comparison of the register lists (a few dozen bytes): a context allocating many
//! functions for one machine derives the facts once.

use crate::{MachineEnv, PReg, PRegSet, NUM_CLASSES};

/// See the module doc.
pub(crate) struct EnvFacts {
    /// The environment's allocatable registers per class, in order of preference.
    pub lists: [Vec<PReg>; NUM_CLASSES],
    /// The environment's scratch register per class.
    scratch_regs: [Option<PReg>; NUM_CLASSES],
    pub allocatable: PRegSet,
    pub scratch: PRegSet,
    /// The fewest allocatable registers of any class.
    pub min_avail: usize,
    /// Per class, each allocatable register's place in the class's list, by
    /// [`PReg::index`] (`u8::MAX` for others).
    pub reg_slot: [[u8; 128]; NUM_CLASSES],
    /// What is wrong with the environment, if anything (the allocator rejects every
    /// function then).
    pub problem: Option<String>,
    /// Which derivation of facts these are (never 0), so that what a pass remembers about
    /// one machine's facts between functions is dropped when they are derived anew.
    pub id: u64,
}

impl EnvFacts {
    fn of(env: &MachineEnv) -> EnvFacts {
        let mut facts = EnvFacts {
            lists: env.allocatable.clone(),
            scratch_regs: env.scratch,
            allocatable: PRegSet::empty(),
            scratch: PRegSet::empty(),
            min_avail: env.allocatable.iter().map(Vec::len).min().unwrap_or(0),
            reg_slot: [[u8::MAX; 128]; NUM_CLASSES],
            problem: None,
            id: 0,
        };
        for (class, regs) in env.allocatable.iter().enumerate() {
            for (k, &r) in regs.iter().enumerate() {
                if r.class().index() != class || facts.allocatable.contains(r) {
                    // (Each register of a class listed once: at most 64 per class, which
                    // the scan's register masks rely on.)
                    facts.problem = Some(format!(
                        "allocatable register {r} is listed twice or under the wrong class"
                    ));
                }
                facts.allocatable.add(r);
                facts.reg_slot[class][r.index()] = k as u8;
            }
        }
        for &s in env.scratch.iter().flatten() {
            if facts.allocatable.contains(s) {
                facts.problem = Some(format!("scratch register {s} is also allocatable"));
            }
            facts.scratch.add(s);
        }
        facts
    }
}

/// Whether two register lists are equal (a branch-free comparison: these lists are short).
fn same_regs(a: &[PReg], b: &[PReg]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .fold(true, |same, (x, y)| same & (x.index() == y.index()))
}

/// The facts of the environment seen last, kept by [`crate::Context`].
#[derive(Default)]
pub(crate) struct EnvCache {
    facts: Option<EnvFacts>,
    /// How many times facts were derived.
    derived: u64,
}

impl EnvCache {
    /// The facts of `env`, derived again only if `env` differs from the last one.
    pub fn facts(&mut self, env: &MachineEnv) -> &EnvFacts {
        let same = |f: &EnvFacts| {
            f.scratch_regs == env.scratch
                && f.lists
                    .iter()
                    .zip(&env.allocatable)
                    .all(|(a, b)| same_regs(a, b))
        };
        if !self.facts.as_ref().is_some_and(same) {
            self.derived += 1;
            self.facts = Some(EnvFacts {
                id: self.derived,
                ..EnvFacts::of(env)
            });
        }
        self.facts.as_ref().expect("derived above")
    }
}
