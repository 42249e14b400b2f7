//! The memory family every ISA shares: loads, stores and addresses (frame places, symbols),
//! with each ISA's memory operand, access kinds and own memory instructions plugged in.
//!
//! # Contract
//!
//! [`MemInst<X, R>`] is the memory family of ISA `X` over registers `R`. Its variants and
//! their operand order are the same on every ISA, written once here: `map` and `visit` (one
//! [`map_operands`] list) and printing. The ISA supplies, through [`MemIsa`], its memory
//! operand ([`MemIsa::Mem`]), its load and store kinds, and the memory instructions only it
//! has ([`MemIsa::Own`]; an uninhabited [`NoOwn`] where there are none). The dispatch of
//! the encoding is written once here too ([`MemInst::emit`]); the ISA encodes each
//! variant ([`MemEncoder`], in `isa/<name>/inst/mem.rs`).
//!
//! Cost: O(operands) per visit, like every family; printing allocates the printed string;
//! `emit` is one static dispatch to the ISA's encoder.

use std::convert::Infallible;
use std::fmt::{Debug, Display};
use std::marker::PhantomData;
use std::sync::Arc;

use kestrel_ir::{FunctionName, TrapCode};
use kestrel_regalloc::{PReg, VReg};

use super::operands::{map_operands, OperandSpec, Operands};
use super::shared_inst::FrameValue;

/// What an ISA plugs into [`MemInst`] (see the module contract). Every ISA implements it
/// with [`mem_isa`].
pub trait MemIsa: Clone + Debug + Sized + 'static {
    /// A memory operand: an address from registers, or a place in the frame.
    type Mem<R>;
    /// How a load reads memory into a register (printed as the VCode listings show it).
    type LoadKind: Copy + Debug + Display;
    /// How a store writes a register to memory.
    type StoreKind: Copy + Debug + Display;
    /// The memory instructions only this ISA has (register fields and plain data only, so
    /// that mapping one copies no list).
    type Own<R>;
    /// The printed name of an address computation (`lea`, `addr`).
    const ADDR: &'static str;

    /// `mem` with its registers visited as uses (the operand's `map`).
    fn map_mem<S, F: FnMut(OperandSpec) -> S>(
        mem: &Self::Mem<VReg>,
        m: &mut Operands<S, F>,
    ) -> Self::Mem<S>;
    /// The printed memory operand.
    fn pretty_mem(mem: &Self::Mem<String>) -> String;
    /// `inst` with its registers visited in its operand order.
    fn map_own<S, F: FnMut(OperandSpec) -> S>(
        inst: &Self::Own<VReg>,
        m: &mut Operands<S, F>,
    ) -> Self::Own<S>;
    /// The printed instruction.
    fn pretty_own(inst: &Self::Own<String>) -> String;
}

/// Implements [`MemIsa`] for the ISA marker type `$isa` from its memory operand `$mem` and
/// own instructions `$own` (each generic over its registers, with a `map` and, over
/// `String`, a `pretty`), its load and store kinds, and the printed name of an address
/// computation. Expanded in `isa/<name>/inst/mem.rs`.
macro_rules! mem_isa {
    ($isa:ty {
        mem: $mem:ident,
        load: $load:ty,
        store: $store:ty,
        own: $own:ident,
        addr: $addr:literal $(,)?
    }) => {
        impl $crate::machinst::memory::MemIsa for $isa {
            type Mem<R> = $mem<R>;
            type LoadKind = $load;
            type StoreKind = $store;
            type Own<R> = $own<R>;
            const ADDR: &'static str = $addr;

            fn map_mem<S, F: FnMut($crate::machinst::operands::OperandSpec) -> S>(
                mem: &$mem,
                m: &mut $crate::machinst::operands::Operands<S, F>,
            ) -> $mem<S> {
                mem.map(m)
            }

            fn pretty_mem(mem: &$mem<String>) -> String {
                mem.pretty()
            }

            fn map_own<S, F: FnMut($crate::machinst::operands::OperandSpec) -> S>(
                inst: &$own,
                m: &mut $crate::machinst::operands::Operands<S, F>,
            ) -> $own<S> {
                inst.map(m)
            }

            fn pretty_own(inst: &$own<String>) -> String {
                inst.pretty()
            }
        }
    };
}
pub(crate) use mem_isa;

/// [`MemIsa::Own`] of an ISA with no memory instructions of its own: no value has this type.
#[derive(Clone, Copy, Debug)]
pub struct NoOwn<R = VReg>(Infallible, PhantomData<R>);

impl<R> NoOwn<R> {
    /// Anything: there is no `NoOwn` to call it on (an encoder's arm for it).
    pub fn absurd<T>(&self) -> T {
        match self.0 {}
    }

    /// The family's `map` (never called: see [`NoOwn::absurd`]).
    pub fn map<S, F: FnMut(OperandSpec) -> S>(&self, _: &mut Operands<S, F>) -> NoOwn<S> {
        self.absurd()
    }
}

impl NoOwn<String> {
    /// The family's printing (never called: see [`NoOwn::absurd`]).
    pub fn pretty(&self) -> String {
        self.absurd()
    }
}

/// One memory instruction of ISA `X`. Each variant's doc gives its operand order.
#[derive(Clone, Debug)]
pub enum MemInst<X: MemIsa, R = VReg> {
    /// Load from memory; a trap site with `trap` when the access may fault. Operands:
    /// `[address uses, dst def]`.
    Load {
        kind: X::LoadKind,
        dst: R,
        mem: X::Mem<R>,
        trap: Option<TrapCode>,
    },
    /// Store to memory. Operands: `[src use, address uses]`.
    Store {
        kind: X::StoreKind,
        src: R,
        mem: X::Mem<R>,
        trap: Option<TrapCode>,
    },
    /// `dst = address of the stack slot plus off`. Operands: `[dst def]`.
    StackAddr { dst: R, slot: u32, off: i32 },
    /// `dst = address of the outgoing return area` (of `size` bytes, for the call that
    /// follows). Operands: `[dst def]`.
    RetAreaAddr { dst: R, size: u32 },
    /// `dst = ` the stack pointer, the frame pointer, or the return address saved beside it
    /// (`get_stack_pointer`, `get_frame_pointer`, `get_return_address`; the last two make
    /// the function set up a frame). Operands: `[dst def]`.
    FrameValue { dst: R, what: FrameValue },
    /// `dst = ` the pinned register (`get_pinned_reg`). Operands: `[dst def]`.
    GetPinned { dst: R },
    /// The pinned register `= src` (`set_pinned_reg`). Operands: `[src use]`.
    SetPinned { src: R },
    /// `dst = address of name + offset`: PC-relative when the symbol is colocated (`got`
    /// false), else loaded from its GOT slot, then `offset` added. Operands: `[dst def]`.
    SymbolAddr {
        dst: R,
        name: Arc<FunctionName>,
        offset: i32,
        got: bool,
    },
    /// A memory instruction only this ISA has. Operands: its own.
    Own { inst: X::Own<R> },
}

impl<X: MemIsa> MemInst<X> {
    map_operands! {
        pub MemInst<X>, |m| {
            Load { kind, trap } [mem = X::map_mem(mem, m), dst = m.reg_def(*dst)],
            Store { kind, trap } [src = m.reg_use(*src), mem = X::map_mem(mem, m)],
            StackAddr { slot, off } [dst = m.reg_def(*dst)],
            RetAreaAddr { size } [dst = m.reg_def(*dst)],
            FrameValue { what } [dst = m.reg_def(*dst)],
            GetPinned {} [dst = m.reg_def(*dst)],
            SetPinned {} [src = m.reg_use(*src)],
            SymbolAddr { name, offset, got } [dst = m.reg_def(*dst)],
            Own {} [inst = X::map_own(inst, m)],
        }
    }
}

impl<X: MemIsa> MemInst<X, String> {
    /// Printed form (registers already named).
    pub fn pretty(&self) -> String {
        match self {
            MemInst::Load { kind, dst, mem, .. } => {
                format!("{dst} = load.{kind} {}", X::pretty_mem(mem))
            }
            MemInst::Store { kind, src, mem, .. } => {
                format!("store.{kind} {src}, {}", X::pretty_mem(mem))
            }
            MemInst::StackAddr { dst, slot, off } => {
                format!("{dst} = {} [ss{slot}{off:+}]", X::ADDR)
            }
            MemInst::RetAreaAddr { dst, size } => {
                format!("{dst} = {} [ret_area] ({size} bytes)", X::ADDR)
            }
            MemInst::FrameValue { dst, what } => format!("{dst} = {}", what.name()),
            MemInst::GetPinned { dst } => format!("{dst} = get_pinned_reg"),
            MemInst::SetPinned { src } => format!("set_pinned_reg {src}"),
            MemInst::SymbolAddr {
                dst,
                name,
                offset,
                got,
            } => format!(
                "{dst} = {} {name}{}",
                if *got { "got_addr" } else { "pc_addr" },
                match offset {
                    0 => String::new(),
                    o => format!("{o:+}"),
                }
            ),
            MemInst::Own { inst } => X::pretty_own(inst),
        }
    }
}

/// A load or store with its registers allocated, as its encoder takes it: the access kind,
/// the register loaded into or stored from, the memory operand, and the trap code of an
/// access that may fault.
#[derive(Clone, Copy, Debug)]
pub struct Access<'a, K, M> {
    /// The load or store kind.
    pub kind: K,
    /// The register loaded into (a load's `dst`) or stored from (a store's `src`).
    pub reg: PReg,
    /// The memory operand.
    pub mem: &'a M,
    /// The trap code recorded at the access when it may fault.
    pub trap: Option<TrapCode>,
}

/// What the encoders of a memory instruction work with: the ISA's emission context `C`
/// and the buffer `B` written to.
pub struct MemEmit<'e, C, B> {
    /// What emission may consult (the frame layout).
    pub ctx: &'e C,
    /// The buffer the code is written to.
    pub buf: &'e mut B,
}

/// How ISA `X` encodes its memory family with allocated registers: one encoder per
/// variant, to which [`MemInst::emit`] dispatches. The ISA implements it on [`MemEmit`]
/// over its context and buffer; the dispatch is static.
pub trait MemEncoder<X: MemIsa> {
    /// A load into `load.reg`.
    fn load(&mut self, load: Access<'_, X::LoadKind, X::Mem<PReg>>);
    /// A store of `store.reg`.
    fn store(&mut self, store: Access<'_, X::StoreKind, X::Mem<PReg>>);
    /// `dst = address of stack slot `slot` plus `off`.
    fn stack_addr(&mut self, dst: PReg, slot: u32, off: i32);
    /// `dst = address of the outgoing return area`.
    fn ret_area_addr(&mut self, dst: PReg);
    /// `dst = ` the frame value `what`.
    fn frame_value(&mut self, dst: PReg, what: FrameValue);
    /// A move from the pinned register into `reg`, or (`write`) from `reg` into it.
    fn pinned_reg(&mut self, reg: PReg, write: bool);
    /// `dst = address of name + offset`, through its GOT slot when `got`.
    fn symbol_addr(&mut self, dst: PReg, name: &FunctionName, offset: i32, got: bool);
    /// A memory instruction only this ISA has.
    fn own(&mut self, inst: &X::Own<PReg>);
}

impl<X: MemIsa> MemInst<X, PReg> {
    /// Encodes the instruction into `buf`, consulting `ctx`: each variant by its encoder.
    #[inline]
    pub fn emit<'e, C, B>(&self, ctx: &'e C, buf: &'e mut B)
    where
        MemEmit<'e, C, B>: MemEncoder<X>,
    {
        let enc = &mut MemEmit { ctx, buf };
        match self {
            MemInst::Load {
                kind,
                dst,
                mem,
                trap,
            } => enc.load(Access {
                kind: *kind,
                reg: *dst,
                mem,
                trap: *trap,
            }),
            MemInst::Store {
                kind,
                src,
                mem,
                trap,
            } => enc.store(Access {
                kind: *kind,
                reg: *src,
                mem,
                trap: *trap,
            }),
            MemInst::StackAddr { dst, slot, off } => enc.stack_addr(*dst, *slot, *off),
            MemInst::RetAreaAddr { dst, .. } => enc.ret_area_addr(*dst),
            MemInst::FrameValue { dst, what } => enc.frame_value(*dst, *what),
            MemInst::GetPinned { dst } => enc.pinned_reg(*dst, false),
            MemInst::SetPinned { src } => enc.pinned_reg(*src, true),
            MemInst::SymbolAddr {
                dst,
                name,
                offset,
                got,
            } => enc.symbol_addr(*dst, name, *offset, *got),
            MemInst::Own { inst } => enc.own(inst),
        }
    }
}
