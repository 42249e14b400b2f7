//! Random valid test functions from `arbitrary` bytes, for fuzzing and stress.
//!
//! Guarantees: every generated [`TestFunc`] passes validation on the [`MachineEnv`]
//! generated with it: SSA with dominating defs (values are drawn from those defined in
//! dominating blocks), no critical edges (split by inserting jump blocks), reachable blocks,
//! and per-instruction constraint mixes that a machine with that many registers can meet.
//!
//! The instruction mix imitates an x86-64 lowering: three-address and two-address (reuse)
//! ALU ops, shifts with the count fixed in `rcx`, division with fixed `rax`/`rdx` inputs and
//! outputs, calls with fixed argument and result registers that clobber every caller-saved
//! register, register-or-stack and stack operands, early defs, late uses, plain moves,
//! float ops, incoming arguments in fixed registers, loops, diamonds and block parameters.
//! Values are drawn from everything available, so many stay live: high register pressure.

use arbitrary::{Result, Unstructured};

use crate::{
    Block, Function, Inst, InstRange, MachineEnv, Operand, OperandConstraint as C, OperandKind,
    OperandPos, PReg, PRegSet, RegClass, VReg,
};

/// A block of a [`TestFunc`].
#[derive(Clone, Debug)]
pub struct TestBlock {
    /// Instructions.
    pub insts: InstRange,
    /// Successors.
    pub succs: Vec<Block>,
    /// Predecessors.
    pub preds: Vec<Block>,
    /// Parameters.
    pub params: Vec<VReg>,
    /// Branch arguments per successor.
    pub args: Vec<Vec<VReg>>,
}

/// An instruction of a [`TestFunc`].
#[derive(Clone, Debug)]
pub struct TestInst {
    /// Operands.
    pub operands: Vec<Operand>,
    /// Clobbered registers.
    pub clobbers: PRegSet,
    /// Whether this is a plain move (operand 0 def, operand 1 use).
    pub is_move: bool,
}

/// A self-contained function implementing [`Function`].
#[derive(Clone, Debug, Default)]
pub struct TestFunc {
    /// Blocks in emission order.
    pub blocks: Vec<TestBlock>,
    /// Instructions.
    pub insts: Vec<TestInst>,
    /// Number of vregs.
    pub num_vregs: usize,
}

impl Function for TestFunc {
    fn num_insts(&self) -> usize {
        self.insts.len()
    }
    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }
    fn entry_block(&self) -> Block {
        Block(0)
    }
    fn block_insns(&self, block: Block) -> InstRange {
        self.blocks[block.index()].insts
    }
    fn block_succs(&self, block: Block) -> &[Block] {
        &self.blocks[block.index()].succs
    }
    fn block_preds(&self, block: Block) -> &[Block] {
        &self.blocks[block.index()].preds
    }
    fn block_params(&self, block: Block) -> &[VReg] {
        &self.blocks[block.index()].params
    }
    fn branch_blockparams(&self, block: Block, succ_idx: usize) -> &[VReg] {
        &self.blocks[block.index()].args[succ_idx]
    }
    fn inst_operands(&self, inst: Inst) -> &[Operand] {
        &self.insts[inst.index()].operands
    }
    fn inst_clobbers(&self, inst: Inst) -> PRegSet {
        self.insts[inst.index()].clobbers
    }
    fn is_move(&self, inst: Inst) -> Option<(Operand, Operand)> {
        let i = &self.insts[inst.index()];
        match i.operands[..] {
            [dst, src] if i.is_move => Some((dst, src)),
            _ => None,
        }
    }
    fn num_vregs(&self) -> usize {
        self.num_vregs
    }
}

impl TestFunc {
    /// The same function with its blocks emitted in `order` (a permutation of the block
    /// numbers, the entry first): block numbers and instruction numbers are renumbered, the
    /// program is unchanged. Blocks may then precede their dominators, as a rotated loop's
    /// body precedes its header in the code generator's layout.
    pub fn with_block_order(&self, order: &[Block]) -> TestFunc {
        assert_eq!(
            order.len(),
            self.blocks.len(),
            "a permutation of the blocks"
        );
        assert_eq!(order.first(), Some(&Block(0)), "the entry stays first");
        let mut new_index = vec![u32::MAX; order.len()];
        for (k, b) in order.iter().enumerate() {
            assert_eq!(new_index[b.index()], u32::MAX, "{b:?} listed twice");
            new_index[b.index()] = k as u32;
        }
        let renumber = |bs: &[Block]| bs.iter().map(|b| Block(new_index[b.index()])).collect();
        let mut out = TestFunc {
            num_vregs: self.num_vregs,
            ..TestFunc::default()
        };
        for b in order {
            let old = &self.blocks[b.index()];
            let start = out.insts.len() as u32;
            let range = old.insts.start.index()..old.insts.end.index();
            out.insts.extend(self.insts[range].iter().cloned());
            out.blocks.push(TestBlock {
                insts: InstRange {
                    start: Inst(start),
                    end: Inst(out.insts.len() as u32),
                },
                succs: renumber(&old.succs),
                preds: renumber(&old.preds),
                params: old.params.clone(),
                args: old.args.clone(),
            });
        }
        out
    }
}

/// x86-64 register numbers used by the generator.
pub mod x64 {
    use crate::{PReg, RegClass};
    /// rax.
    pub const RAX: PReg = PReg::new(0, RegClass::Int);
    /// rcx.
    pub const RCX: PReg = PReg::new(1, RegClass::Int);
    /// rdx.
    pub const RDX: PReg = PReg::new(2, RegClass::Int);
    /// rbx.
    pub const RBX: PReg = PReg::new(3, RegClass::Int);
    /// rsi.
    pub const RSI: PReg = PReg::new(6, RegClass::Int);
    /// rdi.
    pub const RDI: PReg = PReg::new(7, RegClass::Int);
    /// r8 + n.
    pub const fn r(n: usize) -> PReg {
        PReg::new(n, RegClass::Int)
    }
    /// xmm n.
    pub const fn xmm(n: usize) -> PReg {
        PReg::new(n, RegClass::Float)
    }
}

/// Integer argument registers of the System V ABI (first four).
const INT_ARGS: [PReg; 4] = [x64::RDI, x64::RSI, x64::RDX, x64::RCX];

/// An x86-64-like machine. `tight` keeps only six integer and six float registers (high
/// pressure); `scratch` reserves r11 / xmm15 for the resolver, otherwise it finds free
/// registers or borrows one.
pub fn x64_env(tight: bool, scratch: bool) -> MachineEnv {
    use x64::*;
    let mut int: Vec<PReg> = vec![
        RAX,
        RCX,
        RDX,
        RSI,
        RDI,
        r(8),
        r(9),
        r(10),
        r(11),
        RBX,
        r(12),
        r(13),
        r(14),
        r(15),
    ];
    let mut float: Vec<PReg> = (0..16).map(xmm).collect();
    if tight {
        int = vec![RAX, RCX, RDX, RSI, RDI, RBX];
        float = (0..6).map(xmm).collect();
    }
    let scratch_regs = if scratch {
        int.retain(|&r| r != x64::r(11));
        float.retain(|&r| r != xmm(15));
        [Some(x64::r(11)), if tight { None } else { Some(xmm(15)) }]
    } else {
        [None, None]
    };
    let mut caller_saved: PRegSet = [RAX, RCX, RDX, RSI, RDI, r(8), r(9), r(10), r(11)]
        .into_iter()
        .collect();
    for k in 0..16 {
        caller_saved.add(xmm(k));
    }
    MachineEnv {
        allocatable: [int, float],
        caller_saved,
        scratch: scratch_regs,
    }
}

/// A generated case: a function and the machine to allocate it for.
#[derive(Clone, Debug)]
pub struct TestCase {
    /// The function.
    pub func: TestFunc,
    /// The machine.
    pub env: MachineEnv,
}

impl<'a> arbitrary::Arbitrary<'a> for TestCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let tight = u.ratio(1, 2)?;
        let scratch = u.ratio(1, 2)?;
        let env = x64_env(tight, scratch);
        let func = generate(u, &env)?;
        Ok(TestCase { func, env })
    }
}

struct Builder<'e> {
    env: &'e MachineEnv,
    num_vregs: usize,
    insts: Vec<TestInst>,
    clobbers: PRegSet,
}

impl Builder<'_> {
    fn new_vreg(&mut self, class: RegClass) -> VReg {
        self.num_vregs += 1;
        VReg::new(self.num_vregs - 1, class)
    }

    fn pick(
        &mut self,
        u: &mut Unstructured,
        avail: &mut Vec<VReg>,
        class: RegClass,
    ) -> Result<VReg> {
        let of_class: Vec<VReg> = avail
            .iter()
            .copied()
            .filter(|v| v.class() == class)
            .collect();
        if of_class.is_empty() || u.ratio(1, 16)? {
            let v = self.new_vreg(class);
            self.push(vec![Operand::reg_def(v)], false);
            avail.push(v);
            return Ok(v);
        }
        Ok(*u.choose(&of_class)?)
    }

    fn push(&mut self, operands: Vec<Operand>, clobbers: bool) {
        let clobbers = if clobbers {
            self.clobbers
        } else {
            PRegSet::empty()
        };
        self.insts.push(TestInst {
            operands,
            clobbers,
            is_move: false,
        });
    }

    fn fixed_allocatable(&self, r: PReg) -> bool {
        self.env.allocatable[r.class().index()].contains(&r)
    }

    /// One random non-terminator instruction.
    fn inst(&mut self, u: &mut Unstructured, avail: &mut Vec<VReg>) -> Result<()> {
        use OperandKind::*;
        use OperandPos::*;
        let int = RegClass::Int;
        let kind = u.int_in_range(0..=13)?;
        match kind {
            0 => {
                let d = self.new_vreg(if u.ratio(1, 4)? { RegClass::Float } else { int });
                self.push(vec![Operand::reg_def(d)], false);
                avail.push(d);
            }
            1 | 2 => {
                let class = if kind == 2 && u.ratio(1, 2)? {
                    RegClass::Float
                } else {
                    int
                };
                let a = self.pick(u, avail, class)?;
                let b = self.pick(u, avail, class)?;
                let d = self.new_vreg(class);
                let bc = *u.choose(&[C::Reg, C::RegOrStack])?;
                self.push(
                    vec![
                        Operand::new(d, Def, Late, C::Reg),
                        Operand::reg_use(a),
                        Operand::new(b, Use, Early, bc),
                    ],
                    false,
                );
                avail.push(d);
            }
            3 | 4 => {
                // Two-address: d = a op b, d reuses a.
                let class = if kind == 4 && u.ratio(1, 2)? {
                    RegClass::Float
                } else {
                    int
                };
                let a = self.pick(u, avail, class)?;
                let b = self.pick(u, avail, class)?;
                let d = self.new_vreg(class);
                let ac = *u.choose(&[C::Reg, C::RegOrStack])?;
                let mut bc = *u.choose(&[C::Reg, C::RegOrStack, C::Stack])?;
                if a == b && bc == C::Stack {
                    // One vreg read from its slot and from elsewhere by one instruction is
                    // legal here but not in regalloc2, which the bench feeds these to.
                    bc = C::RegOrStack;
                }
                self.push(
                    vec![
                        Operand::new(a, Use, Early, ac),
                        Operand::new(b, Use, Early, bc),
                        Operand::new(d, Def, Late, C::Reuse(0)),
                    ],
                    false,
                );
                avail.push(d);
            }
            5 => {
                // Shift: d = a << b, count in rcx, d reuses a.
                let a = self.pick(u, avail, int)?;
                let b = self.pick(u, avail, int)?;
                let d = self.new_vreg(int);
                self.push(
                    vec![
                        Operand::reg_use(a),
                        Operand::new(b, Use, Early, C::FixedReg(x64::RCX)),
                        Operand::new(d, Def, Late, C::Reuse(0)),
                    ],
                    false,
                );
                avail.push(d);
            }
            6 => {
                // Division: rax:rdx / c -> rax (quotient), rdx (remainder).
                let lo = self.pick(u, avail, int)?;
                let hi = self.pick(u, avail, int)?;
                let c = self.pick(u, avail, int)?;
                let q = self.new_vreg(int);
                let r = self.new_vreg(int);
                self.push(
                    vec![
                        Operand::new(lo, Use, Early, C::FixedReg(x64::RAX)),
                        Operand::new(hi, Use, Early, C::FixedReg(x64::RDX)),
                        Operand::reg_use(c),
                        Operand::new(q, Def, Late, C::FixedReg(x64::RAX)),
                        Operand::new(r, Def, Late, C::FixedReg(x64::RDX)),
                    ],
                    false,
                );
                avail.push(q);
                avail.push(r);
            }
            7 | 8 => {
                // Call: up to four int args and two float args, results in rax / xmm0.
                let mut ops = Vec::new();
                let n_int = u.int_in_range(0..=4)?;
                for &reg in &INT_ARGS[..n_int] {
                    let a = self.pick(u, avail, int)?;
                    ops.push(Operand::new(a, Use, Early, C::FixedReg(reg)));
                }
                let n_float = u.int_in_range(0..=2)?;
                for k in 0..n_float {
                    let a = self.pick(u, avail, RegClass::Float)?;
                    ops.push(Operand::new(a, Use, Early, C::FixedReg(x64::xmm(k))));
                }
                let d = self.new_vreg(int);
                ops.push(Operand::new(d, Def, Late, C::FixedReg(x64::RAX)));
                avail.push(d);
                if u.ratio(1, 2)? {
                    let f = self.new_vreg(RegClass::Float);
                    ops.push(Operand::new(f, Def, Late, C::FixedReg(x64::xmm(0))));
                    avail.push(f);
                }
                self.push(ops, true);
            }
            9 => {
                let class = if u.ratio(1, 3)? { RegClass::Float } else { int };
                let a = self.pick(u, avail, class)?;
                let d = self.new_vreg(class);
                self.insts.push(TestInst {
                    operands: vec![Operand::reg_def(d), Operand::reg_use(a)],
                    clobbers: PRegSet::empty(),
                    is_move: true,
                });
                avail.push(d);
            }
            10 => {
                // Early def (an output that must not overlap the inputs) and a late use.
                let a = self.pick(u, avail, int)?;
                let b = self.pick(u, avail, int)?;
                let d = self.new_vreg(int);
                self.push(
                    vec![
                        Operand::new(d, Def, Early, C::Reg),
                        Operand::reg_use(a),
                        Operand::new(b, Use, Late, C::Reg),
                    ],
                    false,
                );
                avail.push(d);
            }
            11 => {
                // Stack operands: a use in its slot and a def into its slot.
                let a = self.pick(u, avail, int)?;
                let d = self.new_vreg(int);
                self.push(
                    vec![
                        Operand::new(a, Use, Early, C::Stack),
                        Operand::new(d, Def, Late, C::Stack),
                    ],
                    false,
                );
                avail.push(d);
            }
            12 => {
                // A def that may live on the stack.
                let a = self.pick(u, avail, int)?;
                let d = self.new_vreg(int);
                self.push(
                    vec![
                        Operand::new(d, Def, Late, C::RegOrStack),
                        Operand::new(a, Use, Early, C::RegOrStack),
                    ],
                    false,
                );
                avail.push(d);
            }
            _ => {
                // A fixed non-argument use (e.g. a port or a special register input).
                let a = self.pick(u, avail, int)?;
                let reg = *u.choose(&[x64::RBX, x64::RAX, x64::r(12)])?;
                if self.fixed_allocatable(reg) || reg == x64::RBX {
                    self.push(vec![Operand::new(a, Use, Early, C::FixedReg(reg))], false);
                }
            }
        }
        Ok(())
    }
}

/// Generates a function for `env` (which should come from [`x64_env`]).
pub fn generate(u: &mut Unstructured, env: &MachineEnv) -> Result<TestFunc> {
    // 1. CFG skeleton over core blocks: each block falls to the next (so all are
    //    reachable) and may branch anywhere after the entry (loops, diamonds).
    let n = u.int_in_range(1..=10usize)?;
    let mut succs: Vec<Vec<usize>> = Vec::with_capacity(n);
    for b in 0..n {
        if b + 1 == n {
            succs.push(Vec::new());
        } else if n > 1 && u.ratio(1, 2)? {
            let t = u.int_in_range(1..=n - 1)?;
            succs.push(if u.ratio(1, 2)? {
                vec![b + 1, t]
            } else {
                vec![t, b + 1]
            });
        } else {
            succs.push(vec![b + 1]);
        }
    }
    // 2. Split critical edges with jump blocks placed right after their source.
    let mut npreds = vec![0usize; n];
    for s in succs.iter().flatten() {
        npreds[*s] += 1;
    }
    let mut order: Vec<usize> = Vec::new(); // final index -> core block or usize::MAX + split
    let mut final_succs: Vec<Vec<usize>> = Vec::new();
    let mut core_index = vec![0usize; n];
    let mut split_targets: Vec<(usize, usize)> = Vec::new(); // (final index, core target)
    for b in 0..n {
        core_index[b] = order.len();
        order.push(b);
        final_succs.push(Vec::new());
        let critical = succs[b].len() > 1;
        for (k, &s) in succs[b].iter().enumerate() {
            if critical && npreds[s] > 1 {
                let e = order.len();
                order.push(usize::MAX);
                final_succs.push(Vec::new());
                split_targets.push((e, s));
                final_succs[core_index[b]].push(e);
            } else {
                final_succs[core_index[b]].push(usize::MAX - 1 - s);
            }
            let _ = k;
        }
    }
    let total = order.len();
    for list in &mut final_succs {
        for s in list.iter_mut() {
            if *s >= total {
                *s = core_index[usize::MAX - 1 - *s];
            }
        }
    }
    for &(e, s) in &split_targets {
        final_succs[e] = vec![core_index[s]];
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); total];
    for (b, list) in final_succs.iter().enumerate() {
        for &s in list {
            preds[s].push(b);
        }
    }
    // 3. Dominators (small graphs: iterative bitsets).
    let mut dom: Vec<u64> = vec![u64::MAX; total];
    dom[0] = 1;
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..total {
            let mut d = u64::MAX;
            for &p in &preds[b] {
                d &= dom[p];
            }
            d |= 1 << b;
            if d != dom[b] {
                dom[b] = d;
                changed = true;
            }
        }
    }
    let idom: Vec<usize> = (0..total)
        .map(|b| {
            if b == 0 {
                return 0;
            }
            // The strict dominator with the most dominators itself.
            let strict = dom[b] & !(1 << b);
            (0..total)
                .filter(|&d| strict & (1 << d) != 0)
                .max_by_key(|&d| dom[d].count_ones())
                .unwrap_or(0)
        })
        .collect();
    // 4. Parameters, then bodies in an order where idom comes first.
    let mut builder = Builder {
        env,
        num_vregs: 0,
        insts: Vec::new(),
        clobbers: env.caller_saved,
    };
    let mut params: Vec<Vec<VReg>> = vec![Vec::new(); total];
    for (b, list) in params.iter_mut().enumerate().skip(1) {
        let k = u.int_in_range(0..=2usize)?;
        for _ in 0..k {
            let class = if u.ratio(1, 4)? {
                RegClass::Float
            } else {
                RegClass::Int
            };
            list.push(builder.new_vreg(class));
        }
        let _ = b;
    }
    let mut by_depth: Vec<usize> = (0..total).collect();
    by_depth.sort_by_key(|&b| dom[b].count_ones());
    let mut bodies: Vec<Vec<TestInst>> = vec![Vec::new(); total];
    let mut args: Vec<Vec<Vec<VReg>>> = vec![Vec::new(); total];
    let mut avail_end: Vec<Vec<VReg>> = vec![Vec::new(); total];
    for &b in &by_depth {
        let mut avail = if b == 0 {
            Vec::new()
        } else {
            avail_end[idom[b]].clone()
        };
        avail.extend(params[b].iter().copied());
        builder.insts.clear();
        if b == 0 {
            // Incoming arguments in fixed registers.
            let n_args = u.int_in_range(0..=3usize)?;
            let mut ops = Vec::new();
            for &reg in &INT_ARGS[..n_args] {
                let v = builder.new_vreg(RegClass::Int);
                ops.push(Operand::new(
                    v,
                    OperandKind::Def,
                    OperandPos::Late,
                    C::FixedReg(reg),
                ));
                avail.push(v);
            }
            if !ops.is_empty() {
                builder.push(ops, false);
            }
        }
        if order[b] != usize::MAX {
            let k = u.int_in_range(0..=10usize)?;
            for _ in 0..k {
                builder.inst(u, &mut avail)?;
            }
        }
        // Branch arguments, then the terminator.
        let mut block_args = Vec::new();
        for &s in &final_succs[b] {
            let mut list = Vec::new();
            for p in &params[s] {
                list.push(builder.pick(u, &mut avail, p.class())?);
            }
            block_args.push(list);
        }
        let term_ops = match final_succs[b].len() {
            0 => {
                let mut ops = Vec::new();
                if u.ratio(2, 3)? {
                    let v = builder.pick(u, &mut avail, RegClass::Int)?;
                    ops.push(Operand::new(
                        v,
                        OperandKind::Use,
                        OperandPos::Early,
                        C::FixedReg(x64::RAX),
                    ));
                }
                ops
            }
            1 => Vec::new(),
            _ => vec![Operand::reg_use(builder.pick(
                u,
                &mut avail,
                RegClass::Int,
            )?)],
        };
        builder.push(term_ops, false);
        bodies[b] = std::mem::take(&mut builder.insts);
        args[b] = block_args;
        avail_end[b] = avail;
    }
    // 5. Lay out in emission order.
    let mut func = TestFunc {
        num_vregs: builder.num_vregs,
        ..TestFunc::default()
    };
    for b in 0..total {
        let start = func.insts.len() as u32;
        func.insts.append(&mut bodies[b]);
        let end = func.insts.len() as u32;
        func.blocks.push(TestBlock {
            insts: InstRange {
                start: Inst(start),
                end: Inst(end),
            },
            succs: final_succs[b].iter().map(|&s| Block(s as u32)).collect(),
            preds: preds[b].iter().map(|&p| Block(p as u32)).collect(),
            params: std::mem::take(&mut params[b]),
            args: std::mem::take(&mut args[b]),
        });
    }
    Ok(func)
}

impl std::fmt::Display for TestFunc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (b, block) in self.blocks.iter().enumerate() {
            writeln!(f, "block{b}({:?}): preds {:?}", block.params, block.preds)?;
            for i in block.insts.iter() {
                let inst = &self.insts[i.index()];
                let mv = if inst.is_move { " move" } else { "" };
                let clob = if inst.clobbers.is_empty() {
                    ""
                } else {
                    " clobbers"
                };
                writeln!(f, "  inst{}:{mv}{clob} {:?}", i.0, inst.operands)?;
            }
            for (s, args) in block.succs.iter().zip(&block.args) {
                writeln!(f, "  -> block{}({:?})", s.0, args)?;
            }
        }
        Ok(())
    }
}
