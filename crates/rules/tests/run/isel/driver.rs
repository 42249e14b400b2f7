// A toy instruction selector: a small IR (values defined by instructions), the
// generated lowering from both backends, and a differential run over random IR.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value(u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inst(u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg(u32);

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Iconst { imm: u32 },
    Iadd { a: Value, b: Value },
    Isub { a: Value, b: Value },
    Imul { a: Value, b: Value },
    Ishl { a: Value, b: Value },
    Load { addr: Value, offset: u32 },
}

mod tree {
    use super::*;
    include!("tree.rs");
}
mod naive {
    use super::*;
    include!("naive.rs");
}

/// Value `i` is defined by instruction `i` when `i < insts.len()`; higher values are
/// block parameters (no defining instruction).
struct Ctx {
    insts: Vec<Op>,
    next_reg: u32,
    log: Vec<&'static str>,
}

macro_rules! impl_context {
    ($m:ident, $minst:ty) => {
        impl $m::Context for Ctx {
            fn def_inst(&mut self, v: Value) -> Option<Inst> {
                ((v.0 as usize) < self.insts.len()).then_some(Inst(v.0))
            }
            fn inst_op(&mut self, i: Inst) -> Op {
                self.insts[i.0 as usize].clone()
            }
            fn const_parts(&mut self, v: Value) -> Option<(u32, u8)> {
                match self.insts.get(v.0 as usize) {
                    Some(Op::Iconst { imm }) => Some((*imm, 32)),
                    _ => None,
                }
            }
            fn put_in_reg(&mut self, v: Value) -> Reg {
                Reg(100 + v.0)
            }
            fn temp_reg(&mut self) -> Reg {
                self.next_reg += 1;
                Reg(self.next_reg)
            }
            fn imm12(&mut self, n: u32) -> Option<u32> {
                (n < 4096).then_some(n)
            }
            fn log2(&mut self, n: u32) -> Option<u8> {
                n.is_power_of_two().then(|| n.trailing_zeros() as u8)
            }
            fn zero_reg(&mut self) -> Reg {
                Reg(0)
            }
            fn add_u32(&mut self, a: u32, b: u32) -> u32 {
                a.wrapping_add(b)
            }
            fn log_rule(&mut self, rule: &'static str) {
                self.log.push(rule);
            }
        }
    };
}
impl_context!(tree, tree::MInst);
impl_context!(naive, naive::MInst);

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn value(&mut self, n: usize) -> Value {
        Value((self.next() % (n as u64 + 2)) as u32)
    }
}

fn random_program(rng: &mut Rng) -> Vec<Op> {
    let mut insts = Vec::new();
    for i in 0..8 {
        let op = match rng.next() % 6 {
            0 => Op::Iconst {
                imm: [0, 1, 2, 8, 4095, 4096, 12, 7][(rng.next() % 8) as usize],
            },
            k @ 1..=4 => {
                let (a, b) = (rng.value(i), rng.value(i));
                match k {
                    1 => Op::Iadd { a, b },
                    2 => Op::Isub { a, b },
                    3 => Op::Imul { a, b },
                    _ => Op::Ishl { a, b },
                }
            }
            _ => Op::Load {
                addr: rng.value(i),
                offset: [0, 16, 5000][(rng.next() % 3) as usize],
            },
        };
        insts.push(op);
    }
    insts
}

fn main() {
    let v = |i| Value(i);
    let insts = vec![
        Op::Iconst { imm: 8 },           // v0
        Op::Imul { a: v(10), b: v(11) }, // v1
        Op::Iadd { a: v(1), b: v(12) },  // v2: madd
        Op::Iadd { a: v(12), b: v(0) },  // v3: add imm
        Op::Imul { a: v(12), b: v(0) },  // v4: mul by 8 -> lsl 3
        Op::Isub { a: v(12), b: v(12) }, // v5: zero
        Op::Load {
            addr: v(0),
            offset: 16,
        }, // v6: constant address
        Op::Iadd { a: v(12), b: v(12) }, // v7: add self
        Op::Ishl { a: v(12), b: v(0) },  // v8: no rule
        Op::Iconst { imm: 0 },           // v9
    ];
    let mut ctx = Ctx {
        insts: insts.clone(),
        next_reg: 0,
        log: Vec::new(),
    };
    for i in 0..insts.len() as u32 {
        ctx.log.clear();
        let m = tree::constructor_lower(&mut ctx, Inst(i));
        println!(
            "v{i} = {:?} => {:?} [{}]",
            insts[i as usize],
            m,
            ctx.log.join(", ")
        );
    }

    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut checked = 0;
    for _ in 0..1500 {
        let insts = random_program(&mut rng);
        for i in 0..insts.len() as u32 {
            let mut a = Ctx {
                insts: insts.clone(),
                next_reg: 0,
                log: Vec::new(),
            };
            let mut b = Ctx {
                insts: insts.clone(),
                next_reg: 0,
                log: Vec::new(),
            };
            let ra = tree::constructor_lower(&mut a, Inst(i));
            let rb = naive::constructor_lower(&mut b, Inst(i));
            assert_eq!(
                format!("{ra:?}"),
                format!("{rb:?}"),
                "results differ for {:?}",
                insts[i as usize]
            );
            assert_eq!(a.log, b.log);
            checked += 1;
        }
    }
    println!("differential: {checked} instructions agree");
}
