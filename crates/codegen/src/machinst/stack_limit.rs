//! `stack_limit = gvN`, the ISA-neutral part: the plan of how a prologue computes the
//! limit before anything is allocated (each ISA's `stack_limit` emits the plan and the
//! check).
//!
//! Contract. [`plan`] turns the limit's global value into [`Step`]s: start from the `vmctx`
//! parameter where it arrives (a register, or the incoming stack-argument area; the ISA
//! says which, through its `vmctx_step`), then loads at offsets and additions of constants,
//! all into one scratch register of the ISA. A global value the prologue cannot compute
//! this way (a symbol, a load of another type, a chain longer than [`MAX_DEPTH`], no
//! `vmctx` parameter, an addend wider than the ISA adds in one step) is a [`CodegenError`]
//! naming it, at lowering time, never a wrong check.
//!
//! Cost: O(length of the global value chain) per function.

use kestrel_ir::{ArgumentPurpose, Function, GlobalValue, GlobalValueData, Type};
use kestrel_regalloc::PReg;
use smallvec::SmallVec;

use super::CodegenError;

/// Longest global value chain accepted (the verifier already rejects cycles).
pub const MAX_DEPTH: usize = 16;

/// One step of computing the limit into the ISA's scratch register `s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<R> {
    /// `s = reg` (the `vmctx` argument's register).
    FromReg(R),
    /// `s = [frame pointer + 16 + off]` (the `vmctx` argument on the stack).
    FromArgArea(i32),
    /// `s = [s + off]`.
    Load(i32),
    /// `s += imm`.
    AddImm(i64),
}

/// The steps of a limit computation: a short chain (vmctx, a load or two, an offset) is
/// kept inline.
pub type Steps<R> = SmallVec<[Step<R>; 4]>;

/// The steps as lowering records them in the VCode, with `vmctx`'s register as a
/// [`PReg`] (each ISA's emission names it in its own register type).
pub type StackLimitSteps = Steps<PReg>;

/// An error about the stack limit: `stack_limit: WHAT`.
pub fn unsupported(what: String) -> CodegenError {
    CodegenError::unsupported(format!("stack_limit: {what}"))
}

/// The steps computing `f`'s stack limit, or `None` when it declares none. `vmctx_step`
/// gives the first step for the `vmctx` parameter (global value `gv`) at parameter index
/// `index`; an [`Step::AddImm`] constant must fit in `add_bits` bits (signed).
pub fn plan<R>(
    f: &Function,
    vmctx_step: impl Fn(GlobalValue, usize) -> Result<Step<R>, CodegenError>,
    add_bits: u32,
) -> Result<Option<Steps<R>>, CodegenError> {
    let Some(gv) = f.stack_limit else {
        return Ok(None);
    };
    let mut steps = Steps::new();
    let isa = Isa {
        vmctx_step,
        add_bits,
    };
    push_steps(f, &isa, gv, 0, &mut steps)?;
    Ok(Some(steps))
}

/// What `plan` asks of the ISA.
struct Isa<V> {
    vmctx_step: V,
    add_bits: u32,
}

fn push_steps<R, V>(
    f: &Function,
    isa: &Isa<V>,
    gv: GlobalValue,
    depth: usize,
    steps: &mut Steps<R>,
) -> Result<(), CodegenError>
where
    V: Fn(GlobalValue, usize) -> Result<Step<R>, CodegenError>,
{
    if depth > MAX_DEPTH {
        return Err(unsupported(format!(
            "the chain of {gv} is longer than {MAX_DEPTH} global values"
        )));
    }
    let data = f
        .global_values
        .get(gv)
        .ok_or_else(|| unsupported(format!("{gv} is not declared")))?;
    match *data {
        GlobalValueData::Symbol { ref name, .. } => {
            return Err(unsupported(format!(
                "{gv} is the address of symbol {name}; the limit must come from vmctx"
            )));
        }
        GlobalValueData::VMContext => {
            let index = f
                .signature
                .special_param_index(ArgumentPurpose::VMContext)
                .ok_or_else(|| unsupported("`vmctx` needs a vmctx parameter".into()))?;
            steps.push((isa.vmctx_step)(gv, index)?);
        }
        GlobalValueData::Load {
            base,
            offset,
            global_type,
            ..
        } => {
            if global_type != Type::I64 {
                return Err(unsupported(format!(
                    "{gv} loads {global_type}; the limit is a 64-bit address"
                )));
            }
            push_steps(f, isa, base, depth + 1, steps)?;
            steps.push(Step::Load(offset));
        }
        GlobalValueData::IAddImm { base, offset, .. } => {
            let bits = isa.add_bits;
            if bits < 64 && !(-(1i64 << (bits - 1))..1i64 << (bits - 1)).contains(&offset) {
                return Err(unsupported(format!(
                    "{gv} adds {offset}, which does not fit in {bits} bits"
                )));
            }
            push_steps(f, isa, base, depth + 1, steps)?;
            steps.push(Step::AddImm(offset));
        }
    }
    Ok(())
}
