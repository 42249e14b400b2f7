//! TEMPORARY skeleton (replaced by the real generator on merge).
pub use arbitrary::{Error as ArbError, Unstructured};
use kestrel_interp::DataValue;
use kestrel_ir::{Function, Opcode, TrapCode, Type};

#[derive(Clone, Debug)]
pub struct GenConfig {
    pub max_functions: usize,
    pub target_insts: usize,
    pub arg_sets: usize,
    pub allow: Option<fn(Opcode, Type) -> bool>,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            max_functions: 3,
            target_insts: 60,
            arg_sets: 4,
            allow: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct TestCase {
    pub functions: Vec<Function>,
    pub args: Vec<Vec<DataValue>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Returned(Vec<DataValue>),
    Trapped(TrapCode),
}

pub fn generate(u: &mut Unstructured, cfg: &GenConfig) -> arbitrary::Result<TestCase> {
    let text = "function %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n    v2 = udiv v0, v1\n    return v2\n}\n";
    let functions = kestrel_ir::parse_functions(text, "gen").unwrap();
    let mut args = Vec::new();
    for _ in 0..cfg.arg_sets {
        args.push(vec![
            DataValue::I64(u.arbitrary()?),
            DataValue::I64(u.int_in_range(0..=3)?),
        ]);
    }
    Ok(TestCase { functions, args })
}

impl TestCase {
    pub fn entry_name(&self) -> String {
        match &self.functions[0].name {
            kestrel_ir::FunctionName::Named(n) => n.clone(),
            other => other.to_string(),
        }
    }
    pub fn inst_count(&self) -> usize {
        self.functions.iter().map(|f| f.num_placed_insts()).sum()
    }
    pub fn to_test_file(&self, outcomes: &[Outcome]) -> String {
        let mut s = String::from("test interpret\ntest run\ntarget x86_64\n\n");
        for f in &self.functions {
            s += &f.to_string();
        }
        let _ = outcomes;
        s
    }
}
