//! Memory for the x86-64 selector: what the memory rules of `lower.rules` cannot say yet.
//!
//! # Contract
//!
//! - `addr_mem` folds an address (`iadd`s of a base, a scaled index and constants) into one
//!   x86-64 addressing mode, merging the producers it absorbs; `slack` keeps room for a
//!   second access 8 bytes further (`i128` halves). How each term folds the rules say
//!   (`addr_fold`); this file keeps the plan (terms, displacement, merges) and checks that
//!   it fits one mode.
//! - `lea_plan` is the same fold for an `i64` `iadd` computed by a `lea`, when it absorbs
//!   at least one producer (otherwise an `add` is as short); `lea_of` merges and builds it.
//! - `load` emits one load; `symbol_addr` a symbol's address; the [`GlobalValueSteps`] of a
//!   global value chain (walked by `machinst::isel::global_value`).
//!
//! Load and store kinds, `i128` halves and big-endian accesses are rules. Accesses through
//! a pointer are trap sites with the flags' trap code (none for `notrap` and for stack
//! slots).
//!
//! Cost: O(1) per access (a plan folds at most 3 levels of `iadd`s) and per step of a
//! global value chain.

use std::sync::Arc;

use kestrel_ir::{FunctionName, Inst as IrInst, Opcode, TrapCode, Type, Value};
use kestrel_regalloc::{RegClass, VReg};
use smallvec::SmallVec;

use super::asm::alu::AluOp;
use super::asm::moves::ExtMode;
use super::asm::Size;
use super::inst::{AluInst, Inst, LoadKind, Mem, MemInst, RegImm};
use super::lower::generated::{self, AddrFold, Producer};
use super::lower::IselCtx;
use crate::machinst::isel::global_value::{GlobalValueSteps, StepResult};
use crate::machinst::isel::MaybeTrap;
use crate::machinst::lower::Lower;

fn int(lower: &mut Lower<'_, Inst>) -> VReg {
    lower.alloc_vreg(RegClass::Int)
}

/// The address of symbol `name` plus `offset` in a fresh vreg: PC-relative when the symbol
/// is colocated (same module or executable), through the GOT otherwise.
pub(super) fn symbol_addr(
    lower: &mut Lower<'_, Inst>,
    name: &kestrel_ir::FunctionName,
    offset: i32,
    colocated: bool,
) -> VReg {
    let dst = int(lower);
    lower.emit(MemInst::SymbolAddr {
        dst,
        name: Arc::new(name.clone()),
        offset,
        got: !colocated,
    });
    dst
}

impl GlobalValueSteps for IselCtx<'_, '_> {
    fn global_load(&mut self, ty: Type, base: VReg, offset: i32, trap: MaybeTrap) -> Option<VReg> {
        let kind = match ty {
            Type::I64 => LoadKind::Int { size: Size::S64 },
            Type::I32 => LoadKind::Int { size: Size::S32 },
            Type::I16 => LoadKind::Zext { mode: ExtMode::WL },
            Type::I8 => LoadKind::Zext { mode: ExtMode::BL },
            _ => return None,
        };
        Some(load(
            self.lower,
            kind,
            Mem::Reg { base, disp: offset },
            trap,
        ))
    }

    fn global_add(&mut self, base: VReg, offset: i64, ty: Type) -> VReg {
        let lower = &mut *self.lower;
        let size = if ty == Type::I64 {
            Size::S64
        } else {
            Size::S32
        };
        let b = match i32::try_from(offset) {
            Ok(k) => RegImm::Imm(k),
            Err(_) => {
                let k = int(lower);
                lower.emit(AluInst::MovImm {
                    dst: k,
                    imm: offset as u64,
                });
                RegImm::Reg(k)
            }
        };
        let dst = int(lower);
        lower.emit(AluInst::Alu {
            op: AluOp::Add,
            size,
            dst,
            a: base,
            b,
        });
        dst
    }

    /// An offset beyond 32 bits is added to the symbol's address.
    fn symbol(&mut self, name: &FunctionName, offset: i64, colocated: bool) -> StepResult {
        let lower = &mut *self.lower;
        Ok(match i32::try_from(offset) {
            Ok(offset) => symbol_addr(lower, name, offset, colocated),
            Err(_) => {
                let base = symbol_addr(lower, name, 0, colocated);
                let k = int(lower);
                lower.emit(AluInst::MovImm {
                    dst: k,
                    imm: offset as u64,
                });
                let dst = int(lower);
                lower.emit(AluInst::Alu {
                    op: AluOp::Add,
                    size: Size::S64,
                    dst,
                    a: base,
                    b: RegImm::Reg(k),
                });
                dst
            }
        })
    }
}

/// One load instruction into a fresh register of the kind's class.
pub(super) fn load(
    lower: &mut Lower<'_, Inst>,
    kind: LoadKind,
    mem: Mem,
    trap: Option<TrapCode>,
) -> VReg {
    let class = match kind {
        LoadKind::Float { size: _ } | LoadKind::Vec => RegClass::Float,
        _ => RegClass::Int,
    };
    let dst = lower.alloc_vreg(class);
    lower.emit(MemInst::Load {
        kind,
        dst,
        mem,
        trap,
    });
    dst
}

/// How an address folds into an x86-64 addressing mode: up to two register terms (the
/// second, if any, scaled by `1 << shift`), a displacement, and the values whose producers
/// the access absorbs (merged only once the plan is known to fit).
/// A walk folds `iadd`s to depth 3: at most 8 terms, and 7 `iadd`s plus 2 merges per term;
/// the lists are inline for all but the deepest trees.
struct AddrPlan {
    terms: SmallVec<[(Value, u8); 8]>,
    disp: i64,
    merges: SmallVec<[Value; 16]>,
    /// Producers other than constants the plan takes over (their only use is folded).
    absorbed: u32,
    /// Whether a pure producer with other uses may be computed again inside the operand
    /// (free in an access's address; not in a `lea`, which would only duplicate it).
    recompute: bool,
}

impl AddrPlan {
    fn new(disp: i64) -> AddrPlan {
        AddrPlan {
            terms: SmallVec::new(),
            disp,
            merges: SmallVec::new(),
            absorbed: 0,
            recompute: true,
        }
    }

    /// The base and optional scaled index, when the terms fit one addressing mode (one or
    /// two registers, at most one of them scaled) and `disp + slack` fits 32 bits.
    #[inline]
    fn shape(&self, slack: i32) -> Option<(Value, Option<(Value, u8)>)> {
        let fits = i32::try_from(self.disp).is_ok()
            && i32::try_from(self.disp.wrapping_add(i64::from(slack))).is_ok();
        let terms = match self.terms.as_slice() {
            [(b, 0)] => Some((*b, None)),
            [(b, 0), (i, s)] | [(i, s), (b, 0)] => Some((*b, Some((*i, *s)))),
            _ => None,
        };
        terms.filter(|_| fits)
    }

    /// Note the fold of `v`'s producer with constant operand `k` (a shift or a multiply):
    /// the plan takes one use of `v` unless `shared`, and the constant with the producer
    /// when it `absorbed` it.
    fn take_over(&mut self, v: Value, k: Value, shared: bool, absorbed: bool) {
        if !shared {
            self.merges.push(v);
        }
        if absorbed {
            self.merges.push(k);
            self.absorbed += 1;
        }
    }

    /// Merge what the plan absorbs and build its operand (`shape` must have succeeded).
    #[inline]
    fn to_mem(&self, lower: &mut Lower<'_, Inst>, base: Value, index: Option<(Value, u8)>) -> Mem {
        for &v in &self.merges {
            lower.merge(v);
        }
        let disp = self.disp as i32;
        let base = lower.value_vreg(base);
        match index {
            None => Mem::Reg { base, disp },
            Some((index, shift)) => Mem::RegIndex {
                base,
                index: lower.value_vreg(index),
                shift,
                disp,
            },
        }
    }
}

impl AddrPlan {
    /// Add the address term `v`, whose use is the access's own (or that of a producer the
    /// access absorbed), so folding `v`'s producer merges it. How it folds (if at all), the
    /// rules say (`addr_fold`); a fold they skip leaves `v` a plain register term.
    ///
    /// `shared`: `v` is an operand of a producer the access recomputes without absorbing it
    /// (an `iadd` with other uses, which stays emitted unless those uses go too). The access
    /// then merges nothing below it: the producer still reads its operands.
    ///
    /// `absorbed` (of a fold): the access is the last use of `v`, so folding takes the
    /// producer over with its operands' uses. Otherwise a pure producer in this block is
    /// recomputed in the addressing mode (free there), taking one use of `v`: once every
    /// access has done so, `v` has no uses left and its producer emits nothing, and the
    /// access that takes the last use absorbs it, operands and all.
    fn walk(
        &mut self,
        ctx: &mut IselCtx<'_, '_>,
        user: IrInst,
        v: Value,
        depth: u32,
        shared: bool,
    ) {
        let deep = depth < 3;
        match generated::constructor_addr_fold(ctx, user, v, deep, shared, self.recompute) {
            AddrFold::Disp { k } => {
                // Address arithmetic wraps at 64 bits, like the sum it replaces.
                self.disp = self.disp.wrapping_add(k);
                if !shared {
                    self.merges.push(v);
                }
            }
            AddrFold::Add { a, b, absorbed } => {
                if !shared {
                    self.merges.push(v);
                }
                self.absorbed += u32::from(absorbed);
                self.walk(ctx, user, a, depth + 1, !absorbed);
                self.walk(ctx, user, b, depth + 1, !absorbed);
            }
            AddrFold::Scaled {
                x,
                k,
                shift,
                absorbed,
            } => {
                self.take_over(v, k, shared, absorbed);
                self.terms.push((x, shift));
            }
            AddrFold::Mul {
                x,
                k,
                shift,
                absorbed,
            } => {
                self.take_over(v, k, shared, absorbed);
                self.terms.push((x, 0));
                self.terms.push((x, shift));
            }
            AddrFold::Term => self.terms.push((v, 0)),
        }
    }
}

/// The producer of the address term `v` when an access by `user` may fold it (see
/// `addr_fold`): an `iadd`, `ishl` or `imul` that the access absorbs (its last use, unless
/// `shared`) or, with `recompute`, a pure one in this block it computes again.
pub(super) fn addr_producer(
    ctx: &mut IselCtx<'_, '_>,
    user: IrInst,
    v: Value,
    shared: bool,
    recompute: bool,
) -> Option<Producer> {
    let inst = fold_candidate(ctx, v)?;
    let absorbed = !shared && ctx.lower.mergeable_inst(v, user).is_some();
    let foldable = absorbed || (recompute && ctx.lower.recomputable_inst(v).is_some());
    foldable.then_some(Producer::Of { inst, absorbed })
}

/// `v`'s producer if it is of an opcode the `addr_fold` rules may fold (`iadd`, `ishl`,
/// `imul`): a quick filter before asking them (most address terms are loads, parameters or
/// extensions, which fold into nothing).
fn fold_candidate(ctx: &IselCtx<'_, '_>, v: Value) -> Option<IrInst> {
    let inst = ctx.lower.def_inst(v)?;
    let op = ctx.lower.data(inst).opcode();
    matches!(op, Opcode::Iadd | Opcode::Ishl | Opcode::Imul).then_some(inst)
}

fn may_fold(ctx: &IselCtx<'_, '_>, v: Value) -> bool {
    fold_candidate(ctx, v).is_some()
}

/// The memory operand of an access at `addr + offset` by `user`, with `iadd`s of
/// constants folded into the displacement and an `iadd` of a shifted (by 0 to 3) index
/// into a scaled index. `slack` more bytes past the displacement must stay addressable (8
/// for a two-half `i128` access). Falls back to `[addr + offset]` when the fold does not fit
/// (more than two registers, two scaled ones, or a displacement out of `i32` range).
pub(super) fn addr_mem(
    ctx: &mut IselCtx<'_, '_>,
    user: IrInst,
    addr: Value,
    offset: i32,
    slack: i32,
) -> Mem {
    // An address no rule folds (a parameter, a load, an extension: most of them) is its own
    // base, as the walk below would find, without building a plan.
    if offset.checked_add(slack).is_some()
        && !may_fold(ctx, addr)
        && ctx.lower.const_value(addr).is_none()
    {
        return Mem::Reg {
            base: ctx.lower.value_vreg(addr),
            disp: offset,
        };
    }
    let mut plan = AddrPlan::new(i64::from(offset));
    plan.walk(ctx, user, addr, 0, false);
    let lower = &mut *ctx.lower;
    match plan.shape(slack) {
        Some((base, index)) => plan.to_mem(lower, base, index),
        None if offset.checked_add(slack).is_none() => {
            // No room for the high half's displacement: add the offset first.
            let a = lower.value_vreg(addr);
            let base = lower.alloc_vreg(RegClass::Int);
            lower.emit(AluInst::Alu {
                op: AluOp::Add,
                size: Size::S64,
                dst: base,
                a,
                b: RegImm::Imm(offset),
            });
            Mem::Reg { base, disp: 0 }
        }
        None => Mem::Reg {
            base: lower.value_vreg(addr),
            disp: offset,
        },
    }
}

/// The shift of the scaled index that multiplies by `k` together with the base: `x * k` is
/// `[x + x << shift]` for `k` = 3, 5, 9.
pub(super) fn lea_shift(k: i64) -> Option<u8> {
    match k {
        3 => Some(1),
        5 => Some(2),
        9 => Some(3),
        _ => None,
    }
}

/// A sum one `lea` computes (`lea_plan`), nothing merged yet; `lea_of` merges and builds it.
#[derive(Clone, Copy, Debug)]
pub struct LeaPlan {
    base: Value,
    index: Option<(Value, u8)>,
    disp: i64,
    merges: [Option<Value>; LeaPlan::MAX_MERGES],
}

impl LeaPlan {
    /// A walk from the operands of one `iadd` folds at most two levels of `iadd`s below it,
    /// so a plan that fits one addressing mode merges at most this many values.
    const MAX_MERGES: usize = 16;
}

/// The plan computing `a + b` for the `i64` `iadd` `user` as an address (see `addr_mem`),
/// when the fold takes over at least one producer (`iadd`, shift or multiply) whose only
/// use it is, so one `lea` replaces two or more instructions. None otherwise (an `add` does
/// as well), or when the sum does not fit one addressing mode.
pub(super) fn lea_plan(
    ctx: &mut IselCtx<'_, '_>,
    user: IrInst,
    a: Value,
    b: Value,
) -> Option<LeaPlan> {
    // Most sums have no foldable producer: say so before planning.
    if !may_fold(ctx, a) && !may_fold(ctx, b) {
        return None;
    }
    // One level of `iadd` below the operands at most (`walk` folds `iadd`s above depth
    // 3), and only producers whose single use this is: a `lea` gains nothing from
    // recomputing a shared one, and deep trees rarely fit one addressing mode.
    let mut plan = AddrPlan::new(0);
    plan.recompute = false;
    plan.walk(ctx, user, a, 2, false);
    plan.walk(ctx, user, b, 2, false);
    if plan.absorbed == 0 || plan.merges.len() > LeaPlan::MAX_MERGES {
        return None;
    }
    let (base, index) = plan.shape(0)?;
    let mut merges = [None; LeaPlan::MAX_MERGES];
    for (slot, &v) in merges.iter_mut().zip(&plan.merges) {
        *slot = Some(v);
    }
    Some(LeaPlan {
        base,
        index,
        disp: plan.disp,
        merges,
    })
}

/// The operand of `plan`'s `lea`, its producers merged.
pub(super) fn lea_of(lower: &mut Lower<'_, Inst>, plan: LeaPlan) -> Mem {
    let mut built = AddrPlan::new(plan.disp);
    built.merges.extend(plan.merges.iter().flatten().copied());
    built.to_mem(lower, plan.base, plan.index)
}
