//! GPU selectors as `--gpus` / `--id` names them (an index or a UUID prefix): which GPUs `record`
//! opens, and which rows the readers keep for summarize, report and convert.

/// A GPU selector given by the user: an index or a UUID (prefix).
#[derive(Debug, Clone, PartialEq)]
pub enum GpuSelector {
    /// An NVML index.
    Index(u32),
    /// A UUID or a prefix of one.
    Uuid(String),
    /// Matches nothing: the visible-devices variables select no GPU.
    None,
}

impl GpuSelector {
    /// An index when `s` parses as one, else a UUID (prefix).
    pub fn parse(s: &str) -> GpuSelector {
        match s.trim().parse::<u32>() {
            Ok(i) => GpuSelector::Index(i),
            Err(_) => GpuSelector::Uuid(s.trim().to_string()),
        }
    }

    /// The selectors of a comma-separated list as clap splits it (empty items ignored).
    pub fn parse_list(items: &[String]) -> Vec<GpuSelector> {
        items.iter().filter(|g| !g.trim().is_empty()).map(|g| GpuSelector::parse(g)).collect()
    }

    /// Whether this selector names the GPU with this index and UUID (full UUID in any case, or a
    /// prefix of it).
    pub fn matches_gpu(&self, index: Option<u64>, uuid: Option<&str>) -> bool {
        match self {
            GpuSelector::Index(i) => index == Some(u64::from(*i)),
            GpuSelector::Uuid(u) => {
                uuid.is_some_and(|g| g.eq_ignore_ascii_case(u) || g.starts_with(u.as_str()))
            }
            GpuSelector::None => false,
        }
    }
}

impl std::fmt::Display for GpuSelector {
    /// As the user wrote it: `0`, `GPU-ab12`, `none`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GpuSelector::Index(i) => write!(f, "{i}"),
            GpuSelector::Uuid(u) => f.write_str(u),
            GpuSelector::None => f.write_str("none"),
        }
    }
}

/// A list of selectors as a user writes it: `0,GPU-ab12`.
pub fn show_list(sel: &[GpuSelector]) -> String {
    sel.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_or_uuid_prefix() {
        let sel = GpuSelector::parse_list(&["0".into(), " GPU-ab".into(), "".into()]);
        assert_eq!(sel, [GpuSelector::Index(0), GpuSelector::Uuid("GPU-ab".into())]);
        assert!(sel[0].matches_gpu(Some(0), None));
        assert!(!sel[0].matches_gpu(Some(1), Some("GPU-ab12")));
        assert!(!sel[0].matches_gpu(None, None));
        assert!(sel[1].matches_gpu(None, Some("GPU-ab12")));
        assert!(GpuSelector::Uuid("gpu-AB12".into()).matches_gpu(None, Some("GPU-ab12")));
        assert!(!sel[1].matches_gpu(Some(0), Some("GPU-cd")));
        assert!(!GpuSelector::None.matches_gpu(Some(0), Some("GPU-ab")));
        assert_eq!(show_list(&sel), "0,GPU-ab");
    }
}
