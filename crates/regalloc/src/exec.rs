//! A concrete executor: the second oracle, independent of the checker.
//!
//! Requires: a validated function and an output for it.
//! Guarantees: [`compare`] runs the *virtual* program (vregs as variables) and the
//! *allocated* program (registers and slots, edits, clobbers writing garbage) on the same
//! pseudo-random inputs and reports the first read whose value differs.
//!
//! Semantics, shared by both runs: an instruction's early defs receive a hash of the
//! instruction and its early uses; its late defs a hash of the instruction and all its
//! uses. A branch with several successors picks one by a hash of its uses and a visit
//! counter; block parameters receive their arguments. Locations start with random
//! garbage, and clobbers write fresh garbage, so a value read from the wrong place shows
//! with overwhelming probability. Runs stop at a return or after a step budget.

use crate::{Allocation, Block, Function, Inst, OperandConstraint, OperandPos, Output};

/// The first difference between the virtual and the allocated run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Instructions executed before it.
    pub step: usize,
    /// The instruction.
    pub inst: u32,
    /// Operand index.
    pub operand: usize,
    /// What the virtual program read.
    pub expected: u64,
    /// What the allocated program read.
    pub got: u64,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "step {}: inst{} operand {} read {:#x}, expected {:#x}",
            self.step, self.inst, self.operand, self.got, self.expected
        )
    }
}

/// Maximum instructions executed per run.
pub const STEP_BUDGET: usize = 3000;

fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A tiny deterministic generator (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// Seeds the generator.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True one time in `one_in` (`one_in > 0`).
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// Where a run reads and writes values.
trait Store {
    fn read(&mut self, inst: Inst, operand: usize, vreg: usize) -> u64;
    fn write(&mut self, inst: Inst, operand: usize, vreg: usize, value: u64);
    fn before(&mut self, _inst: Inst) {}
    fn after(&mut self, _inst: Inst) {}
    fn edge(&mut self, _args: &[usize], _params: &[usize]) {}
}

/// Runs the program over `store`; `on_read` sees each read value in order and may stop.
fn run<F: Function, S: Store>(
    func: &F,
    store: &mut S,
    mut on_read: impl FnMut(usize, Inst, usize, u64) -> bool,
) {
    let mut block = func.entry_block();
    let mut step = 0usize;
    let mut visits = vec![0u64; func.num_blocks()];
    loop {
        visits[block.index()] += 1;
        let mut branch_hash = 0u64;
        for inst in func.block_insns(block).iter() {
            store.before(inst);
            let ops = func.inst_operands(inst);
            let mut acc = mix(u64::from(inst.0) + 1);
            for pos in [OperandPos::Early, OperandPos::Late] {
                for (k, op) in ops
                    .iter()
                    .enumerate()
                    .filter(|(_, op)| op.is_use() && op.pos() == pos)
                {
                    let value = store.read(inst, k, op.vreg().index());
                    if !on_read(step, inst, k, value) {
                        return;
                    }
                    acc = mix(acc ^ value.wrapping_add(k as u64));
                }
                for (k, op) in ops.iter().enumerate().filter(|(_, op)| op.is_def()) {
                    let is_reuse = matches!(op.constraint(), OperandConstraint::Reuse(_));
                    let def_pos = if is_reuse { OperandPos::Late } else { op.pos() };
                    if def_pos == pos {
                        store.write(inst, k, op.vreg().index(), mix(acc ^ (k as u64 + 0x51)));
                    }
                }
            }
            branch_hash = acc;
            store.after(inst);
            step += 1;
        }
        let succs = func.block_succs(block);
        if succs.is_empty() || step >= STEP_BUDGET {
            return;
        }
        let k = if succs.len() == 1 {
            0
        } else {
            (mix(branch_hash ^ visits[block.index()]) % succs.len() as u64) as usize
        };
        let succ: Block = succs[k];
        let args: Vec<usize> = func
            .branch_blockparams(block, k)
            .iter()
            .map(|v| v.index())
            .collect();
        let params: Vec<usize> = func.block_params(succ).iter().map(|v| v.index()).collect();
        store.edge(&args, &params);
        block = succ;
    }
}

struct Virtual {
    vals: Vec<u64>,
}

impl Store for Virtual {
    fn read(&mut self, _inst: Inst, _operand: usize, vreg: usize) -> u64 {
        self.vals[vreg]
    }
    fn write(&mut self, _inst: Inst, _operand: usize, vreg: usize, value: u64) {
        self.vals[vreg] = value;
    }
    fn edge(&mut self, args: &[usize], params: &[usize]) {
        let values: Vec<u64> = args.iter().map(|&a| self.vals[a]).collect();
        for (&p, v) in params.iter().zip(values) {
            self.vals[p] = v;
        }
    }
}

struct Allocated<'a, F: Function> {
    func: &'a F,
    out: &'a Output,
    locs: Vec<u64>,
    edit_index: Vec<u32>,
    rng: Rng,
}

impl<F: Function> Allocated<'_, F> {
    fn apply_edits(&mut self, point: usize) {
        let (from, to) = (
            self.edit_index[point] as usize,
            self.edit_index[point + 1] as usize,
        );
        for (_, edit) in &self.out.edits[from..to] {
            self.locs[edit.to.loc_index()] = self.locs[edit.from.loc_index()];
        }
    }

    fn alloc(&self, inst: Inst, operand: usize) -> Allocation {
        self.out.inst_allocs(inst)[operand]
    }
}

impl<F: Function> Store for Allocated<'_, F> {
    fn read(&mut self, inst: Inst, operand: usize, _vreg: usize) -> u64 {
        self.locs[self.alloc(inst, operand).loc_index()]
    }
    fn write(&mut self, inst: Inst, operand: usize, _vreg: usize, value: u64) {
        let index = self.alloc(inst, operand).loc_index();
        self.locs[index] = value;
    }
    fn before(&mut self, inst: Inst) {
        self.apply_edits(2 * inst.index());
    }
    fn after(&mut self, inst: Inst) {
        // Clobbers happen before the late defs in the real machine; the late defs were
        // written already, so clobber only registers that no late def of this inst wrote.
        let written: Vec<usize> = self
            .func
            .inst_operands(inst)
            .iter()
            .zip(self.out.inst_allocs(inst))
            .filter(|(op, _)| {
                op.is_def()
                    && (op.pos() == OperandPos::Late
                        || matches!(op.constraint(), OperandConstraint::Reuse(_)))
            })
            .map(|(_, a)| a.loc_index())
            .collect();
        for r in self.func.inst_clobbers(inst).iter() {
            if !written.contains(&r.index()) {
                self.locs[r.index()] = self.rng.next_u64();
            }
        }
        self.apply_edits(2 * inst.index() + 1);
    }
}

/// Runs `func` virtually and as allocated by `out` with inputs drawn from `seed`; returns
/// the first mismatch, if any.
pub fn compare<F: Function>(func: &F, out: &Output, seed: u64) -> Result<(), Mismatch> {
    let mut rng = Rng::new(seed);
    let mut virt = Virtual {
        vals: (0..func.num_vregs()).map(|_| rng.next_u64()).collect(),
    };
    let mut trace = Vec::new();
    run(func, &mut virt, |_, _, _, v| {
        trace.push(v);
        true
    });
    let points = 2 * func.num_insts();
    let mut edit_index = vec![0u32; points + 1];
    for (p, _) in &out.edits {
        if let Some(slot) = edit_index.get_mut(p.raw() as usize + 1) {
            *slot += 1;
        }
    }
    for p in 0..points {
        edit_index[p + 1] += edit_index[p];
    }
    let num_locs = 128 + out.num_spillslots;
    let mut alloc = Allocated {
        func,
        out,
        locs: (0..num_locs).map(|_| rng.next_u64()).collect(),
        edit_index,
        rng: Rng::new(seed ^ 0x5eed),
    };
    let mut k = 0usize;
    let mut mismatch = None;
    run(func, &mut alloc, |step, inst, operand, got| {
        let expected = trace.get(k).copied();
        k += 1;
        if expected != Some(got) {
            mismatch = Some(Mismatch {
                step,
                inst: inst.0,
                operand,
                expected: expected.unwrap_or(0),
                got,
            });
            return false;
        }
        true
    });
    mismatch.map_or(Ok(()), Err)
}
