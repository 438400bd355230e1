//! What the common Xid codes mean and the usual action, condensed from NVIDIA's Xid catalogue
//! (<https://docs.nvidia.com/deploy/xid-errors/>, "Analyzing Xid Errors with the Xid Catalog": its
//! description and resolution buckets RESTART_APP, RESET_GPU, RESTART_BM, CONTACT_SUPPORT). Codes
//! not listed are shown with a pointer to the catalogue.

/// One Xid.
#[derive(Debug, PartialEq, Eq)]
pub struct Xid {
    pub(crate) code: u64,
    pub(crate) meaning: &'static str,
    pub(crate) action: &'static str,
}

/// Where the full list lives.
pub(crate) const CATALOGUE: &str = "https://docs.nvidia.com/deploy/xid-errors/";

/// The Xids a training job most often meets.
pub(crate) static XIDS: [Xid; 16] = [
    Xid {
        code: 13,
        meaning: "graphics engine exception: usually the application (out-of-bounds access, illegal instruction)",
        action: "restart the job; if it recurs, run it under compute-sanitizer; hardware only if other jobs hit it too",
    },
    Xid {
        code: 31,
        meaning: "GPU memory page fault (MMU fault): almost always an illegal address in the application or framework",
        action: "restart the job; debug the kernel that faulted (compute-sanitizer, CUDA_LAUNCH_BLOCKING=1)",
    },
    Xid {
        code: 43,
        meaning: "GPU stopped processing: a channel was aborted after an application fault; the GPU itself is fine",
        action: "restart the job; look at the application's own error",
    },
    Xid {
        code: 45,
        meaning: "preemptive cleanup: channels torn down after an earlier error or a killed process",
        action: "usually benign on its own; look for the Xid that came before it",
    },
    Xid {
        code: 48,
        meaning: "double-bit ECC error (DBE): an uncorrectable memory error; the processes using it are killed",
        action: "reset the GPU (drain the node) so the page is retired or the row remapped; service it if it recurs",
    },
    Xid {
        code: 61,
        meaning: "internal micro-controller breakpoint/warning (PMU)",
        action: "reset the GPU if it stops responding; update the driver; report to NVIDIA if it recurs",
    },
    Xid {
        code: 62,
        meaning: "internal micro-controller halt",
        action: "reset the GPU or reboot; update the driver; service the GPU if it recurs",
    },
    Xid {
        code: 63,
        meaning: "ECC page retirement or row remapping recorded (memory repaired)",
        action: "not fatal: reset the GPU when convenient if remapped_rows.pending is set; watch the trend",
    },
    Xid {
        code: 64,
        meaning: "ECC page retirement or row remapping failed",
        action: "treat the memory as failing: drain the node, reset the GPU, service it (RMA) if it recurs",
    },
    Xid {
        code: 74,
        meaning: "NVLink error",
        action: "reset the GPU; check the NVLink/NVSwitch fabric (nvidia-smi nvlink -s); service it if it recurs",
    },
    Xid {
        code: 79,
        meaning: "GPU has fallen off the bus: it no longer answers on PCIe",
        action: "drain the node and reboot; check power, cooling and PCIe seating; service the GPU if it recurs",
    },
    Xid {
        code: 92,
        meaning: "high single-bit ECC error rate",
        action: "not fatal: watch the trend (retired pages / remapped rows); plan a GPU reset and service if it rises",
    },
    Xid {
        code: 94,
        meaning: "contained ECC error: an uncorrectable error contained to the processes that used the memory",
        action: "restart the affected job; reset the GPU when convenient so the row is remapped",
    },
    Xid {
        code: 95,
        meaning: "uncontained ECC error: every process on the GPU is affected",
        action: "drain the node and reset the GPU before more work lands on it; service it if it recurs",
    },
    Xid {
        code: 119,
        meaning: "GSP RPC timeout: the GPU System Processor firmware did not answer the driver",
        action: "reset the GPU or reboot; check the driver's known issues; update the driver if it recurs",
    },
    Xid {
        code: 120,
        meaning: "GSP error: the GPU System Processor firmware reported an error",
        action: "reset the GPU or reboot; update the driver; report to NVIDIA (nvidia-bug-report.sh) if it recurs",
    },
];

/// The entry of an Xid code, if it is one of the common ones.
pub(crate) fn lookup(code: u64) -> Option<&'static Xid> {
    XIDS.iter().find(|x| x.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_unique_and_found() {
        assert!(XIDS.windows(2).all(|w| w[0].code < w[1].code));
        assert_eq!(lookup(79).map(|x| x.code), Some(79));
        assert!(lookup(79).is_some_and(|x| x.meaning.contains("fallen off the bus")));
        assert_eq!(lookup(1), None);
    }
}
