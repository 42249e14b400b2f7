//! Cranelift's named library calls that the interpreter provides itself (`%CeilF32`, …).

use crate::ops::{self, FloatKind};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Libcall {
    Ceil(FloatKind),
    Floor(FloatKind),
    Trunc(FloatKind),
    Nearest(FloatKind),
    Fma(FloatKind),
}

impl Libcall {
    pub fn from_name(name: &str) -> Option<Libcall> {
        use FloatKind::{F32, F64};
        Some(match name {
            "CeilF32" => Libcall::Ceil(F32),
            "CeilF64" => Libcall::Ceil(F64),
            "FloorF32" => Libcall::Floor(F32),
            "FloorF64" => Libcall::Floor(F64),
            "TruncF32" => Libcall::Trunc(F32),
            "TruncF64" => Libcall::Trunc(F64),
            "NearestF32" => Libcall::Nearest(F32),
            "NearestF64" => Libcall::Nearest(F64),
            "FmaF32" => Libcall::Fma(F32),
            "FmaF64" => Libcall::Fma(F64),
            _ => return None,
        })
    }

    /// Number of arguments the call takes.
    pub fn arity(self) -> usize {
        match self {
            Libcall::Fma(_) => 3,
            _ => 1,
        }
    }

    /// Apply to `args` (already checked to have [`Self::arity`] elements).
    pub fn apply(self, args: &[u128]) -> u128 {
        match self {
            Libcall::Ceil(k) => ops::ceil(k, args[0]),
            Libcall::Floor(k) => ops::floor(k, args[0]),
            Libcall::Trunc(k) => ops::trunc(k, args[0]),
            Libcall::Nearest(k) => ops::nearest(k, args[0]),
            Libcall::Fma(k) => ops::fma(k, args[0], args[1], args[2]),
        }
    }
}
