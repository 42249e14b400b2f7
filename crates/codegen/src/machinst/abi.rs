//! Calling conventions, for every ISA: where each part of an argument or result goes, and
//! the argument, return and call sequences built from that.
//!
//! # Contract
//!
//! An ISA describes its conventions through [`Abi`]: the location of each parameter and
//! result *part* (a value in two registers, an `i128`, has two parts, low first; a value
//! of any other class or size is one part), the register of the return-area pointer, and how
//! to build a move, the argument and return pseudo-instructions, a call, a return-area
//! address, and a load or store of one part. [`Assigner`] hands out registers and memory
//! slots in order for the conventions that work that way (System V, AAPCS64, and the
//! parameters of `winch`); an ISA may walk a signature its own way (Windows x64, the
//! results of `winch`).
//!
//! The shared code guarantees:
//! - [`gen_args`] defines every entry-block parameter part from its register (one fixed
//!   def per part in one `Args` pseudo-instruction) or from its incoming stack slot (a
//!   load after it), and the return-area pointer from its register when the function
//!   returns through memory.
//! - [`gen_return`] stores the results that go to the return area through that pointer and
//!   returns the others in their registers (one fixed use per part, each vreg in one
//!   register: a vreg asked for in two is copied first).
//! - [`gen_call`] computes the outgoing return area's address when the callee returns
//!   through memory, stores the stack arguments, passes the register arguments and the
//!   pointer as fixed uses, defines the register results as fixed defs of the call, and
//!   loads the memory results after it. Memory results and stack arguments are accessed as
//!   8-byte slots of their class, except the return area of `winch`, accessed exactly as
//!   wide as the result's type, and 128-bit vectors, accessed as 16-byte slots.
//! - Vectors ([`vector_value_regs`], for an ISA whose [`Abi::value_regs`] admits them): a
//!   128-bit vector is one part in the float/vector class. The [`Assigner`] gives it the
//!   class's next register (System V: `xmm0`–`xmm7`; AAPCS64: `v0`–`v7`, the same list as
//!   the floats), else a 16-byte, 16-aligned memory slot.
//! - The `tail` convention places arguments and results as System V / AAPCS64 do; its
//!   callee pops its stack arguments ([`tail_stack_bytes`]: the area rounded up to 16
//!   bytes). [`gen_call`] tells the call how many bytes its callee pops, and
//!   [`gen_return_call`] builds a tail call: the register arguments as fixed uses, the
//!   stack arguments stored at [`TAIL_CALL_HEADER`] and above in the outgoing area (the
//!   ISA's sequence moves them into place), and this function's own return-area pointer
//!   passed on (the callee returns what this function returns, so into the same area).
//! - A signature an ISA cannot carry is a [`CodegenError`] naming what, never a wrong
//!   location.
//!
//! Cost: O(parameters + results) per function entry, return and call; the walks build no
//! location lists (each part is handed to a closure), and the sequences' own lists are
//! inline for up to eight arguments (no allocation for most calls).

use kestrel_ir::{AbiParam, CallConv, Function, Signature, Type, Value};
use kestrel_regalloc::{PReg, RegClass, VReg};
use smallvec::SmallVec;

use super::frame::FrameUse;
use super::lower::{Lower, Results, ValueRegs};
use super::operands::FixedRegs;
use super::shared_inst::CallDest;
use super::stack_limit::{self, StackLimitSteps, Step};
use super::{CodegenError, MachInst};

/// Where one parameter part goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    Reg(PReg),
    /// Byte offset in the stack-argument area.
    Stack(i32),
}

/// Where one result part goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetLoc {
    Reg(PReg),
    /// Byte offset in the return area.
    Area(i32),
}

/// The locations of one value's parts: one, or two for an `i128` (low first).
pub type Parts<T> = SmallVec<[T; 2]>;

/// The locations of a signature's parameters or results, one [`Parts`] per value; inline for
/// up to eight values.
pub type SigLocs<T> = SmallVec<[Parts<T>; 8]>;

/// A memory place an argument or result part is moved through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbiMem {
    /// An incoming stack argument at this offset of the caller's argument area.
    IncomingArg(i32),
    /// An outgoing stack argument at this offset of the next call's argument area.
    OutgoingArg(i32),
    /// This offset of the outgoing return area (in this function's frame).
    RetArea(i32),
    /// This offset from the incoming return-area pointer.
    Reg(VReg, i32),
}

/// The type whose width an access of one part of `class` has in an 8-byte slot (a stack
/// argument, or a return area other than `winch`'s): all 64 bits of its register.
pub fn slot_type(class: RegClass) -> Type {
    match class {
        RegClass::Int => Type::I64,
        RegClass::Float => Type::F64,
    }
}

/// The type of the access of a part of a value of type `ty` and class `class` in a
/// stack-argument or return-area slot: a 128-bit vector's own type (a 16-byte slot), else
/// [`slot_type`].
pub fn part_slot_type(ty: Type, class: RegClass) -> Type {
    if ty.is_vector() {
        ty
    } else {
        slot_type(class)
    }
}

/// How a 128-bit vector lives on an ISA that lowers vectors: one register of the
/// float/vector class. Narrower vectors, vectors of `f16` lanes (no backend lowers those
/// yet) and every scalar: `None`.
pub fn vector_value_regs(ty: Type) -> Option<(RegClass, usize)> {
    let lanes_lowered = ty.lane_type() != Type::F16;
    (ty.is_vector() && ty.bits() == 128 && lanes_lowered).then_some((RegClass::Float, 1))
}

/// What an ISA tells the shared calling-convention code (see the module contract).
pub trait Abi {
    /// The ISA's instruction.
    type Inst: MachInst;
    /// Bytes of the save slot of one callee-saved float register.
    const FLOAT_SAVE_BYTES: u32;
    /// The return area's size is rounded up to this in the frame.
    const RET_AREA_ALIGN: u32;
    /// The widest constant a stack-limit step adds, in bits (signed).
    const STACK_LIMIT_ADD_BITS: u32;
    /// The end of an unsupported-convention error's text (`" on aarch64"`, or nothing).
    const CONV_ERROR_SUFFIX: &'static str;
    /// How values of `ty` live in registers: class and count.
    fn value_regs(ty: Type) -> Option<(RegClass, usize)> {
        scalar_value_regs(ty)
    }
    /// Each parameter part of `sig` with its location, in order, as `each(parameter index,
    /// location)`; `ret_area` says whether the call passes a return-area pointer (which may
    /// take the first integer argument register). The convention is one
    /// [`check_call_conv`] accepts; an unsupported type is an error. (Called through
    /// [`each_param_loc`].)
    fn each_param_loc(
        sig: &Signature,
        ret_area: bool,
        each: impl FnMut(usize, Loc),
    ) -> Result<(), CodegenError>;
    /// Each result part of `sig` with its location, in order, as `each(result index,
    /// location)`; returns the size of the return area (0: none). Every result's type is
    /// checked before its parts are visited. The convention is one [`check_call_conv`]
    /// accepts. (Called through [`each_ret_loc`].)
    fn each_ret_loc(sig: &Signature, each: impl FnMut(usize, RetLoc)) -> Result<u32, CodegenError>;
    /// The register that carries the return area's address under `cc`.
    fn ret_area_reg(cc: CallConv) -> PReg;
    /// What `inst` asks of the frame.
    fn frame_use(inst: &Self::Inst) -> FrameUse;
    /// The registers a function of convention `cc` must preserve (besides the frame
    /// pointer and the stack pointer): integers first, then floats, in save order.
    fn callee_saved(cc: CallConv) -> &'static [PReg];
    /// Bytes of outgoing-argument area a call of convention `cc` needs at least.
    fn min_out_area(_cc: CallConv) -> u32 {
        0
    }
    /// `dst = src`.
    fn gen_move(dst: VReg, src: VReg) -> Self::Inst;
    /// The entry pseudo-instruction defining `args` in their registers.
    fn gen_args(args: FixedRegs) -> Self::Inst;
    /// The return of `rets` in their registers.
    fn gen_ret(rets: FixedRegs) -> Self::Inst;
    /// A call of `dest` of convention `conv`: `regs` holds the fixed uses (the first
    /// `num_uses`) then the fixed defs; the callee pops `callee_pops` bytes of stack.
    fn gen_call(
        dest: CallDest,
        regs: FixedRegs,
        num_uses: u32,
        conv: CallConv,
        callee_pops: u16,
    ) -> Self::Inst;
    /// A tail call of `dest` with the argument uses `regs` and `stack_bytes` of stack
    /// arguments stored above the header of the outgoing area.
    fn gen_return_call(dest: CallDest, regs: FixedRegs, stack_bytes: u32) -> Self::Inst;
    /// `dst = address of the outgoing return area` of `size` bytes.
    fn gen_ret_area_addr(dst: VReg, size: u32) -> Self::Inst;
    /// `dst = mem`, as wide as `ty` (an integer narrower than 64 bits zero-extended).
    fn gen_load(dst: VReg, mem: AbiMem, ty: Type) -> Self::Inst;
    /// `mem = src`, as wide as `ty`.
    fn gen_store(src: VReg, mem: AbiMem, ty: Type) -> Self::Inst;
}

/// The error for a type no register class of the ISA holds (`where_` ends its text).
fn unsupported_type(ty: Type, where_: &str) -> CodegenError {
    CodegenError::Unsupported {
        opcode: None,
        ty: Some(ty),
        what: format!("argument or result type in the calling convention{where_}"),
    }
}

/// How the scalar types live in registers on both ISAs: integers up to 64 bits in one
/// integer register, `i128` in two (low half first), `f32` and `f64` in one float
/// register; nothing else.
pub fn scalar_value_regs(ty: Type) -> Option<(RegClass, usize)> {
    if ty.is_int() && ty.bits() <= 64 {
        Some((RegClass::Int, 1))
    } else if ty == Type::I128 {
        Some((RegClass::Int, 2))
    } else if ty == Type::F32 || ty == Type::F64 {
        Some((RegClass::Float, 1))
    } else {
        None
    }
}

/// The signature of a runtime-library helper: `system_v`, these parameter and result
/// types.
pub fn libcall_signature(params: &[Type], returns: &[Type]) -> Signature {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params = params.iter().map(|&t| AbiParam::new(t)).collect();
    sig.returns = returns.iter().map(|&t| AbiParam::new(t)).collect();
    sig
}

/// [`Abi::value_regs`] as a result.
pub fn regs_of<A: Abi>(ty: Type) -> Result<(RegClass, usize), CodegenError> {
    A::value_regs(ty).ok_or_else(|| unsupported_type(ty, A::CONV_ERROR_SUFFIX))
}

/// How a convention places a two-part value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairs {
    /// Each part on its own: the next register of its class, else the next 8 bytes.
    Split,
    /// Both parts in the next two registers of the class, or both in 16 aligned bytes of
    /// memory (later values may still take registers).
    Together,
    /// AAPCS64 (rules C.9, C.11): both parts in an even-numbered pair of registers (an odd
    /// next register is skipped), or 16 aligned bytes of memory, after which the class gives
    /// out no more registers.
    EvenPairOrMemory,
}

/// A convention that hands out registers per class and memory slots in order.
#[derive(Clone, Copy, Debug)]
pub struct RegConv {
    /// The integer registers, in order.
    pub ints: &'static [PReg],
    /// The float registers, in order.
    pub floats: &'static [PReg],
    /// How a two-part value is placed.
    pub pairs: Pairs,
}

/// Where an [`Assigner`] put one part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Reg(PReg),
    /// A byte offset in the memory area (stack arguments, or the return area).
    Mem(i32),
}

impl From<Place> for Loc {
    fn from(p: Place) -> Loc {
        match p {
            Place::Reg(r) => Loc::Reg(r),
            Place::Mem(off) => Loc::Stack(off),
        }
    }
}

impl From<Place> for RetLoc {
    fn from(p: Place) -> RetLoc {
        match p {
            Place::Reg(r) => RetLoc::Reg(r),
            Place::Mem(off) => RetLoc::Area(off),
        }
    }
}

/// Hands out the registers and 8-byte memory slots of a [`RegConv`] in order.
pub struct Assigner {
    conv: RegConv,
    next: [usize; 2],
    mem: u32,
}

impl Assigner {
    /// An assigner whose first `skip_ints` integer registers are taken (a return-area
    /// pointer passed in the first argument register).
    pub fn new(conv: RegConv, skip_ints: usize) -> Self {
        Assigner {
            conv,
            next: [skip_ints, 0],
            mem: 0,
        }
    }

    /// Bytes of memory handed out so far.
    pub fn mem_size(&self) -> u32 {
        self.mem
    }

    fn regs(&self, class: RegClass) -> &'static [PReg] {
        match class {
            RegClass::Int => self.conv.ints,
            RegClass::Float => self.conv.floats,
        }
    }

    fn mem_slots(&mut self, n: u32, align: u32) -> i32 {
        self.mem = self.mem.next_multiple_of(align);
        self.mem += 8 * n;
        (self.mem - 8 * n) as i32
    }

    /// Places a 128-bit vector: the next float/vector register, else a 16-byte slot at the
    /// next multiple of 16 bytes.
    pub fn place_vector(&mut self, mut each: impl FnMut(Place)) {
        let regs = self.conv.floats;
        let next = &mut self.next[RegClass::Float as usize];
        if let Some(&r) = regs.get(*next) {
            *next += 1;
            each(Place::Reg(r));
        } else {
            each(Place::Mem(self.mem_slots(2, 16)));
        }
    }

    /// Places a value of `n` parts of `class`, handing each part to `each` in order.
    pub fn place(&mut self, class: RegClass, n: usize, mut each: impl FnMut(Place)) {
        let regs = self.regs(class);
        let next = &mut self.next[class as usize];
        if n == 1 || self.conv.pairs == Pairs::Split {
            for _ in 0..n {
                let next = &mut self.next[class as usize];
                if let Some(&r) = regs.get(*next) {
                    *next += 1;
                    each(Place::Reg(r));
                } else {
                    each(Place::Mem(self.mem_slots(1, 8)));
                }
            }
            return;
        }
        if self.conv.pairs == Pairs::EvenPairOrMemory {
            *next = next.next_multiple_of(2);
        }
        if *next + n <= regs.len() {
            regs[*next..*next + n]
                .iter()
                .for_each(|&r| each(Place::Reg(r)));
            *next += n;
            return;
        }
        if self.conv.pairs == Pairs::EvenPairOrMemory {
            *next = regs.len();
        }
        let off = self.mem_slots(n as u32, 16);
        (0..n as i32).for_each(|i| each(Place::Mem(off + 8 * i)));
    }
}

/// Numbers the parts a signature walk visits within their value: a value's parts come one
/// after another.
struct PartCounter {
    value: usize,
    part: usize,
}

impl PartCounter {
    fn new() -> Self {
        PartCounter {
            value: usize::MAX,
            part: 0,
        }
    }

    /// The part index of the next location visited, which belongs to value `k`.
    fn part_of(&mut self, k: usize) -> usize {
        self.part = if self.value == k { self.part + 1 } else { 0 };
        self.value = k;
        self.part
    }
}

/// [`Abi::each_param_loc`] after checking the convention.
pub fn each_param_loc<A: Abi>(
    sig: &Signature,
    ret_area: bool,
    each: impl FnMut(usize, Loc),
) -> Result<(), CodegenError> {
    check_call_conv(sig.call_conv, A::CONV_ERROR_SUFFIX)?;
    A::each_param_loc(sig, ret_area, each)
}

/// [`Abi::each_ret_loc`] after checking the convention.
pub fn each_ret_loc<A: Abi>(
    sig: &Signature,
    each: impl FnMut(usize, RetLoc),
) -> Result<u32, CodegenError> {
    check_call_conv(sig.call_conv, A::CONV_ERROR_SUFFIX)?;
    A::each_ret_loc(sig, each)
}

/// The size of `sig`'s return area (0: none), or why its results are unsupported.
pub fn ret_area_size<A: Abi>(sig: &Signature) -> Result<u32, CodegenError> {
    each_ret_loc::<A>(sig, |_, _| {})
}

/// Locations of the parameters of `sig`, one list per parameter.
pub fn param_locs<A: Abi>(sig: &Signature) -> Result<SigLocs<Loc>, CodegenError> {
    let ret_area = ret_area_size::<A>(sig)? > 0;
    let mut locs = SigLocs::with_capacity(sig.params.len());
    each_param_loc::<A>(sig, ret_area, |k, loc| {
        if k == locs.len() {
            locs.push(Parts::new());
        }
        locs[k].push(loc);
    })?;
    Ok(locs)
}

/// Locations of the results of `sig`, one list per result, and the size of the return
/// area.
pub fn ret_locs<A: Abi>(sig: &Signature) -> Result<(SigLocs<RetLoc>, u32), CodegenError> {
    let mut locs = SigLocs::with_capacity(sig.returns.len());
    let area = each_ret_loc::<A>(sig, |k, loc| {
        if k == locs.len() {
            locs.push(Parts::new());
        }
        locs[k].push(loc);
    })?;
    Ok((locs, area))
}

/// The locations of parameter `index` of `sig`, found without building the lists.
pub fn param_loc<A: Abi>(sig: &Signature, index: usize) -> Result<Parts<Loc>, CodegenError> {
    let ret_area = ret_area_size::<A>(sig)? > 0;
    let mut parts = Parts::new();
    each_param_loc::<A>(sig, ret_area, |k, loc| {
        if k == index {
            parts.push(loc);
        }
    })?;
    if parts.is_empty() {
        return Err(CodegenError::unsupported(format!(
            "parameter {index} of a signature with {} parameters",
            sig.params.len()
        )));
    }
    Ok(parts)
}

/// Whether some parameter of `sig` arrives on the stack (false for an unsupported one).
pub fn has_stack_params<A: Abi>(sig: &Signature) -> bool {
    let Ok(area) = ret_area_size::<A>(sig) else {
        return false;
    };
    let mut on_stack = false;
    each_param_loc::<A>(sig, area > 0, |_, loc| {
        on_stack |= matches!(loc, Loc::Stack(_))
    })
    .is_ok()
        && on_stack
}

/// The steps computing `f`'s stack limit (`None` when it declares none), from where the
/// `vmctx` parameter arrives.
pub fn plan_stack_limit<A: Abi>(f: &Function) -> Result<Option<StackLimitSteps>, CodegenError> {
    let vmctx_step = |gv, index| match *param_loc::<A>(&f.signature, index)? {
        [Loc::Reg(r)] => Ok(Step::FromReg(r)),
        [Loc::Stack(off)] => Ok(Step::FromArgArea(off)),
        _ => Err(stack_limit::unsupported(format!(
            "{gv}: `vmctx` is not a 64-bit value"
        ))),
    };
    stack_limit::plan(f, vmctx_step, A::STACK_LIMIT_ADD_BITS)
}

/// The type whose width an access of a result part of type `ty` and class `class` has in
/// the return area of convention `cc`: `winch`'s are exactly as wide as the result.
fn area_type(cc: CallConv, ty: Type, class: RegClass) -> Type {
    match cc {
        CallConv::Winch => ty,
        _ => part_slot_type(ty, class),
    }
}

/// Copy `v` into a fresh vreg if it was already placed in another fixed register, so each
/// vreg has one fixed constraint per instruction.
fn distinct<A: Abi>(ctx: &mut Lower<'_, A::Inst>, seen: &mut SmallVec<[VReg; 8]>, v: VReg) -> VReg {
    if !seen.contains(&v) {
        seen.push(v);
        return v;
    }
    let copy = ctx.alloc_vreg(v.class());
    ctx.emit(A::gen_move(copy, v));
    copy
}

/// The vreg of the incoming return-area pointer, created on first use: lowering is
/// bottom-up, so a `return` in the entry block is lowered before the arguments are defined.
fn ret_area_ptr<I: MachInst>(ctx: &mut Lower<'_, I>) -> VReg {
    match ctx.ret_area_ptr {
        Some(v) => v,
        None => {
            let v = ctx.alloc_vreg(RegClass::Int);
            ctx.ret_area_ptr = Some(v);
            v
        }
    }
}

/// Define the entry block's parameters from the incoming registers and stack slots (see
/// the module contract); also plans the stack limit's computation, where an error can be
/// reported (a limit the prologue cannot compute), and keeps it for the frame layout.
pub fn gen_args<A: Abi>(
    ctx: &mut Lower<'_, A::Inst>,
    params: &[Value],
) -> Result<(), CodegenError> {
    let stack_limit = plan_stack_limit::<A>(ctx.f)?;
    ctx.set_stack_limit(stack_limit);
    let sig = ctx.signature();
    let area = ret_area_size::<A>(sig)?;
    if tail_stack_bytes::<A>(sig) > u32::from(u16::MAX) {
        return Err(CodegenError::unsupported(
            "64 KiB or more of stack arguments to a `tail` function",
        ));
    }
    let mut args = FixedRegs::with_capacity(params.len() + 1);
    let mut stack: SmallVec<[A::Inst; 4]> = SmallVec::new();
    if area > 0 {
        let ptr = ret_area_ptr(ctx);
        args.push((ptr, A::ret_area_reg(sig.call_conv)));
    }
    let mut parts = PartCounter::new();
    each_param_loc::<A>(sig, area > 0, |k, loc| {
        let part = parts.part_of(k);
        let Some(&p) = params.get(k) else {
            return;
        };
        let Some(&v) = ctx.value_regs(p).regs().get(part) else {
            return;
        };
        match loc {
            Loc::Reg(r) => args.push((v, r)),
            Loc::Stack(off) => stack.push(A::gen_load(
                v,
                AbiMem::IncomingArg(off),
                part_slot_type(ctx.value_type(p), v.class()),
            )),
        }
    })?;
    ctx.emit(A::gen_args(args));
    for i in stack {
        ctx.emit(i);
    }
    Ok(())
}

/// `return vals…` (see the module contract).
pub fn gen_return<A: Abi>(
    ctx: &mut Lower<'_, A::Inst>,
    vals: &[Value],
) -> Result<(), CodegenError> {
    let sig = ctx.signature();
    let cc = sig.call_conv;
    let mut seen = SmallVec::new();
    let mut rets = FixedRegs::with_capacity(vals.len());
    let mut parts = PartCounter::new();
    each_ret_loc::<A>(sig, |k, loc| {
        let part = parts.part_of(k);
        let Some(&v) = vals.get(k) else {
            return;
        };
        let Some(&vr) = ctx.value_regs(v).regs().get(part) else {
            return;
        };
        match loc {
            RetLoc::Reg(r) => {
                let vr = distinct::<A>(ctx, &mut seen, vr);
                rets.push((vr, r));
            }
            RetLoc::Area(off) => {
                let ty = area_type(cc, ctx.value_type(v), vr.class());
                let base = ret_area_ptr(ctx);
                ctx.emit(A::gen_store(vr, AbiMem::Reg(base, off), ty));
            }
        }
    })?;
    ctx.emit(A::gen_ret(rets));
    Ok(())
}

/// A call of `callee` with signature `sig` and IR arguments `args`; returns the result
/// vregs (every part of every result, in order).
pub fn gen_call<A: Abi>(
    ctx: &mut Lower<'_, A::Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[Value],
) -> Result<Results, CodegenError> {
    let regs: SmallVec<[ValueRegs; 8]> = args.iter().map(|&a| ctx.value_regs(a)).collect();
    gen_call_parts::<A>(ctx, callee, sig, &regs)
}

/// [`gen_call`] with the arguments already in vregs (each argument's parts).
pub fn gen_call_parts<A: Abi>(
    ctx: &mut Lower<'_, A::Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[ValueRegs],
) -> Result<Results, CodegenError> {
    let area = ret_area_size::<A>(sig)?;
    let mut seen = SmallVec::new();
    // Argument uses, then result defs: every register part (an `i128` result may take one
    // more), and the return-area pointer.
    let capacity = args.iter().map(|r| r.regs().len()).sum::<usize>() + sig.returns.len();
    let mut regs = FixedRegs::with_capacity(capacity + 1);
    if area > 0 {
        let ptr = ctx.alloc_vreg(RegClass::Int);
        ctx.emit(A::gen_ret_area_addr(ptr, area));
        regs.push((ptr, A::ret_area_reg(sig.call_conv)));
    }
    pass_args::<A>(ctx, sig, area > 0, args, 0, &mut seen, &mut regs)?;
    let num_uses = regs.len() as u32;
    let mut results = Results::new();
    let mut loads: SmallVec<[A::Inst; 2]> = SmallVec::new();
    each_ret_loc::<A>(sig, |k, loc| {
        let ty = sig.returns[k].value_type;
        // The walk has checked every result's type before visiting its parts.
        let Some((class, _)) = A::value_regs(ty) else {
            return;
        };
        let v = ctx.alloc_vreg(class);
        results.push(v);
        match loc {
            RetLoc::Reg(r) => regs.push((v, r)),
            RetLoc::Area(off) => loads.push(A::gen_load(
                v,
                AbiMem::RetArea(off),
                area_type(sig.call_conv, ty, class),
            )),
        }
    })?;
    let callee_pops = u16::try_from(tail_stack_bytes::<A>(sig)).map_err(|_| {
        CodegenError::unsupported("64 KiB or more of stack arguments to a `tail` function")
    })?;
    ctx.emit(A::gen_call(
        callee,
        regs,
        num_uses,
        sig.call_conv,
        callee_pops,
    ));
    for load in loads {
        ctx.emit(load);
    }
    Ok(results)
}

/// Bytes of the outgoing area below a tail call's stack arguments: where the sequence puts
/// the caller's frame pointer and return address (or link register), which move with the
/// arguments.
pub const TAIL_CALL_HEADER: u32 = 16;

/// Bytes of stack arguments a `tail` function pops when it returns: its stack-argument area
/// rounded up to 16 (which keeps `sp` aligned); 0 for every other convention, whose caller
/// pops, and for a signature the ISA cannot carry (reported where it is lowered).
pub fn tail_stack_bytes<A: Abi>(sig: &Signature) -> u32 {
    if sig.call_conv != CallConv::Tail {
        return 0;
    }
    let Ok(area) = ret_area_size::<A>(sig) else {
        return 0;
    };
    let mut end = 0u32;
    let walked = each_param_loc::<A>(sig, area > 0, |_, loc| {
        if let Loc::Stack(off) = loc {
            end = end.max(off as u32 + 8);
        }
    });
    match walked {
        Ok(()) => end.next_multiple_of(16),
        Err(_) => 0,
    }
}

/// The arguments `args` (their register parts) of a call of signature `sig`, in its
/// locations: a register part as a fixed use pushed to `regs` (copied first when `seen`
/// already holds its vreg), a stack part stored at `stack_base` plus its offset in the
/// outgoing area. `ret_area`: the call passes a return-area pointer. O(argument parts).
fn pass_args<A: Abi>(
    ctx: &mut Lower<'_, A::Inst>,
    sig: &Signature,
    ret_area: bool,
    args: &[ValueRegs],
    stack_base: i32,
    seen: &mut SmallVec<[VReg; 8]>,
    regs: &mut FixedRegs,
) -> Result<(), CodegenError> {
    let mut parts = PartCounter::new();
    each_param_loc::<A>(sig, ret_area, |k, loc| {
        let part = parts.part_of(k);
        let Some(&v) = args.get(k).and_then(|a| a.regs().get(part)) else {
            return;
        };
        match loc {
            Loc::Reg(r) => {
                let v = distinct::<A>(ctx, seen, v);
                regs.push((v, r));
            }
            Loc::Stack(off) => ctx.emit(A::gen_store(
                v,
                AbiMem::OutgoingArg(stack_base + off),
                part_slot_type(sig.params[k].value_type, v.class()),
            )),
        }
    })
}

/// `return_call callee(args)` of signature `sig` (see the module contract): both this
/// function and the callee must be of the `tail` convention (else an error), and the callee
/// returns this function's result types (the verifier checks it).
pub fn gen_return_call<A: Abi>(
    ctx: &mut Lower<'_, A::Inst>,
    callee: CallDest,
    sig: &Signature,
    args: &[Value],
) -> Result<(), CodegenError> {
    if sig.call_conv != CallConv::Tail || ctx.signature().call_conv != CallConv::Tail {
        return Err(CodegenError::unsupported(format!(
            "a tail call from a `{}` function to a `{}` one (both need `tail`)",
            ctx.signature().call_conv.name(),
            sig.call_conv.name()
        )));
    }
    let area = ret_area_size::<A>(sig)?;
    let mut seen = SmallVec::new();
    if let CallDest::Indirect(target) = callee {
        // The target has its own fixed register; an argument of the same vreg is copied.
        seen.push(target);
    }
    let regs_of_args: SmallVec<[ValueRegs; 8]> = args.iter().map(|&a| ctx.value_regs(a)).collect();
    let mut regs = FixedRegs::with_capacity(args.len() + 1);
    if area > 0 {
        let ptr = ret_area_ptr(ctx);
        let ptr = distinct::<A>(ctx, &mut seen, ptr);
        regs.push((ptr, A::ret_area_reg(sig.call_conv)));
    }
    let header = TAIL_CALL_HEADER as i32;
    pass_args::<A>(
        ctx,
        sig,
        area > 0,
        &regs_of_args,
        header,
        &mut seen,
        &mut regs,
    )?;
    let stack_bytes = tail_stack_bytes::<A>(sig);
    ctx.emit(A::gen_return_call(callee, regs, stack_bytes));
    Ok(())
}

/// Checks that `cc` is one of the conventions both ISAs carry (System V and its aliases
/// `fast`, `cold`, `tail`; `windows_fastcall`; `winch`); `where_` ends the error's text.
pub fn check_call_conv(cc: CallConv, where_: &str) -> Result<(), CodegenError> {
    match cc {
        CallConv::SystemV
        | CallConv::Fast
        | CallConv::Cold
        | CallConv::Tail
        | CallConv::WindowsFastcall
        | CallConv::Winch => Ok(()),
        other => Err(CodegenError::unsupported(format!(
            "calling convention `{}`{where_}",
            other.name()
        ))),
    }
}

/// Places the values of `params` (parameters or results) in order with an [`Assigner`]
/// for `conv` (its first `skip_ints` integer registers taken), as `each(value index,
/// location)`; returns the bytes of memory used.
pub fn assign_in_order<A: Abi, L: From<Place>>(
    conv: RegConv,
    skip_ints: usize,
    params: &[AbiParam],
    mut each: impl FnMut(usize, L),
) -> Result<u32, CodegenError> {
    let mut assign = Assigner::new(conv, skip_ints);
    for (k, p) in params.iter().enumerate() {
        let (class, n) = regs_of::<A>(p.value_type)?;
        if p.value_type.is_vector() {
            assign.place_vector(|place| each(k, place.into()));
        } else {
            assign.place(class, n, |place| each(k, place.into()));
        }
    }
    Ok(assign.mem_size())
}

/// The results of a `winch` signature (both ISAs): the last in `last_reg(its class)`,
/// every other in the return area, each taking `size(its type)` bytes, packed in result
/// order and then mirrored, so the first result lies at the highest offset (a result at
/// forward offset `o` of size `s` in an area of `total` bytes sits at `total - o - s`).
/// Returns `total`. Every forward slot `[o, o + s)` lies inside `[0, total)`, so its
/// mirror does too, and mirrored slots stay disjoint.
pub fn winch_results<A: Abi>(
    sig: &Signature,
    size: impl Fn(Type) -> u32,
    last_reg: impl Fn(RegClass) -> PReg,
    mut each: impl FnMut(usize, RetLoc),
) -> Result<u32, CodegenError> {
    let Some((_, in_area)) = sig.returns.split_last() else {
        return Ok(0);
    };
    let total: u32 = in_area.iter().map(|p| size(p.value_type)).sum();
    let mut forward = 0u32;
    for (k, p) in sig.returns.iter().enumerate() {
        let (class, _) = regs_of::<A>(p.value_type)?;
        if k == in_area.len() {
            each(k, RetLoc::Reg(last_reg(class)));
        } else {
            let s = size(p.value_type);
            each(k, RetLoc::Area((total - forward - s) as i32));
            forward += s;
        }
    }
    Ok(total)
}

/// The [`Abi`] instruction builders of an ISA whose instruction families spell the
/// calling-convention pseudo-instructions as both ISAs do: `AluInst::Mov`,
/// `ControlInst::{Args, Ret, Call}`, `MemInst::{RetAreaAddr, Load, Store}` (with `trap:
/// None`), `MemInst::FrameValue`, and the frame places of `Mem` (`Reg { base, $off }`,
/// `IncomingArg`, `OutgoingArg`, `RetArea`; `$off` names their offset field), and whose
/// `abi` module has `exact_access` (the store and load kinds of exactly a type's width),
/// `out_slot_bytes` (the bytes of the stack-argument slot a store kind fills)
/// and the `abi_mem` of [`abi_entry_points`]: the builders, and [`Abi::frame_use`].
/// Expanded inside `impl Abi`.
macro_rules! abi_inst_builders {
    ($off:ident) => {
        fn frame_use(inst: &Inst) -> FrameUse {
            match inst {
                Inst::Mem(MemInst::RetAreaAddr { size, .. }) => FrameUse::RetArea { size: *size },
                Inst::Mem(MemInst::Store {
                    mem: Mem::OutgoingArg { $off },
                    kind,
                    ..
                }) => FrameUse::OutgoingArg {
                    end: *$off as u32 + out_slot_bytes(kind),
                },
                Inst::Control(ControlInst::Call { conv, .. }) => FrameUse::Call(*conv),
                Inst::Control(ControlInst::ReturnCall { stack_bytes, .. }) => FrameUse::TailCall {
                    stack_bytes: *stack_bytes,
                },
                // Reading the frame pointer or the saved return address needs the frame.
                Inst::Mem(MemInst::FrameValue {
                    what: FrameValue::FramePointer | FrameValue::ReturnAddress,
                    ..
                }) => FrameUse::FrameRead,
                _ => FrameUse::None,
            }
        }

        fn gen_move(dst: VReg, src: VReg) -> Inst {
            AluInst::Mov { dst, src }.into()
        }

        fn gen_args(args: FixedRegs) -> Inst {
            ControlInst::Args { args }.into()
        }

        fn gen_ret(rets: FixedRegs) -> Inst {
            ControlInst::Ret { rets }.into()
        }

        fn gen_call(
            dest: CallDest,
            regs: FixedRegs,
            num_uses: u32,
            conv: CallConv,
            callee_pops: u16,
        ) -> Inst {
            ControlInst::Call {
                dest,
                regs,
                num_uses,
                conv,
                callee_pops,
            }
            .into()
        }

        fn gen_return_call(dest: CallDest, regs: FixedRegs, stack_bytes: u32) -> Inst {
            ControlInst::ReturnCall {
                dest,
                regs,
                stack_bytes,
            }
            .into()
        }

        fn gen_ret_area_addr(dst: VReg, size: u32) -> Inst {
            MemInst::RetAreaAddr { dst, size }.into()
        }

        fn gen_load(dst: VReg, mem: AbiMem, ty: Type) -> Inst {
            MemInst::Load {
                kind: exact_access(ty).1,
                dst,
                mem: abi_mem(mem),
                trap: None,
            }
            .into()
        }

        fn gen_store(src: VReg, mem: AbiMem, ty: Type) -> Inst {
            MemInst::Store {
                kind: exact_access(ty).0,
                src,
                mem: abi_mem(mem),
                trap: None,
            }
            .into()
        }
    };
}
pub(crate) use abi_inst_builders;

/// The calling-convention functions an ISA's `abi` module offers its lowering (the driver
/// reaches the rest through `machinst::backend`), each the shared one for the ISA's [`Abi`]
/// `$abi` over instruction `$inst`: `gen_return`, `gen_call`, `param_locs` and `ret_locs`;
/// and `abi_mem`, an [`AbiMem`] as the ISA's `Mem` (whose offset field is `$off`).
macro_rules! abi_entry_points {
    ($abi:ty, $inst:ty, $off:ident) => {
        /// The memory operand of an argument or result place.
        fn abi_mem(mem: AbiMem) -> Mem {
            match mem {
                AbiMem::IncomingArg($off) => Mem::IncomingArg { $off },
                AbiMem::OutgoingArg($off) => Mem::OutgoingArg { $off },
                AbiMem::RetArea($off) => Mem::RetArea { $off },
                AbiMem::Reg(base, $off) => Mem::Reg { base, $off },
            }
        }

        /// `return vals…`.
        pub fn gen_return(ctx: &mut Lower<'_, $inst>, vals: &[Value]) -> Result<(), CodegenError> {
            abi::gen_return::<$abi>(ctx, vals)
        }

        /// A call of `callee` with signature `sig` and arguments `args`; returns the result
        /// vregs.
        pub fn gen_call(
            ctx: &mut Lower<'_, $inst>,
            callee: CallDest,
            sig: &Signature,
            args: &[Value],
        ) -> Result<Results, CodegenError> {
            abi::gen_call::<$abi>(ctx, callee, sig, args)
        }

        /// `return_call callee(args)` of signature `sig`.
        pub fn gen_return_call(
            ctx: &mut Lower<'_, $inst>,
            callee: CallDest,
            sig: &Signature,
            args: &[Value],
        ) -> Result<(), CodegenError> {
            abi::gen_return_call::<$abi>(ctx, callee, sig, args)
        }

        /// Locations of the parameters of `sig`, one list per parameter.
        pub fn param_locs(sig: &Signature) -> Result<SigLocs<Loc>, CodegenError> {
            abi::param_locs::<$abi>(sig)
        }

        /// Locations of the results of `sig`, one list per result, and the size of the
        /// return area.
        pub fn ret_locs(sig: &Signature) -> Result<(SigLocs<RetLoc>, u32), CodegenError> {
            abi::ret_locs::<$abi>(sig)
        }
    };
}
pub(crate) use abi_entry_points;

#[cfg(test)]
mod tests {
    use super::*;

    const INTS: [PReg; 4] = [
        PReg::new(0, RegClass::Int),
        PReg::new(1, RegClass::Int),
        PReg::new(2, RegClass::Int),
        PReg::new(3, RegClass::Int),
    ];

    /// Places an `i64`, two `i128`s and an `i64` under `pairs` with four integer registers.
    fn places(pairs: Pairs) -> Vec<Place> {
        let conv = RegConv {
            ints: &INTS,
            floats: &[],
            pairs,
        };
        let mut assign = Assigner::new(conv, 0);
        let mut out = Vec::new();
        for n in [1, 2, 2, 1] {
            assign.place(RegClass::Int, n, |p| out.push(p));
        }
        out
    }

    #[test]
    fn each_pair_rule_places_two_part_values_its_way() {
        let r = |i: usize| Place::Reg(INTS[i]);
        // Both parts in registers or both in 16 aligned bytes; r3 stays for the last i64.
        assert_eq!(
            places(Pairs::Together),
            [r(0), r(1), r(2), Place::Mem(0), Place::Mem(8), r(3)]
        );
        // An even pair (r1 skipped), then memory, after which no register is given out.
        assert_eq!(
            places(Pairs::EvenPairOrMemory),
            [
                r(0),
                r(2),
                r(3),
                Place::Mem(0),
                Place::Mem(8),
                Place::Mem(16)
            ]
        );
        // Each part on its own: the second i128 straddles r3 and memory.
        assert_eq!(
            places(Pairs::Split),
            [r(0), r(1), r(2), r(3), Place::Mem(0), Place::Mem(8)]
        );
    }
}
