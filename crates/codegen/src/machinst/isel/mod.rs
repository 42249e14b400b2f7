//! What every ISA's instruction selector shares: the selection context [`IselCtx`] (one IR
//! instruction's state, generic over the ISA's instruction and feature types), the values
//! the rules pass between extractors and constructors ([`Out`], [`Pair`], [`Imm`], [`Cmp`],
//! [`FCmp`], [`MaybeTrap`]), the rules prelude (`prelude.rules`, compiled with each ISA's
//! rules by `build.rs`) and the Rust bodies of the prelude externs that read the same on
//! every ISA ([`isel_prelude_externs`]).
//!
//! # Contract
//!
//! An ISA runs its generated `constructor_lower` (or `constructor_lower_branch`) through
//! [`select_inst`] ([`select_branch`]), which builds one [`IselCtx`] for the IR instruction
//! and hands the outcome to the driver ([`IselCtx::selected`]). A partial constructor that fails for a reason other than "no
//! rule" keeps its error in [`IselCtx::error`] ([`IselCtx::result`]), which `selected`
//! returns instead of "unsupported".
//!
//! Cost: O(1) per call of each helper here.

mod prelude;

pub mod global_value;
pub mod vec;

pub(crate) use prelude::isel_prelude_externs;

use kestrel_ir::{Inst as IrInst, TrapCode, Type, Value};
use kestrel_regalloc::{RegClass, VReg};

use crate::machinst::lower::{Lower, Results};
use crate::machinst::{BlockIndex, CodegenError, MachInst};

/// Selection state for one IR instruction, for an ISA with instructions `I` and CPU
/// features `F`.
pub struct IselCtx<'a, 'f, I: MachInst, F> {
    pub lower: &'a mut Lower<'f, I>,
    /// The instruction being lowered.
    pub inst: IrInst,
    /// The lowered successors, for a terminator.
    pub targets: &'a [BlockIndex],
    /// What the target CPU has: an instruction it lacks gets its baseline fallback.
    pub features: F,
    /// Why a partial constructor failed (an ABI error, a CPU feature the target lacks),
    /// reported instead of "unsupported".
    pub error: Option<CodegenError>,
}

impl<'a, 'f, I: MachInst, F> IselCtx<'a, 'f, I, F> {
    /// The context for lowering `inst` (with `targets`, its lowered successors, for a
    /// terminator).
    #[inline]
    pub fn new(
        lower: &'a mut Lower<'f, I>,
        inst: IrInst,
        targets: &'a [BlockIndex],
        features: F,
    ) -> Self {
        IselCtx {
            lower,
            inst,
            targets,
            features,
            error: None,
        }
    }

    /// What the driver gets once the selector has run: see [`Lower::selected`]. The
    /// outcome is read where the selector left it: moving it out of the `Option` would copy
    /// it wide right after it was written in pieces, and stall.
    #[inline]
    pub fn selected(&mut self, lowered: &Option<Out>) -> Result<bool, CodegenError> {
        let regs = lowered.as_ref().map(|out| out.0.as_slice());
        self.lower.selected(regs, &mut self.error)
    }

    /// A partial constructor's outcome: the result registers, or `None` with the error kept
    /// for the driver.
    pub fn result(&mut self, done: Result<Results, CodegenError>) -> Option<Out> {
        match done {
            Ok(regs) => Some(Out(regs)),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    /// Fresh registers for a pair and, `with_flag`, for its flag (allocated in that order).
    pub fn pair_and_flag_regs(&mut self, with_flag: bool) -> ([VReg; 2], Option<VReg>) {
        let pair = [self.int(), self.int()];
        (pair, with_flag.then(|| self.int()))
    }

    /// The instruction `inst` builds for a fresh integer register, emitted; the register.
    #[inline]
    pub fn int_def<T: Into<I>>(&mut self, inst: impl FnOnce(VReg) -> T) -> VReg {
        let dst = self.int();
        self.lower.emit(inst(dst));
        dst
    }

    /// A fresh integer register.
    #[inline]
    pub fn int(&mut self) -> VReg {
        self.lower.alloc_vreg(RegClass::Int)
    }

    /// The parameter and result types of a runtime call of the current instruction with
    /// `args`: the arguments' types to the instruction's result types.
    pub fn call_types(&self, args: &[Value]) -> (Vec<Type>, Vec<Type>) {
        let f = self.lower.f;
        let params = args.iter().map(|&a| f.dfg.value_type(a)).collect();
        let results = f.dfg.inst_results(self.inst);
        let returns = results.iter().map(|&r| f.dfg.value_type(r)).collect();
        (params, returns)
    }
}

/// Runs an ISA's selector `rule` (its generated `constructor_lower`) on the non-branch
/// instruction `inst`: see [`IselCtx::selected`] for the outcome.
#[inline]
pub fn select_inst<'a, 'f, I: MachInst, F>(
    lower: &'a mut Lower<'f, I>,
    inst: IrInst,
    features: F,
    rule: impl FnOnce(&mut IselCtx<'a, 'f, I, F>, IrInst) -> Option<Out>,
) -> Result<bool, CodegenError> {
    let mut ctx = IselCtx::new(lower, inst, &[], features);
    let lowered = rule(&mut ctx, inst);
    ctx.selected(&lowered)
}

/// Runs an ISA's branch selector `rule` (its generated `constructor_lower_branch`) on the
/// terminator `inst` with its lowered successors `targets`; `Ok(None)` when no rule
/// matches, the error a partial constructor kept when it failed (a `try_call` the backend
/// cannot lower).
#[inline]
pub fn select_branch<'a, 'f, I: MachInst, F>(
    lower: &'a mut Lower<'f, I>,
    inst: IrInst,
    targets: &'a [BlockIndex],
    features: F,
    rule: impl FnOnce(&mut IselCtx<'a, 'f, I, F>, IrInst) -> Option<Out>,
) -> Result<Option<()>, CodegenError> {
    let mut ctx = IselCtx::new(lower, inst, targets, features);
    match (rule(&mut ctx, inst), ctx.error.take()) {
        (None, Some(e)) => Err(e),
        (lowered, _) => Ok(lowered.map(|_| ())),
    }
}

/// The registers an IR instruction's results live in, in order (a split value takes two,
/// low half first; none for side effects). Not `Copy` (a call has any number of results),
/// unlike the DSL's other primitives: a rule may use an `Out` once, which returning it or
/// binding it for its effect (`let`) does.
#[derive(Clone, Debug, Default)]
pub struct Out(pub Results);

impl Out {
    /// No result.
    pub fn none() -> Out {
        Out::default()
    }

    /// One register.
    pub fn one(r: VReg) -> Out {
        Out(smallvec::smallvec![r])
    }

    /// A two-register result (low half first), or a result and a flag.
    pub fn two(lo: VReg, hi: VReg) -> Out {
        Out(smallvec::smallvec![lo, hi])
    }

    /// A two-register result and a one-register flag.
    pub fn three(lo: VReg, hi: VReg, flag: VReg) -> Out {
        Out(smallvec::smallvec![lo, hi, flag])
    }
}

impl From<Results> for Out {
    fn from(regs: Results) -> Out {
        Out(regs)
    }
}

/// Two registers the rules pass around together: an `i128`'s halves (low first), or a value
/// and its flag.
#[derive(Clone, Copy, Debug)]
pub struct Pair(pub [VReg; 2]);

/// A constant operand that a user may fold: the `iconst` value and its sign-extended bits.
#[derive(Clone, Copy, Debug)]
pub struct Imm {
    pub value: Value,
    pub imm: i64,
}

/// A mergeable `icmp`: its result value, condition and operands.
#[derive(Clone, Copy, Debug)]
pub struct Cmp {
    pub value: Value,
    pub cc: kestrel_ir::IntCC,
    pub a: Value,
    pub b: Value,
}

/// A mergeable `fcmp`: its result value, condition and operands.
#[derive(Clone, Copy, Debug)]
pub struct FCmp {
    pub value: Value,
    pub cc: kestrel_ir::FloatCC,
    pub a: Value,
    pub b: Value,
}

/// The trap code of an access that may fault (`None`: it cannot, or it is `notrap`).
pub type MaybeTrap = Option<TrapCode>;

/// Whether an ISA's list of rules (its generated `RULE_SITES`) fits
/// `CompiledCode::rules_fired`, which holds rule indices as `u16`.
pub const fn rule_indices_fit(sites: &[&str]) -> bool {
    sites.len() <= u16::MAX as usize
}

/// `wide` for a 64-bit type, `narrow` for one below: the operation size of a type whose
/// upper bits may be garbage (8 and 16 bits use the 32-bit forms).
pub fn by_width<T>(ty: Type, narrow: T, wide: T) -> T {
    if ty.bits() == 64 {
        wide
    } else {
        narrow
    }
}

/// `single` for `f32`, `double` for `f64`.
pub fn by_precision<T>(ty: Type, single: T, double: T) -> T {
    if ty == Type::F32 {
        single
    } else {
        double
    }
}

/// All bits of an integer or float type's width (up to 64).
pub fn width_mask(ty: Type) -> u64 {
    match ty.bits() {
        64.. => u64::MAX,
        bits => (1 << bits) - 1,
    }
}

/// The sign bit of a type's bits.
pub fn sign_bit(ty: Type) -> u64 {
    1 << (ty.bits() - 1)
}

/// The name of the runtime routine `routine` (a variant of the rules' `Runtime` enum):
/// `__` and the variant in lower case (`__udivti3`, …).
pub fn runtime_name(routine: impl std::fmt::Debug) -> std::sync::Arc<kestrel_ir::FunctionName> {
    let name = format!("__{}", format!("{routine:?}").to_lowercase());
    std::sync::Arc::new(kestrel_ir::FunctionName::Named(name))
}
