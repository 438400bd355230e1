//! Which GPUs the job may use, from `CUDA_VISIBLE_DEVICES` and `NVIDIA_VISIBLE_DEVICES`.
//!
//! The two variables mean different things:
//!
//! - `NVIDIA_VISIBLE_DEVICES` belongs to the container runtime (NVIDIA Container Toolkit,
//!   Kubernetes device plugin): it decides which GPUs are mounted into the container. Values:
//!   `all`, `none` (driver but no GPU), `void` or empty (no NVIDIA runtime at all), or a list of
//!   indices, UUIDs (`GPU-...`), MIG ids (`MIG-...`, `0:1`). Indices are the *host's*
//!   numbering; inside the container NVML numbers only the mounted GPUs, from 0.
//! - `CUDA_VISIBLE_DEVICES` is what the job's CUDA runtime sees: a list of indices or UUIDs
//!   (prefixes like `GPU-8932f937` count). CUDA stops at the first entry it cannot use and hides
//!   the rest; an empty value (or `-1`, or `all`, which CUDA does not know) hides every GPU.
//!
//! `record` without `--gpus` samples the GPUs [`from_env`] returns: restricted by
//! `CUDA_VISIBLE_DEVICES` when it is set, else by `NVIDIA_VISIBLE_DEVICES`. Index entries of
//! `CUDA_VISIBLE_DEVICES` are taken as NVML indices. NVML ignores the variable and numbers every
//! GPU in PCI bus order, which is CUDA's numbering with `CUDA_DEVICE_ORDER=PCI_BUS_ID`; CUDA's
//! default (fastest first) can differ on machines with mixed GPU models, so UUIDs are exact where
//! indices are a close guess. Index entries of `NVIDIA_VISIBLE_DEVICES` are not applied: the
//! runtime already limited what NVML sees, and its numbers are the host's. MIG device ids are
//! not applied either (gpumon records whole GPUs and a `MIG-<uuid>` does not name its parent),
//! except the old `MIG-GPU-<uuid>/gi/ci` form, which does.

use gpumon_schema::GpuSelector;

/// The variable CUDA reads.
pub const CUDA_VAR: &str = "CUDA_VISIBLE_DEVICES";
/// The variable the NVIDIA container runtime reads.
pub const NVIDIA_VAR: &str = "NVIDIA_VISIBLE_DEVICES";

/// What a visible-devices value selects.
#[derive(Debug, Clone, PartialEq)]
pub enum Visible {
    /// Every GPU (the variable is unset, or `all`).
    All,
    /// No GPU at all.
    None,
    /// These GPUs, in the order given.
    Only(Vec<GpuSelector>),
}

impl Visible {
    /// Short human description: `all GPUs`, `no GPU`, `GPU 1`, `GPUs 0, GPU-8932f937`.
    pub fn describe(&self) -> String {
        match self {
            Visible::All => "all GPUs".into(),
            Visible::None => "no GPU".into(),
            Visible::Only(s) => {
                let items: Vec<String> = s.iter().map(GpuSelector::to_string).collect();
                format!("{} {}", if items.len() == 1 { "GPU" } else { "GPUs" }, items.join(", "))
            }
        }
    }
}

/// `NVIDIA_VISIBLE_DEVICES` (container runtime) grammar: `all`; `none`, `void` or empty for no
/// GPU; else a comma-separated list of indices, UUIDs and MIG ids. Unknown entries are skipped
/// (the runtime would refuse to start the container).
pub(crate) fn parse(s: &str) -> Visible {
    let t = s.trim();
    if t.eq_ignore_ascii_case("all") {
        return Visible::All;
    }
    if t.is_empty() || t.eq_ignore_ascii_case("none") || t.eq_ignore_ascii_case("void") {
        return Visible::None;
    }
    only(t.split(',').map(str::trim).filter(|e| !e.is_empty()).filter_map(|e| entry(e, true)))
}

/// `CUDA_VISIBLE_DEVICES` grammar: a comma-separated list of indices and UUIDs; CUDA stops at
/// the first entry it cannot parse, so `0,2,-1,1` is GPUs 0 and 2, and `-1`, `all` or an empty
/// value select no GPU.
pub(crate) fn parse_cuda(s: &str) -> Visible {
    only(s.split(',').map(str::trim).map_while(|e| entry(e, false)))
}

/// The GPUs `record` samples when `--gpus` is not given (see the module docs).
pub fn from_env() -> Visible {
    let var = |n: &str| std::env::var(n).ok();
    from_vars(var(CUDA_VAR).as_deref(), var(NVIDIA_VAR).as_deref()).0
}

/// The variable that decides the default GPU set, and its value; None when neither is set.
pub fn env_source() -> Option<(&'static str, String)> {
    [CUDA_VAR, NVIDIA_VAR].into_iter().find_map(|n| std::env::var(n).ok().map(|v| (n, v)))
}

/// [`from_env`] over given values: the restriction and the variable it came from.
pub(crate) fn from_vars(
    cuda: Option<&str>,
    nvidia: Option<&str>,
) -> (Visible, Option<&'static str>) {
    if let Some(v) = cuda {
        return (for_record(parse_cuda(v), false), Some(CUDA_VAR));
    }
    if let Some(v) = nvidia {
        return (for_record(parse(v), true), Some(NVIDIA_VAR));
    }
    (Visible::All, None)
}

/// Drop the entries NVML cannot match (MIG ids; the runtime's host indices). A list left empty
/// by that is no restriction: the job's GPUs are among all of them.
fn for_record(v: Visible, runtime: bool) -> Visible {
    let Visible::Only(list) = v else { return v };
    if runtime && list.iter().any(|s| matches!(s, GpuSelector::Index(_))) {
        return Visible::All;
    }
    let kept: Vec<GpuSelector> = list
        .into_iter()
        .filter(|s| !matches!(s, GpuSelector::Uuid(u) if u.starts_with("MIG-")))
        .collect();
    if kept.is_empty() { Visible::All } else { Visible::Only(kept) }
}

fn only(entries: impl Iterator<Item = GpuSelector>) -> Visible {
    let mut out: Vec<GpuSelector> = Vec::new();
    for e in entries {
        if !out.contains(&e) {
            out.push(e);
        }
    }
    if out.is_empty() { Visible::None } else { Visible::Only(out) }
}

/// One list entry: an index, a `GPU-` UUID (prefix), a MIG id; `runtime` also accepts the
/// toolkit's `gpu:mig` index pairs (the GPU part is kept).
fn entry(e: &str, runtime: bool) -> Option<GpuSelector> {
    if let Ok(i) = e.parse::<u32>() {
        return Some(GpuSelector::Index(i));
    }
    let upper = e.to_ascii_uppercase();
    if upper.starts_with("GPU-") && e.len() > 4 {
        return Some(GpuSelector::Uuid(format!("GPU-{}", e[4..].to_ascii_lowercase())));
    }
    if let Some(rest) = upper.strip_prefix("MIG-") {
        // MIG-GPU-<uuid>/<gi>/<ci> (before driver R470) names its parent GPU.
        if rest.starts_with("GPU-") {
            let parent = e[4..].split('/').next().unwrap_or_default();
            return entry(parent, runtime);
        }
        return (!rest.is_empty())
            .then(|| GpuSelector::Uuid(format!("MIG-{}", e[4..].to_ascii_lowercase())));
    }
    if runtime
        && let Some((gpu, mig)) = e.split_once(':')
        && mig.parse::<u32>().is_ok()
    {
        return gpu.parse::<u32>().ok().map(GpuSelector::Index);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use GpuSelector::{Index, Uuid};

    fn uuid(s: &str) -> GpuSelector {
        Uuid(s.into())
    }

    #[test]
    fn runtime_values() {
        assert_eq!(parse("all"), Visible::All);
        assert_eq!(parse(" ALL "), Visible::All);
        assert_eq!(parse("none"), Visible::None);
        assert_eq!(parse("void"), Visible::None);
        assert_eq!(parse(""), Visible::None);
        assert_eq!(parse("0,1"), Visible::Only(vec![Index(0), Index(1)]));
        assert_eq!(
            parse("2, 0 ,2"),
            Visible::Only(vec![Index(2), Index(0)]),
            "order kept, duplicates dropped"
        );
        assert_eq!(
            parse("GPU-8932F937-d72c-4106-c12f-20bd9faed9f6,GPU-11"),
            Visible::Only(vec![uuid("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"), uuid("GPU-11")])
        );
        assert_eq!(
            parse("0:1,1:0"),
            Visible::Only(vec![Index(0), Index(1)]),
            "gpu:mig pairs keep the GPU"
        );
        assert_eq!(parse("MIG-abcd"), Visible::Only(vec![uuid("MIG-abcd")]));
        assert_eq!(parse("MIG-GPU-1111/1/0"), Visible::Only(vec![uuid("GPU-1111")]));
        assert_eq!(parse("bogus,1"), Visible::Only(vec![Index(1)]));
        assert_eq!(parse("bogus"), Visible::None);
    }

    #[test]
    fn cuda_values() {
        assert_eq!(parse_cuda(""), Visible::None);
        assert_eq!(parse_cuda("-1"), Visible::None);
        assert_eq!(parse_cuda("all"), Visible::None, "CUDA does not know 'all'");
        assert_eq!(parse_cuda("none"), Visible::None);
        assert_eq!(parse_cuda("1"), Visible::Only(vec![Index(1)]));
        assert_eq!(
            parse_cuda("0,2,-1,1"),
            Visible::Only(vec![Index(0), Index(2)]),
            "stops at the first invalid"
        );
        assert_eq!(parse_cuda("GPU-1111,0"), Visible::Only(vec![uuid("GPU-1111"), Index(0)]));
        assert_eq!(parse_cuda("0:1"), Visible::None, "gpu:mig pairs are the runtime's, not CUDA's");
        assert_eq!(parse_cuda("0,"), Visible::Only(vec![Index(0)]));
    }

    #[test]
    fn record_default_follows_cuda_then_nvidia() {
        assert_eq!(from_vars(None, None), (Visible::All, None));
        assert_eq!(
            from_vars(Some("1"), Some("all")),
            (Visible::Only(vec![Index(1)]), Some(CUDA_VAR))
        );
        assert_eq!(from_vars(Some(""), None), (Visible::None, Some(CUDA_VAR)));
        assert_eq!(
            from_vars(None, Some("GPU-1111")),
            (Visible::Only(vec![uuid("GPU-1111")]), Some(NVIDIA_VAR))
        );
        assert_eq!(from_vars(None, Some("void")), (Visible::None, Some(NVIDIA_VAR)));
        // The runtime's indices are the host's; inside the container NVML renumbers from 0.
        assert_eq!(from_vars(None, Some("2,3")), (Visible::All, Some(NVIDIA_VAR)));
        // MIG instances cannot be matched to NVML GPUs: no restriction rather than none.
        assert_eq!(from_vars(Some("MIG-abcd"), None), (Visible::All, Some(CUDA_VAR)));
        assert_eq!(
            from_vars(Some("MIG-abcd,GPU-11"), None),
            (Visible::Only(vec![uuid("GPU-11")]), Some(CUDA_VAR))
        );
    }

    #[test]
    fn descriptions() {
        assert_eq!(Visible::All.describe(), "all GPUs");
        assert_eq!(Visible::None.describe(), "no GPU");
        assert_eq!(parse_cuda("1").describe(), "GPU 1");
        assert_eq!(parse_cuda("0,GPU-11").describe(), "GPUs 0, GPU-11");
    }
}
