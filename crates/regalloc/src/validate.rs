//! Input validation and the CFG facts every later pass shares.
//!
//! Requires: nothing (any value of a type implementing [`Function`]).
//! Guarantees on `Ok`: the contract of the crate root holds (shape, SSA with dominating
//! defs, no critical edges, reachable blocks, operand constraints that can be met at each
//! instruction on their own). Everything later may assert these facts instead of checking
//! them. On `Err`, a [`RegAllocError`] naming what the client did wrong. With
//! [`Checks::ShapeOnly`] (the client's [`crate::Options::trust_input`]) only the block facts
//! are computed and checked; the rest of the contract is the client's promise (a use its def
//! does not dominate is still found, by liveness).
//!
//! Cost: O(blocks + instructions + operands + edges) on success (the edge-list check is a
//! counting sort, not a per-edge search; operands are checked in the same walk that records
//! definitions), plus, per instruction, each fixed-register or definition operand compared
//! with the instruction's earlier operands: quadratic in one instruction's operand count
//! (not in the function), which the backends keep to the ABI's registers and a call's
//! arguments. Only when a use is not dominated by its def, the error path builds
//! dominators to name it.
//!
//! Positions: every instruction `i` owns four positions, `4i` (the *gap* before it, where
//! edits run), `4i + 1` (early: uses read, early defs written), `4i + 2` (late: defs
//! written, late uses read) and `4i + 3` (unused, keeps the arithmetic a shift). A block
//! covers `[4 * first, 4 * end)`. Only gap positions are split points.

use crate::env_facts::{EnvCache, EnvFacts};
use crate::reuse::{refill, running_sum};
use crate::{
    Block, Function, Inst, MachineEnv, OperandConstraint, OperandKind, OperandPos, PRegSet,
    RegAllocError, RegClass, VReg,
};

/// Gap position before `inst`.
#[inline]
pub(crate) fn gap(inst: u32) -> u32 {
    inst * 4
}

/// Early position of `inst`.
#[inline]
pub(crate) fn early(inst: u32) -> u32 {
    inst * 4 + 1
}

/// Late position of `inst`.
#[inline]
pub(crate) fn late(inst: u32) -> u32 {
    inst * 4 + 2
}

/// The greatest gap position `<= pos`.
#[inline]
pub(crate) fn gap_floor(pos: u32) -> u32 {
    pos & !3
}

/// CFG facts computed once.
#[derive(Default)]
pub(crate) struct Cfg {
    /// First instruction of each block.
    pub block_first: Vec<u32>,
    /// One past the last instruction of each block.
    pub block_end: Vec<u32>,
    /// Block of each instruction.
    pub inst_block: Vec<u32>,
    /// Reachable blocks in postorder.
    pub postorder: Vec<Block>,
    /// Loop depth per block ([`crate::loop_depths`]).
    pub loop_depth: Vec<u32>,
    /// Whether each instruction starts a block.
    pub is_block_start: Vec<bool>,
}

impl Cfg {
    /// Position where `block` begins.
    #[inline]
    pub fn block_start_pos(&self, block: usize) -> u32 {
        gap(self.block_first[block])
    }

    /// Position just past `block`'s end.
    #[inline]
    pub fn block_end_pos(&self, block: usize) -> u32 {
        gap(self.block_end[block])
    }

    /// Block containing position `pos`.
    #[inline]
    pub fn block_of_pos(&self, pos: u32) -> usize {
        self.inst_block[(pos / 4) as usize] as usize
    }

    /// Whether `pos` is the first position of a block.
    #[inline]
    pub fn is_block_start_pos(&self, pos: u32) -> bool {
        pos % 4 == 0 && self.is_block_start.get((pos / 4) as usize) == Some(&true)
    }
}

fn malformed(msg: String) -> RegAllocError {
    RegAllocError::Malformed(msg)
}

/// Working memory of the checks, kept by [`crate::Context`] between functions (every
/// buffer is cleared and refilled before use, so its contents never carry over).
#[derive(Default)]
pub(crate) struct Scratch {
    claimed_start: Vec<u32>,
    fill: Vec<u32>,
    claimed: Vec<u32>,
    count: Vec<i64>,
    visited: Vec<bool>,
    stack: Vec<(Block, usize)>,
    def: Vec<DefSite>,
    class: Vec<Option<RegClass>>,
    depth_delta: Vec<i64>,
}

/// How much of the input [`validate_into`] checks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checks {
    /// Everything in the module contract.
    Full,
    /// Only what computing the [`Cfg`] meets on its way (block ranges, reachability, the
    /// entry's parameters, the machine description): O(blocks + instructions + edges),
    /// without the per-edge and per-operand walks ([`crate::Options::trust_input`]).
    ShapeOnly,
}

/// Validates `func` against `env` and computes the shared CFG facts.
pub(crate) fn validate<F: Function>(func: &F, env: &MachineEnv) -> Result<Cfg, RegAllocError> {
    let mut cfg = Cfg::default();
    let mut env_cache = EnvCache::default();
    let facts = env_cache.facts(env);
    validate_into(
        func,
        env,
        facts,
        Checks::Full,
        &mut cfg,
        &mut Scratch::default(),
    )?;
    Ok(cfg)
}

/// [`validate`] with the given `checks`, refilling `cfg` and reusing the buffers of `cfg`
/// and `scratch`.
pub(crate) fn validate_into<F: Function>(
    func: &F,
    env: &MachineEnv,
    facts: &EnvFacts,
    checks: Checks,
    cfg: &mut Cfg,
    scratch: &mut Scratch,
) -> Result<(), RegAllocError> {
    check_shape(func, checks, cfg, scratch)?;
    if let Some(problem) = &facts.problem {
        return Err(malformed(problem.clone()));
    }
    if checks == Checks::Full {
        check_edges(func, cfg)?;
        check_operands_and_defs(func, env, facts, cfg, scratch)?;
    }
    Ok(())
}

fn check_shape<F: Function>(
    func: &F,
    checks: Checks,
    cfg: &mut Cfg,
    scratch: &mut Scratch,
) -> Result<(), RegAllocError> {
    let num_blocks = func.num_blocks();
    let num_insts = func.num_insts();
    if num_blocks == 0 {
        return Err(malformed("the function has no blocks".into()));
    }
    if num_insts >= (u32::MAX / 4 - 4) as usize {
        return Err(malformed(format!("too many instructions ({num_insts})")));
    }
    let entry = func.entry_block();
    if entry.index() >= num_blocks {
        return Err(malformed(format!("entry block{} out of range", entry.0)));
    }
    let Cfg {
        block_first,
        block_end,
        inst_block,
        postorder,
        loop_depth,
        is_block_start,
    } = cfg;
    block_first.clear();
    block_end.clear();
    refill(inst_block, num_insts, 0);
    refill(is_block_start, num_insts, false);
    let mut next = 0u32;
    for b in 0..num_blocks {
        let range = func.block_insns(Block(b as u32));
        if range.start.0 != next || range.is_empty() || range.end.0 as usize > num_insts {
            return Err(malformed(format!(
                "block{b} must own a non-empty instruction range starting at inst{next} (blocks are contiguous, in emission order); it has {:?}",
                range
            )));
        }
        block_first.push(range.start.0);
        block_end.push(range.end.0);
        is_block_start[range.start.index()] = true;
        for i in range.iter() {
            inst_block[i.index()] = b as u32;
        }
        next = range.end.0;
    }
    if next as usize != num_insts {
        return Err(malformed(format!(
            "blocks cover {next} instructions but the function has {num_insts}"
        )));
    }
    if !func.block_params(entry).is_empty() {
        return Err(RegAllocError::EntryParams);
    }
    if checks == Checks::Full {
        check_edge_lists(func, scratch)?;
    }
    let Scratch {
        visited,
        stack,
        depth_delta,
        ..
    } = scratch;
    // Postorder by an explicit-stack DFS from the entry.
    refill(visited, num_blocks, false);
    postorder.clear();
    stack.clear();
    stack.push((entry, 0));
    visited[entry.index()] = true;
    while let Some(&mut (block, ref mut next_succ)) = stack.last_mut() {
        let succs = func.block_succs(block);
        if *next_succ < succs.len() {
            let s = succs[*next_succ];
            *next_succ += 1;
            if !visited[s.index()] {
                visited[s.index()] = true;
                stack.push((s, 0));
            }
        } else {
            postorder.push(block);
            stack.pop();
        }
    }
    if let Some(b) = visited.iter().position(|v| !v) {
        return Err(RegAllocError::Unreachable(b as u32));
    }
    crate::loop_depths_into(func, loop_depth, depth_delta);
    Ok(())
}

/// Successor and predecessor lists must describe the same multiset of edges. The successor
/// lists, regrouped by target (a counting sort), give each block the sources the successor
/// lists claim; those must equal its predecessor list as a multiset, which a per-source
/// counter decides in O(|preds| + |claimed|). Total O(blocks + edges).
fn check_edge_lists<F: Function>(func: &F, scratch: &mut Scratch) -> Result<(), RegAllocError> {
    let num_blocks = func.num_blocks();
    let Scratch {
        claimed_start,
        fill,
        claimed,
        count,
        ..
    } = scratch;
    refill(claimed_start, num_blocks + 1, 0);
    for b in 0..num_blocks {
        for &s in func.block_succs(Block(b as u32)) {
            if s.index() >= num_blocks {
                return Err(malformed(format!(
                    "block{b} has successor block{} out of range",
                    s.0
                )));
            }
            claimed_start[s.index() + 1] += 1;
        }
    }
    running_sum(&mut claimed_start[..=num_blocks]);
    fill.clone_from(claimed_start);
    refill(claimed, claimed_start[num_blocks] as usize, 0);
    for b in 0..num_blocks {
        for &s in func.block_succs(Block(b as u32)) {
            claimed[fill[s.index()] as usize] = b as u32;
            fill[s.index()] += 1;
        }
    }
    // Invariant: `count` is all zeros between blocks.
    refill(count, num_blocks, 0);
    for b in 0..num_blocks {
        let preds = func.block_preds(Block(b as u32));
        for &p in preds {
            if p.index() >= num_blocks {
                return Err(malformed(format!(
                    "block{b} has predecessor block{} out of range",
                    p.0
                )));
            }
            count[p.index()] += 1;
        }
        let sources = &claimed[claimed_start[b] as usize..claimed_start[b + 1] as usize];
        for &p in sources {
            count[p as usize] -= 1;
        }
        let mismatch = preds
            .iter()
            .map(|p| p.0)
            .chain(sources.iter().copied())
            .find(|&p| count[p as usize] != 0);
        if let Some(p) = mismatch {
            let as_succ = sources.iter().filter(|&&q| q == p).count();
            let listed = preds.iter().filter(|q| q.0 == p).count();
            return Err(malformed(format!(
                "block{b} lists block{p} as a predecessor {listed} time(s) but it has block{b} as a successor {as_succ} time(s)"
            )));
        }
    }
    Ok(())
}

fn check_edges<F: Function>(func: &F, cfg: &Cfg) -> Result<(), RegAllocError> {
    for b in 0..func.num_blocks() {
        let block = Block(b as u32);
        let succs = func.block_succs(block);
        if succs.len() > 1 {
            for &s in succs {
                if func.block_preds(s).len() > 1 {
                    return Err(RegAllocError::CriticalEdge {
                        from: b as u32,
                        to: s.0,
                    });
                }
            }
        }
        for (k, &s) in succs.iter().enumerate() {
            let args = func.branch_blockparams(block, k);
            let params = func.block_params(s);
            if args.len() != params.len() {
                return Err(malformed(format!(
                    "block{b} passes {} arguments to block{} which has {} parameters",
                    args.len(),
                    s.0,
                    params.len()
                )));
            }
            for (a, p) in args.iter().zip(params) {
                if a.class() != p.class() {
                    return Err(malformed(format!(
                        "block{b} passes {a} ({:?}) to parameter {p} ({:?}) of block{}",
                        a.class(),
                        p.class(),
                        s.0
                    )));
                }
            }
        }
        let term = Inst(cfg.block_end[b] - 1);
        let ops = func.inst_operands(term);
        if ops.iter().any(|op| op.is_def()) {
            return Err(RegAllocError::BadOperand {
                inst: term.0,
                operand: ops.iter().position(|op| op.is_def()).unwrap_or(0),
                reason: "the last instruction of a block (its terminator) may not define values"
                    .into(),
            });
        }
        if !succs.is_empty() && !func.inst_clobbers(term).is_empty() {
            return Err(malformed(format!(
                "branch inst{} may not clobber registers",
                term.0
            )));
        }
        if succs.len() == 1 && !ops.is_empty() {
            return Err(RegAllocError::BadOperand {
                inst: term.0,
                operand: 0,
                reason: "a branch to a single successor may not have operands (edge moves are placed before it)".into(),
            });
        }
    }
    Ok(())
}

/// The per-instruction operand rules: vregs in range, fixed registers usable and not
/// claimed twice at one point, reuse constraints naming a suitable input, no vreg defined
/// twice by one instruction, and a register demand the machine can meet.
fn check_operands<F: Function>(
    func: &F,
    env: &MachineEnv,
    facts: &EnvFacts,
    inst: Inst,
    ops: &[crate::Operand],
) -> Result<(), RegAllocError> {
    let scratch = facts.scratch;
    let num_vregs = func.num_vregs();
    let i = inst.0;
    let bad = |operand: usize, reason: String| RegAllocError::BadOperand {
        inst: i,
        operand,
        reason,
    };
    // Fixed registers are claimed at the early point (uses, early defs) or the late
    // point (late defs); one register may not be claimed twice at one point by
    // different operands (a vreg may name it in several uses).
    let claim = |op: &crate::Operand| match (op.kind(), op.pos()) {
        (OperandKind::Def, OperandPos::Late) => 1,
        _ => 0,
    };
    for (k, op) in ops.iter().enumerate() {
        let v = op.vreg();
        if v.index() >= num_vregs {
            return Err(bad(
                k,
                format!("{v} is out of range (num_vregs = {num_vregs})"),
            ));
        }
        match op.constraint() {
            OperandConstraint::FixedReg(r) => {
                if scratch.contains(r) {
                    return Err(bad(
                        k,
                        format!("fixed register {r} is the scratch register"),
                    ));
                }
                let clash = ops[..k].iter().any(|o| {
                    o.constraint() == OperandConstraint::FixedReg(r)
                        && claim(o) == claim(op)
                        && (o.vreg() != v || o.kind() != op.kind())
                });
                if clash {
                    return Err(bad(
                        k,
                        format!("{r} is required by two different operands at once"),
                    ));
                }
            }
            OperandConstraint::Reuse(n) => {
                if op.is_use() {
                    return Err(bad(k, "a use cannot have a reuse constraint".into()));
                }
                let Some(input) = ops.get(n) else {
                    return Err(bad(k, format!("reuses input {n}, which does not exist")));
                };
                let ok_constraint = matches!(
                    input.constraint(),
                    OperandConstraint::Reg | OperandConstraint::RegOrStack
                );
                if !input.is_use() || input.pos() != OperandPos::Early || !ok_constraint {
                    return Err(bad(
                            k,
                            format!("reuses operand {n}, which must be an early use with a Reg or RegOrStack constraint"),
                        ));
                }
                if input.class() != op.class() {
                    return Err(bad(k, format!("reuses operand {n} of another class")));
                }
            }
            _ => {}
        }
        if op.is_def() && ops[..k].iter().any(|o| o.is_def() && o.vreg() == v) {
            return Err(bad(k, format!("{v} is defined twice by one instruction")));
        }
    }
    check_demand(func, env, facts, inst)
}

/// Counts, per class, the registers an instruction needs at its early and late points, and
/// rejects an instruction that needs more than the machine has.
fn check_demand<F: Function>(
    func: &F,
    env: &MachineEnv,
    facts: &EnvFacts,
    inst: Inst,
) -> Result<(), RegAllocError> {
    let ops = func.inst_operands(inst);
    let clobbers = func.inst_clobbers(inst);
    let allocatable = &facts.allocatable;
    if clobbers.is_empty() && ops.len() <= facts.min_avail {
        return Ok(()); // each operand needs at most one register
    }
    for class in RegClass::ALL {
        let avail = env.allocatable[class.index()].len();
        let mut early_n = 0usize;
        let mut late_n = 0usize;
        let mut early_fixed = PRegSet::empty();
        let mut late_fixed = PRegSet::empty();
        for (k, op) in ops.iter().enumerate().filter(|(_, o)| o.class() == class) {
            let v = op.vreg();
            match (op.kind(), op.pos(), op.constraint()) {
                (_, _, OperandConstraint::FixedReg(r))
                    if r.class() == class && allocatable.contains(r) =>
                {
                    if op.is_use() || op.pos() == OperandPos::Early {
                        early_fixed.add(r);
                    }
                    if op.is_def() || op.pos() == OperandPos::Late {
                        late_fixed.add(r);
                    }
                }
                (OperandKind::Use, pos, OperandConstraint::Reg) => {
                    // A vreg read by several operands needs one register.
                    let seen = |p: Option<OperandPos>| {
                        ops[..k].iter().any(|o| {
                            o.is_use()
                                && o.vreg() == v
                                && o.constraint() == OperandConstraint::Reg
                                && p.is_none_or(|p| o.pos() == p)
                        })
                    };
                    if !seen(None) {
                        early_n += 1;
                    }
                    if pos == OperandPos::Late && !seen(Some(OperandPos::Late)) {
                        late_n += 1;
                    }
                }
                (OperandKind::Def, _, OperandConstraint::Reuse(_))
                | (OperandKind::Def, OperandPos::Early, OperandConstraint::Reg) => {
                    early_n += 1;
                    late_n += 1;
                }
                (OperandKind::Def, OperandPos::Late, OperandConstraint::Reg) => late_n += 1,
                _ => {}
            }
        }
        let late_fixed = late_fixed.union(clobbers.of_class(class).intersection(*allocatable));
        let early_need = early_n + early_fixed.len();
        let late_need = late_n + late_fixed.len();
        let needed = early_need.max(late_need);
        if needed > avail {
            return Err(RegAllocError::TooManyRegisters {
                inst: inst.0,
                class,
                needed,
                available: avail,
            });
        }
    }
    Ok(())
}

/// Where a vreg is defined.
#[derive(Clone, Copy)]
enum DefSite {
    None,
    Param(u32),
    Inst(u32),
}

fn describe(site: DefSite) -> String {
    match site {
        DefSite::None => "nowhere".into(),
        DefSite::Param(b) => format!("block{b} parameters"),
        DefSite::Inst(i) => format!("inst{i}"),
    }
}

/// Immediate dominators (Cooper, Harvey & Kennedy) over the reachable CFG.
pub(crate) fn dominators<F: Function>(func: &F, postorder: &[Block]) -> Vec<u32> {
    let n = func.num_blocks();
    let mut po_index = vec![u32::MAX; n];
    for (k, b) in postorder.iter().enumerate() {
        po_index[b.index()] = k as u32;
    }
    let entry = func.entry_block().index();
    let mut idom = vec![u32::MAX; n];
    idom[entry] = entry as u32;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in postorder.iter().rev() {
            if b.index() == entry {
                continue;
            }
            let mut new_idom = u32::MAX;
            for &p in func.block_preds(b) {
                if idom[p.index()] == u32::MAX {
                    continue;
                }
                new_idom = if new_idom == u32::MAX {
                    p.0
                } else {
                    intersect(&idom, &po_index, p.0, new_idom)
                };
            }
            if new_idom != idom[b.index()] {
                idom[b.index()] = new_idom;
                changed = true;
            }
        }
    }
    idom
}

fn intersect(idom: &[u32], po_index: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while po_index[a as usize] < po_index[b as usize] {
            a = idom[a as usize];
        }
        while po_index[b as usize] < po_index[a as usize] {
            b = idom[b as usize];
        }
    }
    a
}

/// O(1) dominance queries: entry/exit times of a depth-first walk of the dominator tree;
/// `a` dominates `b` exactly when `b`'s interval nests in `a`'s.
struct DomNumbering {
    enter: Vec<u32>,
    exit: Vec<u32>,
}

impl DomNumbering {
    fn new(idom: &[u32], entry: usize) -> DomNumbering {
        let n = idom.len();
        let is_child = |b: usize| b != entry && idom[b] != u32::MAX;
        let mut start = vec![0u32; n + 1];
        for b in (0..n).filter(|&b| is_child(b)) {
            start[idom[b] as usize + 1] += 1;
        }
        running_sum(&mut start[..=n]);
        let mut fill = start.clone();
        let mut children = vec![0u32; start[n] as usize];
        for b in (0..n).filter(|&b| is_child(b)) {
            let d = idom[b] as usize;
            children[fill[d] as usize] = b as u32;
            fill[d] += 1;
        }
        let (mut enter, mut exit) = (vec![0u32; n], vec![0u32; n]);
        let mut clock = 1;
        enter[entry] = clock;
        let mut stack = vec![(entry, start[entry])];
        while let Some(top) = stack.last_mut() {
            let (b, next) = *top;
            clock += 1;
            if next < start[b + 1] {
                top.1 += 1;
                let c = children[next as usize] as usize;
                enter[c] = clock;
                stack.push((c, start[c]));
            } else {
                exit[b] = clock;
                stack.pop();
            }
        }
        DomNumbering { enter, exit }
    }

    fn dominates(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        self.enter[a] != 0
            && self.enter[b] != 0
            && self.enter[a] <= self.enter[b]
            && self.exit[b] <= self.exit[a]
    }
}

/// One walk over every operand, in block order: the operand rules of each instruction
/// ([`check_operands`]) and SSA, first half: every vreg defined at most once and named with
/// one class, parameters and branch arguments in range. Whether every use is dominated by
/// its def is decided after liveness (nothing may be live into the entry block), and
/// explained by [`explain_undominated_use`] if not.
fn check_operands_and_defs<F: Function>(
    func: &F,
    env: &MachineEnv,
    facts: &EnvFacts,
    cfg: &Cfg,
    scratch: &mut Scratch,
) -> Result<(), RegAllocError> {
    let nv = func.num_vregs();
    // Per vreg: where it is defined, and the class it was first named with.
    let Scratch { def, class, .. } = scratch;
    refill(def, nv, DefSite::None);
    refill(class, nv, None);
    let mut see = |v: VReg, place: &dyn Fn() -> String| -> Result<(), RegAllocError> {
        match class[v.index()] {
            None => class[v.index()] = Some(v.class()),
            Some(c) if c != v.class() => {
                return Err(malformed(format!(
                    "{v} is named as {:?} at {} but as {c:?} elsewhere: a vreg has one class",
                    v.class(),
                    place()
                )))
            }
            Some(_) => {}
        }
        Ok(())
    };
    let mut set_def = |v: VReg, site: DefSite| -> Result<(), RegAllocError> {
        let slot = &mut def[v.index()];
        if !matches!(slot, DefSite::None) {
            return Err(RegAllocError::NotSsa {
                vreg: v,
                first: describe(*slot),
                second: describe(site),
            });
        }
        *slot = site;
        Ok(())
    };
    for b in 0..func.num_blocks() {
        let block = Block(b as u32);
        for &p in func.block_params(block) {
            if p.index() >= nv {
                return Err(malformed(format!("block{b} parameter {p} out of range")));
            }
            see(p, &|| format!("block{b} parameters"))?;
            set_def(p, DefSite::Param(b as u32))?;
        }
        for i in cfg.block_first[b]..cfg.block_end[b] {
            let ops = func.inst_operands(Inst(i));
            // Puts every vreg in range before `see` and `set_def` index by it.
            check_operands(func, env, facts, Inst(i), ops)?;
            for op in ops {
                see(op.vreg(), &|| format!("inst{i}"))?;
                if op.is_def() {
                    set_def(op.vreg(), DefSite::Inst(i))?;
                }
            }
        }
        for k in 0..func.block_succs(block).len() {
            for &a in func.branch_blockparams(block, k) {
                if a.index() >= nv {
                    return Err(malformed(format!(
                        "block{b} branch argument {a} out of range"
                    )));
                }
                see(a, &|| format!("block{b} branch arguments"))?;
            }
        }
    }
    for c in RegClass::ALL {
        let used = class.contains(&Some(c));
        if used && env.allocatable[c.index()].is_empty() && env.scratch[c.index()].is_none() {
            return Err(malformed(format!(
                "the function has {c:?} values but the machine has no {c:?} register (allocatable or scratch)"
            )));
        }
    }
    Ok(())
}

/// SSA, second half, run only when liveness found `live_into_entry` (a vreg live into the
/// entry block, which happens exactly when some use is not dominated by its def): finds
/// the offending use with a dominator tree.
pub(crate) fn explain_undominated_use<F: Function>(
    func: &F,
    cfg: &Cfg,
    live_into_entry: VReg,
) -> RegAllocError {
    let mut def = vec![DefSite::None; func.num_vregs()];
    for b in 0..func.num_blocks() {
        for &p in func.block_params(Block(b as u32)) {
            def[p.index()] = DefSite::Param(b as u32);
        }
        for i in cfg.block_first[b]..cfg.block_end[b] {
            for op in func.inst_operands(Inst(i)) {
                if op.is_def() {
                    def[op.vreg().index()] = DefSite::Inst(i);
                }
            }
        }
    }
    let doms = DomNumbering::new(
        &dominators(func, &cfg.postorder),
        func.entry_block().index(),
    );
    let check_use = |v: VReg, use_block: u32, use_inst: u32| -> Result<(), RegAllocError> {
        let ok = match def.get(v.index()).copied().unwrap_or(DefSite::None) {
            DefSite::None => false,
            DefSite::Param(b) => doms.dominates(b, use_block),
            DefSite::Inst(i) => {
                let b = cfg.inst_block[i as usize];
                if b == use_block {
                    i < use_inst
                } else {
                    doms.dominates(b, use_block)
                }
            }
        };
        if ok {
            Ok(())
        } else {
            Err(RegAllocError::UseNotDominated {
                vreg: v,
                inst: use_inst,
            })
        }
    };
    let scan = || -> Result<(), RegAllocError> {
        for b in 0..func.num_blocks() {
            let block = Block(b as u32);
            for i in cfg.block_first[b]..cfg.block_end[b] {
                for op in func.inst_operands(Inst(i)) {
                    if op.is_use() {
                        check_use(op.vreg(), b as u32, i)?;
                    }
                }
            }
            let term = cfg.block_end[b] - 1;
            for k in 0..func.block_succs(block).len() {
                for &a in func.branch_blockparams(block, k) {
                    check_use(a, b as u32, term)?;
                }
            }
        }
        Ok(())
    };
    match scan() {
        Err(err) => err,
        // Unreachable for a correct liveness; still name the vreg rather than panic.
        Ok(()) => RegAllocError::UseNotDominated {
            vreg: live_into_entry,
            inst: 0,
        },
    }
}
