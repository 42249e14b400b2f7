//! What every ISA's feature set shares: a table of named boolean flags over the ISA's own
//! typed set, and the operations on it written once from that table.
//!
//! Contract. An ISA's `features.rs` defines its `CpuFeatures` (plain booleans) and
//! implements [`IsaFeatures`] with its [`FeatureFlag`] table and host detection; naming a
//! flag (`has_lse`, `has_sse41=false`), listing the flags, "all", "none" and intersecting
//! come from the table, so a new flag is one table line. A flag name the table lacks is
//! reported (`apply_flag` returns false) and changes nothing.
//!
//! Cost: linear in the table (a handful of flags).

use std::fmt::Debug;

/// One named feature flag: the name a `target` line or a builder uses, other names it
/// answers to, and the field of the set it turns on or off.
pub struct FeatureFlag<F> {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub field: fn(&mut F) -> &mut bool,
}

/// An ISA's typed feature set.
pub trait IsaFeatures: Copy + Debug + PartialEq + Send + Sync + 'static {
    /// Every flag of the ISA, in display order.
    const FLAGS: &'static [FeatureFlag<Self>];

    /// The features of the CPU this process runs on (none on another ISA).
    fn host() -> Self;

    /// The set with every flag off (the base ISA).
    fn none() -> Self;

    /// The set with every flag on.
    fn all() -> Self {
        let mut f = Self::none();
        for flag in Self::FLAGS {
            *(flag.field)(&mut f) = true;
        }
        f
    }

    /// Whether flag `flag` of the table is on.
    fn get(&self, flag: &FeatureFlag<Self>) -> bool {
        let mut copy = *self;
        *(flag.field)(&mut copy)
    }

    /// Apply one flag (`has_lse`, `has_lse=false`; any value but `false` turns it on).
    /// Returns false, changing nothing, for a flag the ISA does not have.
    fn apply_flag(&mut self, flag: &str) -> bool {
        let (name, on) = match flag.split_once('=') {
            Some((n, v)) => (n, v != "false"),
            None => (flag, true),
        };
        let Some(entry) = Self::FLAGS
            .iter()
            .find(|f| f.name == name || f.aliases.contains(&name))
        else {
            return false;
        };
        *(entry.field)(self) = on;
        true
    }

    /// The features both sets have.
    fn intersect(self, other: Self) -> Self {
        let mut both = self;
        for flag in Self::FLAGS {
            *(flag.field)(&mut both) = self.get(flag) && other.get(flag);
        }
        both
    }

    /// Each flag's name and whether it is on.
    fn flag_values(&self) -> Vec<(&'static str, bool)> {
        Self::FLAGS.iter().map(|f| (f.name, self.get(f))).collect()
    }
}
