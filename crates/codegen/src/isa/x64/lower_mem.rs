//! Loads, stores and stack slots for the x86-64 selector.
//!
//! # Contract
//!
//! [`lower_memory`] lowers `load`/`store` (and their extending and truncating forms),
//! `stack_load`, `stack_store` and `stack_addr`, or returns `Ok(None)` for any other
//! instruction. Accesses through a pointer are trap sites with the flags' trap code (none for
//! `notrap` and for stack slots); big-endian accesses are unsupported; `i128` is two 64-bit
//! accesses, low half at the lower address.

use kestrel_ir::entity::EntityRef;
use kestrel_ir::immediates::Endianness;
use kestrel_ir::{
    ArgumentPurpose, AtomicRmwOp, GlobalValue, GlobalValueData, Inst as IrInst, InstructionData,
    MemFlags, Opcode, TrapCode, Type, Value,
};
use kestrel_regalloc::{RegClass, VReg};

use super::asm::alu::AluOp;
use super::asm::moves::ExtMode;
use super::asm::Size;
use super::inst::{FrameValue, Inst, LoadKind, Mem, RegImm, StoreKind};
use super::isel::exact_size;
use super::lower::float_size;
use crate::chaos::Decision;
use crate::machinst::lower::{Lower, Results};
use crate::machinst::CodegenError;

/// Load the two halves of an `i128` (little-endian: low half first).
fn load_pair(lower: &mut Lower<'_, Inst>, mems: [Mem; 2], trap: Option<TrapCode>) -> Results {
    mems.iter()
        .map(|&mem| {
            let dst = lower.alloc_vreg(RegClass::Int);
            lower.emit(Inst::Load {
                kind: LoadKind::Int(Size::S64),
                dst,
                mem,
                trap,
            });
            dst
        })
        .collect()
}

/// Store the two halves of the `i128` value `val`.
fn store_pair(lower: &mut Lower<'_, Inst>, val: Value, mems: [Mem; 2], trap: Option<TrapCode>) {
    let regs = lower.value_regs(val);
    for (&src, mem) in regs.regs().iter().zip(mems) {
        lower.emit(Inst::Store {
            kind: StoreKind::Int(Size::S64),
            src,
            mem,
            trap,
        });
    }
}

fn int(lower: &mut Lower<'_, Inst>) -> VReg {
    lower.alloc_vreg(RegClass::Int)
}

fn zero(lower: &mut Lower<'_, Inst>) -> VReg {
    let dst = int(lower);
    lower.emit(Inst::MovImm { dst, imm: 0 });
    dst
}

fn is_big(flags: MemFlags) -> bool {
    flags.endianness == Some(Endianness::Big)
}

fn bswap(lower: &mut Lower<'_, Inst>, size: Size, a: VReg) -> VReg {
    let dst = lower.alloc_vreg(RegClass::Int);
    lower.emit(Inst::Bswap { size, dst, a });
    dst
}

fn load_int(lower: &mut Lower<'_, Inst>, kind: LoadKind, mem: Mem, trap: Option<TrapCode>) -> VReg {
    let dst = lower.alloc_vreg(RegClass::Int);
    lower.emit(Inst::Load {
        kind,
        dst,
        mem,
        trap,
    });
    dst
}

/// Global values nest at most this deep (the verifier rejects cycles; this bounds the rest).
const MAX_GLOBAL_VALUE_DEPTH: u32 = 32;

/// The address of symbol `name` plus `offset` in a fresh vreg: PC-relative when the symbol
/// is colocated (same module or executable), through the GOT otherwise.
pub(super) fn symbol_addr(
    lower: &mut Lower<'_, Inst>,
    name: &kestrel_ir::FunctionName,
    offset: i32,
    colocated: bool,
) -> VReg {
    let dst = int(lower);
    lower.emit(Inst::SymbolAddr {
        dst,
        name: name.clone(),
        offset,
        got: !colocated,
    });
    dst
}

/// Evaluate global value `gv` into a fresh vreg (a `vmctx` parameter, loads from it, and
/// constant offsets). Each `global_value` instruction evaluates its chain again: the chain
/// has no instruction of its own whose result could be shared.
fn global_value_vreg(
    lower: &mut Lower<'_, Inst>,
    gv: GlobalValue,
    depth: u32,
) -> Result<VReg, CodegenError> {
    if depth > MAX_GLOBAL_VALUE_DEPTH {
        return Err(CodegenError::unsupported(format!(
            "global value chain deeper than {MAX_GLOBAL_VALUE_DEPTH}"
        )));
    }
    let f = lower.f;
    let data = f
        .global_values
        .get(gv)
        .ok_or_else(|| CodegenError::unsupported(format!("undefined global value {gv}")))?;
    match *data {
        GlobalValueData::Symbol {
            ref name,
            offset,
            colocated,
        } => Ok(match i32::try_from(offset) {
            Ok(offset) => symbol_addr(lower, name, offset, colocated),
            Err(_) => {
                let base = symbol_addr(lower, name, 0, colocated);
                let k = int(lower);
                lower.emit(Inst::MovImm {
                    dst: k,
                    imm: offset as u64,
                });
                let dst = int(lower);
                lower.emit(Inst::Alu {
                    op: AluOp::Add,
                    size: Size::S64,
                    dst,
                    a: base,
                    b: RegImm::Reg(k),
                });
                dst
            }
        }),
        GlobalValueData::VMContext => {
            let index = f
                .signature
                .special_param_index(ArgumentPurpose::VMContext)
                .ok_or_else(|| {
                    CodegenError::unsupported("`vmctx` global value without a vmctx parameter")
                })?;
            let entry = f
                .layout
                .entry_block()
                .expect("a lowered function has an entry");
            Ok(lower.value_vreg(f.dfg.block_params(entry)[index]))
        }
        GlobalValueData::Load {
            base,
            offset,
            global_type,
            flags,
        } => {
            let kind = match global_type {
                Type::I64 => LoadKind::Int(Size::S64),
                Type::I32 => LoadKind::Int(Size::S32),
                Type::I16 => LoadKind::Zext(ExtMode::WL),
                Type::I8 => LoadKind::Zext(ExtMode::BL),
                other => {
                    return Err(CodegenError::unsupported(format!(
                        "global value loaded as {other}"
                    )))
                }
            };
            let base = global_value_vreg(lower, base, depth + 1)?;
            let mem = Mem::Reg { base, disp: offset };
            Ok(load_int(lower, kind, mem, flags.trap_code))
        }
        GlobalValueData::IAddImm {
            base,
            offset,
            global_type,
        } => {
            let base = global_value_vreg(lower, base, depth + 1)?;
            let size = if global_type == Type::I64 {
                Size::S64
            } else {
                Size::S32
            };
            let b = match i32::try_from(offset) {
                Ok(k) => RegImm::Imm(k),
                Err(_) => {
                    let k = int(lower);
                    lower.emit(Inst::MovImm {
                        dst: k,
                        imm: offset as u64,
                    });
                    RegImm::Reg(k)
                }
            };
            let dst = int(lower);
            lower.emit(Inst::Alu {
                op: AluOp::Add,
                size,
                dst,
                a: base,
                b,
            });
            Ok(dst)
        }
    }
}

/// A big-endian load: the little-endian load of the same bytes, then a byte swap at the
/// access width (before any sign extension). `hi_mem` is `mem + 8`, for `i128`.
fn load_big(
    lower: &mut Lower<'_, Inst>,
    opcode: Opcode,
    ty: Type,
    mem: Mem,
    hi_mem: Mem,
    trap: Option<TrapCode>,
) -> Option<Results> {
    let wide = ty.bits() == 64;
    let sext = |lower: &mut Lower<'_, Inst>, mode, src| {
        let dst = lower.alloc_vreg(RegClass::Int);
        lower.emit(Inst::Ext {
            mode,
            signed: true,
            dst,
            src,
        });
        dst
    };
    let v = match (opcode, ty.bits()) {
        (Opcode::Load | Opcode::Uload8 | Opcode::Sload8, _)
            if opcode != Opcode::Load || ty.bits() == 8 =>
        {
            let kind = match opcode {
                Opcode::Sload8 => LoadKind::Sext(if wide { ExtMode::BQ } else { ExtMode::BL }),
                _ => LoadKind::Zext(ExtMode::BL),
            };
            load_int(lower, kind, mem, trap)
        }
        (Opcode::Load, 128) => {
            // The high half comes first in memory.
            let hi = load_int(lower, LoadKind::Int(Size::S64), mem, trap);
            let lo = load_int(lower, LoadKind::Int(Size::S64), hi_mem, trap);
            let (lo, hi) = (bswap(lower, Size::S64, lo), bswap(lower, Size::S64, hi));
            return Some(smallvec::smallvec![lo, hi]);
        }
        (Opcode::Load, _) if ty.is_float() => {
            let size = if ty.bits() == 64 {
                Size::S64
            } else {
                Size::S32
            };
            let raw = load_int(lower, LoadKind::Int(size), mem, trap);
            let swapped = bswap(lower, size, raw);
            let dst = lower.alloc_vreg(RegClass::Float);
            lower.emit(Inst::MovToXmm {
                size,
                dst,
                src: swapped,
            });
            return Some(smallvec::smallvec![dst]);
        }
        (Opcode::Load, 16) | (Opcode::Uload16, _) => {
            let raw = load_int(lower, LoadKind::Zext(ExtMode::WL), mem, trap);
            bswap(lower, Size::S16, raw)
        }
        (Opcode::Sload16, _) => {
            let raw = load_int(lower, LoadKind::Zext(ExtMode::WL), mem, trap);
            let swapped = bswap(lower, Size::S16, raw);
            sext(lower, if wide { ExtMode::WQ } else { ExtMode::WL }, swapped)
        }
        (Opcode::Load, 32) | (Opcode::Uload32, _) => {
            let raw = load_int(lower, LoadKind::Int(Size::S32), mem, trap);
            bswap(lower, Size::S32, raw)
        }
        (Opcode::Sload32, _) => {
            let raw = load_int(lower, LoadKind::Int(Size::S32), mem, trap);
            let swapped = bswap(lower, Size::S32, raw);
            sext(lower, ExtMode::LQ, swapped)
        }
        (Opcode::Load, 64) => {
            let raw = load_int(lower, LoadKind::Int(Size::S64), mem, trap);
            bswap(lower, Size::S64, raw)
        }
        _ => return None,
    };
    Some(smallvec::smallvec![v])
}

/// A big-endian store: byte-swap a copy at the access width, then store it.
fn store_big(
    lower: &mut Lower<'_, Inst>,
    opcode: Opcode,
    val: Value,
    mem: Mem,
    hi_mem: Mem,
    trap: Option<TrapCode>,
) -> Option<()> {
    let ty = lower.value_type(val);
    let store = |lower: &mut Lower<'_, Inst>, size, src, mem| {
        lower.emit(Inst::Store {
            kind: StoreKind::Int(size),
            src,
            mem,
            trap,
        });
    };
    let size = match opcode {
        Opcode::Istore8 => Size::S8,
        Opcode::Istore16 => Size::S16,
        Opcode::Istore32 => Size::S32,
        Opcode::Store if ty == Type::I128 => {
            let regs = lower.value_regs(val);
            let (lo, hi) = (regs.regs()[0], regs.regs()[1]);
            let (lo, hi) = (bswap(lower, Size::S64, lo), bswap(lower, Size::S64, hi));
            store(lower, Size::S64, hi, mem);
            store(lower, Size::S64, lo, hi_mem);
            return Some(());
        }
        Opcode::Store if ty.is_float() || ty.bits() <= 64 => exact_size(ty.as_int()),
        _ => return None,
    };
    let mut src = lower.value_vreg(val);
    if ty.is_float() {
        let bits = lower.alloc_vreg(RegClass::Int);
        lower.emit(Inst::MovFromXmm {
            size,
            dst: bits,
            src,
        });
        src = bits;
    }
    if size != Size::S8 {
        src = bswap(lower, size, src);
    }
    store(lower, size, src, mem);
    Some(())
}

/// The high half of a two-half access at `mem` (8 bytes further; `addr_mem` left room).
fn hi(mem: Mem) -> Mem {
    mem.offset(8)
        .expect("addr_mem keeps 8 bytes of displacement slack")
}

fn check_endianness(flags: MemFlags) -> Result<(), CodegenError> {
    match flags.endianness {
        Some(Endianness::Big) => Err(CodegenError::unsupported("big-endian memory access")),
        _ => Ok(()),
    }
}

/// Loads, stores and stack slots; `Ok(None)` for any other instruction.
pub fn lower_memory(
    lower: &mut Lower<'_, Inst>,
    inst: IrInst,
) -> Result<Option<Results>, CodegenError> {
    let f = lower.f;
    let data = *f.dfg.inst(inst);
    let result_ty = f.dfg.first_result(inst).map(|v| f.dfg.value_type(v));
    let load_kind = |op: Opcode, ty: Type| -> Option<LoadKind> {
        let wide = ty.bits() == 64;
        Some(match op {
            Opcode::Load | Opcode::StackLoad => match ty.bits() {
                _ if ty.is_float() => LoadKind::Float(float_size(ty)),
                8 => LoadKind::Zext(ExtMode::BL),
                16 => LoadKind::Zext(ExtMode::WL),
                32 => LoadKind::Int(Size::S32),
                64 => LoadKind::Int(Size::S64),
                _ => return None,
            },
            Opcode::Uload8 => LoadKind::Zext(ExtMode::BL),
            Opcode::Sload8 => LoadKind::Sext(if wide { ExtMode::BQ } else { ExtMode::BL }),
            Opcode::Uload16 => LoadKind::Zext(ExtMode::WL),
            Opcode::Sload16 => LoadKind::Sext(if wide { ExtMode::WQ } else { ExtMode::WL }),
            Opcode::Uload32 => LoadKind::Int(Size::S32),
            Opcode::Sload32 => LoadKind::Sext(ExtMode::LQ),
            _ => return None,
        })
    };
    let store_kind = |op: Opcode, ty: Type| -> Option<StoreKind> {
        Some(match op {
            Opcode::Store | Opcode::StackStore if ty.is_float() => StoreKind::Float(float_size(ty)),
            Opcode::Store | Opcode::StackStore if ty.bits() <= 64 => StoreKind::Int(exact_size(ty)),
            Opcode::Istore8 => StoreKind::Int(Size::S8),
            Opcode::Istore16 => StoreKind::Int(Size::S16),
            Opcode::Istore32 => StoreKind::Int(Size::S32),
            _ => return None,
        })
    };
    let unsupported = |op: Opcode, ty: Option<Type>| CodegenError::Unsupported {
        opcode: Some(op),
        ty,
        what: format!("memory access in {}", f.name),
    };
    match data {
        InstructionData::Load {
            opcode,
            flags,
            arg,
            offset,
        } if is_big(flags) => {
            let ty = result_ty.expect("a load has a result");
            let mem = addr_mem(lower, inst, arg, offset, 8);
            load_big(lower, opcode, ty, mem, hi(mem), flags.trap_code)
                .ok_or_else(|| unsupported(opcode, Some(ty)))
                .map(Some)
        }
        InstructionData::Store {
            opcode,
            flags,
            args: [val, addr],
            offset,
        } if is_big(flags) => {
            let mem = addr_mem(lower, inst, addr, offset, 8);
            let ty = f.dfg.value_type(val);
            store_big(lower, opcode, val, mem, hi(mem), flags.trap_code)
                .ok_or_else(|| unsupported(opcode, Some(ty)))?;
            Ok(Some(Results::new()))
        }
        InstructionData::Load {
            opcode,
            flags,
            arg,
            offset,
        } => {
            check_endianness(flags)?;
            let ty = result_ty.expect("a load has a result");
            if ty == Type::I128 && opcode == Opcode::Load {
                let mem = addr_mem(lower, inst, arg, offset, 8);
                return Ok(Some(load_pair(lower, [mem, hi(mem)], flags.trap_code)));
            }
            let kind = load_kind(opcode, ty).ok_or_else(|| unsupported(opcode, Some(ty)))?;
            let mem = addr_mem(lower, inst, arg, offset, 0);
            let dst = lower.alloc_vreg(if ty.is_float() {
                RegClass::Float
            } else {
                RegClass::Int
            });
            lower.emit(Inst::Load {
                kind,
                dst,
                mem,
                trap: flags.trap_code,
            });
            Ok(Some(smallvec::smallvec![dst]))
        }
        InstructionData::Store {
            opcode,
            flags,
            args: [val, addr],
            offset,
        } => {
            check_endianness(flags)?;
            let ty = f.dfg.value_type(val);
            if ty == Type::I128 && opcode == Opcode::Store {
                let mem = addr_mem(lower, inst, addr, offset, 8);
                store_pair(lower, val, [mem, hi(mem)], flags.trap_code);
                return Ok(Some(Results::new()));
            }
            let kind = store_kind(opcode, ty).ok_or_else(|| unsupported(opcode, Some(ty)))?;
            let src = lower.value_vreg(val);
            let mem = addr_mem(lower, inst, addr, offset, 0);
            lower.emit(Inst::Store {
                kind,
                src,
                mem,
                trap: flags.trap_code,
            });
            Ok(Some(Results::new()))
        }
        InstructionData::StackLoad {
            opcode,
            stack_slot,
            offset,
        } => {
            let ty = result_ty.expect("a stack load has a result");
            let slot = stack_slot.index() as u32;
            if opcode == Opcode::StackAddr {
                let dst = lower.alloc_vreg(RegClass::Int);
                lower.emit(Inst::StackAddr {
                    dst,
                    slot,
                    disp: offset,
                });
                return Ok(Some(smallvec::smallvec![dst]));
            }
            if ty == Type::I128 {
                let mem = |disp| Mem::Slot { slot, disp };
                return Ok(Some(load_pair(lower, [mem(offset), mem(offset + 8)], None)));
            }
            let kind = load_kind(opcode, ty).ok_or_else(|| unsupported(opcode, Some(ty)))?;
            let dst = lower.alloc_vreg(if ty.is_float() {
                RegClass::Float
            } else {
                RegClass::Int
            });
            lower.emit(Inst::Load {
                kind,
                dst,
                mem: Mem::Slot { slot, disp: offset },
                trap: None,
            });
            Ok(Some(smallvec::smallvec![dst]))
        }
        InstructionData::StackStore {
            opcode,
            arg,
            stack_slot,
            offset,
        } => {
            let ty = f.dfg.value_type(arg);
            if ty == Type::I128 {
                let slot = stack_slot.index() as u32;
                let mem = |disp| Mem::Slot { slot, disp };
                store_pair(lower, arg, [mem(offset), mem(offset + 8)], None);
                return Ok(Some(Results::new()));
            }
            let kind = store_kind(opcode, ty).ok_or_else(|| unsupported(opcode, Some(ty)))?;
            let src = lower.value_vreg(arg);
            lower.emit(Inst::Store {
                kind,
                src,
                mem: Mem::Slot {
                    slot: stack_slot.index() as u32,
                    disp: offset,
                },
                trap: None,
            });
            Ok(Some(Results::new()))
        }
        InstructionData::NullAry {
            opcode: Opcode::Fence,
        } => {
            lower.emit(Inst::Fence);
            Ok(Some(Results::new()))
        }
        InstructionData::UnaryGlobalValue {
            opcode: Opcode::GlobalValue | Opcode::SymbolValue,
            global_value,
        } => Ok(Some(smallvec::smallvec![global_value_vreg(
            lower,
            global_value,
            0
        )?])),
        InstructionData::NullAry {
            opcode: Opcode::Debugtrap,
        } => {
            lower.emit(Inst::Debugtrap);
            Ok(Some(Results::new()))
        }
        // A barrier for the compiler only: nothing moves across it (it changes the side-effect
        // color, so no load is sunk past it), and it emits no code.
        InstructionData::NullAry {
            opcode: Opcode::SequencePoint,
        } => Ok(Some(Results::new())),
        InstructionData::NullAry {
            opcode:
                opcode @ (Opcode::GetStackPointer | Opcode::GetFramePointer | Opcode::GetReturnAddress),
        } if result_ty == Some(Type::I64) => {
            let what = match opcode {
                Opcode::GetStackPointer => FrameValue::StackPointer,
                Opcode::GetFramePointer => FrameValue::FramePointer,
                _ => FrameValue::ReturnAddress,
            };
            let dst = lower.alloc_vreg(RegClass::Int);
            lower.emit(Inst::FrameValue { dst, what });
            Ok(Some(smallvec::smallvec![dst]))
        }
        InstructionData::LoadNoOffset {
            opcode: Opcode::AtomicLoad,
            flags,
            arg,
        } if is_big(flags) && result_ty.is_some_and(|t| t.is_int() && t.bits() <= 64) => {
            // An aligned load of at most 8 bytes is atomic; swap the bytes after it.
            let ty = result_ty.expect("checked above");
            let base = lower.value_vreg(arg);
            let mem = Mem::Reg { base, disp: 0 };
            load_big(lower, Opcode::Load, ty, mem, mem, flags.trap_code)
                .ok_or_else(|| unsupported(Opcode::AtomicLoad, Some(ty)))
                .map(Some)
        }
        InstructionData::StoreNoOffset {
            opcode: Opcode::AtomicStore,
            flags,
            args: [val, addr],
        } if is_big(flags)
            && f.dfg.value_type(val).is_int()
            && f.dfg.value_type(val).bits() <= 64 =>
        {
            let base = lower.value_vreg(addr);
            let mem = Mem::Reg { base, disp: 0 };
            let ty = f.dfg.value_type(val);
            store_big(lower, Opcode::Store, val, mem, mem, flags.trap_code)
                .ok_or_else(|| unsupported(Opcode::AtomicStore, Some(ty)))?;
            lower.emit(Inst::Fence);
            Ok(Some(Results::new()))
        }
        InstructionData::LoadNoOffset {
            opcode: Opcode::AtomicLoad,
            flags,
            arg,
        } if result_ty == Some(Type::I128) => {
            check_endianness(flags)?;
            // cmpxchg16b with expected = replacement = 0 loads the value (and rewrites it
            // unchanged if it was 0).
            let addr = lower.value_vreg(arg);
            let z: Vec<VReg> = (0..4).map(|_| zero(lower)).collect();
            let dst = [int(lower), int(lower)];
            lower.emit(Inst::AtomicCas128 {
                addr,
                expected: [z[0], z[1]],
                repl: [z[2], z[3]],
                dst,
            });
            Ok(Some(Results::from_slice(&dst)))
        }
        InstructionData::StoreNoOffset {
            opcode: Opcode::AtomicStore,
            flags,
            args: [val, addr],
        } if f.dfg.value_type(val) == Type::I128 => {
            check_endianness(flags)?;
            let addr = lower.value_vreg(addr);
            let v = lower.value_regs(val);
            let (dst, tmp) = ([int(lower), int(lower)], [int(lower), int(lower)]);
            lower.emit(Inst::AtomicLoop128 {
                op: AtomicRmwOp::Xchg,
                addr,
                val: [v.regs()[0], v.regs()[1]],
                dst,
                tmp,
            });
            Ok(Some(Results::new()))
        }
        InstructionData::AtomicRmw {
            flags,
            op,
            args: [addr, val],
            ..
        } if f.dfg.value_type(val) == Type::I128 => {
            check_endianness(flags)?;
            let addr = lower.value_vreg(addr);
            let v = lower.value_regs(val);
            let (dst, tmp) = ([int(lower), int(lower)], [int(lower), int(lower)]);
            lower.emit(Inst::AtomicLoop128 {
                op,
                addr,
                val: [v.regs()[0], v.regs()[1]],
                dst,
                tmp,
            });
            Ok(Some(Results::from_slice(&dst)))
        }
        InstructionData::AtomicCas {
            flags,
            args: [addr, expected, repl],
            ..
        } if f.dfg.value_type(expected) == Type::I128 => {
            check_endianness(flags)?;
            let addr = lower.value_vreg(addr);
            let (e, r) = (lower.value_regs(expected), lower.value_regs(repl));
            let dst = [int(lower), int(lower)];
            lower.emit(Inst::AtomicCas128 {
                addr,
                expected: [e.regs()[0], e.regs()[1]],
                repl: [r.regs()[0], r.regs()[1]],
                dst,
            });
            Ok(Some(Results::from_slice(&dst)))
        }
        InstructionData::LoadNoOffset {
            opcode: Opcode::AtomicLoad,
            flags,
            arg,
        } => {
            // x86 loads are sequentially consistent with locked writes and `mfence`d stores.
            check_endianness(flags)?;
            let ty = result_ty.expect("an atomic load has a result");
            let kind = load_kind(Opcode::Load, ty)
                .filter(|_| ty.is_int())
                .ok_or_else(|| unsupported(opcode_of(&data), Some(ty)))?;
            let base = lower.value_vreg(arg);
            let dst = lower.alloc_vreg(RegClass::Int);
            lower.emit(Inst::Load {
                kind,
                dst,
                mem: Mem::Reg { base, disp: 0 },
                trap: flags.trap_code,
            });
            Ok(Some(smallvec::smallvec![dst]))
        }
        InstructionData::StoreNoOffset {
            opcode: Opcode::AtomicStore,
            flags,
            args: [val, addr],
        } => {
            check_endianness(flags)?;
            let ty = f.dfg.value_type(val);
            let kind = store_kind(Opcode::Store, ty)
                .filter(|_| ty.is_int())
                .ok_or_else(|| unsupported(opcode_of(&data), Some(ty)))?;
            let (src, base) = (lower.value_vreg(val), lower.value_vreg(addr));
            lower.emit(Inst::Store {
                kind,
                src,
                mem: Mem::Reg { base, disp: 0 },
                trap: flags.trap_code,
            });
            lower.emit(Inst::Fence);
            Ok(Some(Results::new()))
        }
        InstructionData::AtomicRmw {
            flags,
            op,
            args: [addr, val],
            ..
        } => {
            check_endianness(flags)?;
            let ty = f.dfg.value_type(val);
            if !ty.is_int() || ty.bits() > 64 {
                return Err(unsupported(Opcode::AtomicRmw, Some(ty)));
            }
            let size = exact_size(ty);
            let (addr, val) = (lower.value_vreg(addr), lower.value_vreg(val));
            let dst = lower.alloc_vreg(RegClass::Int);
            lower.emit(match op {
                AtomicRmwOp::Add | AtomicRmwOp::Sub | AtomicRmwOp::Xchg => Inst::AtomicXadd {
                    size,
                    op,
                    addr,
                    val,
                    dst,
                },
                _ => Inst::AtomicLoop {
                    size,
                    op,
                    addr,
                    val,
                    dst,
                },
            });
            Ok(Some(smallvec::smallvec![dst]))
        }
        InstructionData::AtomicCas {
            flags,
            args: [addr, expected, repl],
            ..
        } => {
            check_endianness(flags)?;
            let ty = f.dfg.value_type(expected);
            if !ty.is_int() || ty.bits() > 64 {
                return Err(unsupported(Opcode::AtomicCas, Some(ty)));
            }
            let (addr, expected, repl) = (
                lower.value_vreg(addr),
                lower.value_vreg(expected),
                lower.value_vreg(repl),
            );
            let dst = lower.alloc_vreg(RegClass::Int);
            lower.emit(Inst::AtomicCas {
                size: exact_size(ty),
                addr,
                expected,
                repl,
                dst,
            });
            Ok(Some(smallvec::smallvec![dst]))
        }
        _ => Ok(None),
    }
}

fn opcode_of(data: &InstructionData) -> Opcode {
    data.opcode()
}

/// How an address folds into an x86-64 addressing mode: up to two register terms (the
/// second, if any, scaled by `1 << shift`), a displacement, and the values whose producers
/// the access absorbs (merged only once the plan is known to fit).
struct AddrPlan {
    terms: Vec<(Value, u8)>,
    disp: i64,
    merges: Vec<Value>,
}

/// The operands of `v` if it is an `i64` `iadd`.
fn iadd_args(lower: &Lower<'_, Inst>, v: Value) -> Option<(Value, Value)> {
    let inst = lower.def_inst(v)?;
    match *lower.data(inst) {
        InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [a, b],
        } if lower.value_type(v) == Type::I64 => Some((a, b)),
        _ => None,
    }
}

/// `(x, k)` if `v` is an `i64` `ishl x, k` by a constant `k` of 0 to 3.
fn ishl_args(lower: &Lower<'_, Inst>, v: Value) -> Option<(Value, Value, u8)> {
    let inst = lower.def_inst(v)?;
    match *lower.data(inst) {
        InstructionData::Binary {
            opcode: Opcode::Ishl,
            args: [x, k],
        } if lower.value_type(v) == Type::I64 => {
            let shift = u8::try_from(lower.const_value(k)?).ok()?;
            (shift <= 3).then_some((x, k, shift))
        }
        _ => None,
    }
}

impl AddrPlan {
    /// Add the address term `v`, whose use is the access's own (or that of a producer the
    /// access absorbed), so folding `v`'s producer merges it. Each fold is optional (asked
    /// of the chaos control once possible); a skipped one leaves `v` a plain register term.
    fn walk(&mut self, lower: &mut Lower<'_, Inst>, user: IrInst, v: Value, depth: u32) {
        if let Some(k) = lower.const_value(v) {
            if !lower.should_skip(Decision::AddrConstFold) {
                // Address arithmetic wraps at 64 bits, like the sum it replaces.
                self.disp = self.disp.wrapping_add(k);
                self.merges.push(v);
                return;
            }
        }
        let mergeable = lower.mergeable_inst(v, user).is_some();
        if depth < 3 {
            if let Some((a, b)) = iadd_args(lower, v) {
                if mergeable && !lower.should_skip(Decision::AddrAddFold) {
                    // The access takes over the `iadd`: its operands' uses become ours.
                    self.merges.push(v);
                    self.walk(lower, user, a, depth + 1);
                    self.walk(lower, user, b, depth + 1);
                    return;
                }
                // An `iadd` with other uses or in another block stays: its result is
                // computed anyway, so the access reads that register (folding its operands
                // would leave the `iadd` computed for nothing once every user had done so).
            }
        }
        if mergeable {
            if let Some((x, k, shift)) =
                ishl_args(lower, v).filter(|_| !lower.should_skip(Decision::AddrShiftFold))
            {
                self.merges.push(v);
                self.merges.push(k);
                self.terms.push((x, shift));
                return;
            }
        }
        self.terms.push((v, 0));
    }
}

/// The memory operand of an access at `addr + offset` by `user`, with `iadd`s of
/// constants folded into the displacement and an `iadd` of a shifted (by 0 to 3) index
/// into a scaled index. `slack` more bytes past the displacement must stay addressable (8
/// for a two-half `i128` access). Falls back to `[addr + offset]` when the fold does not fit
/// (more than two registers, two scaled ones, or a displacement out of `i32` range).
pub(super) fn addr_mem(
    lower: &mut Lower<'_, Inst>,
    user: IrInst,
    addr: Value,
    offset: i32,
    slack: i32,
) -> Mem {
    let mut plan = AddrPlan {
        terms: Vec::new(),
        disp: i64::from(offset),
        merges: Vec::new(),
    };
    plan.walk(lower, user, addr, 0);
    let fits = i32::try_from(plan.disp).is_ok()
        && i32::try_from(plan.disp.wrapping_add(i64::from(slack))).is_ok();
    let terms = match plan.terms.as_slice() {
        [(b, 0)] => Some((*b, None)),
        [(b, 0), (i, s)] | [(i, s), (b, 0)] => Some((*b, Some((*i, *s)))),
        _ => None,
    };
    match terms {
        Some((base, index)) if fits => {
            for &v in &plan.merges {
                lower.merge(v);
            }
            let disp = plan.disp as i32;
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
        _ if offset.checked_add(slack).is_none() => {
            // No room for the high half's displacement: add the offset first.
            let a = lower.value_vreg(addr);
            let base = lower.alloc_vreg(RegClass::Int);
            lower.emit(Inst::Alu {
                op: AluOp::Add,
                size: Size::S64,
                dst: base,
                a,
                b: RegImm::Imm(offset),
            });
            Mem::Reg { base, disp: 0 }
        }
        _ => Mem::Reg {
            base: lower.value_vreg(addr),
            disp: offset,
        },
    }
}
