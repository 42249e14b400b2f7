//! `VCode`: machine instructions over virtual registers, in final block order.
//!
//! # Contract
//!
//! Requires (from the lowering that builds it through [`VCodeBuilder`]): blocks are added in
//! the final layout order chosen by the block order, each block's instructions in program
//! order, its terminator last; successor lists name blocks of this VCode; block 0 is the
//! entry and has no parameters (incoming arguments are defined by an instruction with
//! fixed-register defs); no critical edges (the block order split them into blocks of their
//! own).
//!
//! Guarantees: once lowering has finished it (the builder's `finish`, then
//! `VCode::resolve_and_number_vregs`) the VCode is immutable, and the vregs it names are
//! exactly `0..num_vregs`, numbered in order of first appearance. Its operands are
//! flattened once into one array, so [`kestrel_regalloc::Function`] queries are slice
//! lookups; predecessor lists are derived from successor lists (in block order, one entry per
//! edge). Register allocation reads it and returns allocations and edits beside it; emission
//! walks it in order.
//!
//! Cost: building is O(instructions + operands + edges) (arrays sized from the IR up front;
//! predecessors by one counting sort); every query is a slice lookup.

use std::fmt::Write as _;

use kestrel_regalloc::{Block, Function, Inst as RInst, InstRange, Operand, Output, PRegSet, VReg};

use super::stack_limit::StackLimitSteps;
use super::{BlockIndex, MachInst};
use kestrel_ir::entity::refill;

/// Machine code over virtual registers for one function (see the module contract).
#[derive(Clone, Debug)]
pub struct VCode<I: MachInst> {
    insts: Vec<I>,
    /// The source line (0: none) of the IR instruction each instruction was lowered from.
    srclocs: Vec<u32>,
    /// `operands[operand_ranges[i].0..operand_ranges[i].1]` are instruction `i`'s operands.
    operands: Vec<Operand>,
    operand_ranges: Vec<(u32, u32)>,
    block_ranges: Vec<InstRange>,
    succs: Vec<Block>,
    succ_ranges: Vec<(u32, u32)>,
    preds: Vec<Block>,
    pred_ranges: Vec<(u32, u32)>,
    params: Vec<VReg>,
    param_ranges: Vec<(u32, u32)>,
    /// Branch arguments of block `b` to its `i`-th successor:
    /// `branch_args[branch_arg_ranges[succ_ranges[b].0 + i]]`.
    branch_args: Vec<VReg>,
    branch_arg_ranges: Vec<(u32, u32)>,
    num_vregs: usize,
    /// How the prologue computes the stack limit, when the function declares one: planned
    /// (and checked) once by the ABI's argument lowering, read by the frame layout.
    stack_limit: Option<StackLimitSteps>,
    /// Registers every call clobbers beyond its convention's set, for the allocator: the
    /// ISA's [`MachInst::vector_call_clobbers`] in a function with vector values (set by
    /// the driver after lowering), else none.
    extra_call_clobbers: PRegSet,
}

impl<I: MachInst> Default for VCode<I> {
    /// Code without blocks (what a builder starts from).
    fn default() -> Self {
        VCode {
            insts: Vec::new(),
            srclocs: Vec::new(),
            operands: Vec::new(),
            operand_ranges: Vec::new(),
            block_ranges: Vec::new(),
            succs: Vec::new(),
            succ_ranges: Vec::new(),
            preds: Vec::new(),
            pred_ranges: Vec::new(),
            params: Vec::new(),
            param_ranges: Vec::new(),
            branch_args: Vec::new(),
            branch_arg_ranges: Vec::new(),
            num_vregs: 0,
            stack_limit: None,
            extra_call_clobbers: PRegSet::empty(),
        }
    }
}

#[inline]
fn slice<T>(v: &[T], r: (u32, u32)) -> &[T] {
    &v[slice_range(r)]
}

#[inline]
fn slice_range(r: (u32, u32)) -> std::ops::Range<usize> {
    r.0 as usize..r.1 as usize
}

impl<I: MachInst> VCode<I> {
    /// How the prologue computes the stack limit (`None`: the function declares none), as
    /// the argument lowering planned it.
    pub fn stack_limit(&self) -> Option<&StackLimitSteps> {
        self.stack_limit.as_ref()
    }

    /// The instructions in final order.
    pub fn insts(&self) -> &[I] {
        &self.insts
    }

    /// The source line (0: none) of each instruction's IR instruction, by instruction.
    pub fn srclocs(&self) -> &[u32] {
        &self.srclocs
    }

    /// Number of blocks.
    pub fn num_blocks(&self) -> usize {
        self.block_ranges.len()
    }

    /// Instructions of `block`.
    pub fn block_range(&self, block: BlockIndex) -> InstRange {
        self.block_ranges[block.index()]
    }

    /// Empties every list, keeping the capacity (for reuse by the next function).
    fn clear(&mut self) {
        self.insts.clear();
        self.srclocs.clear();
        self.operands.clear();
        self.operand_ranges.clear();
        self.block_ranges.clear();
        self.succs.clear();
        self.succ_ranges.clear();
        self.preds.clear();
        self.pred_ranges.clear();
        self.params.clear();
        self.param_ranges.clear();
        self.branch_args.clear();
        self.branch_arg_ranges.clear();
        self.num_vregs = 0;
        self.stack_limit = None;
        self.extra_call_clobbers = PRegSet::empty();
    }

    /// Make every call of the function clobber `regs` too, as the allocator sees it (the
    /// frame still saves only what the calls' conventions clobber).
    pub fn set_extra_call_clobbers(&mut self, regs: PRegSet) {
        self.extra_call_clobbers = regs;
    }

    /// Passes every vreg (operands, block parameters, branch arguments) through `resolve`
    /// (lowering's result aliases), then renumbers them densely in program order of first
    /// appearance, so that the allocator's per-vreg tables count only the vregs the code
    /// names, not aliases and unused ones; `dense` is working memory. Lowering uses this once,
    /// after [`VCodeBuilder::finish`]. Keeps the structure; the instructions' own register
    /// fields keep lowering's numbers (only the collected operands are read from here on).
    /// Cost: O(vregs + operands + parameters + arguments).
    pub(crate) fn resolve_and_number_vregs(
        &mut self,
        resolve: impl Fn(VReg) -> VReg,
        dense: &mut Vec<u32>,
    ) {
        refill(dense, self.num_vregs, u32::MAX);
        let mut named = 0;
        // `dense[v]` caches v's number for its later mentions, alias or not (an alias has its
        // target's class: lowering checks result classes).
        let mut rename = |v: VReg| {
            let mut d = dense[v.index()];
            if d == u32::MAX {
                let r = resolve(v).index();
                d = dense[r];
                if d == u32::MAX {
                    d = named;
                    named += 1;
                    dense[r] = d;
                }
                dense[v.index()] = d;
            }
            VReg::new(d as usize, v.class())
        };
        for b in 0..self.block_ranges.len() {
            for v in &mut self.params[slice_range(self.param_ranges[b])] {
                *v = rename(*v);
            }
            let insts = self.block_ranges[b];
            let (first, end) = (insts.start.index(), insts.end.index());
            let ops = self.operand_ranges[first].0..self.operand_ranges[end - 1].1;
            for o in &mut self.operands[ops.start as usize..ops.end as usize] {
                *o = o.with_vreg(rename(o.vreg()));
            }
            let (s0, s1) = self.succ_ranges[b];
            for edge in s0 as usize..s1 as usize {
                for v in &mut self.branch_args[slice_range(self.branch_arg_ranges[edge])] {
                    *v = rename(*v);
                }
            }
        }
        self.num_vregs = named as usize;
    }

    /// Print the VCode, optionally with the allocator's result (allocations and edits).
    pub fn pretty(&self, ra: Option<&Output>) -> String {
        let mut s = String::new();
        let mut edits = ra.map(|o| o.edits.iter().peekable());
        for b in 0..self.num_blocks() {
            let block = Block(b as u32);
            let params = self.block_params(block);
            let _ = write!(s, "block{b}");
            if !params.is_empty() && ra.is_none() {
                let p: Vec<String> = params.iter().map(|v| v.to_string()).collect();
                let _ = write!(s, "({})", p.join(", "));
            }
            let succ: Vec<String> = self
                .block_succs(block)
                .iter()
                .enumerate()
                .map(|(i, sb)| {
                    let args = self.branch_blockparams(block, i);
                    if args.is_empty() || ra.is_some() {
                        format!("block{}", sb.0)
                    } else {
                        let a: Vec<String> = args.iter().map(|v| v.to_string()).collect();
                        format!("block{}({})", sb.0, a.join(", "))
                    }
                })
                .collect();
            if !succ.is_empty() {
                let _ = write!(s, " -> {}", succ.join(", "));
            }
            s.push_str(":\n");
            for i in self.block_range(block).iter() {
                if let Some(edits) = edits.as_mut() {
                    while let Some((pt, e)) =
                        edits.next_if(|(pt, _)| pt.inst() == i && !pt.is_after())
                    {
                        let _ = pt;
                        let _ = writeln!(
                            s,
                            "  move {} <- {}",
                            I::alloc_name(e.to),
                            I::alloc_name(e.from)
                        );
                    }
                }
                let names: Vec<String> = match ra {
                    Some(o) => o.inst_allocs(i).iter().map(|&a| I::alloc_name(a)).collect(),
                    None => self
                        .inst_operands(i)
                        .iter()
                        .map(|o| o.vreg().to_string())
                        .collect(),
                };
                let _ = writeln!(s, "  {}", self.insts[i.index()].pretty(&names));
                if let Some(edits) = edits.as_mut() {
                    while let Some((_, e)) = edits.next_if(|(pt, _)| pt.inst() == i) {
                        let _ = writeln!(
                            s,
                            "  move {} <- {}",
                            I::alloc_name(e.to),
                            I::alloc_name(e.from)
                        );
                    }
                }
            }
        }
        s
    }
}

impl<I: MachInst> Function for VCode<I> {
    #[inline]
    fn num_insts(&self) -> usize {
        self.insts.len()
    }
    #[inline]
    fn num_blocks(&self) -> usize {
        self.block_ranges.len()
    }
    #[inline]
    fn entry_block(&self) -> Block {
        Block(0)
    }
    #[inline]
    fn block_insns(&self, block: Block) -> InstRange {
        self.block_ranges[block.index()]
    }
    #[inline]
    fn block_succs(&self, block: Block) -> &[Block] {
        slice(&self.succs, self.succ_ranges[block.index()])
    }
    #[inline]
    fn block_preds(&self, block: Block) -> &[Block] {
        slice(&self.preds, self.pred_ranges[block.index()])
    }
    #[inline]
    fn block_params(&self, block: Block) -> &[VReg] {
        slice(&self.params, self.param_ranges[block.index()])
    }
    #[inline]
    fn branch_blockparams(&self, block: Block, succ_idx: usize) -> &[VReg] {
        let edge = self.succ_ranges[block.index()].0 as usize + succ_idx;
        slice(&self.branch_args, self.branch_arg_ranges[edge])
    }
    #[inline]
    fn inst_operands(&self, inst: RInst) -> &[Operand] {
        slice(&self.operands, self.operand_ranges[inst.index()])
    }
    #[inline]
    fn inst_clobbers(&self, inst: RInst) -> PRegSet {
        // Asked about once per instruction: computed from the instruction, not stored.
        let clobbers = self.insts[inst.index()].clobbers();
        if clobbers.is_empty() {
            // Not a call (every call clobbers some of its convention's registers).
            return clobbers;
        }
        clobbers.union(self.extra_call_clobbers)
    }
    #[inline]
    fn is_move(&self, inst: RInst) -> Option<(Operand, Operand)> {
        self.insts[inst.index()].is_move()?;
        let ops = self.inst_operands(inst);
        let def = ops.iter().find(|o| o.is_def())?;
        let src = ops.iter().find(|o| o.is_use())?;
        Some((*def, *src))
    }
    #[inline]
    fn num_vregs(&self) -> usize {
        self.num_vregs
    }
}

/// Builds a [`VCode`] block by block in final order, in the buffers of a [`CodeMemory`]
/// (borrowed, so neither the code nor the buffers move while it is built).
///
/// Lowering walks a block's IR bottom-up, so instructions of the *current* block are pushed
/// in reverse ([`VCodeBuilder::push_rev`]), or in program order as a *group* (one IR
/// instruction's, [`VCodeBuilder::push_in_group`]) that [`VCodeBuilder::close_group`] turns
/// around in place, and put in program order by [`VCodeBuilder::end_block`]. Every
/// instruction is written once, where it ends up in `code.insts`, and only reversed in place
/// after that: no per-block list copied into place, and no single move through a temporary
/// (which reloaded the temporary in wider pieces than it was stored in, a stall).
pub struct VCodeBuilder<'m, I: MachInst> {
    mem: &'m mut CodeMemory<I>,
}

/// The memory of one function's code kept for the next: the last [`VCode`] and the
/// builder's per-block buffers. [`VCodeBuilder::reusing`] builds the next function's code
/// in them, so compiling many functions allocates nothing here once it has grown.
pub struct CodeMemory<I: MachInst> {
    /// The last function's code; emptied before it is built into again.
    pub code: VCode<I>,
    /// Where the block being built starts in `code.insts` (and `code.srclocs`): its
    /// instructions there are last first (but for an open group, which starts at
    /// `group_start` and is in program order), until `end_block` reverses them in place.
    block_start: usize,
    /// Where the open group starts in `code.insts`; `code.srclocs` has a line for every
    /// instruction before it.
    group_start: usize,
    /// The block's successor edges: (target, its args as a range of `pending_args`).
    pending_succs: Vec<(BlockIndex, u32, u32)>,
    pending_args: Vec<VReg>,
    pending_params: Vec<VReg>,
    /// The MachBuffer's working lists (see [`super::buffer::MachBuffer::reusing`]).
    pub(crate) buffer: super::buffer::BufferMemory<I::LabelUse>,
    /// Emission's label of each block.
    pub(crate) block_labels: Vec<super::buffer::Label>,
}

impl<I: MachInst> Default for CodeMemory<I> {
    fn default() -> Self {
        CodeMemory {
            code: VCode::default(),
            block_start: 0,
            group_start: 0,
            pending_succs: Vec::new(),
            pending_args: Vec::new(),
            pending_params: Vec::new(),
            buffer: Default::default(),
            block_labels: Vec::new(),
        }
    }
}

impl<'m, I: MachInst> VCodeBuilder<'m, I> {
    /// A builder of new code in `memory` (the earlier code is emptied, only its capacity is
    /// kept), with room for about `insts` instructions in `blocks` blocks, so the flat
    /// arrays grow without repeated copying.
    pub fn reusing(memory: &'m mut CodeMemory<I>, insts: usize, blocks: usize) -> Self {
        memory.code.clear();
        memory.block_start = 0;
        memory.group_start = 0;
        memory.pending_succs.clear();
        memory.pending_args.clear();
        memory.pending_params.clear();
        let c = &mut memory.code;
        c.insts.reserve(insts + blocks);
        c.srclocs.reserve(insts + blocks);
        c.operands.reserve(3 * insts);
        c.operand_ranges.reserve(insts + blocks);
        c.block_ranges.reserve(blocks);
        c.succs.reserve(2 * blocks);
        c.succ_ranges.reserve(blocks);
        c.param_ranges.reserve(blocks);
        c.branch_arg_ranges.reserve(2 * blocks);
        VCodeBuilder { mem: memory }
    }

    /// Record the function's stack-limit computation (see [`VCode::stack_limit`]).
    pub fn set_stack_limit(&mut self, steps: Option<StackLimitSteps>) {
        self.mem.code.stack_limit = steps;
    }

    /// Push an instruction *before* those already pushed for the current block; it comes
    /// from source line `srcloc` (0: none). No group may be open.
    pub fn push_rev(&mut self, inst: I, srcloc: u32) {
        let m = &mut *self.mem;
        debug_assert_eq!(m.group_start, m.code.insts.len(), "a group is open");
        m.code.insts.push(inst);
        m.code.srclocs.push(srcloc);
        m.group_start = m.code.insts.len();
    }

    /// Append an instruction to the open group (opening one if none is): the group's
    /// instructions are in program order, and all go before those already pushed.
    pub fn push_in_group(&mut self, inst: I) {
        self.mem.code.insts.push(inst);
    }

    /// Close the open group (if any), whose instructions come from source line `srcloc`:
    /// reversed in place, it joins the block's bottom-up order.
    pub fn close_group(&mut self, srcloc: u32) {
        let c = &mut self.mem.code;
        c.insts[self.mem.group_start..].reverse();
        // Invariant restored: every instruction before the (now empty) open group has a line.
        c.srclocs.resize(c.insts.len(), srcloc);
        self.mem.group_start = c.insts.len();
    }

    /// Record an edge of the current block (in its terminator's target order).
    pub fn add_succ(&mut self, target: BlockIndex, args: &[VReg]) {
        let start = self.mem.pending_args.len() as u32;
        self.mem.pending_args.extend_from_slice(args);
        self.mem
            .pending_succs
            .push((target, start, self.mem.pending_args.len() as u32));
    }

    /// Set the current block's parameters.
    pub fn set_params(&mut self, params: &[VReg]) {
        self.mem.pending_params.clear();
        self.mem.pending_params.extend_from_slice(params);
    }

    /// Close the current block: its instructions go in program order after the previous
    /// block's.
    pub fn end_block(&mut self) {
        let m = &mut *self.mem;
        let c = &mut m.code;
        debug_assert_eq!(m.group_start, c.insts.len(), "a group is open");
        let start = m.block_start as u32;
        // The block was built last first where it stands: program order, in place.
        c.insts[m.block_start..].reverse();
        c.srclocs[m.block_start..].reverse();
        m.block_start = c.insts.len();
        for inst in &c.insts[start as usize..] {
            let op_start = c.operands.len() as u32;
            inst.collect_operands(&mut c.operands);
            c.operand_ranges.push((op_start, c.operands.len() as u32));
        }
        let end = c.insts.len() as u32;
        debug_assert!(end > start, "a block needs a terminator");
        debug_assert!(
            c.insts.last().is_some_and(|i| i.is_term()),
            "block must end in a terminator"
        );
        c.block_ranges.push(InstRange {
            start: RInst(start),
            end: RInst(end),
        });
        let s_start = c.succs.len() as u32;
        for (target, from, to) in m.pending_succs.drain(..) {
            c.succs.push(target);
            let a_start = c.branch_args.len() as u32;
            c.branch_args
                .extend_from_slice(&m.pending_args[from as usize..to as usize]);
            c.branch_arg_ranges
                .push((a_start, c.branch_args.len() as u32));
        }
        c.succ_ranges.push((s_start, c.succs.len() as u32));
        m.pending_args.clear();
        let p_start = c.params.len() as u32;
        c.params.append(&mut m.pending_params);
        c.param_ranges.push((p_start, c.params.len() as u32));
    }

    /// Finish: derive predecessors and freeze; the code is the memory's
    /// [`CodeMemory::code`]. `num_vregs` bounds every vreg index used.
    pub fn finish(self, num_vregs: usize) -> &'m mut VCode<I> {
        debug_assert_eq!(
            self.mem.block_start,
            self.mem.code.insts.len(),
            "unfinished block"
        );
        let c = &mut self.mem.code;
        let n = c.block_ranges.len();
        // Counting sort of edges by target: predecessors in source-block order. Each
        // range's end first counts the block's predecessors, then (from its start) serves
        // as its fill cursor, ending at its end.
        c.pred_ranges.clear();
        c.pred_ranges.resize(n, (0, 0));
        for s in &c.succs {
            c.pred_ranges[s.index()].1 += 1;
        }
        let mut start = 0;
        for range in c.pred_ranges.iter_mut() {
            let count = range.1;
            *range = (start, start);
            start += count;
        }
        c.preds.clear();
        c.preds.resize(c.succs.len(), Block(0));
        for b in 0..n {
            let (s0, s1) = c.succ_ranges[b];
            for s in &c.succs[s0 as usize..s1 as usize] {
                let fill = &mut c.pred_ranges[s.index()].1;
                c.preds[*fill as usize] = Block(b as u32);
                *fill += 1;
            }
        }
        c.num_vregs = num_vregs;
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::x64::inst::{AluInst, ControlInst, Inst};
    use kestrel_regalloc::RegClass;

    fn mov_imm(index: usize) -> Inst {
        AluInst::MovImm {
            dst: VReg::new(index, RegClass::Int),
            imm: index as u64,
        }
        .into()
    }

    #[test]
    fn groups_keep_their_order_and_blocks_are_built_bottom_up() {
        let mut memory = CodeMemory::<Inst>::default();
        // A first function, abandoned with a group open (as an error in lowering leaves
        // it): the next one starts clean.
        let mut b = VCodeBuilder::reusing(&mut memory, 4, 1);
        b.push_in_group(mov_imm(9));
        let mut b = VCodeBuilder::reusing(&mut memory, 8, 2);
        // Block 0, bottom-up: its jump, then the last IR instruction's two machine
        // instructions (pushed in program order), then the first's one.
        b.push_rev(ControlInst::Jmp { target: Block(1) }.into(), 30);
        b.push_in_group(mov_imm(2));
        b.push_in_group(mov_imm(3));
        b.close_group(20);
        b.push_in_group(mov_imm(1));
        b.close_group(10);
        b.add_succ(Block(1), &[]);
        b.end_block();
        // Block 1: one group holding its terminator.
        b.push_in_group(
            ControlInst::Ret {
                rets: Default::default(),
            }
            .into(),
        );
        b.close_group(40);
        b.end_block();
        let code = b.finish(10);
        let movs: Vec<Option<u64>> = code
            .insts()
            .iter()
            .map(|i| match i {
                Inst::Alu(AluInst::MovImm { imm, .. }) => Some(*imm),
                _ => None,
            })
            .collect();
        assert_eq!(movs, [Some(1), Some(2), Some(3), None, None]);
        assert_eq!(code.srclocs(), [10, 20, 20, 30, 40]);
        assert!(matches!(
            code.insts()[3],
            Inst::Control(ControlInst::Jmp { .. })
        ));
        let r = code.block_range(Block(1));
        assert_eq!((r.start.index(), r.end.index()), (4, 5));
        // Each instruction's operands were collected in the final order.
        assert_eq!(code.inst_operands(RInst(0))[0].vreg().index(), 1);
        assert_eq!(code.inst_operands(RInst(2))[0].vreg().index(), 3);
    }
}
