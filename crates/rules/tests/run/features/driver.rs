// Exercises the language tour in `features.rules`: enums, an extractor macro, a
// two-output infallible extractor, if-let with integer patterns, `if`, `let`,
// conversions, partial terms calling partial terms, `multi` terms (including one
// that returns another's results) and a `rec` term.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value(u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg(u32);

#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Circle { r: u32 },
    Rect { w: u32, h: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dir {
    Left,
    Right,
}

mod tree {
    use super::*;
    include!("tree.rs");
}
mod naive {
    use super::*;
    include!("naive.rs");
}

#[derive(Default)]
struct Ctx {
    log: Vec<&'static str>,
    /// The same firings through coverage: `RULE_SITES[index]` per `rule_fired`.
    fired: Vec<&'static str>,
    /// Values passed to `note`.
    notes: Vec<u32>,
}

macro_rules! impl_context {
    ($m:ident) => {
        impl $m::Context for Ctx {
            fn put_in_reg(&mut self, v: Value) -> Reg {
                Reg(v.0 + 1000)
            }
            fn split_value(&mut self, v: Value) -> (u32, u32) {
                (v.0 >> 4, v.0 & 15)
            }
            fn nonzero(&mut self, x: u32) -> Option<u32> {
                (x != 0).then_some(x)
            }
            fn double(&mut self, x: u32) -> u32 {
                x.wrapping_mul(2)
            }
            fn dec(&mut self, x: u32) -> u32 {
                x - 1
            }
            fn turn(&mut self, d: Dir, x: u32) -> u32 {
                match d {
                    Dir::Left => x + 1,
                    Dir::Right => x * 2,
                }
            }
            fn note(&mut self, x: u32) -> u32 {
                self.notes.push(x);
                x
            }
            fn log_rule(&mut self, rule: &'static str) {
                self.log.push(rule);
            }
            fn rule_fired(&mut self, rule: usize) {
                self.fired.push($m::RULE_SITES[rule]);
            }
        }
    };
}
impl_context!(tree);
impl_context!(naive);

fn main() {
    let shapes = [
        Shape::Circle { r: 0 },
        Shape::Circle { r: 3 },
        Shape::Rect { w: 2, h: 2 },
        Shape::Rect { w: 2, h: 5 },
        Shape::Rect { w: 0, h: 0 },
        Shape::Rect { w: 7, h: 7 },
    ];
    let values = [Value(0), Value(5), Value(0x35)];
    for s in &shapes {
        for &v in &values {
            let mut a = Ctx::default();
            let mut b = Ctx::default();
            let ra = tree::constructor_lower(&mut a, s.clone(), v);
            let rb = naive::constructor_lower(&mut b, s.clone(), v);
            assert_eq!(format!("{ra:?}"), format!("{rb:?}"));
            assert_eq!(a.log, b.log);
            assert_eq!((&a.log, &b.log), (&a.fired, &b.fired));
            println!("lower({s:?}, {v:?}) = {ra:?} [{}]", a.log.join(", "));
        }
        let mut a = Ctx::default();
        let mut b = Ctx::default();
        let all = tree::constructor_all_twice(&mut a, s.clone());
        assert_eq!(all, naive::constructor_all_twice(&mut b, s.clone()));
        assert_eq!(a.log, b.log);
        assert_eq!((&a.log, &b.log), (&a.fired, &b.fired));
        println!("all_twice({s:?}) = {all:?}");
    }
    let mut a = Ctx::default();
    let mut b = Ctx::default();
    assert_eq!(
        tree::constructor_count(&mut a, 3),
        naive::constructor_count(&mut b, 3)
    );
    assert_eq!(a.log, b.log);
    assert_eq!((&a.log, &b.log), (&a.fired, &b.fired));
    println!("count(3) fired: {}", a.log.join(", "));
    for d in [Dir::Left, Dir::Right] {
        let mut a = Ctx::default();
        let mut b = Ctx::default();
        let (s, t) = (
            tree::constructor_steer(&mut a, d, 5),
            tree::constructor_twice(&mut a, d, 5),
        );
        assert_eq!(naive::constructor_steer(&mut b, d, 5), s);
        assert_eq!(naive::constructor_twice(&mut b, d, 5), t);
        assert_eq!(a.notes, b.notes);
        println!("steer({d:?}, 5) = {s}, twice = {t}, notes {:?}", a.notes);
    }
    for x in [true, false] {
        let mut a = Ctx::default();
        let mut b = Ctx::default();
        let (f, p) = (
            tree::constructor_flip(&mut a, x),
            tree::constructor_pick(&mut a, x, 1, 2),
        );
        assert_eq!(naive::constructor_flip(&mut b, x), f);
        assert_eq!(naive::constructor_pick(&mut b, x, 1, 2), p);
        println!("flip({x}) = {f}, pick({x}, 1, 2) = {p}");
    }
}
