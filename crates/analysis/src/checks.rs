//! `--fail-if` checks for CI: `[all.]STATISTIC OP NUMBER`, e.g. `utilization.gpu.mean < 50`.
//!
//! A per-GPU statistic is checked on every GPU (any GPU meeting the condition fails the check), a
//! host statistic on every host; `all.` checks the over-all figure. GPUs or hosts without the value
//! are passed over, but a check no GPU/host has a value for fails ("not in the data"), so a typo in
//! the data cannot make CI green. Bad syntax and unknown statistics are usage errors (exit 2).

use std::fmt;

use crate::stat::{Scope, Stat, layout};

/// Comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    pub(crate) fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Eq => a == b,
            Op::Ne => a != b,
        }
    }

    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
            Op::Ne => "!=",
        }
    }
}

/// A parsed check.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// `all.` prefix: the over-all figure.
    pub all: bool,
    /// The statistic's name as given ([`resolve`] finds the [`Stat`]).
    pub stat: String,
    pub(crate) op: Op,
    pub(crate) value: f64,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{} {} {}",
            if self.all { "all." } else { "" },
            self.stat,
            self.op.symbol(),
            self.value
        )
    }
}

/// Parse the syntax of a check (the statistic name is validated by [`resolve`]).
pub fn parse_check(s: &str) -> Result<Check, String> {
    let err = |why: &str| {
        format!(
            "--fail-if '{s}': {why}; expected STATISTIC OP NUMBER, e.g. 'utilization.gpu.mean < 50'"
        )
    };
    let t = s.trim();
    let at = t.find(['<', '>', '=', '!']).ok_or_else(|| err("no comparison operator"))?;
    let (lhs, rest) = t.split_at(at);
    let (op, rhs) = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<", Op::Lt),
        (">", Op::Gt),
        ("=", Op::Eq),
    ]
    .iter()
    .find_map(|(sym, op)| rest.strip_prefix(sym).map(|r| (*op, r)))
    .ok_or_else(|| err("unknown operator"))?;
    let name = lhs.trim();
    if name.is_empty() {
        return Err(err("no statistic before the operator"));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_') {
        return Err(err("a statistic name has only letters, digits, '.' and '_'"));
    }
    let num = rhs.trim().trim_end_matches('%').trim_end();
    let value: f64 = num
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| err("the right side is not a number"))?;
    let (all, stat) = match name.strip_prefix("all.") {
        Some(s) => (true, s.to_string()),
        None => (false, name.to_string()),
    };
    if stat.is_empty() {
        return Err(err("no statistic after 'all.'"));
    }
    Ok(Check { all, stat, op, value })
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The statistic a check names, or an error naming the closest known statistics.
pub fn resolve(c: &Check) -> Result<Stat, String> {
    if let Some(s) = Stat::lookup(&c.stat) {
        return Ok(s);
    }
    let names =
        [Scope::Gpu, Scope::Host].into_iter().flat_map(|s| layout(s).iter().map(|x| x.to_string()));
    let mut near: Vec<(usize, String)> = names.map(|n| (levenshtein(&c.stat, &n), n)).collect();
    near.sort();
    let hint: Vec<&str> = near.iter().take(3).map(|(_, n)| n.as_str()).collect();
    Err(format!(
        "--fail-if: unknown statistic '{}' (did you mean {}?); the JSON report lists every statistic",
        c.stat,
        hint.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_forms() {
        let c = parse_check("utilization.gpu.mean < 50").unwrap();
        assert_eq!(
            c,
            Check { all: false, stat: "utilization.gpu.mean".into(), op: Op::Lt, value: 50.0 }
        );
        let c = parse_check("all.energy_wh>=1e3").unwrap();
        assert!(c.all && c.op == Op::Ge && c.value == 1000.0);
        assert_eq!(parse_check(" memory.used.max_pct = 95% ").unwrap().op, Op::Eq);
        for bad in
            ["", "x", "< 5", "a <", "a < b", "a ~ 5", "a <> 5", "all. < 3", "a b < 3", "a < inf"]
        {
            assert!(parse_check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolves_names_with_hints() {
        use gpumon_schema::catalog::Field;
        let r = |t: &str| resolve(&parse_check(t).unwrap());
        assert_eq!(r("utilization.gpu.mean<1"), Ok(Stat::mean(Field::UtilGpu)));
        assert_eq!(r("all.cpu.util.p95<1").map(Stat::scope), Ok(Scope::Host));
        assert_eq!(
            r("throttle.hw_slowdown_pct>0").map(|s| s.to_string()),
            Ok("throttle.hw_slowdown_pct".into())
        );
        assert_eq!(r("job.gpu_memory.max>0").map(Stat::scope), Ok(Scope::Gpu));
        for (typo, msg) in [
            (
                "utilisation.gpu.mean",
                "did you mean utilization.gpu.mean, utilization.gpu.max, utilization.gpu.p50?",
            ),
            ("nope.x", "did you mean gap_s, gaps, samples?"),
            ("cpu.util.p96", "did you mean cpu.util.p95, cpu.util.max, cpu.util.mean?"),
        ] {
            let e = r(&format!("{typo} < 1")).unwrap_err();
            assert_eq!(
                e,
                format!(
                    "--fail-if: unknown statistic '{typo}' ({msg}); the JSON report lists every statistic"
                )
            );
        }
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            Just(Op::Lt),
            Just(Op::Le),
            Just(Op::Gt),
            Just(Op::Ge),
            Just(Op::Eq),
            Just(Op::Ne)
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn round_trips(all in any::<bool>(), stat in "[a-z][a-z0-9_]{0,8}(\\.[a-z0-9_]{1,8}){0,3}", op in op(),
                       value in -1e9f64..1e9, sp1 in " {0,2}", sp2 in " {0,2}") {
            let text = format!("{}{stat}{sp1}{}{sp2}{value}", if all { "all." } else { "" }, op.symbol());
            let c = parse_check(&text).unwrap();
            prop_assert_eq!(c.all, all || stat.starts_with("all.") );
            prop_assert_eq!(c.op, op);
            prop_assert_eq!(c.value, value);
            let again = parse_check(&c.to_string()).unwrap();
            prop_assert_eq!(again, c);
        }

        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let _ = parse_check(&s);
        }
    }
}
