//! Structured control: `block`, `loop`, `if`/`else`, `end`, `br`, `br_if`, `br_table`,
//! `return`.
//!
//! Each open construct is a [`Frame`]. Its IR blocks:
//! - `next`: where control continues after `end`, with one block parameter per result;
//!   branches to a `block` or `if` go here;
//! - a loop's `header`, with one parameter per loop parameter; branches to a `loop` go
//!   there;
//! - an `if`'s `else_block`, the target of the condition's false edge.
//!
//! Invariants (argued where they change):
//! 1. `stack_base` is the operand stack height below the construct's parameters; at `end`
//!    the stack is cut back to it and the results (`next`'s parameters) pushed.
//! 2. `next` is sealed at the frame's `end` and a loop header at its loop's `end`: every
//!    branch to them comes from inside the frame. Blocks created for one known predecessor
//!    (`br_if`'s fall-through, `if` arms, `br_table` edges) are sealed on creation.
//! 3. `next` is entered only if something reaches it (`next_reached`): a fall-through into
//!    `end`, or a branch. An unreached `next` is never placed, so no unreachable block is
//!    ever filled with code that reads variables.
//! 4. A construct's blocks are all created after its frame's `region` mark and filled by
//!    its `end`, and only they branch to its `next` (a label is visible only inside its
//!    construct, and a loop's `next` is reached only by falling out of its body), so
//!    `next` closes the region the mark began (the builder's `close_region`): a local the
//!    construct never assigns is read after it at the construct's entry, without a walk
//!    through the construct.
//!
//! Block parameters of `block` and `if` need no IR parameters: the values on the operand
//! stack at entry dominate the construct. An `if` keeps a copy of them for its `else` arm.
//!
//! Cost: O(1) instructions and blocks per construct and branch, plus one value copied per
//! branch argument; `br_table` emits one edge block per distinct target when it carries
//! values (a hash map finds them), so it is linear in its target count.

use std::collections::HashMap;

use kestrel_ir::builder::{RegionMark, Variable};
use kestrel_ir::{Block, Type, Value as IrValue};
use wasmparser::{BlockType, BrTable};

use super::{sig, FuncTranslator, Res};
use crate::error::WasmError;

/// What kind of construct a frame is.
pub(crate) enum FrameKind {
    /// The function body itself: `next` is the return block.
    Function,
    Block,
    Loop {
        header: Block,
    },
    If {
        /// `Some` until the `else` arm starts.
        else_block: Option<Block>,
        /// The `if`'s parameters, for the `else` arm (or the implicit one).
        params: Vec<IrValue>,
    },
}

/// One open structured instruction; see the module docs.
pub(crate) struct Frame {
    kind: FrameKind,
    next: Block,
    num_params: usize,
    num_results: usize,
    stack_base: usize,
    next_reached: bool,
    /// Where the construct began, for closing its region at `end` (invariant 4); `None`
    /// for the function body.
    region: Option<RegionMark>,
}

impl Frame {
    /// The block a branch to this frame goes to, and how many values it carries.
    fn branch_target(&self) -> (Block, usize) {
        match self.kind {
            FrameKind::Loop { header } => (header, self.num_params),
            _ => (self.next, self.num_results),
        }
    }
}

impl FuncTranslator<'_> {
    /// Parameter and result types of a block type.
    fn block_types(&self, ty: BlockType) -> Res<(Vec<Type>, Vec<Type>)> {
        let convert = |tys: &[wasmparser::ValType]| -> Res<Vec<Type>> {
            tys.iter().map(|&t| sig::ir_type(t, self.offset)).collect()
        };
        match ty {
            BlockType::Empty => Ok((vec![], vec![])),
            BlockType::Type(t) => Ok((vec![], vec![sig::ir_type(t, self.offset)?])),
            BlockType::FuncType(i) => {
                let ft = &self.info.types[i as usize];
                Ok((convert(ft.params())?, convert(ft.results())?))
            }
        }
    }

    fn block_with_params(&mut self, types: &[Type]) -> Res<Block> {
        let block = self.b.create_block();
        for &ty in types {
            self.b
                .append_block_param(block, ty)
                .map_err(|e| self.err(e))?;
        }
        Ok(block)
    }

    fn switch_and_seal(&mut self, block: Block) -> Res {
        self.b.switch_to_block(block).map_err(|e| self.err(e))?;
        self.b.seal_block(block).map_err(|e| self.err(e))
    }

    fn jump(&mut self, target: Block, args: &[IrValue]) -> Res {
        self.b.ins().jump(target, args).map_err(|e| self.err(e))?;
        Ok(())
    }

    pub(super) fn push_function_frame(&mut self, results: &[wasmparser::ValType]) -> Res {
        let types: Vec<Type> = results
            .iter()
            .map(|&t| sig::ir_type(t, self.offset))
            .collect::<Res<_>>()?;
        let next = self.block_with_params(&types)?;
        self.control.push(Frame {
            kind: FrameKind::Function,
            next,
            num_params: 0,
            num_results: types.len(),
            stack_base: 0,
            next_reached: false,
            region: None,
        });
        Ok(())
    }

    pub(super) fn op_block(&mut self, ty: BlockType) -> Res {
        let (params, results) = self.block_types(ty)?;
        let region = self.b.region_mark();
        let next = self.block_with_params(&results)?;
        self.control.push(Frame {
            kind: FrameKind::Block,
            next,
            num_params: params.len(),
            num_results: results.len(),
            // Invariant 1: the parameters are the top `params.len()` values.
            stack_base: self.stack.len() - params.len(),
            next_reached: false,
            region,
        });
        Ok(())
    }

    pub(super) fn op_loop(&mut self, ty: BlockType) -> Res {
        let (params, results) = self.block_types(ty)?;
        let region = self.b.region_mark();
        let header = self.block_with_params(&params)?;
        let next = self.block_with_params(&results)?;
        let base = self.stack.len() - params.len();
        let args = self.stack.split_off(base);
        // The locals the loop reads and never assigns (`loop_locals.rs`) hold their entry
        // values throughout it: read here, defined again at the header, so reads inside the
        // loop stop there instead of leaving the header an incomplete phi to resolve.
        let index = self.loops_seen;
        self.loops_seen += 1;
        let mut seeds: Vec<(Variable, IrValue)> = Vec::new();
        if let Some(facts) = self.facts.as_ref().filter(|f| f.loops.is_complete()) {
            for &k in facts.loops.invariant(index) {
                let k = k as usize;
                if self.fixed_locals.get(k).copied().flatten().is_some() {
                    continue; // read as its one value anyway
                }
                let Some(&var) = self.locals.get(k) else {
                    continue;
                };
                let v = self.b.use_var(var).map_err(|e| self.err(e))?;
                seeds.push((var, v));
            }
        }
        self.jump(header, &args)?;
        // The header stays unsealed until `end` (invariant 2): back edges are still to come.
        self.b.switch_to_block(header).map_err(|e| self.err(e))?;
        for &(var, v) in &seeds {
            self.b.def_var(var, v).map_err(|e| self.err(e))?;
        }
        // The seeds give their locals the values they hold at the loop's entry.
        let region = region.map(|mark| self.b.region_mark_past_definitions(mark));
        self.stack
            .extend_from_slice(self.b.block_params(header).to_vec().as_slice());
        self.control.push(Frame {
            kind: FrameKind::Loop { header },
            next,
            num_params: params.len(),
            num_results: results.len(),
            stack_base: base,
            next_reached: false,
            region,
        });
        Ok(())
    }

    pub(super) fn op_if(&mut self, ty: BlockType) -> Res {
        let cond = self.pop_condition();
        let (params, results) = self.block_types(ty)?;
        let region = self.b.region_mark();
        let (then_block, else_block) = (self.b.create_block(), self.b.create_block());
        let next = self.block_with_params(&results)?;
        self.b
            .ins()
            .brif(cond, then_block, &[], else_block, &[])
            .map_err(|e| self.err(e))?;
        // Invariant 2: the `brif` is the then-block's only predecessor.
        self.switch_and_seal(then_block)?;
        let base = self.stack.len() - params.len();
        self.control.push(Frame {
            kind: FrameKind::If {
                else_block: Some(else_block),
                params: self.stack[base..].to_vec(),
            },
            next,
            num_params: params.len(),
            num_results: results.len(),
            stack_base: base,
            next_reached: false,
            region,
        });
        Ok(())
    }

    /// `else`: close the then-arm (falling into `next` if it is reachable) and start the
    /// else-arm, which is reachable because its `if` was (frames are pushed only when
    /// reachable).
    pub(super) fn op_else(&mut self) -> Res {
        // The then arm's values do not dominate the else arm.
        self.heap_cache.close_frame(self.control.len() - 1);
        let frame = self.control.last().expect("validated: else inside if");
        let (next, n, base) = (frame.next, frame.num_results, frame.stack_base);
        if self.reachable {
            let args = self.peek_n(n).to_vec();
            self.jump(next, &args)?;
        }
        let reached_by_then = self.reachable;
        let frame = self.control.last_mut().expect("validated: else inside if");
        frame.next_reached |= reached_by_then;
        let FrameKind::If { else_block, params } = &mut frame.kind else {
            unreachable!("validated: else matches an if");
        };
        let else_block = else_block.take().expect("validated: one else per if");
        let params = params.clone();
        // Invariant 1: the else arm starts from the `if`'s parameters.
        self.stack.truncate(base);
        self.stack.extend_from_slice(&params);
        self.switch_and_seal(else_block)?;
        self.reachable = true;
        Ok(())
    }

    pub(super) fn op_end(&mut self) -> Res {
        let frame = self.control.pop().expect("validated: end matches a frame");
        // The frame's values do not dominate the code after its end.
        self.heap_cache.close_frame(self.control.len());
        let mut reached = frame.next_reached;
        if self.reachable {
            let args = self.peek_n(frame.num_results).to_vec();
            self.jump(frame.next, &args)?;
            reached = true;
        }
        match &frame.kind {
            FrameKind::If {
                else_block: Some(else_block),
                params,
            } => {
                let else_block = *else_block;
                // No `else`: the implicit one passes the parameters through as results.
                self.switch_and_seal(else_block)?;
                self.jump(frame.next, params)?;
                reached = true;
            }
            FrameKind::Loop { header } => {
                // Invariant 2: all back edges are emitted.
                self.b.seal_block(*header).map_err(|e| self.err(e))?;
            }
            _ => {}
        }
        // Invariant 1.
        self.stack.truncate(frame.stack_base);
        self.reachable = reached;
        if !reached {
            // Invariant 3: `next` stays unplaced; the code after it is skipped.
            return Ok(());
        }
        if let Some(mark) = frame.region {
            // Invariant 4: every branch to `next` came from inside the construct.
            self.b
                .close_region(frame.next, mark)
                .map_err(|e| self.err(e))?;
        }
        self.switch_and_seal(frame.next)?;
        let results = self.b.block_params(frame.next).to_vec();
        if let FrameKind::Function = frame.kind {
            self.b.ins().return_(&results).map_err(|e| self.err(e))?;
            self.reachable = false;
        } else {
            self.stack.extend_from_slice(&results);
        }
        Ok(())
    }

    /// Mark the frame `depth` levels up as branched to; returns its target and arity.
    fn branch_to(&mut self, depth: u32) -> (Block, usize) {
        let i = self.control.len() - 1 - depth as usize;
        let frame = &mut self.control[i];
        if !matches!(frame.kind, FrameKind::Loop { .. }) {
            frame.next_reached = true;
        }
        frame.branch_target()
    }

    pub(super) fn op_br(&mut self, depth: u32) -> Res {
        let (target, n) = self.branch_to(depth);
        let args = self.peek_n(n).to_vec();
        self.jump(target, &args)?;
        self.reachable = false;
        Ok(())
    }

    pub(super) fn op_br_if(&mut self, depth: u32) -> Res {
        let cond = self.pop_condition();
        let (target, n) = self.branch_to(depth);
        let args = self.peek_n(n).to_vec();
        let fallthrough = self.b.create_block();
        self.b
            .ins()
            .brif(cond, target, &args, fallthrough, &[])
            .map_err(|e| self.err(e))?;
        // Invariant 2: the `brif` is the fall-through block's only predecessor; the branch
        // arguments stay on the stack (they dominate it).
        self.switch_and_seal(fallthrough)
    }

    pub(super) fn op_br_table(&mut self, table: &BrTable) -> Res {
        let index = self.pop();
        let depths: Vec<u32> = table
            .targets()
            .collect::<Result<_, _>>()
            .map_err(WasmError::from_parser)?;
        let default_depth = table.default();
        let (default_target, n) = self.branch_to(default_depth);
        let mut targets = Vec::with_capacity(depths.len());
        for &d in &depths {
            targets.push(self.branch_to(d).0);
        }
        if n == 0 {
            self.b
                .ins()
                .br_table(index, default_target, &targets)
                .map_err(|e| self.err(e))?;
        } else {
            // Jump-table targets take no arguments: branch to one edge block per distinct
            // destination, which jumps on with the values.
            let args = self.peek_n(n).to_vec();
            let mut edges: Vec<(Block, Block)> = Vec::new();
            let mut edge_of: HashMap<Block, Block> = HashMap::new();
            let mut edge_for = |this: &mut Self, target: Block| -> Block {
                *edge_of.entry(target).or_insert_with(|| {
                    let e = this.b.create_block();
                    edges.push((target, e));
                    e
                })
            };
            let default_edge = edge_for(self, default_target);
            let entry_edges: Vec<Block> = targets.iter().map(|&t| edge_for(self, t)).collect();
            self.b
                .ins()
                .br_table(index, default_edge, &entry_edges)
                .map_err(|e| self.err(e))?;
            for (target, edge) in edges {
                // Invariant 2: the `br_table` is the edge block's only predecessor.
                self.switch_and_seal(edge)?;
                self.jump(target, &args)?;
            }
        }
        self.reachable = false;
        Ok(())
    }

    pub(super) fn op_return(&mut self) -> Res {
        let n = self.control[0].num_results;
        let args = self.peek_n(n).to_vec();
        self.b.ins().return_(&args).map_err(|e| self.err(e))?;
        self.reachable = false;
        Ok(())
    }
}
