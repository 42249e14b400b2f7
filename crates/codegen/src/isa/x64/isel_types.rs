//! The values the x86-64 rules pass between extractors and constructors: merged producers
//! ([`Imm`], [`Cmp`], [`FCmp`], [`Ld`]), result registers ([`Out`], [`Pair`]) and the small
//! enums constructors take.

use kestrel_ir::{FloatCC, Inst as IrInst, IntCC, TrapCode, Type, Value};
use kestrel_regalloc::VReg;

use super::asm::sse::FloatSize;
use super::inst::CallDest;
use super::lower::Runtime;
use crate::machinst::lower::Results;

/// A constant operand that a user may fold: the value and its sign-extended bits.
#[derive(Clone, Copy, Debug)]
pub struct Imm {
    pub(super) value: Value,
    pub(super) imm: i64,
}

/// A mergeable `icmp`: its result value, condition and operands.
#[derive(Clone, Copy, Debug)]
pub struct Cmp {
    pub(super) value: Value,
    pub(super) cc: IntCC,
    pub(super) a: Value,
    pub(super) b: Value,
}

/// A mergeable `fcmp`: its result value, condition and operands.
#[derive(Clone, Copy, Debug)]
pub struct FCmp {
    pub(super) value: Value,
    pub(super) cc: FloatCC,
    pub(super) a: Value,
    pub(super) b: Value,
}

/// A load its single ALU user may perform: the loaded value, the load and its address.
#[derive(Clone, Copy, Debug)]
pub struct Ld {
    pub(super) value: Value,
    pub(super) load: IrInst,
    pub(super) addr: Value,
    pub(super) offset: i32,
    pub(super) trap: Option<TrapCode>,
}

/// The registers an IR instruction's results live in, in order (a split value takes two,
/// low half first; none for side effects). Not `Copy` (a call has any number of results),
/// unlike the DSL's other primitives: a rule may use an `Out` once, which returning it or
/// binding it for its effect (`let`) does.
#[derive(Clone, Debug, Default)]
pub struct Out(pub(super) Results);

impl Out {
    /// No result.
    pub(super) fn none() -> Out {
        Out::default()
    }

    /// One register.
    pub(super) fn one(r: VReg) -> Out {
        Out(smallvec::smallvec![r])
    }

    /// A two-register result (low half first), or a result and a flag.
    pub(super) fn two(lo: VReg, hi: VReg) -> Out {
        Out(smallvec::smallvec![lo, hi])
    }

    /// A two-register result and a one-register flag.
    pub(super) fn three(lo: VReg, hi: VReg, flag: VReg) -> Out {
        Out(smallvec::smallvec![lo, hi, flag])
    }
}

impl From<Results> for Out {
    fn from(regs: Results) -> Out {
        Out(regs)
    }
}

/// The two registers of an `i128` value, low half first.
#[derive(Clone, Copy, Debug)]
pub struct Pair(pub(super) [VReg; 2]);

pub(super) fn float_size(ty: Type) -> FloatSize {
    if ty == Type::F32 {
        FloatSize::F32
    } else {
        FloatSize::F64
    }
}

/// The call target of `routine`: `__` and the variant in lower case (`__udivti3`, …).
pub(super) fn runtime_dest(routine: Runtime) -> CallDest {
    let name = format!("__{}", format!("{routine:?}").to_lowercase());
    CallDest::Direct(std::sync::Arc::new(kestrel_ir::FunctionName::Named(name)))
}

/// The trap code of an access that may fault (`None`: it cannot, or it is `notrap`).
pub type MaybeTrap = Option<TrapCode>;
