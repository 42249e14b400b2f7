//! Exercises what Rust programs lean on under WASI preview 1: arguments, environment,
//! stdin, files in the working directory (a preopen under Wasm), the collections, string
//! formatting of integers and floats, 128-bit arithmetic, trait objects, closures and
//! recursion. Output is deterministic, so the native and the Wasm build must match.

use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::fmt::Write as _;
use std::io::{BufRead, Read, Write};

fn sieve(n: usize) -> Vec<usize> {
    let mut prime = vec![true; n + 1];
    prime[0] = false;
    prime[1] = false;
    let mut i = 2;
    while i * i <= n {
        if prime[i] {
            (i * i..=n).step_by(i).for_each(|j| prime[j] = false);
        }
        i += 1;
    }
    (0..=n).filter(|&k| prime[k]).collect()
}

enum Expr {
    Num(f64),
    Add(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
}

fn eval(e: &Expr) -> f64 {
    match e {
        Expr::Num(x) => *x,
        Expr::Add(a, b) => eval(a) + eval(b),
        Expr::Mul(a, b) => eval(a) * eval(b),
        Expr::Neg(a) => -eval(a),
    }
}

fn build(depth: u32, seed: &mut u64) -> Expr {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    if depth == 0 {
        return Expr::Num(((*seed >> 33) % 100) as f64 / 7.0);
    }
    match (*seed >> 40) % 3 {
        0 => Expr::Add(
            Box::new(build(depth - 1, seed)),
            Box::new(build(depth - 1, seed)),
        ),
        1 => Expr::Mul(Box::new(build(depth - 1, seed)), Box::new(Expr::Num(0.5))),
        _ => Expr::Neg(Box::new(build(depth - 1, seed))),
    }
}

trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> String;
}

struct Circle(f64);
struct Rect(f64, f64);

impl Shape for Circle {
    fn area(&self) -> f64 {
        std::f64::consts::PI * self.0 * self.0
    }
    fn name(&self) -> String {
        format!("circle r={}", self.0)
    }
}

impl Shape for Rect {
    fn area(&self) -> f64 {
        self.0 * self.1
    }
    fn name(&self) -> String {
        format!("rect {}x{}", self.0, self.1)
    }
}

fn files() -> std::io::Result<()> {
    std::fs::create_dir("data")?;
    std::fs::write("data/a.txt", "alpha\nbeta\n")?;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open("data/a.txt")?;
    writeln!(f, "gamma")?;
    drop(f);
    std::fs::write("data/b.bin", (0u8..=255).collect::<Vec<_>>())?;
    std::fs::rename("data/b.bin", "data/c.bin")?;
    let mut names: Vec<String> = std::fs::read_dir("data")?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    names.sort();
    println!("dir: {names:?}");
    let mut text = String::new();
    std::fs::File::open("data/a.txt")?.read_to_string(&mut text)?;
    println!(
        "a.txt: {:?} ({} bytes)",
        text.lines().collect::<Vec<_>>(),
        std::fs::metadata("data/a.txt")?.len()
    );
    let bytes = std::fs::read("data/c.bin")?;
    println!(
        "c.bin: {} bytes, sum {}",
        bytes.len(),
        bytes.iter().map(|&b| b as u32).sum::<u32>()
    );
    match std::fs::read("data/missing") {
        Ok(_) => println!("missing: found?"),
        Err(e) => println!("missing: {:?}", e.kind()),
    }
    std::fs::remove_file("data/a.txt")?;
    std::fs::remove_file("data/c.bin")?;
    std::fs::remove_dir("data")?;
    println!("cleaned: {}", std::path::Path::new("data").exists());
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    println!("args: {args:?}");
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("PROBE_"))
        .collect();
    vars.sort();
    println!("env: {vars:?}");

    let mut words: HashMap<String, usize> = HashMap::new();
    let mut lines = 0;
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin is text");
        lines += 1;
        for w in line.split_whitespace() {
            *words.entry(w.to_lowercase()).or_default() += 1;
        }
    }
    let by_word: BTreeMap<_, _> = words.iter().collect();
    println!("stdin: {lines} lines, words {by_word:?}");
    let mut heap: BinaryHeap<(usize, &String)> = words.iter().map(|(w, &c)| (c, w)).collect();
    let top: Vec<_> = std::iter::from_fn(|| heap.pop()).take(3).collect();
    println!("top: {top:?}");

    let p = sieve(200_000);
    println!(
        "primes: {} last {:?} sum {}",
        p.len(),
        p.last(),
        p.iter().map(|&k| k as u64).sum::<u64>()
    );
    let mut seed = 42u64;
    let e = build(18, &mut seed);
    println!("eval: {:.6}", eval(&e));
    let shapes: Vec<Box<dyn Shape>> = vec![
        Box::new(Circle(1.5)),
        Box::new(Rect(2.0, 3.5)),
        Box::new(Circle(0.25)),
    ];
    for s in &shapes {
        println!("{} -> {:.3}", s.name(), s.area());
    }
    println!(
        "total area {:.4}",
        shapes.iter().map(|s| s.area()).sum::<f64>()
    );

    let mut v: Vec<i64> = (0..100_000)
        .map(|i| (i * 7919 % 10007) as i64 - 5000)
        .collect();
    v.sort_unstable();
    let mut q: VecDeque<i64> = v.iter().copied().step_by(997).collect();
    q.rotate_left(3);
    println!(
        "sorted: min {} max {} sampled {:?}",
        v[0],
        v[v.len() - 1],
        q.iter().take(5).collect::<Vec<_>>()
    );
    let mut pairs: Vec<(u32, String)> =
        (0..20u32).map(|i| (i * 37 % 11, format!("k{i}"))).collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
    println!("pairs: {:?}", &pairs[..6]);

    let big = (u64::MAX as u128) * 3 + 17;
    let signed = -(big as i128) / 7;
    println!("i128: {big} {signed} {:#x} {}", big, big.leading_zeros());
    println!(
        "checked: {:?} {:?} {} {}",
        250u8.checked_add(10),
        i32::MIN.checked_abs(),
        200u8.wrapping_mul(3),
        (-7i32).rem_euclid(3)
    );
    let x: f32 = 1.0 / 3.0;
    println!(
        "floats: {} {} {:e} {} {:?} {}",
        1.0f64 / 3.0,
        x,
        1e300 * 10.0,
        2f64.sqrt(),
        f64::NAN.max(1.0),
        (0.1f64 + 0.2).to_bits()
    );
    println!(
        "parse: {:?} {:?} {:?}",
        "3.25e2".parse::<f64>(),
        "-17".parse::<i16>(),
        "x1".parse::<u8>().is_err()
    );
    let mut s = String::new();
    for c in "Grüße, Ώ! ǅ".chars() {
        write!(s, "{}", c.to_uppercase()).unwrap();
    }
    println!("unicode: {s} {} chars {} bytes", s.chars().count(), s.len());
    let hash = args
        .iter()
        .flat_map(|a| a.bytes())
        .fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100000001b3)
        });
    println!("fnv: {hash:016x}");

    if let Err(e) = files() {
        println!("files failed: {e}");
    }
    std::io::stdout().flush().unwrap();
    eprintln!("done on stderr");
    if args.iter().any(|a| a == "panic") {
        let empty: Vec<u8> = Vec::new();
        let i = args.len() + 2;
        println!("{}", empty[i]);
    }
    std::process::exit((p.len() % 7) as i32 + 1);
}
