//! The values the x86-64 rules pass between extractors and constructors: a merged load
//! ([`Ld`]) beside the shared ones (`machinst::isel`: [`Imm`], [`Cmp`], [`FCmp`], [`Out`],
//! [`Pair`]).

use kestrel_ir::{Inst as IrInst, TrapCode, Type, Value};

use super::asm::sse::FloatSize;
use super::inst::CallDest;
use super::lower::Runtime;
pub use crate::machinst::isel::{Cmp, FCmp, Imm, MaybeTrap, Out, Pair};

/// A load its single ALU user may perform: the loaded value, the load and its address.
#[derive(Clone, Copy, Debug)]
pub struct Ld {
    pub(super) value: Value,
    pub(super) load: IrInst,
    pub(super) addr: Value,
    pub(super) offset: i32,
    pub(super) trap: Option<TrapCode>,
}

pub(super) fn float_size(ty: Type) -> FloatSize {
    crate::machinst::isel::by_precision(ty, FloatSize::F32, FloatSize::F64)
}

/// The call target of `routine`: `__` and the variant in lower case (`__udivti3`, …).
pub(super) fn runtime_dest(routine: Runtime) -> CallDest {
    CallDest::Direct(crate::machinst::isel::runtime_name(routine))
}
