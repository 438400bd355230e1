//! NVML functions the loaded driver lacks (an older driver than nvml-wrapper knows: `undefined
//! symbol: nvmlDeviceGetMemoryErrorCounter`): each is "not in this driver", noted once for the
//! whole run with the fields it would have read, and said once (not per field, not per GPU).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use nvml_wrapper::error::NvmlError;

use gpumon_schema::catalog::Field;
use gpumon_util::warn_once;

/// Function name -> the fields that needed it, in the order met.
static MISSING: Mutex<BTreeMap<String, Vec<Field>>> = Mutex::new(BTreeMap::new());
/// Whether a newly met missing function is warned about on stderr (`doctor` reports them itself).
static WARN: AtomicBool = AtomicBool::new(true);

/// The function a missing-symbol error names (the text after `undefined symbol: `), or None when
/// `e` is another error.
pub(crate) fn function(e: &NvmlError) -> Option<&str> {
    let NvmlError::FailedToLoadSymbol(msg) = e else { return None };
    let name = msg.rsplit("undefined symbol: ").next().unwrap_or(msg).trim();
    Some(name.split_whitespace().next().unwrap_or(name))
}

/// If `e` says the driver lacks the function, note it for `field` (None: no one field, e.g. a
/// process list) and warn once for the function, saying `what` stays empty; true then, and the
/// caller says nothing more. False for any other error.
pub(crate) fn noted(e: &NvmlError, field: Option<Field>, what: &str) -> bool {
    let Some(name) = function(e) else { return false };
    let mut map = match MISSING.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let fields = map.entry(name.to_string()).or_default();
    let first = fields.is_empty();
    if let Some(f) = field.filter(|f| !fields.contains(f)) {
        fields.push(f);
    }
    drop(map);
    if first && WARN.load(Ordering::Relaxed) {
        warn_once(
            &format!("nvml-missing-{name}"),
            &format!(
                "{name} is not in this driver (an older NVML): {what} stay empty on every GPU"
            ),
        );
    }
    true
}

/// Report missing functions in the caller's own output instead of warning (`doctor`).
pub(crate) fn quiet() {
    WARN.store(false, Ordering::Relaxed);
}

/// The functions met so far that the driver lacks, each with the fields that needed it.
pub(crate) fn all() -> Vec<(String, Vec<Field>)> {
    let map = match MISSING.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_function_is_read_from_the_loader_message() {
        let e = NvmlError::FailedToLoadSymbol(
            "/usr/lib/libnvidia-ml.so.1: undefined symbol: nvmlDeviceGetMemoryErrorCounter".into(),
        );
        assert_eq!(function(&e), Some("nvmlDeviceGetMemoryErrorCounter"));
        assert_eq!(function(&NvmlError::NotSupported), None);
        quiet();
        assert!(noted(&e, Some(Field::PcieTx), "x"));
        assert!(noted(&e, Some(Field::PcieTx), "x"));
        let all = all();
        let (_, fields) = all.iter().find(|(n, _)| n == "nvmlDeviceGetMemoryErrorCounter").unwrap();
        assert_eq!(fields, &[Field::PcieTx], "each field once");
        assert!(!noted(&NvmlError::Unknown, None, "x"));
    }
}
