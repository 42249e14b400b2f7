//! The Lower driver: IR → [`VCode`], in the final block order.
//!
//! # Contract
//!
//! Requires a verified [`Function`] and its [`BlockLoweringOrder`]. Walks the lowered blocks
//! in that order; an IR block's instructions are visited bottom-up (terminator first), an
//! edge block gets a single jump that carries the edge's arguments. The ISA
//! ([`LowerBackend`]) turns each IR instruction into machine instructions.
//!
//! Guarantees: the VCode is in final order with one VCode block per lowered block and the
//! same successor lists; every IR value that some emitted instruction reads has exactly one
//! definition (an instruction's def, a block parameter, or the entry's argument
//! definitions); values that need no code produce none. Each machine instruction carries
//! the source line ([`Function::debug_line`]) of the IR instruction it was lowered from (an
//! edge block's jump, that of the branch; the entry's argument moves, none), for debug info.
//!
//! Cost: O(instructions + values + edges): one pass to count uses, one walk over the
//! blocks; each instruction's selection inspects a bounded neighbourhood (its operands'
//! producers), and edge arguments are read per destination without copying the
//! destination list.
//!
//! # Merging producers into users
//!
//! Uses of each value are counted over the whole function before any block is lowered
//! (the block order may put a user before its producer). A user may *merge* a value's
//! producer — fold an `iconst` into an immediate, an `icmp` into a branch — by calling
//! [`Lower::merge`], which removes one use. When the walk reaches an instruction without side
//! effects whose results have no uses left, and whose registers no lowered instruction has
//! read, it emits nothing. This is sound whatever order blocks are visited in: a use only
//! disappears once its user has really absorbed it, an instruction is skipped only when every
//! remaining consumer has done so, and a user that both folds a value and reads its register
//! (`smin x, 0` compares with an immediate, then selects the register) keeps it defined.
//!
//! Merging is legal ([`Lower::mergeable_inst`]) when the producer is in the current block,
//! the merged value has this single use, and the producer has no side effects and cannot
//! trap; a producer that reads memory must also see no side-effecting instruction between
//! itself and the user (the *color* of both must match).
//!
//! A load may also be *sunk* into its single user ([`Lower::mergeable_load`],
//! [`Lower::sink_load`]) although it can trap: the user then performs the access and records
//! its trap site, so the load itself emits nothing. Colors change at every instruction that
//! has side effects, reads memory or can trap, so a sunk load moves past nothing that could
//! observe the move (no store, call or fence, no other trap that could fire first).
//!
//! # Optional choices and coverage
//!
//! Every merge above is optional: the ISA asks [`Lower::should_skip`] (the compile's
//! [`Chaos`]) before it folds or sinks a producer and lowers the general way when told to
//! skip. When rule coverage is on, the ISA's selector reports each rule that fires through
//! [`Lower::rule_fired`] into a [`RulesFired`] set; when it is off that costs one branch.
//!
//! # Output registers
//!
//! Each IR value has one vreg, created on first mention. An ISA lowering gives the vregs
//! holding the results ([`Lower::set_outputs`]); the driver makes each result's vreg an
//! *alias* of the given one, and [`Lower::finish`] rewrites every operand, parameter and branch argument through the
//! aliases, so results cost no copies, and numbers the vregs the code names densely (see
//! `VCode::resolve_and_number_vregs`).
//!
//! A lowering gets exactly the shape each value's type needs, or the instruction is
//! unsupported (never wrong code):
//!
//! - It asks for a value's registers as they are held: [`Lower::value_vreg`] for a value in
//!   one register, [`Lower::value_pair`] for a split one, [`Lower::value_regs`] for either,
//!   [`Lower::value_lo`] for the low bits of either (a shift amount, a truncation). Asking
//!   for one register of a split value, or for the pair of a one-register value, is recorded,
//!   and the driver reports it as unsupported, naming the instruction and the value, once the
//!   ISA has lowered the instruction: a rule written for scalars never quietly reads half of
//!   an `i128`.
//! - It gives exactly the registers its results take, in order, each of the class the
//!   result's type needs; anything else is unsupported, naming the instruction and the type.

use kestrel_ir::entity::{refill, EntityRef};
use kestrel_ir::{Block, Function, Inst, InstructionData, Opcode, Type, Value, ValueDef};
use kestrel_regalloc::{RegClass, VReg};

use super::blockorder::{BlockLoweringOrder, LoweredBlock};
use super::tail_order::TailOrder;
use super::vcode::{CodeMemory, VCode, VCodeBuilder};
use super::{BlockIndex, CodegenError, MachInst};
use crate::chaos::{Chaos, Decision};

/// The vregs of one instruction's results, in order (two for a split value); inline for
/// the common cases, so lowering an instruction allocates nothing for them.
pub type Results = smallvec::SmallVec<[VReg; 2]>;

/// What an ISA provides to the driver.
pub trait LowerBackend {
    /// The ISA's machine instruction.
    type MInst: MachInst;

    /// Lower a non-branch instruction and give its results' vregs (in result order, two
    /// for a split value) with [`Lower::set_outputs`]; `Ok(false)` when no rule covers it.
    /// (The registers go through the context, not the return value: a larger return value
    /// travels through memory, and copying it back right after it was written stalls.)
    fn lower_inst(
        &self,
        ctx: &mut Lower<'_, Self::MInst>,
        inst: Inst,
    ) -> Result<bool, CodegenError>;

    /// Lower a block terminator (`jump`, `brif`, `br_table`) whose branch slots go to
    /// `targets`; `None` when no rule covers it.
    fn lower_branch(
        &self,
        ctx: &mut Lower<'_, Self::MInst>,
        inst: Inst,
        targets: &[BlockIndex],
    ) -> Result<Option<()>, CodegenError>;

    /// Define the entry block's parameters `params` (the function's incoming arguments).
    fn gen_args(
        &self,
        ctx: &mut Lower<'_, Self::MInst>,
        params: &[Value],
    ) -> Result<(), CodegenError>;

    /// How values of `ty` are held: the register class and the number of registers (1, or 2
    /// for a value split in halves, low half first); `None` when the ISA cannot hold them.
    fn value_regs(&self, ty: Type) -> Option<(RegClass, usize)>;
}

/// Lowering state for one function.
pub struct Lower<'f, I: MachInst> {
    /// The function being lowered.
    pub f: &'f Function,
    builder: VCodeBuilder<'f, I>,
    /// Vregs of each value (by value index), created lazily.
    value_vregs: Vec<Option<ValueRegs>>,
    /// The ISA's answer to "how is a value of this type held?".
    type_regs: TypeRegs<'f>,
    /// Alias target of each vreg (`None`: not an alias).
    aliases: Vec<Option<VReg>>,
    /// Uses not yet merged away, by value index.
    uses: Vec<u32>,
    /// Values whose registers an already-lowered instruction reads, by value index: their
    /// producer must define them even if every IR use was merged (a rule may fold a constant
    /// into one operand and read it from a register in another).
    demanded: Vec<bool>,
    /// Side-effect color of each instruction (by instruction index).
    colors: Vec<u32>,
    /// Loads sunk into their user (by instruction index): they emit nothing themselves.
    sunk: Vec<bool>,
    /// Lowering at opt level `speed` (`CompileOptions::lower_for_speed`).
    for_speed: bool,
    /// The pinned register is reserved (`CompileOptions::pinned_reg`).
    pinned_reg: bool,
    /// The IR block being lowered.
    cur_block: Option<Block>,
    /// The hidden return-area pointer of a function whose results do not all fit in
    /// registers (defined by the ABI's argument lowering, read by its return lowering).
    pub ret_area_ptr: Option<VReg>,
    /// The source of "skip this optional merge?" answers.
    chaos: &'f mut Chaos,
    /// The selection rules fired so far, when coverage is on.
    rules_fired: Option<&'f mut RulesFired>,
    /// The registers the ISA gave for the instruction just lowered
    /// ([`Lower::set_outputs`]): the first `num_outputs` of `outputs` when at most two,
    /// else `more_outputs`.
    outputs: [VReg; 2],
    num_outputs: usize,
    more_outputs: Vec<VReg>,
    /// The first value asked for in a shape it is not held in (one register of a split
    /// value, or a pair of a one-register value) since the driver last looked, with what
    /// was asked.
    misused: Option<(Value, &'static str)>,
}

/// A set of selection-rule indices (into the ISA's rule list), as a bitset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RulesFired(Vec<u64>);

impl RulesFired {
    /// Add rule `rule`.
    pub fn insert(&mut self, rule: usize) {
        let word = rule / 64;
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << (rule % 64);
    }

    /// The rules in the set, increasing.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits >> b & 1 == 1)
                .map(move |b| w * 64 + b)
        })
    }
}

/// The registers holding one IR value: one, or two for a value split in halves (low first).
/// Eight bytes, so it is returned in a register: a value in one register has it twice (the
/// halves of a split value are distinct vregs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueRegs {
    regs: [VReg; 2],
}

impl ValueRegs {
    /// A value in one register.
    pub fn one(r: VReg) -> Self {
        ValueRegs { regs: [r, r] }
    }

    /// A value in two (distinct) registers, low half first.
    pub fn two(lo: VReg, hi: VReg) -> Self {
        debug_assert_ne!(lo, hi, "the halves of a split value are distinct vregs");
        ValueRegs { regs: [lo, hi] }
    }

    /// The registers, low half first.
    #[inline]
    pub fn regs(&self) -> &[VReg] {
        let len = 1 + usize::from(self.regs[0] != self.regs[1]);
        &self.regs[..len]
    }
}

/// The ISA's `value_regs` answers for one function, each type asked once (a type is one
/// byte). Entry encoding: 0 not asked yet, 1 not held, else 2 + 2 × class + (registers − 1).
struct TypeRegs<'f> {
    regs_for: &'f dyn Fn(Type) -> Option<(RegClass, usize)>,
    table: [u8; 256],
}

impl<'f> TypeRegs<'f> {
    fn new(regs_for: &'f dyn Fn(Type) -> Option<(RegClass, usize)>) -> Self {
        TypeRegs {
            regs_for,
            table: [0; 256],
        }
    }

    /// How values of `ty` are held (see [`LowerBackend::value_regs`]).
    #[inline]
    fn get(&mut self, ty: Type) -> Option<(RegClass, usize)> {
        let entry = &mut self.table[usize::from(ty.repr())];
        if *entry == 0 {
            *entry = match (self.regs_for)(ty) {
                // One or two registers of a class: the only shapes a value takes (any other
                // answer counts as "not held", so the type is reported unsupported).
                Some((class, n @ 1..=2)) => 2 + 2 * class.index() as u8 + (n as u8 - 1),
                _ => 1,
            };
        }
        match *entry {
            1 => None,
            e => Some((
                RegClass::ALL[usize::from((e - 2) / 2)],
                usize::from((e - 2) % 2) + 1,
            )),
        }
    }
}

/// Lowering's per-function tables, kept between functions by a compile context (each is
/// refilled before use) so that they are allocated once.
#[derive(Default)]
pub(crate) struct LowerScratch {
    value_vregs: Vec<Option<ValueRegs>>,
    aliases: Vec<Option<VReg>>,
    uses: Vec<u32>,
    demanded: Vec<bool>,
    colors: Vec<u32>,
    sunk: Vec<bool>,
    /// Per lowering vreg, its number in the finished code (see
    /// [`VCode::resolve_and_number_vregs`]).
    dense: Vec<u32>,
    /// A block's successors, and one edge's argument vregs.
    succs: Vec<BlockIndex>,
    args: Vec<VReg>,
    /// A block's instructions in lowering's order, and the memory that orders them.
    block_insts: Vec<Inst>,
    tail_order: TailOrder,
    /// The caller's choice for the next lowering (`CompileOptions::lower_for_speed`).
    pub(crate) for_speed: bool,
    /// Likewise (`CompileOptions::pinned_reg`).
    pub(crate) pinned_reg: bool,
    /// The last lowering's counted work: the use count's pass (instructions and values),
    /// per lowered block one step and its successors, per instruction read one step and
    /// its results, the edge arguments copied, and the finished code's instructions and
    /// vregs (its numbering pass).
    pub(crate) work: u64,
}

impl<'f, I: MachInst> Lower<'f, I> {
    fn new(
        f: &'f Function,
        regs_for: &'f dyn Fn(Type) -> Option<(RegClass, usize)>,
        chaos: &'f mut Chaos,
        rules_fired: Option<&'f mut RulesFired>,
        scratch: &mut LowerScratch,
        code_memory: &'f mut CodeMemory<I>,
    ) -> Result<Self, CodegenError> {
        let num_values = f.dfg.num_values();
        let (uses, colors) = (&mut scratch.uses, &mut scratch.colors);
        refill(uses, num_values, 0);
        refill(colors, f.dfg.num_insts(), 0);
        let mut color = 0;
        let mut type_regs = TypeRegs::new(regs_for);
        // One pass counts the uses, colors the instructions and checks that every value
        // fits a register class (before anything is emitted).
        let mut misfit: Option<CodegenError> = None;
        for &b in f.layout.blocks() {
            if misfit.is_none() {
                misfit = f.dfg.block_params(b).iter().find_map(|&p| {
                    let ty = f.dfg.value_type(p);
                    type_regs
                        .get(ty)
                        .is_none()
                        .then(|| CodegenError::Unsupported {
                            opcode: None,
                            ty: Some(ty),
                            what: format!("block parameter {p} in {}", f.name),
                        })
                });
            }
            for inst in f.layout.block_insts(b) {
                let data = f.dfg.inst(inst);
                if misfit.is_none()
                    && f.dfg
                        .inst_results(inst)
                        .iter()
                        .any(|&r| type_regs.get(f.dfg.value_type(r)).is_none())
                {
                    misfit = Some(unsupported_inst(f, inst, "result type"));
                }
                // The fixed operands, then the list (two plain loops: no chained iterator).
                for &v in data.fixed_args() {
                    uses[f.dfg.resolve(v).index()] += 1;
                }
                if let Some(list) = data.value_list() {
                    for &v in f.dfg.pool.get(list) {
                        uses[f.dfg.resolve(v).index()] += 1;
                    }
                }
                let op = data.opcode();
                if op.is_branch() {
                    for k in 0..f.num_branch_destinations(inst) {
                        for &v in f.dfg.block_call_args(&f.branch_destination(inst, k)) {
                            uses[f.dfg.resolve(v).index()] += 1;
                        }
                    }
                }
                colors[inst.index()] = color;
                if op.has_side_effects() || op.can_load() || op.can_trap() {
                    color += 1;
                }
            }
        }
        if let Some(error) = misfit {
            return Err(error);
        }
        // The tables are taken one by one (the scratch as a whole is large to move) and
        // given back by `finish`.
        let mut value_vregs = std::mem::take(&mut scratch.value_vregs);
        let mut aliases = std::mem::take(&mut scratch.aliases);
        let uses = std::mem::take(&mut scratch.uses);
        let mut demanded = std::mem::take(&mut scratch.demanded);
        let colors = std::mem::take(&mut scratch.colors);
        let mut sunk = std::mem::take(&mut scratch.sunk);
        let (for_speed, pinned_reg) = (scratch.for_speed, scratch.pinned_reg);
        refill(&mut value_vregs, num_values, None);
        // Most values get a vreg, and lowering adds temporaries: room for both.
        aliases.clear();
        aliases.reserve(num_values + num_values / 2);
        refill(&mut demanded, num_values, false);
        refill(&mut sunk, f.dfg.num_insts(), false);
        let blocks = f.layout.blocks().len();
        Ok(Lower {
            f,
            builder: VCodeBuilder::reusing(code_memory, f.dfg.num_insts(), blocks),
            value_vregs,
            type_regs,
            aliases,
            uses,
            demanded,
            colors,
            sunk,
            for_speed,
            pinned_reg,
            cur_block: None,
            ret_area_ptr: None,
            chaos,
            rules_fired,
            outputs: [VReg::new(0, RegClass::Int); 2],
            num_outputs: 0,
            more_outputs: Vec::new(),
            misused: None,
        })
    }

    /// Should the optional merge `what` be skipped this time? (Asked only where the merge
    /// is possible, so the compile's chaos statistics count real opportunities.)
    #[inline]
    pub fn should_skip(&mut self, what: Decision) -> bool {
        self.chaos.should_skip(what)
    }

    /// Record that selection rule `rule` fired (nothing when coverage is off).
    #[inline]
    pub fn rule_fired(&mut self, rule: usize) {
        if let Some(set) = self.rules_fired.as_deref_mut() {
            set.insert(rule);
        }
    }

    /// A fresh vreg of `class`.
    pub fn alloc_vreg(&mut self, class: RegClass) -> VReg {
        let v = VReg::new(self.aliases.len(), class);
        self.aliases.push(None);
        v
    }

    /// The vregs holding `value` (after alias resolution in the IR).
    #[inline]
    pub fn value_regs(&mut self, value: Value) -> ValueRegs {
        let value = self.f.dfg.resolve(value);
        self.demanded[value.index()] = true;
        match self.value_vregs[value.index()] {
            Some(v) => v,
            None => self.first_value_regs(value),
        }
    }

    /// [`Lower::value_regs`] for a value asked for the first time: its fresh vregs.
    #[inline(never)]
    fn first_value_regs(&mut self, value: Value) -> ValueRegs {
        let ty = self.f.dfg.value_type(value);
        // `lower` checked every value's type before lowering started.
        let (class, n) = self
            .type_regs
            .get(ty)
            .expect("value types are checked before lowering");
        let lo = self.alloc_vreg(class);
        let regs = if n == 2 {
            ValueRegs::two(lo, self.alloc_vreg(class))
        } else {
            ValueRegs::one(lo)
        };
        self.value_vregs[value.index()] = Some(regs);
        regs
    }

    /// The vreg holding `value`, which must be held in one register. For a split value this
    /// records a misuse, which the driver reports as unsupported (the low half is returned so
    /// selection can finish); [`Lower::value_lo`] asks for the low half on purpose.
    pub fn value_vreg(&mut self, value: Value) -> VReg {
        let regs = self.value_regs(value);
        if regs.regs().len() != 1 {
            self.misuse(value, "used as one register");
        }
        regs.regs()[0]
    }

    /// The two vregs (low half first) of `value`, which must be split. For a value in one
    /// register this records a misuse, which the driver reports as unsupported (that
    /// register is returned twice so selection can finish).
    pub fn value_pair(&mut self, value: Value) -> [VReg; 2] {
        let regs = self.value_regs(value);
        match *regs.regs() {
            [lo, hi] => [lo, hi],
            _ => {
                self.misuse(value, "used as a register pair");
                [regs.regs()[0]; 2]
            }
        }
    }

    /// The vreg holding the low bits of `value`: its register, or the low half of a split
    /// value (for operands of which only the low bits matter: shift amounts, truncations).
    pub fn value_lo(&mut self, value: Value) -> VReg {
        self.value_regs(value).regs()[0]
    }

    fn misuse(&mut self, value: Value, what: &'static str) {
        if self.misused.is_none() {
            self.misused = Some((self.f.dfg.resolve(value), what));
        }
    }

    /// The type of `value`.
    pub fn value_type(&self, value: Value) -> Type {
        self.f.dfg.value_type(value)
    }

    /// The instruction data of `inst`.
    pub fn data(&self, inst: Inst) -> &'f InstructionData {
        self.f.dfg.inst(inst)
    }

    /// The defining instruction of `value` if it is a result.
    pub fn def_inst(&self, value: Value) -> Option<Inst> {
        match self.f.dfg.value_def(self.f.dfg.resolve(value)) {
            ValueDef::Result(inst, _) => Some(inst),
            _ => None,
        }
    }

    /// The constant `value` is defined to be (by an `iconst`, anywhere), sign-extended from
    /// its type.
    pub fn const_value(&self, value: Value) -> Option<i64> {
        let inst = self.def_inst(value)?;
        match *self.data(inst) {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => {
                let bits = self.value_type(value).bits();
                Some(if bits >= 64 {
                    imm
                } else {
                    (imm << (64 - bits)) >> (64 - bits)
                })
            }
            _ => None,
        }
    }

    /// The producer of `value` if the current user may merge it (see the module doc): same
    /// block, this single use, no side effects, no trap; for a load, nothing with side effects
    /// in between (`user` is the merging instruction).
    pub fn mergeable_inst(&self, value: Value, user: Inst) -> Option<Inst> {
        let value = self.f.dfg.resolve(value);
        let inst = self.def_inst(value)?;
        let op = self.data(inst).opcode();
        let ok = self.f.layout.inst_block(inst) == self.cur_block
            && self.uses[value.index()] == 1
            && !op.has_side_effects()
            && !op.can_trap()
            && (!op.can_load() || self.colors[inst.index()] + 1 == self.colors[user.index()]);
        ok.then_some(inst)
    }

    /// Whether `value` has uses other than one by the current instruction, not merged away
    /// so far: then it may well be live after the current instruction, and a two-address
    /// instruction overwriting it would need a copy first.
    pub fn has_other_uses(&self, value: Value) -> bool {
        self.uses[self.f.dfg.resolve(value).index()] > 1
    }

    /// Whether selection may spend compile time on better code (opt level `speed`): rules
    /// that search further than the operands' producers ask this first.
    #[inline]
    pub fn for_speed(&self) -> bool {
        self.for_speed
    }

    /// Whether `get_pinned_reg`/`set_pinned_reg` may be lowered (`enable_pinned_reg`).
    pub fn pinned_reg(&self) -> bool {
        self.pinned_reg
    }

    /// Whether `value` comes from outside the current block (a block parameter, or the result
    /// of another block's instruction) and has uses besides the current instruction's: such a
    /// value (a loop-carried or loop-invariant one, typically) most likely lives on after
    /// the current instruction, where a value of this block with other uses may have had
    /// them before it.
    pub fn lives_on(&self, value: Value) -> bool {
        let value = self.f.dfg.resolve(value);
        let made_here = matches!(
            self.f.dfg.value_def(value),
            ValueDef::Result(inst, _) if self.f.layout.inst_block(inst) == self.cur_block
        );
        !made_here && self.uses[value.index()] > 1
    }

    /// The producer of `value` if the current user may compute it again itself, as part of an
    /// addressing mode, although `value` has other uses: in the current block, without side
    /// effects, traps or memory reads. Unlike [`Lower::mergeable_inst`] this does not absorb
    /// the producer: merging takes one use, and the producer is still emitted for the others
    /// (its operands must stay unmerged, read as registers).
    pub fn recomputable_inst(&self, value: Value) -> Option<Inst> {
        let value = self.f.dfg.resolve(value);
        let inst = self.def_inst(value)?;
        let op = self.data(inst).opcode();
        let ok = self.f.layout.inst_block(inst) == self.cur_block
            && !op.has_side_effects()
            && !op.can_trap()
            && !op.can_load();
        ok.then_some(inst)
    }

    /// The load defining `value` if the current user may perform it itself (see the module
    /// doc): same block, this single use, a load without side effects, and nothing with side
    /// effects, another load or a possible trap in between (`user` is the merging
    /// instruction). The user must record the load's trap site.
    pub fn mergeable_load(&self, value: Value, user: Inst) -> Option<Inst> {
        let value = self.f.dfg.resolve(value);
        let inst = self.def_inst(value)?;
        let op = self.data(inst).opcode();
        let ok = self.f.layout.inst_block(inst) == self.cur_block
            && self.uses[value.index()] == 1
            && op.can_load()
            && !op.has_side_effects()
            && self.colors[inst.index()] + 1 == self.colors[user.index()];
        ok.then_some(inst)
    }

    /// Record that the current user performs the load defining `value` (found by
    /// [`Lower::mergeable_load`]): its use is merged and the load emits nothing.
    pub fn sink_load(&mut self, value: Value) {
        self.merge(value);
        if let Some(inst) = self.def_inst(value) {
            self.sunk[inst.index()] = true;
        }
    }

    /// Record that the current user absorbed one use of `value` (its producer was merged).
    pub fn merge(&mut self, value: Value) {
        let value = self.f.dfg.resolve(value);
        debug_assert!(
            self.uses[value.index()] > 0,
            "merged more uses of {value} than exist"
        );
        self.uses[value.index()] -= 1;
    }

    /// Record how the prologue computes the stack limit (the ABI's argument lowering plans
    /// it; the frame layout reads it from the VCode).
    pub fn set_stack_limit(&mut self, steps: Option<super::stack_limit::StackLimitSteps>) {
        self.builder.set_stack_limit(steps);
    }

    /// Append a machine instruction for the IR instruction being lowered.
    pub fn emit(&mut self, inst: impl Into<I>) {
        self.builder.push_in_group(inst.into());
    }

    /// The function's signature.
    pub fn signature(&self) -> &'f kestrel_ir::Signature {
        &self.f.signature
    }

    /// Flush the current IR instruction's machine instructions into the block (bottom-up),
    /// with that instruction's source line `srcloc`.
    fn flush(&mut self, srcloc: u32) {
        self.builder.close_group(srcloc);
    }

    fn resolve(&self, v: VReg) -> VReg {
        resolve_alias(&self.aliases, v)
    }

    /// The registers holding the results of the instruction being lowered, in result order
    /// (two for a split value): what [`LowerBackend::lower_inst`] gives when it succeeds.
    pub fn set_outputs(&mut self, regs: &[VReg]) {
        self.num_outputs = regs.len();
        match *regs {
            [] => {}
            [r] => self.outputs[0] = r,
            [lo, hi] => self.outputs = [lo, hi],
            _ => {
                self.more_outputs.clear();
                self.more_outputs.extend_from_slice(regs);
            }
        }
    }

    /// Give `values` the registers `regs`, in order (two for a split value), outside the
    /// driver's result handling: for an instruction lowered as a branch (`try_call`).
    pub fn define_values(&mut self, values: &[Value], regs: &[VReg]) -> Result<(), String> {
        self.set_outputs(regs);
        let mut next = 0;
        for &v in values {
            next = self.set_result(v, next)?;
        }
        self.num_outputs = 0;
        match next == regs.len() {
            true => Ok(()),
            false => Err(format!(
                "{} registers beyond the results",
                regs.len() - next
            )),
        }
    }

    /// The registers given by [`Lower::set_outputs`].
    #[inline]
    fn outputs(&self) -> &[VReg] {
        if self.num_outputs <= 2 {
            &self.outputs[..self.num_outputs]
        } else {
            &self.more_outputs
        }
    }

    /// What an ISA's [`LowerBackend::lower_inst`] returns once its selector has run: with
    /// the selected registers, they become the outputs and the answer is `Ok(true)`;
    /// without, the error the selector kept in `error` if any, else `Ok(false)` (no rule).
    pub fn selected(
        &mut self,
        regs: Option<&[VReg]>,
        error: &mut Option<CodegenError>,
    ) -> Result<bool, CodegenError> {
        match regs {
            Some(regs) => {
                self.set_outputs(regs);
                Ok(true)
            }
            None => error.take().map_or(Ok(false), Err),
        }
    }

    /// Make the result `value`'s vregs aliases of the outputs from index `from` on, which
    /// hold it; the index after them, or `Err` with why when they are not what `value`'s
    /// type takes (their number and class).
    fn set_result(&mut self, value: Value, from: usize) -> Result<usize, String> {
        let vs = self.value_regs(value);
        let end = (from + vs.regs().len()).min(self.num_outputs);
        let given = &self.outputs()[from..end];
        let class = |r: &VReg| r.class();
        if !vs.regs().iter().map(class).eq(given.iter().map(class)) {
            let want: Vec<RegClass> = vs.regs().iter().map(class).collect();
            let got: Vec<RegClass> = given.iter().map(class).collect();
            return Err(format!(
                "result {value} takes registers {want:?}, the lowering gave {got:?}"
            ));
        }
        for (k, &v) in vs.regs().iter().enumerate() {
            let reg = self.outputs()[from + k];
            if self.resolve(reg) != v {
                self.aliases[v.index()] = Some(reg);
            }
        }
        Ok(end)
    }

    /// The misuse recorded since the last call (see [`Lower::value_vreg`]), as an error
    /// naming `inst` (if any) and the value.
    #[inline]
    fn take_misuse(&mut self, inst: Option<Inst>) -> Result<(), CodegenError> {
        match self.misused.take() {
            None => Ok(()),
            Some((value, what)) => Err(self.misuse_error(inst, value, what)),
        }
    }

    #[cold]
    fn misuse_error(&self, inst: Option<Inst>, value: Value, what: &str) -> CodegenError {
        let f = self.f;
        let why = format!("{} value {value} {what}", f.dfg.value_type(value));
        match inst {
            Some(inst) => unsupported_inst(f, inst, &why),
            None => CodegenError::Unsupported {
                opcode: None,
                ty: Some(f.dfg.value_type(value)),
                what: format!("{why} in {}", f.name),
            },
        }
    }

    /// Finish the code (in the code memory given to [`Lower::new`]) and give the tables
    /// back to `scratch` for the next function.
    fn finish(self, scratch: &mut LowerScratch) {
        let Lower {
            builder,
            value_vregs,
            aliases,
            uses,
            demanded,
            colors,
            sunk,
            ..
        } = self;
        let code = builder.finish(aliases.len());
        scratch.work += (code.insts().len() + aliases.len()) as u64;
        code.resolve_and_number_vregs(|v| resolve_alias(&aliases, v), &mut scratch.dense);
        scratch.value_vregs = value_vregs;
        scratch.aliases = aliases;
        scratch.uses = uses;
        scratch.demanded = demanded;
        scratch.colors = colors;
        scratch.sunk = sunk;
    }
}

/// A block's instructions bottom-up: the layout's, or the order `tail_order.rs` listed.
enum BlockRead<L, R> {
    Layout(L),
    Listed(R),
}

impl<L: Iterator<Item = Inst>, R: Iterator<Item = Inst>> Iterator for BlockRead<L, R> {
    type Item = Inst;

    #[inline]
    fn next(&mut self) -> Option<Inst> {
        match self {
            BlockRead::Layout(l) => l.next(),
            BlockRead::Listed(r) => r.next(),
        }
    }
}

/// The vreg `v` stands for: the end of its alias chain.
fn resolve_alias(aliases: &[Option<VReg>], mut v: VReg) -> VReg {
    while let Some(t) = aliases[v.index()] {
        v = t;
    }
    v
}

/// `inst` is unsupported (`why`), at its controlling type: its first result's, else its
/// first argument's.
fn unsupported_inst(f: &Function, inst: Inst, why: &str) -> CodegenError {
    let ty = f
        .dfg
        .first_result(inst)
        .or_else(|| f.dfg.inst(inst).arguments(&f.dfg.pool).next())
        .map(|v| f.dfg.value_type(v));
    unsupported_at(f, inst, ty, why)
}

/// `inst` is unsupported at type `ty` (`why`).
fn unsupported_at(f: &Function, inst: Inst, ty: Option<Type>, why: &str) -> CodegenError {
    let at = f
        .inst_pos(inst)
        .map(|p| format!(" (line {})", p.line))
        .unwrap_or_default();
    CodegenError::Unsupported {
        opcode: Some(f.dfg.inst(inst).opcode()),
        ty,
        what: format!("{why} in {}{at}", f.name),
    }
}

/// Lower `f` into VCode in `order`, making every optional merge.
pub fn lower<B: LowerBackend>(
    backend: &B,
    f: &Function,
    order: &BlockLoweringOrder,
) -> Result<VCode<B::MInst>, CodegenError> {
    lower_with(backend, f, order, &mut Chaos::disabled(), None)
}

/// [`lower`], asking `chaos` before each optional merge and adding the selection rules
/// that fire to `rules_fired` when given.
pub fn lower_with<B: LowerBackend>(
    backend: &B,
    f: &Function,
    order: &BlockLoweringOrder,
    chaos: &mut Chaos,
    rules_fired: Option<&mut RulesFired>,
) -> Result<VCode<B::MInst>, CodegenError> {
    let mut scratch = LowerScratch::default();
    let mut code_memory = CodeMemory::default();
    lower_reusing(
        backend,
        f,
        order,
        chaos,
        rules_fired,
        &mut scratch,
        &mut code_memory,
    )?;
    Ok(code_memory.code)
}

/// [`lower_with`] in kept memory: the code is built in `code_memory` (its `code`, which
/// holds an earlier function's code until then, only its capacity kept) and lowering's
/// tables come from `scratch` (given back filled with this function's, for the next).
/// With `scratch.for_speed`, each block is read in `tail_order.rs`'s order and the
/// selection rules may ask [`Lower::for_speed`].
pub(crate) fn lower_reusing<B: LowerBackend>(
    backend: &B,
    f: &Function,
    order: &BlockLoweringOrder,
    chaos: &mut Chaos,
    rules_fired: Option<&mut RulesFired>,
    scratch: &mut LowerScratch,
    code_memory: &mut CodeMemory<B::MInst>,
) -> Result<(), CodegenError> {
    let regs_for = |ty: Type| backend.value_regs(ty);
    // Scratch reused across blocks: the block's successors, and one edge's argument vregs.
    let mut succs = std::mem::take(&mut scratch.succs);
    let mut args = std::mem::take(&mut scratch.args);
    let mut block_insts = std::mem::take(&mut scratch.block_insts);
    let mut tail_order = std::mem::take(&mut scratch.tail_order);
    let for_speed = scratch.for_speed;
    let mut work = (f.dfg.num_insts() + f.dfg.num_values()) as u64;
    let mut ctx = Lower::new(f, &regs_for, chaos, rules_fired, scratch, code_memory)?;
    let entry = f.entry_block();
    for (index, lb) in order.iter() {
        succs.clear();
        succs.extend(
            order
                .succ_indices(index)
                .iter()
                .map(|s| kestrel_regalloc::Block(s.index() as u32)),
        );
        work += 1 + succs.len() as u64;
        match lb {
            LoweredBlock::Edge {
                from,
                succ_index,
                to,
            } => {
                // The edge's arguments travel with this block's jump.
                let branch = f.layout.last_inst(from).expect("edge source has a branch");
                let call = f.branch_destination(branch, succ_index as usize);
                // The edge goes to the call's block, or past empty blocks the order bypassed
                // (a call to one of those passes no arguments).
                debug_assert!(call.block == to || f.dfg.block_call_args(&call).is_empty());
                args.clear();
                for &v in f.dfg.block_call_args(&call) {
                    args.extend_from_slice(ctx.value_regs(v).regs());
                }
                work += args.len() as u64;
                ctx.builder
                    .push_rev(B::MInst::gen_jump(succs[0]), f.debug_line(branch));
                ctx.builder.add_succ(succs[0], &args);
            }
            LoweredBlock::Orig(b) => {
                ctx.cur_block = Some(b);
                // Program order, but for a branch's condition at opt speed (`tail_order.rs`);
                // read bottom-up.
                let reordered = for_speed && tail_order.block_order(f, b, &mut block_insts);
                let mut insts = if reordered {
                    BlockRead::Listed(block_insts.iter().copied().rev())
                } else {
                    BlockRead::Layout(f.layout.block_insts(b).rev())
                }
                .peekable();
                let term = *insts.peek().expect("verified blocks are not empty");
                if f.dfg.inst(term).opcode().is_branch() {
                    insts.next();
                    let lowered = backend.lower_branch(&mut ctx, term, &succs);
                    ctx.take_misuse(Some(term))?;
                    lowered?.ok_or_else(|| unsupported_inst(f, term, "branch"))?;
                    ctx.flush(f.debug_line(term));
                    for (slot, &succ) in succs.iter().enumerate() {
                        let call = &f.branch_destination(term, slot);
                        let to_edge = matches!(
                            order.lowered_order()[succ.index()],
                            LoweredBlock::Edge { .. }
                        );
                        args.clear();
                        if !to_edge {
                            for &v in f.dfg.block_call_args(call) {
                                args.extend_from_slice(ctx.value_regs(v).regs());
                            }
                        }
                        work += args.len() as u64;
                        ctx.builder.add_succ(succ, &args);
                    }
                }
                for inst in insts {
                    work += 1;
                    let data = f.dfg.inst(inst);
                    let op = data.opcode();
                    let needed = op.has_side_effects()
                        || (op.can_trap() && !ctx.sunk[inst.index()])
                        || op.is_terminator()
                        || f.dfg
                            .inst_results(inst)
                            .iter()
                            .any(|r| ctx.uses[r.index()] > 0 || ctx.demanded[r.index()]);
                    if !needed {
                        continue;
                    }
                    ctx.num_outputs = 0;
                    let lowered = backend.lower_inst(&mut ctx, inst);
                    ctx.take_misuse(Some(inst))?;
                    if !lowered? {
                        return Err(unsupported_inst(f, inst, "instruction"));
                    }
                    // The ISA gives each result's registers in order, two for a split value,
                    // and nothing more.
                    let mut next = 0;
                    work += f.dfg.inst_results(inst).len() as u64;
                    for &r in f.dfg.inst_results(inst) {
                        next = ctx.set_result(r, next).map_err(|why| {
                            unsupported_at(f, inst, Some(f.dfg.value_type(r)), &why)
                        })?;
                    }
                    if next < ctx.num_outputs {
                        let beyond = ctx.num_outputs - next;
                        let why = format!("{beyond} registers beyond the results");
                        return Err(unsupported_inst(f, inst, &why));
                    }
                    ctx.flush(f.debug_line(inst));
                }
                if Some(b) == entry {
                    backend.gen_args(&mut ctx, f.dfg.block_params(b))?;
                    ctx.take_misuse(None)?;
                    ctx.flush(0);
                } else {
                    args.clear();
                    for &p in f.dfg.block_params(b) {
                        args.extend_from_slice(ctx.value_regs(p).regs());
                    }
                    work += args.len() as u64;
                    ctx.builder.set_params(&args);
                }
                ctx.cur_block = None;
            }
        }
        ctx.builder.end_block();
    }
    scratch.work = work;
    ctx.finish(scratch);
    scratch.succs = succs;
    scratch.args = args;
    scratch.block_insts = block_insts;
    scratch.tail_order = tail_order;
    Ok(())
}
