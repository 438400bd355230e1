//! A fake `libnvidia-ml.so.1` driven by a scenario file, for gpumon's tests.
//!
//! The library exports a small subset of the NVML C API with the exact C ABI
//! that `nvml-wrapper` 0.13 / `nvml-wrapper-sys` 0.10 expect. Values come from
//! the text file named by `FAKE_NVML_SCENARIO` (see `README.md` next to this
//! crate for the format). Every exported function is wrapped in
//! `catch_unwind`, so a bug in the fake never unwinds across the FFI boundary.

// The exported symbols must carry NVML's exact (mixed-case) names.
#![allow(non_snake_case)]
// The exported functions are C-ABI stand-ins whose safety contract is NVML's
// own documentation (valid handles, valid or null out-pointers).
#![allow(clippy::missing_safety_doc)]

use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, c_char, c_int, c_uint, c_ulonglong, c_void};
use std::fs::OpenOptions;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

// ---------------------------------------------------------------------------
// C types and constants (layouts match nvml-wrapper-sys 0.10 bindings.rs)
// ---------------------------------------------------------------------------

/// `nvmlReturn_t`
type Ret = c_uint;
/// `nvmlDevice_t` (an opaque pointer; the fake uses `index + 1`)
type Handle = *mut c_void;

const SUCCESS: Ret = 0;
const ERROR_UNINITIALIZED: Ret = 1;
const ERROR_INVALID_ARGUMENT: Ret = 2;
const ERROR_NOT_SUPPORTED: Ret = 3;
const ERROR_NOT_FOUND: Ret = 6;
const ERROR_INSUFFICIENT_SIZE: Ret = 7;
const ERROR_DRIVER_NOT_LOADED: Ret = 9;
const ERROR_TIMEOUT: Ret = 10;
const ERROR_GPU_IS_LOST: Ret = 15;
const ERROR_ARGUMENT_VERSION_MISMATCH: Ret = 25;
const ERROR_UNKNOWN: Ret = 999;

/// `(code, scenario token, nvmlErrorString text)`
const ERRORS: &[(Ret, &str, &CStr)] = &[
    (0, "SUCCESS", c"Success"),
    (1, "UNINITIALIZED", c"Uninitialized"),
    (2, "INVALID_ARGUMENT", c"Invalid Argument"),
    (3, "NOT_SUPPORTED", c"Not Supported"),
    (4, "NO_PERMISSION", c"Insufficient Permissions"),
    (5, "ALREADY_INITIALIZED", c"Already Initialized"),
    (6, "NOT_FOUND", c"Not Found"),
    (7, "INSUFFICIENT_SIZE", c"Insufficient Size"),
    (8, "INSUFFICIENT_POWER", c"Insufficient External Power"),
    (9, "DRIVER_NOT_LOADED", c"Driver Not Loaded"),
    (10, "TIMEOUT", c"Timeout"),
    (11, "IRQ_ISSUE", c"Interrupt request issue"),
    (12, "LIBRARY_NOT_FOUND", c"NVML Shared Library Not Found"),
    (13, "FUNCTION_NOT_FOUND", c"Function Not Found"),
    (14, "CORRUPTED_INFOROM", c"Corrupted infoROM"),
    (15, "GPU_IS_LOST", c"GPU is lost"),
    (16, "RESET_REQUIRED", c"GPU requires restart"),
    (17, "OPERATING_SYSTEM", c"The operating system has blocked the request."),
    (18, "LIB_RM_VERSION_MISMATCH", c"RM has detected an NVML/RM version mismatch."),
    (19, "IN_USE", c"In use by another client"),
    (20, "MEMORY", c"Insufficient Memory"),
    (21, "NO_DATA", c"No data"),
    (22, "VGPU_ECC_NOT_SUPPORTED", c"ECC is enabled"),
    (23, "INSUFFICIENT_RESOURCES", c"Insufficient resources"),
    (24, "FREQ_NOT_SUPPORTED", c"Frequency not supported"),
    (25, "ARGUMENT_VERSION_MISMATCH", c"Argument version mismatch"),
    (26, "DEPRECATED", c"Deprecated"),
    (27, "NOT_READY", c"Not ready"),
    (28, "GPU_NOT_FOUND", c"GPU not found"),
    (29, "INVALID_STATE", c"Invalid state"),
    (30, "RESET_TYPE_NOT_SUPPORTED", c"Reset type not supported"),
    (999, "UNKNOWN", c"Unknown Error"),
];

/// `nvmlPciInfo_t` (`nvmlPciInfo_st`)
#[repr(C)]
pub struct PciInfo {
    bus_id_legacy: [c_char; 16],
    domain: c_uint,
    bus: c_uint,
    device: c_uint,
    pci_device_id: c_uint,
    pci_sub_system_id: c_uint,
    bus_id: [c_char; 32],
}

/// `nvmlUtilization_t`
#[repr(C)]
pub struct Utilization {
    gpu: c_uint,
    memory: c_uint,
}

/// `nvmlMemory_t` (v1)
#[repr(C)]
pub struct Memory {
    total: c_ulonglong,
    free: c_ulonglong,
    used: c_ulonglong,
}

/// `nvmlMemory_v2_t`
#[repr(C)]
pub struct MemoryV2 {
    version: c_uint,
    total: c_ulonglong,
    reserved: c_ulonglong,
    free: c_ulonglong,
    used: c_ulonglong,
}

/// `nvmlProcessInfo_t` == `nvmlProcessInfo_v2_t` (used by the `_v2` and `_v3` calls)
#[repr(C)]
pub struct ProcessInfo {
    pid: c_uint,
    used_gpu_memory: c_ulonglong,
    gpu_instance_id: c_uint,
    compute_instance_id: c_uint,
}

/// `nvmlProcessUtilizationSample_t`
#[repr(C)]
pub struct ProcessUtilizationSample {
    pid: c_uint,
    time_stamp: c_ulonglong,
    sm_util: c_uint,
    mem_util: c_uint,
    enc_util: c_uint,
    dec_util: c_uint,
}

/// `nvmlEventData_t`
#[repr(C)]
pub struct EventData {
    device: Handle,
    event_type: c_ulonglong,
    event_data: c_ulonglong,
    gpu_instance_id: c_uint,
    compute_instance_id: c_uint,
}

/// `nvmlGpmSupport_t`
#[repr(C)]
pub struct GpmSupport {
    version: c_uint,
    is_supported_device: c_uint,
}

/// `nvmlGpmMetric_t.metricInfo`
#[repr(C)]
pub struct GpmMetricInfo {
    short_name: *mut c_char,
    long_name: *mut c_char,
    unit: *mut c_char,
}

/// `nvmlGpmMetric_t`
#[repr(C)]
pub struct GpmMetric {
    metric_id: c_uint,
    nvml_return: Ret,
    value: f64,
    metric_info: GpmMetricInfo,
}

/// `nvmlGpmMetricsGet_t`
#[repr(C)]
pub struct GpmMetricsGet {
    version: c_uint,
    num_metrics: c_uint,
    sample1: *mut c_void,
    sample2: *mut c_void,
    metrics: [GpmMetric; GPM_METRIC_MAX],
}

const _: () = {
    assert!(size_of::<PciInfo>() == 68);
    assert!(size_of::<Utilization>() == 8);
    assert!(size_of::<Memory>() == 24);
    assert!(size_of::<MemoryV2>() == 40);
    assert!(size_of::<ProcessInfo>() == 24);
    assert!(size_of::<ProcessUtilizationSample>() == 32);
    assert!(size_of::<EventData>() == 32);
    assert!(size_of::<GpmSupport>() == 8);
    assert!(size_of::<GpmMetric>() == 40);
    assert!(size_of::<GpmMetricsGet>() == 24 + 40 * GPM_METRIC_MAX);
};

/// `NVML_STRUCT_VERSION(Memory, 2)`
const MEMORY_V2_VERSION: c_uint = (size_of::<MemoryV2>() as c_uint) | (2 << 24);
/// `NVML_VALUE_NOT_AVAILABLE` as an unsigned long long
const VALUE_NOT_AVAILABLE_U64: u64 = u64::MAX;
/// "no MIG instance" marker in `nvmlProcessInfo_t`
const NO_INSTANCE: c_uint = 0xFFFF_FFFF;
/// Reported encoder/decoder sampling period (µs).
const CODEC_SAMPLING_PERIOD_US: c_uint = 167_000;
const MIB: u64 = 1024 * 1024;

/// `NVML_GPM_SUPPORT_VERSION`
const GPM_SUPPORT_VERSION: c_uint = 1;
/// `NVML_GPM_METRICS_GET_VERSION`
const GPM_METRICS_GET_VERSION: c_uint = 1;
/// `NVML_GPM_METRIC_MAX`: the size of `nvmlGpmMetricsGet_t.metrics`.
const GPM_METRIC_MAX: usize = 210;

/// A scriptable GPM metric: scenario key, `NVML_GPM_METRIC_*` id and the
/// `metricInfo` strings the fake reports.
struct GpmMetricDef {
    key: &'static str,
    id: c_uint,
    short: &'static CStr,
    long: &'static CStr,
    unit: &'static CStr,
}

const fn gpm(
    key: &'static str,
    id: c_uint,
    short: &'static CStr,
    long: &'static CStr,
    unit: &'static CStr,
) -> GpmMetricDef {
    GpmMetricDef { key, id, short, long, unit }
}

const GPM_METRICS: &[GpmMetricDef] = &[
    gpm("gpm.graphics_util", 1, c"graphics_util", c"Graphics utilization", c"%"),
    gpm("gpm.sm_util", 2, c"sm_util", c"SM utilization", c"%"),
    gpm("gpm.sm_occupancy", 3, c"sm_occupancy", c"SM occupancy", c"%"),
    gpm("gpm.integer_util", 4, c"integer_util", c"Integer utilization", c"%"),
    gpm("gpm.any_tensor_util", 5, c"any_tensor_util", c"Any tensor utilization", c"%"),
    gpm("gpm.dfma_tensor_util", 6, c"dfma_tensor_util", c"DFMA tensor utilization", c"%"),
    gpm("gpm.hmma_tensor_util", 7, c"hmma_tensor_util", c"HMMA tensor utilization", c"%"),
    gpm("gpm.imma_tensor_util", 9, c"imma_tensor_util", c"IMMA tensor utilization", c"%"),
    gpm("gpm.dram_bw_util", 10, c"dram_bw_util", c"DRAM bandwidth utilization", c"%"),
    gpm("gpm.fp64_util", 11, c"fp64_util", c"FP64 utilization", c"%"),
    gpm("gpm.fp32_util", 12, c"fp32_util", c"FP32 utilization", c"%"),
    gpm("gpm.fp16_util", 13, c"fp16_util", c"FP16 utilization", c"%"),
    gpm("gpm.pcie_tx_per_sec", 20, c"pcie_tx_per_sec", c"PCIe transmit bandwidth", c"MiB/s"),
    gpm("gpm.pcie_rx_per_sec", 21, c"pcie_rx_per_sec", c"PCIe receive bandwidth", c"MiB/s"),
    gpm(
        "gpm.nvlink_total_rx_per_sec",
        60,
        c"nvlink_total_rx_per_sec",
        c"NVLink receive bandwidth, all links",
        c"MiB/s",
    ),
    gpm(
        "gpm.nvlink_total_tx_per_sec",
        61,
        c"nvlink_total_tx_per_sec",
        c"NVLink transmit bandwidth, all links",
        c"MiB/s",
    ),
];

/// `nvmlEventType*` bits by scenario name. These are the types `nvml-wrapper`
/// 0.13's `EventTypes` knows; it silently drops any other bit.
const EVENT_KINDS: &[(&str, u64)] = &[
    ("sbe", 0x1),           // nvmlEventTypeSingleBitEccError
    ("dbe", 0x2),           // nvmlEventTypeDoubleBitEccError
    ("pstate", 0x4),        // nvmlEventTypePState
    ("xid", 0x8),           // nvmlEventTypeXidCriticalError
    ("clock", 0x10),        // nvmlEventTypeClock
    ("power_source", 0x80), // nvmlEventTypePowerSourceChange
    ("mig_config", 0x100),  // nvmlEventMigConfigChange
];
/// Default `nvmlDeviceGetSupportedEventTypes` mask when `events` is given.
const EVENT_KINDS_ALL: u64 = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x80 | 0x100;
/// First id handed out for GPM samples and event sets (device handles are small).
const FIRST_OBJECT_ID: usize = 0x1000;

// ---------------------------------------------------------------------------
// Scenario model
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    Int(u64),
    Float(f64),
}

impl Num {
    /// The value multiplied by `factor`, rounded to an integer.
    fn scaled(self, factor: u64) -> u64 {
        match self {
            Num::Int(v) => v.saturating_mul(factor),
            Num::Float(f) => (f * factor as f64).round() as u64,
        }
    }

    fn as_u64(self) -> u64 {
        self.scaled(1)
    }

    fn as_u32(self) -> c_uint {
        c_uint::try_from(self.as_u64()).unwrap_or(c_uint::MAX)
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(v) => v as f64,
            Num::Float(f) => f,
        }
    }
}

/// One element of a value sequence: a number or an NVML error code.
type Elem = Result<Num, Ret>;

/// Numeric per-device keys (each a comma-separated sequence).
const NUM_KEYS: &[&str] = &[
    "memory.total",
    "memory.used",
    "memory.free",
    "memory.reserved",
    "utilization.gpu",
    "utilization.memory",
    "temperature.gpu",
    "power.draw",
    "power.limit",
    "energy.total",
    "clocks.sm",
    "clocks.mem",
    "clocks.gr",
    "clocks.video",
    "clocks.max.graphics",
    "clocks.max.sm",
    "clocks.max.memory",
    "power.draw.average",
    "temperature.memory",
    "power.draw.instant",
    "fan.speed",
    "num_fans",
    "pstate",
    "clocks_event_reasons.active",
    "utilization.encoder",
    "utilization.decoder",
    "pcie.tx",
    "pcie.rx",
    "ecc.errors.corrected.volatile.total",
    "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.corrected.aggregate.total",
    "ecc.errors.uncorrected.aggregate.total",
    "persistence_mode",
    "mig_mode",
    "remapped_rows.correctable",
    "remapped_rows.uncorrectable",
    "remapped_rows.pending",
    "remapped_rows.failure",
    "retired_pages.pending",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "power.default_limit",
    "power.min_limit",
    "power.max_limit",
    "compute_mode",
    "display_mode",
    "display_active",
    "accounting.mode",
    "clocks.applications.graphics",
    "clocks.applications.memory",
    "clocks.default_applications.graphics",
    "clocks.default_applications.memory",
    "compute_cap",
    "ecc.mode.current",
    "ecc.mode.pending",
    "encoder.stats.sessionCount",
    "encoder.stats.averageFps",
    "encoder.stats.averageLatency",
    "power.management",
    "gom.current",
    "gom.pending",
    "ecc.errors.by_location",
    "clocks_event_reasons.supported",
    "architecture",
];

/// Per-tick lists (`process_util`, `retired_pages.*`): one element per tick,
/// each a list or an NVML error code for that tick.
type TickLists<T> = Vec<Result<Vec<T>, Ret>>;

/// One `process_util` entry.
#[derive(Clone, Debug, Default, PartialEq)]
struct ProcUtil {
    pid: u32,
    /// µs; `None` = wall-clock time of the call.
    ts: Option<u64>,
    sm: u32,
    mem: u32,
    enc: u32,
    dec: u32,
}

/// One retired page.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Page {
    address: u64,
    timestamp: u64,
}

/// One scripted event.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Event {
    tick: u64,
    /// One `nvmlEventType*` bit.
    kind: u64,
    data: u64,
    gpu_instance: u32,
    compute_instance: u32,
}

#[derive(Clone, Debug, PartialEq)]
struct Proc {
    pid: u32,
    /// Bytes; `None` = NVML_VALUE_NOT_AVAILABLE.
    used: Option<u64>,
}

/// One MIG device of a `mig` layout: `PROFILE[:gi=N][:ci=N][:uuid=MIG-...][:total=MiB][:used=MiB][:proc=PID@MiB]...`.
#[derive(Clone, Debug, PartialEq)]
struct Mig {
    profile: String,
    gi: u32,
    ci: u32,
    uuid: Option<String>,
    total_mib: u64,
    used_mib: u64,
    procs: Vec<Proc>,
    /// `gpm.KEY=VALUE`: what `nvmlGpmMetricsGet` answers for this GPU instance's samples.
    gpm: Vec<(c_uint, f64)>,
}

#[derive(Clone, Debug, PartialEq)]
struct Pci {
    bus_id: String,
    legacy: String,
    domain: u32,
    bus: u32,
    device: u32,
}

/// FNV-1a for the per-device maps, which are keyed by short names and looked up on every call
/// (SipHash cost more than the rest of a call). Only the lookup cost changes, not what is found.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

#[derive(Debug)]
struct Global {
    init: Ret,
    driver_version: Result<String, Ret>,
    nvml_version: Result<String, Ret>,
    cuda_version: Result<i32, Ret>,
}

impl Default for Global {
    fn default() -> Self {
        Global {
            init: SUCCESS,
            driver_version: Ok("550.54.15".to_string()),
            nvml_version: Ok("12.550.54.15".to_string()),
            cuda_version: Ok(12040),
        }
    }
}

#[derive(Debug, Default)]
struct Device {
    index: usize,
    name: Option<Result<String, Ret>>,
    uuid: Option<Result<String, Ret>>,
    pci: Option<Result<Pci, Ret>>,
    num: FastMap<&'static str, Vec<Elem>>,
    processes: Option<Result<Vec<Proc>, Ret>>,
    graphics_processes: Option<Result<Vec<Proc>, Ret>>,
    processes_file: Option<PathBuf>,
    lost_after: Option<u64>,
    delay_ms: u64,
    /// `gpm = supported|unsupported|ERROR`; absent = supported iff any `gpm.*` key.
    gpm: Option<Result<bool, Ret>>,
    gpm_any_key: bool,
    /// GPM sample tick -> error of `nvmlGpmSampleGet`.
    gpm_fail_at: HashMap<usize, Ret>,
    /// tick of sample2 -> error of `nvmlGpmMetricsGet`.
    gpm_metrics_fail_at: HashMap<usize, Ret>,
    events: Option<Vec<Event>>,
    events_supported: Option<Result<u64, Ret>>,
    events_tick_ms: Option<u64>,
    process_util: Option<TickLists<ProcUtil>>,
    /// Indexed by `nvmlPageRetirementCause_t`: 0 = multiple SBE, 1 = DBE.
    retired_pages: [Option<TickLists<Page>>; 2],
    /// MIG layout per utilization read (`mig = ...`); absent = not MIG capable.
    mig: Option<TickLists<Mig>>,
    /// `mig_mode.pending`; absent = the current mode.
    mig_pending: Option<u32>,
    // runtime state
    cursors: FastMap<String, usize>,
    util_reads: u64,
}

#[derive(Debug, Default)]
struct Scenario {
    global: Global,
    devices: Vec<Device>,
}

/// A filled GPM sample: the device (and MIG GPU instance) and the GPM tick
/// at which `nvmlGpmSampleGet` filled it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct GpmSampleData {
    device: usize,
    gpu_instance: Option<u32>,
    tick: usize,
}

#[derive(Debug, Default)]
struct EventSet {
    /// device index -> registered event-type mask
    regs: HashMap<usize, u64>,
    /// `(device index, event index)` already delivered through this set
    delivered: HashSet<(usize, usize)>,
}

struct State {
    refcount: u32,
    global: Global,
    devices: Vec<Device>,
    /// When this state was created (`events.tick_ms` counts from here).
    started: Instant,
    next_id: usize,
    /// GPM sample handle -> contents (`None` until `nvmlGpmSampleGet` fills it)
    samples: HashMap<usize, Option<GpmSampleData>>,
    event_sets: HashMap<usize, EventSet>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
/// Signalled whenever something an `nvmlEventSetWait*` caller waits for may
/// have changed: a device tick advanced, a set was freed, NVML shut down.
static EVENTS_CHANGED: Condvar = Condvar::new();
/// Callers waiting on [`EVENTS_CHANGED`] (changed under the state lock, like the condition).
static EVENT_WAITERS: AtomicUsize = AtomicUsize::new(0);

/// Wake the event waiters, if any (a wake-up without waiters would still cost a system call).
/// Called with the state lock held.
fn events_changed() {
    if EVENT_WAITERS.load(Ordering::SeqCst) > 0 {
        EVENTS_CHANGED.notify_all();
    }
}

fn lock() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

// ---------------------------------------------------------------------------
// Scenario parsing
// ---------------------------------------------------------------------------

fn error_token(s: &str) -> Option<Ret> {
    let upper = s.trim().to_ascii_uppercase();
    let name = upper.strip_prefix("NVML_ERROR_").unwrap_or(&upper);
    ERRORS
        .iter()
        .find(|(code, token, _)| *code != SUCCESS && *token == name)
        .map(|(code, _, _)| *code)
}

fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

fn parse_elem(s: &str) -> Result<Elem, String> {
    let s = s.trim();
    if let Some(v) = parse_u64(s) {
        return Ok(Ok(Num::Int(v)));
    }
    if let Ok(f) = s.parse::<f64>()
        && f.is_finite()
        && f >= 0.0
    {
        return Ok(Ok(Num::Float(f)));
    }
    if let Some(code) = error_token(s) {
        return Ok(Err(code));
    }
    Err(format!("`{s}` is neither a non-negative number nor an NVML error name"))
}

fn parse_seq(v: &str) -> Result<Vec<Elem>, String> {
    if v.trim().is_empty() {
        return Err("empty value".to_string());
    }
    v.split(',').map(parse_elem).collect()
}

fn parse_text(v: &str) -> Result<Result<String, Ret>, String> {
    if v.is_empty() {
        return Err("empty value".to_string());
    }
    Ok(match error_token(v) {
        Some(code) => Err(code),
        None => Ok(v.to_string()),
    })
}

/// `pid:MiB` items separated by commas and/or newlines; `#` starts a comment.
/// `MiB` may be `NA` (reported as NVML_VALUE_NOT_AVAILABLE).
fn parse_procs(text: &str) -> Result<Vec<Proc>, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        for item in line.split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (pid, mib) =
                item.split_once(':').ok_or_else(|| format!("process `{item}` is not `pid:MiB`"))?;
            let pid: u32 = pid.trim().parse().map_err(|_| format!("bad pid in `{item}`"))?;
            let mib = mib.trim();
            let used = if mib.eq_ignore_ascii_case("NA") || mib.eq_ignore_ascii_case("N/A") {
                None
            } else {
                match parse_elem(mib)? {
                    Ok(n) => Some(n.scaled(MIB)),
                    Err(_) => return Err(format!("bad memory in `{item}`")),
                }
            };
            out.push(Proc { pid, used });
        }
    }
    Ok(out)
}

/// A per-tick list value: ticks separated by `,`; each tick is `none`, an NVML
/// error name, or items separated by `;`.
fn parse_tick_lists<T>(
    v: &str,
    item: impl Fn(&str) -> Result<T, String>,
) -> Result<TickLists<T>, String> {
    if v.trim().is_empty() {
        return Err("empty value".to_string());
    }
    v.split(',')
        .map(|tick| {
            let tick = tick.trim();
            if tick.is_empty() {
                return Err("empty tick (use `none` for an empty list)".to_string());
            }
            if tick.eq_ignore_ascii_case("none") {
                return Ok(Ok(Vec::new()));
            }
            if let Some(code) = error_token(tick) {
                return Ok(Err(code));
            }
            tick.split(';').map(|i| item(i.trim())).collect::<Result<Vec<T>, String>>().map(Ok)
        })
        .collect()
}

/// `pid[:sm=N][:mem=N][:enc=N][:dec=N][:ts=µs]`
fn parse_proc_util(item: &str) -> Result<ProcUtil, String> {
    let mut parts = item.split(':');
    let pid = parts.next().unwrap_or("").trim();
    let pid: u32 = pid.parse().map_err(|_| format!("bad pid in process_util item `{item}`"))?;
    let mut p = ProcUtil { pid, ..ProcUtil::default() };
    for part in parts {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}` in `{item}` is not `key=value`"))?;
        let n = parse_u64(v).ok_or_else(|| format!("`{v}` in `{item}` is not an integer"))?;
        let pct = || u32::try_from(n).map_err(|_| format!("`{v}` in `{item}` is too large"));
        match k.trim() {
            "sm" => p.sm = pct()?,
            "mem" => p.mem = pct()?,
            "enc" => p.enc = pct()?,
            "dec" => p.dec = pct()?,
            "ts" => p.ts = Some(n),
            other => {
                return Err(format!(
                    "unknown process_util field `{other}` (sm, mem, enc, dec, ts)"
                ));
            }
        }
    }
    Ok(p)
}

/// The memory of a profile name such as `3g.40gb`, in MiB (`40 * 1024`); 0 when it names none.
fn profile_mib(profile: &str) -> u64 {
    let gb = profile
        .split('.')
        .nth(1)
        .and_then(|m| m.strip_suffix("gb"))
        .and_then(|n| n.parse::<u64>().ok());
    gb.map_or(0, |g| g * 1024)
}

/// `PROFILE[:gi=N][:ci=N][:uuid=MIG-...][:total=MiB][:used=MiB][:proc=PID@MiB]...`; `gi` is
/// `u32::MAX` until given (then the slot number + 1).
fn parse_mig(item: &str) -> Result<Mig, String> {
    let mut parts = item.split(':');
    let profile = parts.next().unwrap_or("").trim().to_string();
    if profile.is_empty() {
        return Err(format!("MIG item `{item}` has no profile name"));
    }
    let total_mib = profile_mib(&profile);
    let mut m = Mig {
        profile,
        gi: u32::MAX,
        ci: 0,
        uuid: None,
        total_mib,
        used_mib: 0,
        procs: Vec::new(),
        gpm: Vec::new(),
    };
    for part in parts {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}` in `{item}` is not `key=value`"))?;
        let (k, v) = (k.trim(), v.trim());
        let n = || parse_u64(v).ok_or_else(|| format!("`{v}` in `{item}` is not an integer"));
        match k {
            "gi" => m.gi = u32::try_from(n()?).map_err(|_| format!("gi `{v}` is too large"))?,
            "ci" => m.ci = u32::try_from(n()?).map_err(|_| format!("ci `{v}` is too large"))?,
            "uuid" => m.uuid = Some(v.to_string()),
            "total" => m.total_mib = n()?,
            "used" => m.used_mib = n()?,
            "proc" => {
                let (pid, mib) =
                    v.split_once('@').ok_or_else(|| format!("proc `{v}` is not `PID@MiB`"))?;
                let pid = pid.parse().map_err(|_| format!("bad pid in `{v}`"))?;
                let mib = parse_u64(mib).ok_or_else(|| format!("bad memory in `{v}`"))?;
                m.procs.push(Proc { pid, used: Some(mib * MIB) });
            }
            k if k.starts_with("gpm.") => {
                let def = GPM_METRICS
                    .iter()
                    .find(|g| g.key == k)
                    .ok_or_else(|| format!("unknown GPM key `{k}`"))?;
                let x: f64 = v.parse().map_err(|_| format!("`{v}` in `{item}` is not a number"))?;
                m.gpm.push((def.id, x));
            }
            other => {
                return Err(format!(
                    "unknown MIG field `{other}` (gi, ci, uuid, total, used, proc, gpm.*)"
                ));
            }
        }
    }
    Ok(m)
}

/// `ADDRESS[:TIMESTAMP]`
fn parse_page(item: &str) -> Result<Page, String> {
    let (a, t) = match item.split_once(':') {
        Some((a, t)) => (a, Some(t)),
        None => (item, None),
    };
    let address = parse_u64(a).ok_or_else(|| format!("bad page address in `{item}`"))?;
    let timestamp = match t {
        Some(t) => parse_u64(t).ok_or_else(|| format!("bad page timestamp in `{item}`"))?,
        None => 0,
    };
    Ok(Page { address, timestamp })
}

/// `none`, or `KIND[:DATA][:gi=N][:ci=N]@TICK` items separated by `,`.
fn parse_events(v: &str) -> Result<Vec<Event>, String> {
    if v.trim().eq_ignore_ascii_case("none") {
        return Ok(Vec::new());
    }
    v.split(',')
        .map(|item| {
            let item = item.trim();
            let (head, tick) = item
                .rsplit_once('@')
                .ok_or_else(|| format!("event `{item}` is not `KIND[:DATA]@TICK`"))?;
            let tick = parse_u64(tick).ok_or_else(|| format!("bad tick in event `{item}`"))?;
            let mut parts = head.split(':');
            let name = parts.next().unwrap_or("").trim();
            let kind = EVENT_KINDS
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, bit)| *bit)
                .ok_or_else(|| format!("unknown event kind `{name}` in `{item}`"))?;
            let mut ev = Event {
                tick,
                kind,
                data: 0,
                gpu_instance: NO_INSTANCE,
                compute_instance: NO_INSTANCE,
            };
            let mut have_data = false;
            for part in parts {
                let part = part.trim();
                let bad = || format!("bad `{part}` in event `{item}`");
                if let Some(n) = part.strip_prefix("gi=") {
                    ev.gpu_instance =
                        parse_u64(n).and_then(|n| u32::try_from(n).ok()).ok_or_else(bad)?;
                } else if let Some(n) = part.strip_prefix("ci=") {
                    ev.compute_instance =
                        parse_u64(n).and_then(|n| u32::try_from(n).ok()).ok_or_else(bad)?;
                } else if !have_data {
                    ev.data = parse_u64(part).ok_or_else(bad)?;
                    have_data = true;
                } else {
                    return Err(bad());
                }
            }
            if name.eq_ignore_ascii_case("xid") && !have_data {
                return Err(format!("event `{item}`: xid needs a code, e.g. `xid:79@3`"));
            }
            Ok(ev)
        })
        .collect()
}

/// `TICK[:ERROR]` items separated by `,` (default error UNKNOWN).
fn parse_fail_at(v: &str) -> Result<HashMap<usize, Ret>, String> {
    v.split(',')
        .map(|item| {
            let item = item.trim();
            let (tick, code) = match item.split_once(':') {
                Some((t, e)) => {
                    (t, error_token(e).ok_or_else(|| format!("`{e}` is not an NVML error name"))?)
                }
                None => (item, ERROR_UNKNOWN),
            };
            let tick = parse_u64(tick)
                .and_then(|t| usize::try_from(t).ok())
                .ok_or_else(|| format!("`{item}` is not `TICK[:ERROR]`"))?;
            Ok((tick, code))
        })
        .collect()
}

/// Parses `DDDDDDDD:BB:DD.F` (or the legacy `DDDD:BB:DD.F`).
fn parse_bus_id(s: &str) -> Result<Pci, String> {
    let bad = || format!("pci.bus_id `{s}` is not `DDDDDDDD:BB:DD.F`");
    let mut parts = s.split(':');
    let (Some(dom), Some(bus), Some(devfn), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let (dev, func) = devfn.split_once('.').ok_or_else(bad)?;
    let hex = |x: &str| u32::from_str_radix(x, 16).map_err(|_| bad());
    let (domain, bus, device, func) = (hex(dom)?, hex(bus)?, hex(dev)?, hex(func)?);
    if s.len() >= 32 {
        return Err(bad());
    }
    Ok(Pci {
        bus_id: s.to_string(),
        legacy: format!("{domain:04X}:{bus:02X}:{device:02X}.{func:X}"),
        domain,
        bus,
        device,
    })
}

fn set_global(g: &mut Global, key: &str, v: &str) -> Result<(), String> {
    match key {
        "init" => {
            g.init = if v.eq_ignore_ascii_case("ok") || v.eq_ignore_ascii_case("success") {
                SUCCESS
            } else {
                error_token(v).ok_or_else(|| format!("init `{v}` is not `ok` or an error name"))?
            }
        }
        "driver_version" => g.driver_version = parse_text(v)?,
        "nvml_version" => g.nvml_version = parse_text(v)?,
        "cuda_version" => {
            g.cuda_version = match error_token(v) {
                Some(code) => Err(code),
                None => {
                    Ok(v.parse().map_err(|_| format!("cuda_version `{v}` is not an integer"))?)
                }
            }
        }
        _ => {
            return Err(format!("unknown global key `{key}` (device keys go after [device])"));
        }
    }
    Ok(())
}

fn set_device(d: &mut Device, key: &str, v: &str) -> Result<(), String> {
    if let Some(k) = NUM_KEYS.iter().find(|k| **k == key) {
        d.num.insert(k, parse_seq(v)?);
        return Ok(());
    }
    if let Some(m) = GPM_METRICS.iter().find(|m| m.key == key) {
        d.num.insert(m.key, parse_seq(v)?);
        d.gpm_any_key = true;
        return Ok(());
    }
    match key {
        "gpm" => {
            d.gpm = Some(if v.eq_ignore_ascii_case("supported") {
                Ok(true)
            } else if v.eq_ignore_ascii_case("unsupported") {
                Ok(false)
            } else {
                Err(error_token(v).ok_or_else(|| {
                    format!("gpm `{v}` is not supported, unsupported or an error name")
                })?)
            })
        }
        "gpm.fail_at" => {
            d.gpm_fail_at = parse_fail_at(v)?;
            d.gpm_any_key = true;
        }
        "gpm.metrics_fail_at" => {
            d.gpm_metrics_fail_at = parse_fail_at(v)?;
            d.gpm_any_key = true;
        }
        "events" => d.events = Some(parse_events(v)?),
        "events.supported" => {
            d.events_supported = Some(match error_token(v) {
                Some(code) => Err(code),
                None => Ok(parse_u64(v)
                    .ok_or_else(|| format!("events.supported `{v}` is not a bitmask"))?),
            })
        }
        "events.tick_ms" => {
            d.events_tick_ms = Some(
                parse_u64(v).ok_or_else(|| format!("events.tick_ms `{v}` is not an integer"))?,
            )
        }
        "process_util" => d.process_util = Some(parse_tick_lists(v, parse_proc_util)?),
        "mig" => {
            let mut lists: TickLists<Mig> = parse_tick_lists(v, parse_mig)?;
            for tick in lists.iter_mut().flatten() {
                for (slot, m) in tick.iter_mut().enumerate().filter(|(_, m)| m.gi == u32::MAX) {
                    m.gi = slot as u32 + 1;
                }
            }
            d.mig = Some(lists);
        }
        "mig_mode.pending" => {
            d.mig_pending = Some(
                parse_u64(v)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| format!("mig_mode.pending `{v}`"))?,
            )
        }
        "retired_pages.single_bit_ecc" => {
            d.retired_pages[0] = Some(parse_tick_lists(v, parse_page)?)
        }
        "retired_pages.double_bit" => d.retired_pages[1] = Some(parse_tick_lists(v, parse_page)?),
        "name" => d.name = Some(parse_text(v)?),
        "uuid" => d.uuid = Some(parse_text(v)?),
        "pci.bus_id" => {
            d.pci = Some(match error_token(v) {
                Some(code) => Err(code),
                None => Ok(parse_bus_id(v)?),
            })
        }
        "processes" | "graphics_processes" => {
            let list = match error_token(v) {
                Some(code) => Err(code),
                None => Ok(parse_procs(v)?),
            };
            if key == "processes" {
                d.processes = Some(list);
            } else {
                d.graphics_processes = Some(list);
            }
        }
        "processes_file" => {
            if v.is_empty() {
                return Err("empty value".to_string());
            }
            d.processes_file = Some(PathBuf::from(v));
        }
        "lost_after" => {
            d.lost_after =
                Some(parse_u64(v).ok_or_else(|| format!("lost_after `{v}` is not an integer"))?)
        }
        "delay_ms" => {
            d.delay_ms = parse_u64(v).ok_or_else(|| format!("delay_ms `{v}` is not an integer"))?
        }
        _ => return Err(format!("unknown device key `{key}`")),
    }
    Ok(())
}

fn parse_scenario(text: &str) -> Result<Scenario, String> {
    let mut sc = Scenario::default();
    let mut seen: HashSet<String> = HashSet::new();
    for (n, raw) in text.lines().enumerate() {
        let lineno = n + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            if line == "[device]" {
                let index = sc.devices.len();
                sc.devices.push(Device { index, ..Device::default() });
                seen.clear();
                continue;
            }
            return Err(format!("line {lineno}: unknown section `{line}` (only [device])"));
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {lineno}: expected `key = value`, got `{line}`"));
        };
        let (key, value) = (key.trim(), value.trim());
        if !seen.insert(key.to_string()) {
            return Err(format!("line {lineno}: duplicate key `{key}`"));
        }
        let res = match sc.devices.last_mut() {
            None => set_global(&mut sc.global, key, value),
            Some(d) => set_device(d, key, value),
        };
        res.map_err(|e| format!("line {lineno}: {e}"))?;
    }
    Ok(sc)
}

enum LoadError {
    /// `FAKE_NVML_SCENARIO` unset: silently "no driver".
    Unset,
    /// Unreadable or malformed: reported on stderr.
    Bad(String),
}

fn load_scenario() -> Result<Scenario, LoadError> {
    let path = match std::env::var_os("FAKE_NVML_SCENARIO") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => return Err(LoadError::Unset),
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| LoadError::Bad(format!("cannot read {}: {e}", path.display())))?;
    parse_scenario(&text).map_err(|e| LoadError::Bad(format!("{}: {e}", path.display())))
}

// ---------------------------------------------------------------------------
// Per-device value logic
// ---------------------------------------------------------------------------

impl Device {
    fn is_lost(&self) -> bool {
        self.lost_after.is_some_and(|n| self.util_reads >= n)
    }

    fn has(&self, key: &str) -> bool {
        self.num.contains_key(key)
    }

    /// Returns the current position of `cursor` and advances it.
    fn tick(&mut self, cursor: &str) -> usize {
        advance(&mut self.cursors, cursor)
    }

    /// The current position of `cursor`, without advancing it.
    fn peek(&self, cursor: &str) -> usize {
        self.cursors.get(cursor).copied().unwrap_or(0)
    }

    /// `gpm = ...`, defaulting to "supported iff any `gpm.*` key is given".
    fn gpm_supported(&self) -> Result<bool, Ret> {
        self.gpm.unwrap_or(Ok(self.gpm_any_key))
    }

    /// The `nvmlDeviceGetSupportedEventTypes` mask.
    fn events_supported(&self) -> Result<u64, Ret> {
        match (self.events_supported, &self.events) {
            (Some(s), _) => s,
            (None, Some(_)) => Ok(EVENT_KINDS_ALL),
            (None, None) => Err(ERROR_NOT_SUPPORTED),
        }
    }

    /// Element `min(i, len-1)` of `key`; `None` if the key is absent.
    fn at(&self, key: &str, i: usize) -> Option<Elem> {
        let seq = self.num.get(key)?;
        seq.get(i.min(seq.len().saturating_sub(1))).copied()
    }

    /// Next value of `key` using `cursor`; NOT_SUPPORTED if absent.
    fn next(&mut self, cursor: &str, key: &str) -> Result<Num, Ret> {
        // `has`, `tick` and `at` with one look-up of the key.
        let Some(seq) = self.num.get(key) else {
            return Err(ERROR_NOT_SUPPORTED);
        };
        let i = advance(&mut self.cursors, cursor);
        seq.get(i.min(seq.len().saturating_sub(1))).copied().unwrap_or(Err(ERROR_NOT_SUPPORTED))
    }

    fn name(&self) -> Result<String, Ret> {
        self.name.clone().unwrap_or_else(|| Ok(format!("Fake GPU {}", self.index)))
    }

    fn uuid(&self) -> Result<String, Ret> {
        self.uuid
            .clone()
            .unwrap_or_else(|| Ok(format!("GPU-00000000-0000-0000-0000-{:012}", self.index)))
    }

    fn pci(&self) -> Result<Pci, Ret> {
        match &self.pci {
            Some(p) => p.clone(),
            None => parse_bus_id(&format!("00000000:{:02X}:00.0", self.index + 1))
                .map_err(|_| ERROR_UNKNOWN),
        }
    }

    /// `(total, reserved, free, used)` in bytes, for the memory-info `cursor`.
    fn memory(&mut self, cursor: &str) -> Result<(u64, u64, u64, u64), Ret> {
        if !self.has("memory.total") || !(self.has("memory.used") || self.has("memory.free")) {
            return Err(ERROR_NOT_SUPPORTED);
        }
        let i = self.tick(cursor);
        let mib = |e: Option<Elem>| -> Result<Option<u64>, Ret> {
            match e {
                None => Ok(None),
                Some(e) => Ok(Some(e?.scaled(MIB))),
            }
        };
        let total = mib(self.at("memory.total", i))?.unwrap_or(0);
        let reserved = mib(self.at("memory.reserved", i))?.unwrap_or(0);
        let used = mib(self.at("memory.used", i))?;
        let free = mib(self.at("memory.free", i))?;
        let avail = total.saturating_sub(reserved);
        let (free, used) = match (free, used) {
            (Some(f), Some(u)) => (f, u),
            (None, Some(u)) => (avail.saturating_sub(u), u),
            (Some(f), None) => (f, avail.saturating_sub(f)),
            (None, None) => return Err(ERROR_NOT_SUPPORTED),
        };
        Ok((total, reserved, free, used))
    }

    /// Total energy in mJ.
    fn energy(&mut self) -> Result<u64, Ret> {
        if self.has("energy.total") {
            return Ok(self.next("energy", "energy.total")?.scaled(1000));
        }
        let Some(draw) = self.num.get("power.draw") else {
            return Err(ERROR_NOT_SUPPORTED);
        };
        let draw: Vec<u64> = draw.iter().map(|e| e.map(|n| n.scaled(1000)).unwrap_or(0)).collect();
        let i = self.tick("energy");
        // Sum of power.draw[k] (mW) * 1 s over ticks k < i; the last value repeats.
        let head: u64 = draw.iter().take(i).sum();
        let tail = match (i.checked_sub(draw.len()), draw.last()) {
            (Some(extra), Some(last)) => (extra as u64).saturating_mul(*last),
            _ => 0,
        };
        Ok(head.saturating_add(tail))
    }

    /// The current MIG mode: `mig_mode` when given, else 1 when a `mig` layout is given.
    fn mig_current(&self) -> Option<u32> {
        match self.at("mig_mode", self.peek("mig_mode").saturating_sub(1)) {
            Some(Ok(n)) => Some(n.as_u32()),
            Some(Err(_)) => None,
            None => self.mig.as_ref().map(|_| 1),
        }
    }

    /// The MIG devices of the layout current at this utilization read count.
    fn mig_layout(&self) -> Result<Vec<Mig>, Ret> {
        match &self.mig {
            Some(lists) if self.mig_current() == Some(1) => {
                tick_list(lists, self.util_reads.saturating_sub(1) as usize)
            }
            _ => Ok(Vec::new()),
        }
    }

    /// MIG device `slot` of the current layout with its UUID filled in.
    fn mig_device(&self, slot: usize) -> Result<Mig, Ret> {
        let mut m = self.mig_layout()?.into_iter().nth(slot).ok_or(ERROR_NOT_FOUND)?;
        if m.uuid.is_none() {
            m.uuid = Some(format!(
                "MIG-00000000-0000-0000-{:04}-{:012}",
                self.index,
                (m.gi << 8) | m.ci
            ));
        }
        Ok(m)
    }

    fn processes(&self, graphics: bool) -> Result<Vec<Proc>, Ret> {
        if graphics {
            return self.graphics_processes.clone().unwrap_or(Ok(Vec::new()));
        }
        let mut list = self.processes.clone().unwrap_or(Ok(Vec::new()))?;
        if let Some(path) = &self.processes_file {
            // A missing file means "no processes yet".
            if let Ok(text) = std::fs::read_to_string(path) {
                match parse_procs(&text) {
                    Ok(more) => list.extend(more),
                    Err(e) => {
                        stderr_line(&format!("processes_file {}: {e}", path.display()));
                        return Err(ERROR_UNKNOWN);
                    }
                }
            }
        }
        Ok(list)
    }
}

/// Returns the current position of `cursor` and advances it.
fn advance(cursors: &mut FastMap<String, usize>, cursor: &str) -> usize {
    if let Some(c) = cursors.get_mut(cursor) {
        *c += 1;
        return *c - 1;
    }
    cursors.insert(cursor.to_string(), 1);
    0
}

/// Element `min(i, len-1)` of a per-tick list.
fn tick_list<T: Clone>(lists: &TickLists<T>, i: usize) -> Result<Vec<T>, Ret> {
    lists.get(i.min(lists.len().saturating_sub(1))).cloned().unwrap_or(Ok(Vec::new()))
}

impl State {
    fn new(sc: Scenario) -> State {
        State {
            refcount: 1,
            global: sc.global,
            devices: sc.devices,
            started: Instant::now(),
            next_id: FIRST_OBJECT_ID,
            samples: HashMap::new(),
            event_sets: HashMap::new(),
        }
    }

    fn alloc_id(&mut self) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The earliest undelivered event registered in set `set` that is due at
    /// `now` (marked delivered), or else when the next wall-clock event falls
    /// due (if any). `INVALID_ARGUMENT` if the set does not exist.
    fn take_due_event(
        &mut self,
        set: usize,
        now: Instant,
    ) -> Result<Result<EventData, Option<Instant>>, Ret> {
        let es = self.event_sets.get_mut(&set).ok_or(ERROR_INVALID_ARGUMENT)?;
        let mut best: Option<(u64, usize, usize)> = None;
        let mut next_wall: Option<Instant> = None;
        for (&dev, &mask) in &es.regs {
            let Some(d) = self.devices.get(dev) else { continue };
            for (k, ev) in d.events.iter().flatten().enumerate() {
                if ev.kind & mask == 0 || es.delivered.contains(&(dev, k)) {
                    continue;
                }
                let due = match d.events_tick_ms {
                    Some(ms) => {
                        let at = self.started + Duration::from_millis(ev.tick.saturating_mul(ms));
                        if at > now {
                            next_wall = Some(next_wall.map_or(at, |n| n.min(at)));
                        }
                        at <= now
                    }
                    None => d.util_reads > ev.tick,
                };
                if due && best.is_none_or(|b| (ev.tick, dev, k) < b) {
                    best = Some((ev.tick, dev, k));
                }
            }
        }
        let Some((_, dev, k)) = best else {
            return Ok(Err(next_wall));
        };
        es.delivered.insert((dev, k));
        let ev = self.devices[dev].events.as_ref().map(|e| e[k]).ok_or(ERROR_UNKNOWN)?;
        Ok(Ok(EventData {
            device: make_handle(dev),
            event_type: ev.kind,
            event_data: ev.data,
            gpu_instance_id: ev.gpu_instance,
            compute_instance_id: ev.compute_instance,
        }))
    }
}

// ---------------------------------------------------------------------------
// FFI plumbing
// ---------------------------------------------------------------------------

fn stderr_line(msg: &str) {
    let _ = writeln!(std::io::stderr(), "fake-nvml: {msg}");
}

/// `FAKE_NVML_LOG` as it was when NVML was initialised (`Some`), kept until the last shutdown;
/// `None` outside, where each call reads the environment.
static LOG_PATH: RwLock<Option<Option<PathBuf>>> = RwLock::new(None);

fn log_path_from_env() -> Option<PathBuf> {
    std::env::var_os("FAKE_NVML_LOG").filter(|p| !p.is_empty()).map(PathBuf::from)
}

fn set_log_path(p: Option<Option<PathBuf>>) {
    *LOG_PATH.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = p;
}

fn log_call(name: &str, idx: Option<usize>) {
    let cached = LOG_PATH.read().unwrap_or_else(|poisoned| poisoned.into_inner());
    match &*cached {
        Some(None) => {}
        Some(Some(path)) => log_line(path, name, idx),
        None => {
            drop(cached);
            if let Some(path) = log_path_from_env() {
                log_line(&path, name, idx);
            }
        }
    }
}

fn log_line(path: &Path, name: &str, idx: Option<usize>) {
    let line = match idx {
        Some(i) => format!("{name} {i}\n"),
        None => format!("{name} -\n"),
    };
    if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Runs `f`, turning a panic into NVML_ERROR_UNKNOWN.
fn guard(f: impl FnOnce() -> Ret) -> Ret {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(ERROR_UNKNOWN)
}

/// Bits of a handle below the MIG slot: a MIG device's handle is `(slot + 1) << MIG_SHIFT | (parent + 1)`.
const MIG_SHIFT: usize = 16;

fn handle_index(h: Handle) -> Option<usize> {
    (h.addr() >> MIG_SHIFT == 0).then(|| h.addr().checked_sub(1)).flatten()
}

/// `(parent index, slot)` of a MIG device handle.
fn mig_handle(h: Handle) -> Option<(usize, usize)> {
    let a = h.addr();
    let slot = (a >> MIG_SHIFT).checked_sub(1)?;
    Some(((a & ((1 << MIG_SHIFT) - 1)).checked_sub(1)?, slot))
}

fn make_mig_handle(index: usize, slot: usize) -> Handle {
    std::ptr::without_provenance_mut(((slot + 1) << MIG_SHIFT) | (index + 1))
}

fn make_handle(index: usize) -> Handle {
    std::ptr::without_provenance_mut(index + 1)
}

fn status(r: Result<(), Ret>) -> Ret {
    match r {
        Ok(()) => SUCCESS,
        Err(code) => code,
    }
}

/// Common path of every call taking a device handle: logs, checks init, the
/// handle, `args_ok` (null out-pointers / invalid enum arguments) and the
/// lost state, sleeps `delay_ms` (without holding the lock), then runs `f`.
fn device_call(
    name: &'static str,
    handle: Handle,
    args_ok: bool,
    f: impl FnOnce(&mut Device) -> Result<(), Ret>,
) -> Ret {
    device_state_call(name, handle, args_ok, |state, i| f(&mut state.devices[i]))
}

/// [`device_call`] for calls that also need the rest of the state (GPM
/// samples, event sets): `f` gets the state and the (valid) device index.
fn device_state_call(
    name: &'static str,
    handle: Handle,
    args_ok: bool,
    f: impl FnOnce(&mut State, usize) -> Result<(), Ret>,
) -> Ret {
    guard(|| {
        log_call(name, handle_index(handle));
        let mut g = lock();
        let delay = {
            let Some(state) = g.as_mut() else {
                return ERROR_UNINITIALIZED;
            };
            let Some(dev) = handle_index(handle).and_then(|i| state.devices.get(i)) else {
                return ERROR_INVALID_ARGUMENT;
            };
            if !args_ok {
                return ERROR_INVALID_ARGUMENT;
            }
            if dev.is_lost() {
                return ERROR_GPU_IS_LOST;
            }
            dev.delay_ms
        };
        if delay > 0 {
            drop(g);
            std::thread::sleep(Duration::from_millis(delay));
            g = lock();
        }
        let Some(state) = g.as_mut() else {
            return ERROR_UNINITIALIZED;
        };
        let Some(index) = handle_index(handle).filter(|i| *i < state.devices.len()) else {
            return ERROR_INVALID_ARGUMENT;
        };
        if state.devices[index].is_lost() {
            return ERROR_GPU_IS_LOST;
        }
        status(f(state, index))
    })
}

/// [`device_call`] for calls that also answer on a MIG device handle: `f` gets the parent and,
/// for a MIG handle, its MIG device in the current layout (`NOT_FOUND` once it is gone).
fn mig_aware_call(
    name: &'static str,
    handle: Handle,
    args_ok: bool,
    f: impl FnOnce(&mut Device, Option<&Mig>) -> Result<(), Ret>,
) -> Ret {
    let Some((parent, slot)) = mig_handle(handle) else {
        return device_call(name, handle, args_ok, |d| f(d, None));
    };
    device_call(name, make_handle(parent), args_ok, |d| {
        let m = d.mig_device(slot)?;
        f(d, Some(&m))
    })
}

/// Common path of calls that take no device handle but change the state
/// (GPM samples, event sets).
fn state_call(
    name: &'static str,
    args_ok: bool,
    f: impl FnOnce(&mut State) -> Result<(), Ret>,
) -> Ret {
    guard(|| {
        log_call(name, None);
        let mut g = lock();
        let Some(state) = g.as_mut() else {
            return ERROR_UNINITIALIZED;
        };
        if !args_ok {
            return ERROR_INVALID_ARGUMENT;
        }
        status(f(state))
    })
}

/// Common path of the `nvmlSystem*` calls.
fn system_call(
    name: &'static str,
    args_ok: bool,
    f: impl FnOnce(&State) -> Result<(), Ret>,
) -> Ret {
    guard(|| {
        log_call(name, None);
        let g = lock();
        let Some(state) = g.as_ref() else {
            return ERROR_UNINITIALIZED;
        };
        if !args_ok {
            return ERROR_INVALID_ARGUMENT;
        }
        status(f(state))
    })
}

/// Copies `s` plus a NUL into `buf` of `len` bytes.
unsafe fn write_str(buf: *mut c_char, len: c_uint, s: &str) -> Result<(), Ret> {
    let bytes = s.as_bytes();
    if bytes.len() + 1 > len as usize {
        return Err(ERROR_INSUFFICIENT_SIZE);
    }
    // SAFETY: the caller provides `len` writable bytes at `buf`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), buf, bytes.len());
        buf.add(bytes.len()).write(0);
    }
    Ok(())
}

fn fill_c_array<const N: usize>(s: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    for (dst, src) in out.iter_mut().zip(s.bytes().take(N - 1)) {
        *dst = src as c_char;
    }
    out
}

/// The in/out `infoCount` protocol of the running-processes calls.
unsafe fn write_procs(
    count: *mut c_uint,
    infos: *mut ProcessInfo,
    procs: &[Proc],
) -> Result<(), Ret> {
    let n = procs.len();
    // SAFETY: `count` was checked to be non-null by the caller.
    let cap = unsafe { count.read() } as usize;
    if cap < n {
        // SAFETY: as above.
        unsafe { count.write(n as c_uint) };
        return Err(ERROR_INSUFFICIENT_SIZE);
    }
    if n > 0 && infos.is_null() {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    for (k, p) in procs.iter().enumerate() {
        let info = ProcessInfo {
            pid: p.pid,
            used_gpu_memory: p.used.unwrap_or(VALUE_NOT_AVAILABLE_U64),
            gpu_instance_id: NO_INSTANCE,
            compute_instance_id: NO_INSTANCE,
        };
        // SAFETY: the caller provides `cap >= n` entries at `infos`.
        unsafe { infos.add(k).write(info) };
    }
    // SAFETY: `count` is non-null.
    unsafe { count.write(n as c_uint) };
    Ok(())
}

fn running_processes(
    name: &'static str,
    device: Handle,
    count: *mut c_uint,
    infos: *mut ProcessInfo,
    graphics: bool,
) -> Ret {
    mig_aware_call(name, device, !count.is_null(), |d, m| {
        let procs = match m {
            Some(m) if !graphics => m.procs.clone(),
            Some(_) => Vec::new(),
            None => d.processes(graphics)?,
        };
        // SAFETY: `count` is non-null; `infos` is checked against `count`.
        unsafe { write_procs(count, infos, &procs) }
    })
}

/// A device getter returning one scalar from one sequence.
fn scalar<T>(
    name: &'static str,
    device: Handle,
    out: *mut T,
    cursor: &'static str,
    key: &'static str,
    conv: impl FnOnce(Num) -> T,
) -> Ret {
    device_call(name, device, !out.is_null(), |d| {
        let v = d.next(cursor, key)?;
        // SAFETY: `out` is non-null.
        unsafe { out.write(conv(v)) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Init / shutdown / errors
// ---------------------------------------------------------------------------

fn init(name: &'static str) -> Ret {
    guard(|| {
        log_call(name, None);
        let mut g = lock();
        if let Some(state) = g.as_mut() {
            // Nested init: like real NVML, just count it.
            state.refcount += 1;
            return SUCCESS;
        }
        match load_scenario() {
            Ok(sc) => {
                if sc.global.init != SUCCESS {
                    return sc.global.init;
                }
                *g = Some(State::new(sc));
                set_log_path(Some(log_path_from_env()));
                SUCCESS
            }
            Err(LoadError::Unset) => ERROR_DRIVER_NOT_LOADED,
            Err(LoadError::Bad(msg)) => {
                stderr_line(&msg);
                ERROR_DRIVER_NOT_LOADED
            }
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlInit_v2() -> Ret {
    init("nvmlInit_v2")
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlInitWithFlags(_flags: c_uint) -> Ret {
    init("nvmlInitWithFlags")
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlShutdown() -> Ret {
    guard(|| {
        log_call("nvmlShutdown", None);
        let mut g = lock();
        let Some(state) = g.as_mut() else {
            return ERROR_UNINITIALIZED;
        };
        state.refcount = state.refcount.saturating_sub(1);
        if state.refcount == 0 {
            *g = None;
            set_log_path(None);
            // Wake event waiters: they now return UNINITIALIZED.
            events_changed();
        }
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlErrorString(result: Ret) -> *const c_char {
    catch_unwind(|| {
        log_call("nvmlErrorString", None);
        let msg = ERRORS
            .iter()
            .find(|(code, _, _)| *code == result)
            .map_or(c"Unknown Error", |(_, _, msg)| msg);
        msg.as_ptr()
    })
    .unwrap_or(c"Unknown Error".as_ptr())
}

// ---------------------------------------------------------------------------
// System queries
// ---------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetDriverVersion(version: *mut c_char, length: c_uint) -> Ret {
    system_call("nvmlSystemGetDriverVersion", !version.is_null(), |s| {
        let v = s.global.driver_version.clone()?;
        // SAFETY: caller provides `length` bytes.
        unsafe { write_str(version, length, &v) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetNVMLVersion(version: *mut c_char, length: c_uint) -> Ret {
    system_call("nvmlSystemGetNVMLVersion", !version.is_null(), |s| {
        let v = s.global.nvml_version.clone()?;
        // SAFETY: caller provides `length` bytes.
        unsafe { write_str(version, length, &v) }
    })
}

fn cuda_version(name: &'static str, out: *mut c_int) -> Ret {
    system_call(name, !out.is_null(), |s| {
        let v = s.global.cuda_version?;
        // SAFETY: `out` is non-null.
        unsafe { out.write(v) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion(cuda_driver_version: *mut c_int) -> Ret {
    cuda_version("nvmlSystemGetCudaDriverVersion", cuda_driver_version)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion_v2(cuda_driver_version: *mut c_int) -> Ret {
    cuda_version("nvmlSystemGetCudaDriverVersion_v2", cuda_driver_version)
}

// ---------------------------------------------------------------------------
// Device enumeration and identity
// ---------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCount_v2(device_count: *mut c_uint) -> Ret {
    system_call("nvmlDeviceGetCount_v2", !device_count.is_null(), |s| {
        // SAFETY: non-null.
        unsafe { device_count.write(s.devices.len() as c_uint) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(index: c_uint, device: *mut Handle) -> Ret {
    guard(|| {
        log_call("nvmlDeviceGetHandleByIndex_v2", Some(index as usize));
        let g = lock();
        let Some(state) = g.as_ref() else {
            return ERROR_UNINITIALIZED;
        };
        if device.is_null() {
            return ERROR_INVALID_ARGUMENT;
        }
        let Some(dev) = state.devices.get(index as usize) else {
            return ERROR_INVALID_ARGUMENT;
        };
        if dev.is_lost() {
            return ERROR_GPU_IS_LOST;
        }
        // SAFETY: non-null.
        unsafe { device.write(make_handle(index as usize)) };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetHandleByUUID(
    uuid: *const c_char,
    device: *mut Handle,
) -> Ret {
    guard(|| {
        let g = lock();
        let found = if uuid.is_null() {
            None
        } else {
            // SAFETY: non-null, NUL-terminated per the NVML contract.
            let wanted = unsafe { CStr::from_ptr(uuid) }.to_string_lossy().into_owned();
            g.as_ref()
                .and_then(|s| s.devices.iter().position(|d| d.uuid().is_ok_and(|u| u == wanted)))
        };
        log_call("nvmlDeviceGetHandleByUUID", found);
        let Some(state) = g.as_ref() else {
            return ERROR_UNINITIALIZED;
        };
        if uuid.is_null() || device.is_null() {
            return ERROR_INVALID_ARGUMENT;
        }
        let Some(index) = found else {
            return ERROR_NOT_FOUND;
        };
        if state.devices[index].is_lost() {
            return ERROR_GPU_IS_LOST;
        }
        // SAFETY: non-null.
        unsafe { device.write(make_handle(index)) };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetIndex(device: Handle, index: *mut c_uint) -> Ret {
    device_call("nvmlDeviceGetIndex", device, !index.is_null(), |d| {
        // SAFETY: non-null.
        unsafe { index.write(d.index as c_uint) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetName(
    device: Handle,
    name: *mut c_char,
    length: c_uint,
) -> Ret {
    mig_aware_call("nvmlDeviceGetName", device, !name.is_null(), |d, m| {
        let v = match m {
            Some(m) => format!("{} MIG {}", d.name()?, m.profile),
            None => d.name()?,
        };
        // SAFETY: caller provides `length` bytes.
        unsafe { write_str(name, length, &v) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetUUID(
    device: Handle,
    uuid: *mut c_char,
    length: c_uint,
) -> Ret {
    mig_aware_call("nvmlDeviceGetUUID", device, !uuid.is_null(), |d, m| {
        let v = match m {
            Some(m) => m.uuid.clone().unwrap_or_default(),
            None => d.uuid()?,
        };
        // SAFETY: caller provides `length` bytes.
        unsafe { write_str(uuid, length, &v) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v3(device: Handle, pci: *mut PciInfo) -> Ret {
    device_call("nvmlDeviceGetPciInfo_v3", device, !pci.is_null(), |d| {
        let p = d.pci()?;
        let info = PciInfo {
            bus_id_legacy: fill_c_array(&p.legacy),
            domain: p.domain,
            bus: p.bus,
            device: p.device,
            pci_device_id: 0x2330_10DE,
            pci_sub_system_id: 0x16C1_10DE,
            bus_id: fill_c_array(&p.bus_id),
        };
        // SAFETY: non-null.
        unsafe { pci.write(info) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Device metrics
// ---------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetUtilizationRates(
    device: Handle,
    utilization: *mut Utilization,
) -> Ret {
    device_call("nvmlDeviceGetUtilizationRates", device, !utilization.is_null(), |d| {
        d.util_reads += 1;
        // The utilization read count is the device tick that events follow.
        events_changed();
        if !d.has("utilization.gpu") || d.mig_current() == Some(1) {
            return Err(ERROR_NOT_SUPPORTED);
        }
        let i = d.tick("utilization");
        let gpu = d.at("utilization.gpu", i).unwrap_or(Err(ERROR_NOT_SUPPORTED))?;
        let memory = d.at("utilization.memory", i).unwrap_or(Ok(Num::Int(0)))?;
        let u = Utilization { gpu: gpu.as_u32(), memory: memory.as_u32() };
        // SAFETY: non-null.
        unsafe { utilization.write(u) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo_v2(device: Handle, memory: *mut MemoryV2) -> Ret {
    mig_aware_call("nvmlDeviceGetMemoryInfo_v2", device, !memory.is_null(), |d, m| {
        // SAFETY: non-null; only the version field is read.
        let version = unsafe { (&raw const (*memory).version).read() };
        if version != MEMORY_V2_VERSION {
            return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
        }
        let (total, reserved, free, used) = match m {
            Some(m) => mig_memory(m),
            None => d.memory("memory_v2")?,
        };
        let m = MemoryV2 { version, total, reserved, free, used };
        // SAFETY: non-null.
        unsafe { memory.write(m) };
        Ok(())
    })
}

/// `(total, reserved, free, used)` in bytes of a MIG device.
fn mig_memory(m: &Mig) -> (u64, u64, u64, u64) {
    let (total, used) = (m.total_mib * MIB, m.used_mib * MIB);
    (total, 0, total.saturating_sub(used), used)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo(device: Handle, memory: *mut Memory) -> Ret {
    mig_aware_call("nvmlDeviceGetMemoryInfo", device, !memory.is_null(), |d, m| {
        let (total, reserved, free, used) = match m {
            Some(m) => mig_memory(m),
            None => d.memory("memory_v1")?,
        };
        // v1 reports reserved memory as used.
        let m = Memory { total, free, used: used.saturating_add(reserved) };
        // SAFETY: non-null.
        unsafe { memory.write(m) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTemperature(
    device: Handle,
    sensor_type: c_uint,
    temp: *mut c_uint,
) -> Ret {
    device_call("nvmlDeviceGetTemperature", device, !temp.is_null() && sensor_type == 0, |d| {
        let v = d.next("temperature", "temperature.gpu")?;
        // SAFETY: non-null.
        unsafe { temp.write(v.as_u32()) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerUsage(device: Handle, power: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetPowerUsage", device, power, "power", "power.draw", |n| {
        c_uint::try_from(n.scaled(1000)).unwrap_or(c_uint::MAX)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetEnforcedPowerLimit(
    device: Handle,
    limit: *mut c_uint,
) -> Ret {
    scalar(
        "nvmlDeviceGetEnforcedPowerLimit",
        device,
        limit,
        "enforced_power_limit",
        "power.limit",
        |n| c_uint::try_from(n.scaled(1000)).unwrap_or(c_uint::MAX),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerManagementLimit(
    device: Handle,
    limit: *mut c_uint,
) -> Ret {
    scalar(
        "nvmlDeviceGetPowerManagementLimit",
        device,
        limit,
        "power_management_limit",
        "power.limit",
        |n| c_uint::try_from(n.scaled(1000)).unwrap_or(c_uint::MAX),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTotalEnergyConsumption(
    device: Handle,
    energy: *mut c_ulonglong,
) -> Ret {
    device_call("nvmlDeviceGetTotalEnergyConsumption", device, !energy.is_null(), |d| {
        let mj = d.energy()?;
        // SAFETY: non-null.
        unsafe { energy.write(mj) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetClockInfo(
    device: Handle,
    type_: c_uint,
    clock: *mut c_uint,
) -> Ret {
    let cursor = match type_ {
        0 => "clock_graphics",
        1 => "clock_sm",
        2 => "clock_mem",
        3 => "clock_video",
        _ => "",
    };
    device_call("nvmlDeviceGetClockInfo", device, !clock.is_null() && !cursor.is_empty(), |d| {
        let key = match type_ {
            0 if d.has("clocks.gr") => "clocks.gr",
            0 | 1 => "clocks.sm",
            2 => "clocks.mem",
            _ => "clocks.video",
        };
        let v = d.next(cursor, key)?;
        // SAFETY: non-null.
        unsafe { clock.write(v.as_u32()) };
        Ok(())
    })
}

/// `nvmlFieldValue_t` (nvml.h).
#[repr(C)]
pub struct FieldValue {
    field_id: c_uint,
    scope_id: c_uint,
    timestamp: i64,
    latency_usec: i64,
    value_type: c_uint,
    nvml_return: c_uint,
    value: u64,
}

/// Field values: `NVML_FI_DEV_MEMORY_TEMP` (82, key `temperature.memory`, C),
/// `NVML_FI_DEV_POWER_AVERAGE` (185, key `power.draw.average`) and `NVML_FI_DEV_POWER_INSTANT` (186,
/// key `power.draw.instant`), W -> mW; every other id, and a key the scenario lacks, answers
/// NOT_SUPPORTED in that value's own return code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetFieldValues(
    device: Handle,
    count: c_int,
    values: *mut FieldValue,
) -> Ret {
    device_call("nvmlDeviceGetFieldValues", device, !values.is_null() && count > 0, |d| {
        for k in 0..usize::try_from(count).unwrap_or(0) {
            // SAFETY: the caller passes `count` values.
            let fv = unsafe { &mut *values.add(k) };
            let got = match fv.field_id {
                82 => d.next("temp_mem", "temperature.memory").map(Num::as_u32),
                185 => d
                    .next("power_average", "power.draw.average")
                    .map(|n| c_uint::try_from(n.scaled(1000)).unwrap_or(c_uint::MAX)),
                186 => d
                    .next("power_instant", "power.draw.instant")
                    .map(|n| c_uint::try_from(n.scaled(1000)).unwrap_or(c_uint::MAX)),
                _ => Err(ERROR_NOT_SUPPORTED),
            };
            match got {
                Ok(v) => {
                    fv.value_type = 1; // NVML_VALUE_TYPE_UNSIGNED_INT
                    fv.value = u64::from(v);
                    fv.nvml_return = 0;
                }
                Err(e) => fv.nvml_return = e,
            }
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxClockInfo(
    device: Handle,
    type_: c_uint,
    clock: *mut c_uint,
) -> Ret {
    let (cursor, key) = match type_ {
        0 => ("clock_max_gr", "clocks.max.graphics"),
        1 => ("clock_max_sm", "clocks.max.sm"),
        2 => ("clock_max_mem", "clocks.max.memory"),
        _ => ("", ""),
    };
    device_call("nvmlDeviceGetMaxClockInfo", device, !clock.is_null() && !cursor.is_empty(), |d| {
        let v = d.next(cursor, key)?;
        // SAFETY: non-null.
        unsafe { clock.write(v.as_u32()) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetFanSpeed(device: Handle, speed: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetFanSpeed", device, speed, "fan", "fan.speed", Num::as_u32)
}

/// The cursors of the first fans (`fan{N}`), named without formatting on every call.
const FAN_CURSORS: [&str; 4] = ["fan0", "fan1", "fan2", "fan3"];

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetFanSpeed_v2(
    device: Handle,
    fan: c_uint,
    speed: *mut c_uint,
) -> Ret {
    device_call("nvmlDeviceGetFanSpeed_v2", device, !speed.is_null(), |d| {
        let num_fans = d
            .num
            .get("num_fans")
            .and_then(|s| s.iter().find_map(|e| e.ok()))
            .map_or(1, Num::as_u64);
        if u64::from(fan) >= num_fans {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let v = match FAN_CURSORS.get(fan as usize) {
            Some(cursor) => d.next(cursor, "fan.speed")?,
            None => d.next(&format!("fan{fan}"), "fan.speed")?,
        };
        // SAFETY: non-null.
        unsafe { speed.write(v.as_u32()) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNumFans(device: Handle, num_fans: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetNumFans", device, num_fans, "num_fans", "num_fans", Num::as_u32)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPerformanceState(
    device: Handle,
    p_state: *mut c_uint,
) -> Ret {
    scalar("nvmlDeviceGetPerformanceState", device, p_state, "pstate", "pstate", Num::as_u32)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetArchitecture(device: Handle, arch: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetArchitecture", device, arch, "architecture", "architecture", Num::as_u32)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrentClocksThrottleReasons(
    device: Handle,
    clocks_throttle_reasons: *mut c_ulonglong,
) -> Ret {
    scalar(
        "nvmlDeviceGetCurrentClocksThrottleReasons",
        device,
        clocks_throttle_reasons,
        "clocks_throttle_reasons",
        "clocks_event_reasons.active",
        Num::as_u64,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrentClocksEventReasons(
    device: Handle,
    clocks_event_reasons: *mut c_ulonglong,
) -> Ret {
    scalar(
        "nvmlDeviceGetCurrentClocksEventReasons",
        device,
        clocks_event_reasons,
        "clocks_event_reasons",
        "clocks_event_reasons.active",
        Num::as_u64,
    )
}

fn codec_utilization(
    name: &'static str,
    device: Handle,
    utilization: *mut c_uint,
    sampling_period_us: *mut c_uint,
    key: &'static str,
) -> Ret {
    device_call(name, device, !utilization.is_null() && !sampling_period_us.is_null(), |d| {
        let v = d.next(key, key)?;
        // SAFETY: both non-null.
        unsafe {
            utilization.write(v.as_u32());
            sampling_period_us.write(CODEC_SAMPLING_PERIOD_US);
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetEncoderUtilization(
    device: Handle,
    utilization: *mut c_uint,
    sampling_period_us: *mut c_uint,
) -> Ret {
    codec_utilization(
        "nvmlDeviceGetEncoderUtilization",
        device,
        utilization,
        sampling_period_us,
        "utilization.encoder",
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDecoderUtilization(
    device: Handle,
    utilization: *mut c_uint,
    sampling_period_us: *mut c_uint,
) -> Ret {
    codec_utilization(
        "nvmlDeviceGetDecoderUtilization",
        device,
        utilization,
        sampling_period_us,
        "utilization.decoder",
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPcieThroughput(
    device: Handle,
    counter: c_uint,
    value: *mut c_uint,
) -> Ret {
    let key = match counter {
        0 => "pcie.tx",
        1 => "pcie.rx",
        _ => "",
    };
    one("nvmlDeviceGetPcieThroughput", device, value, key)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTotalEccErrors(
    device: Handle,
    error_type: c_uint,
    counter_type: c_uint,
    ecc_counts: *mut c_ulonglong,
) -> Ret {
    let key = match (error_type, counter_type) {
        (0, 0) => "ecc.errors.corrected.volatile.total",
        (1, 0) => "ecc.errors.uncorrected.volatile.total",
        (0, 1) => "ecc.errors.corrected.aggregate.total",
        (1, 1) => "ecc.errors.uncorrected.aggregate.total",
        _ => "",
    };
    device_call(
        "nvmlDeviceGetTotalEccErrors",
        device,
        !ecc_counts.is_null() && !key.is_empty(),
        |d| {
            let v = d.next(key, key)?;
            // SAFETY: non-null.
            unsafe { ecc_counts.write(v.as_u64()) };
            Ok(())
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPersistenceMode(device: Handle, mode: *mut c_uint) -> Ret {
    scalar(
        "nvmlDeviceGetPersistenceMode",
        device,
        mode,
        "persistence_mode",
        "persistence_mode",
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    device: Handle,
    current_mode: *mut c_uint,
    pending_mode: *mut c_uint,
) -> Ret {
    device_call(
        "nvmlDeviceGetMigMode",
        device,
        !current_mode.is_null() && !pending_mode.is_null(),
        |d| {
            let v = if d.has("mig_mode") || d.mig.is_none() {
                d.next("mig_mode", "mig_mode")?.as_u32()
            } else {
                1
            };
            let pending = d.mig_pending.unwrap_or(v);
            // SAFETY: both non-null.
            unsafe {
                current_mode.write(v);
                pending_mode.write(pending);
            }
            Ok(())
        },
    )
}

/// Most MIG devices a GPU can hold (7), on a GPU with a `mig` layout.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxMigDeviceCount(device: Handle, count: *mut c_uint) -> Ret {
    device_call("nvmlDeviceGetMaxMigDeviceCount", device, !count.is_null(), |d| {
        if d.mig.is_none() {
            return Err(ERROR_NOT_SUPPORTED);
        }
        // SAFETY: non-null.
        unsafe { count.write(7) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigDeviceHandleByIndex(
    device: Handle,
    index: c_uint,
    mig: *mut Handle,
) -> Ret {
    device_call("nvmlDeviceGetMigDeviceHandleByIndex", device, !mig.is_null(), |d| {
        if d.mig.is_none() {
            return Err(ERROR_NOT_SUPPORTED);
        }
        d.mig_device(index as usize)?;
        // SAFETY: non-null.
        unsafe { mig.write(make_mig_handle(d.index, index as usize)) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceIsMigDeviceHandle(device: Handle, is_mig: *mut c_uint) -> Ret {
    mig_aware_call("nvmlDeviceIsMigDeviceHandle", device, !is_mig.is_null(), |_, m| {
        // SAFETY: non-null.
        unsafe { is_mig.write(c_uint::from(m.is_some())) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGpuInstanceId(device: Handle, id: *mut c_uint) -> Ret {
    mig_aware_call("nvmlDeviceGetGpuInstanceId", device, !id.is_null(), |_, m| {
        let m = m.ok_or(ERROR_NOT_SUPPORTED)?;
        // SAFETY: non-null.
        unsafe { id.write(m.gi) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeInstanceId(device: Handle, id: *mut c_uint) -> Ret {
    mig_aware_call("nvmlDeviceGetComputeInstanceId", device, !id.is_null(), |_, m| {
        let m = m.ok_or(ERROR_NOT_SUPPORTED)?;
        // SAFETY: non-null.
        unsafe { id.write(m.ci) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDeviceHandleFromMigDeviceHandle(
    device: Handle,
    parent: *mut Handle,
) -> Ret {
    mig_aware_call(
        "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
        device,
        !parent.is_null(),
        |d, m| {
            m.ok_or(ERROR_INVALID_ARGUMENT)?;
            // SAFETY: non-null.
            unsafe { parent.write(make_handle(d.index)) };
            Ok(())
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v3(
    device: Handle,
    info_count: *mut c_uint,
    infos: *mut ProcessInfo,
) -> Ret {
    running_processes("nvmlDeviceGetComputeRunningProcesses_v3", device, info_count, infos, false)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v2(
    device: Handle,
    info_count: *mut c_uint,
    infos: *mut ProcessInfo,
) -> Ret {
    running_processes("nvmlDeviceGetComputeRunningProcesses_v2", device, info_count, infos, false)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGraphicsRunningProcesses_v3(
    device: Handle,
    info_count: *mut c_uint,
    infos: *mut ProcessInfo,
) -> Ret {
    running_processes("nvmlDeviceGetGraphicsRunningProcesses_v3", device, info_count, infos, true)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGraphicsRunningProcesses_v2(
    device: Handle,
    info_count: *mut c_uint,
    infos: *mut ProcessInfo,
) -> Ret {
    running_processes("nvmlDeviceGetGraphicsRunningProcesses_v2", device, info_count, infos, true)
}

// ---------------------------------------------------------------------------
// GPM (Hopper+ GPU performance monitoring)
// ---------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmQueryDeviceSupport(
    device: Handle,
    gpm_support: *mut GpmSupport,
) -> Ret {
    device_call("nvmlGpmQueryDeviceSupport", device, !gpm_support.is_null(), |d| {
        // SAFETY: non-null; only the version field is read.
        let version = unsafe { (&raw const (*gpm_support).version).read() };
        if version != GPM_SUPPORT_VERSION {
            return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
        }
        let supported = d.gpm_supported()?;
        // SAFETY: non-null.
        unsafe {
            gpm_support.write(GpmSupport { version, is_supported_device: c_uint::from(supported) })
        };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmSampleAlloc(gpm_sample: *mut *mut c_void) -> Ret {
    state_call("nvmlGpmSampleAlloc", !gpm_sample.is_null(), |s| {
        let id = s.alloc_id();
        s.samples.insert(id, None);
        // SAFETY: non-null.
        unsafe { gpm_sample.write(std::ptr::without_provenance_mut(id)) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmSampleFree(gpm_sample: *mut c_void) -> Ret {
    state_call("nvmlGpmSampleFree", true, |s| {
        s.samples.remove(&gpm_sample.addr()).map(|_| ()).ok_or(ERROR_INVALID_ARGUMENT)
    })
}

/// Fills sample `id` for device `i` (or its MIG GPU instance `gi`) and moves
/// that GPM cursor on.
fn gpm_sample_get(s: &mut State, i: usize, gi: Option<u32>, id: usize) -> Result<(), Ret> {
    let slot = s.samples.get_mut(&id).ok_or(ERROR_INVALID_ARGUMENT)?;
    let d = &mut s.devices[i];
    if !d.gpm_supported()? {
        return Err(ERROR_NOT_SUPPORTED);
    }
    let cursor = match gi {
        None => "gpm".to_string(),
        Some(gi) => format!("gpm.mig{gi}"),
    };
    let tick = d.tick(&cursor);
    if let Some(&code) = d.gpm_fail_at.get(&tick) {
        *slot = None;
        return Err(code);
    }
    *slot = Some(GpmSampleData { device: i, gpu_instance: gi, tick });
    Ok(())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmSampleGet(device: Handle, gpm_sample: *mut c_void) -> Ret {
    device_state_call("nvmlGpmSampleGet", device, !gpm_sample.is_null(), |s, i| {
        gpm_sample_get(s, i, None, gpm_sample.addr())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmMigSampleGet(
    device: Handle,
    gpu_instance_id: c_uint,
    gpm_sample: *mut c_void,
) -> Ret {
    device_state_call("nvmlGpmMigSampleGet", device, !gpm_sample.is_null(), |s, i| {
        gpm_sample_get(s, i, Some(gpu_instance_id), gpm_sample.addr())
    })
}

/// Fills `req.metrics[..numMetrics]` with the values scripted for the tick of
/// sample 2.
/// The value the current MIG layout scripts for metric `id` of GPU instance `gi` (`gpm.KEY=V`).
fn mig_gpm(d: &Device, gi: Option<u32>, id: c_uint) -> Option<f64> {
    let gi = gi?;
    let layout = d.mig_layout().ok()?;
    let m = layout.iter().find(|m| m.gi == gi)?;
    m.gpm.iter().find(|(i, _)| *i == id).map(|(_, v)| *v)
}

fn gpm_metrics_get(
    state: &State,
    req: &mut GpmMetricsGet,
    s1: Option<GpmSampleData>,
    s2: Option<GpmSampleData>,
) -> Result<(), Ret> {
    if req.version != GPM_METRICS_GET_VERSION {
        return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
    }
    let (Some(s1), Some(s2)) = (s1, s2) else {
        return Err(ERROR_INVALID_ARGUMENT);
    };
    if s1.device != s2.device || s1.gpu_instance != s2.gpu_instance || s1.tick >= s2.tick {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    let n = req.num_metrics as usize;
    if n > GPM_METRIC_MAX {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    let d = &state.devices[s2.device];
    if d.is_lost() {
        return Err(ERROR_GPU_IS_LOST);
    }
    if let Some(&code) = d.gpm_metrics_fail_at.get(&s2.tick) {
        return Err(code);
    }
    for m in &mut req.metrics[..n] {
        let def = GPM_METRICS.iter().find(|g| g.id == m.metric_id);
        let (ret, value) = match def {
            _ if m.metric_id == 0 || m.metric_id as usize >= GPM_METRIC_MAX => {
                (ERROR_INVALID_ARGUMENT, 0.0)
            }
            Some(def) if mig_gpm(d, s2.gpu_instance, def.id).is_some() => {
                (SUCCESS, mig_gpm(d, s2.gpu_instance, def.id).unwrap_or_default())
            }
            Some(def) => match d.at(def.key, s2.tick) {
                Some(Ok(v)) => (SUCCESS, v.as_f64()),
                Some(Err(code)) => (code, 0.0),
                None => (ERROR_NOT_SUPPORTED, 0.0),
            },
            None => (ERROR_NOT_SUPPORTED, 0.0),
        };
        m.nvml_return = ret;
        m.value = value;
        // The strings are static; callers only read them.
        m.metric_info = match def {
            Some(def) => GpmMetricInfo {
                short_name: def.short.as_ptr().cast_mut(),
                long_name: def.long.as_ptr().cast_mut(),
                unit: def.unit.as_ptr().cast_mut(),
            },
            None => GpmMetricInfo {
                short_name: std::ptr::null_mut(),
                long_name: std::ptr::null_mut(),
                unit: std::ptr::null_mut(),
            },
        };
    }
    Ok(())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmMetricsGet(metrics_get: *mut GpmMetricsGet) -> Ret {
    const NAME: &str = "nvmlGpmMetricsGet";
    guard(|| {
        let mut g = lock();
        let Some(state) = g.as_mut() else {
            log_call(NAME, None);
            return ERROR_UNINITIALIZED;
        };
        if metrics_get.is_null() {
            log_call(NAME, None);
            return ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: non-null; the caller provides a whole `nvmlGpmMetricsGet_t`.
        let req = unsafe { &mut *metrics_get };
        let sample = |p: *mut c_void| state.samples.get(&p.addr()).copied().flatten();
        let (s1, s2) = (sample(req.sample1), sample(req.sample2));
        // Logged with sample 2's device.
        log_call(NAME, s2.map(|s| s.device));
        status(gpm_metrics_get(state, req, s1, s2))
    })
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetCreate(set: *mut *mut c_void) -> Ret {
    state_call("nvmlEventSetCreate", !set.is_null(), |s| {
        let id = s.alloc_id();
        s.event_sets.insert(id, EventSet::default());
        // SAFETY: non-null.
        unsafe { set.write(std::ptr::without_provenance_mut(id)) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetFree(set: *mut c_void) -> Ret {
    state_call("nvmlEventSetFree", true, |s| {
        s.event_sets.remove(&set.addr()).ok_or(ERROR_INVALID_ARGUMENT)?;
        // A waiter on this set now returns INVALID_ARGUMENT.
        events_changed();
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSupportedEventTypes(
    device: Handle,
    event_types: *mut c_ulonglong,
) -> Ret {
    device_call("nvmlDeviceGetSupportedEventTypes", device, !event_types.is_null(), |d| {
        let mask = d.events_supported()?;
        // SAFETY: non-null.
        unsafe { event_types.write(mask) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceRegisterEvents(
    device: Handle,
    event_types: c_ulonglong,
    set: *mut c_void,
) -> Ret {
    device_state_call("nvmlDeviceRegisterEvents", device, true, |s, i| {
        let es = s.event_sets.get_mut(&set.addr()).ok_or(ERROR_INVALID_ARGUMENT)?;
        let supported = s.devices[i].events_supported()?;
        if event_types & !supported != 0 {
            return Err(ERROR_NOT_SUPPORTED);
        }
        *es.regs.entry(i).or_insert(0) |= event_types;
        events_changed();
        Ok(())
    })
}

/// Delivers the earliest due, undelivered event of `set`, or waits on
/// [`EVENTS_CHANGED`] (lock released) until one is due or `timeout_ms` passed.
fn event_wait(
    name: &'static str,
    set: *mut c_void,
    data: *mut EventData,
    timeout_ms: c_uint,
) -> Ret {
    guard(|| {
        log_call(name, None);
        let deadline = Instant::now() + Duration::from_millis(u64::from(timeout_ms));
        let mut g = lock();
        loop {
            let Some(state) = g.as_mut() else {
                return ERROR_UNINITIALIZED;
            };
            if data.is_null() {
                return ERROR_INVALID_ARGUMENT;
            }
            let now = Instant::now();
            let next_wall = match state.take_due_event(set.addr(), now) {
                Err(code) => return code,
                Ok(Ok(ev)) => {
                    // SAFETY: non-null.
                    unsafe { data.write(ev) };
                    return SUCCESS;
                }
                Ok(Err(next_wall)) => next_wall,
            };
            if now >= deadline {
                return ERROR_TIMEOUT;
            }
            let mut wait = deadline - now;
            if let Some(at) = next_wall {
                wait = wait.min(at.saturating_duration_since(now));
            }
            EVENT_WAITERS.fetch_add(1, Ordering::SeqCst);
            g = match EVENTS_CHANGED.wait_timeout(g, wait) {
                Ok((g, _)) => g,
                Err(poisoned) => poisoned.into_inner().0,
            };
            EVENT_WAITERS.fetch_sub(1, Ordering::SeqCst);
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetWait_v2(
    set: *mut c_void,
    data: *mut EventData,
    timeoutms: c_uint,
) -> Ret {
    event_wait("nvmlEventSetWait_v2", set, data, timeoutms)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetWait(
    set: *mut c_void,
    data: *mut EventData,
    timeoutms: c_uint,
) -> Ret {
    event_wait("nvmlEventSetWait", set, data, timeoutms)
}

// ---------------------------------------------------------------------------
// Per-process utilization, remapped rows, retired pages
// ---------------------------------------------------------------------------

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The in/out count protocol of `nvmlDeviceGetProcessUtilization`, keeping
/// samples newer than `last_seen`; none left = `NOT_FOUND`.
unsafe fn write_proc_util(
    count: *mut c_uint,
    out: *mut ProcessUtilizationSample,
    procs: &[ProcUtil],
    last_seen: u64,
) -> Result<(), Ret> {
    let now = now_us();
    let samples: Vec<ProcessUtilizationSample> = procs
        .iter()
        .map(|p| ProcessUtilizationSample {
            pid: p.pid,
            time_stamp: p.ts.unwrap_or(now),
            sm_util: p.sm,
            mem_util: p.mem,
            enc_util: p.enc,
            dec_util: p.dec,
        })
        .filter(|s| s.time_stamp > last_seen)
        .collect();
    let n = samples.len();
    if n == 0 {
        // SAFETY: `count` was checked to be non-null by the caller.
        unsafe { count.write(0) };
        return Err(ERROR_NOT_FOUND);
    }
    // SAFETY: as above.
    let cap = unsafe { count.read() } as usize;
    if cap < n {
        // SAFETY: as above.
        unsafe { count.write(n as c_uint) };
        return Err(ERROR_INSUFFICIENT_SIZE);
    }
    if out.is_null() {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    for (k, s) in samples.into_iter().enumerate() {
        // SAFETY: the caller provides `cap >= n` entries at `out`.
        unsafe { out.add(k).write(s) };
    }
    // SAFETY: `count` is non-null.
    unsafe { count.write(n as c_uint) };
    Ok(())
}

/// Whether a per-tick list call moves its cursor on: every call except a size
/// query (`INSUFFICIENT_SIZE`) or a bad buffer (`INVALID_ARGUMENT`).
fn consumes_tick(res: Result<(), Ret>) -> bool {
    !matches!(res, Err(ERROR_INSUFFICIENT_SIZE | ERROR_INVALID_ARGUMENT))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetProcessUtilization(
    device: Handle,
    utilization: *mut ProcessUtilizationSample,
    process_samples_count: *mut c_uint,
    last_seen_time_stamp: c_ulonglong,
) -> Ret {
    device_call("nvmlDeviceGetProcessUtilization", device, !process_samples_count.is_null(), |d| {
        let Some(lists) = &d.process_util else {
            return Err(ERROR_NOT_SUPPORTED);
        };
        let res = tick_list(lists, d.peek("process_util")).and_then(|procs| {
            // SAFETY: the count is non-null; the buffer is checked against it.
            unsafe {
                write_proc_util(process_samples_count, utilization, &procs, last_seen_time_stamp)
            }
        });
        if consumes_tick(res) {
            d.tick("process_util");
        }
        res
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRemappedRows(
    device: Handle,
    corr_rows: *mut c_uint,
    unc_rows: *mut c_uint,
    is_pending: *mut c_uint,
    failure_occurred: *mut c_uint,
) -> Ret {
    let args_ok = !corr_rows.is_null()
        && !unc_rows.is_null()
        && !is_pending.is_null()
        && !failure_occurred.is_null();
    device_call("nvmlDeviceGetRemappedRows", device, args_ok, |d| {
        if !d.has("remapped_rows.correctable") && !d.has("remapped_rows.uncorrectable") {
            return Err(ERROR_NOT_SUPPORTED);
        }
        let i = d.tick("remapped_rows");
        let get = |key| d.at(key, i).unwrap_or(Ok(Num::Int(0))).map(Num::as_u32);
        let corr = get("remapped_rows.correctable")?;
        let unc = get("remapped_rows.uncorrectable")?;
        let pending = get("remapped_rows.pending")?;
        let failure = get("remapped_rows.failure")?;
        // SAFETY: all four non-null.
        unsafe {
            corr_rows.write(corr);
            unc_rows.write(unc);
            is_pending.write(pending);
            failure_occurred.write(failure);
        }
        Ok(())
    })
}

/// Cursor (and scenario key) of each `nvmlPageRetirementCause_t`.
const RETIRED_PAGES_KEYS: [&str; 2] = ["retired_pages.single_bit_ecc", "retired_pages.double_bit"];

/// The in/out `pageCount` protocol of the retired-pages calls.
unsafe fn write_pages(
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
    timestamps: Option<*mut c_ulonglong>,
    pages: &[Page],
) -> Result<(), Ret> {
    let n = pages.len();
    // SAFETY: `count` was checked to be non-null by the caller.
    let cap = unsafe { count.read() } as usize;
    if cap < n {
        // SAFETY: as above.
        unsafe { count.write(n as c_uint) };
        return Err(ERROR_INSUFFICIENT_SIZE);
    }
    if n > 0 && (addresses.is_null() || timestamps.is_some_and(|t| t.is_null())) {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    for (k, p) in pages.iter().enumerate() {
        // SAFETY: the caller provides `cap >= n` entries in each array.
        unsafe {
            addresses.add(k).write(p.address);
            if let Some(ts) = timestamps {
                ts.add(k).write(p.timestamp);
            }
        }
    }
    // SAFETY: `count` is non-null.
    unsafe { count.write(n as c_uint) };
    Ok(())
}

fn retired_pages(
    name: &'static str,
    device: Handle,
    cause: c_uint,
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
    timestamps: Option<*mut c_ulonglong>,
) -> Ret {
    let cause = cause as usize;
    device_call(name, device, !count.is_null() && cause < RETIRED_PAGES_KEYS.len(), |d| {
        if d.retired_pages.iter().all(Option::is_none) {
            return Err(ERROR_NOT_SUPPORTED);
        }
        let cursor = RETIRED_PAGES_KEYS[cause];
        let pages = match &d.retired_pages[cause] {
            Some(lists) => tick_list(lists, d.peek(cursor)),
            None => Ok(Vec::new()),
        };
        // SAFETY: the count is non-null; the arrays are checked against it.
        let res =
            pages.and_then(|pages| unsafe { write_pages(count, addresses, timestamps, &pages) });
        if consumes_tick(res) {
            d.tick(cursor);
        }
        res
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages(
    device: Handle,
    cause: c_uint,
    page_count: *mut c_uint,
    addresses: *mut c_ulonglong,
) -> Ret {
    retired_pages("nvmlDeviceGetRetiredPages", device, cause, page_count, addresses, None)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages_v2(
    device: Handle,
    cause: c_uint,
    page_count: *mut c_uint,
    addresses: *mut c_ulonglong,
    timestamps: *mut c_ulonglong,
) -> Ret {
    retired_pages(
        "nvmlDeviceGetRetiredPages_v2",
        device,
        cause,
        page_count,
        addresses,
        Some(timestamps),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPagesPendingStatus(
    device: Handle,
    is_pending: *mut c_uint,
) -> Ret {
    device_call("nvmlDeviceGetRetiredPagesPendingStatus", device, !is_pending.is_null(), |d| {
        let v = if d.has("retired_pages.pending") {
            d.next("retired_pages.pending", "retired_pages.pending")?.as_u32()
        } else if d.retired_pages.iter().any(Option::is_some) {
            0
        } else {
            return Err(ERROR_NOT_SUPPORTED);
        };
        // SAFETY: non-null.
        unsafe { is_pending.write(v) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Unit tests of the scenario parser
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// nvidia-smi's static and mode queries (`--query-gpu` names): numbers from the
// scenario's keys, strings made from the device index.
// ---------------------------------------------------------------------------

/// A string query: `make` gives the device's text, written NUL-terminated into `out`.
///
/// # Safety
/// `out` must point to `length` writable bytes (or be null).
unsafe fn text(
    name: &'static str,
    device: Handle,
    out: *mut c_char,
    length: c_uint,
    make: impl FnOnce(&Device) -> String,
) -> Ret {
    device_call(name, device, !out.is_null(), |d| {
        let v = make(d);
        // SAFETY: the caller provides `length` bytes.
        unsafe { write_str(out, length, &v) }
    })
}

/// A query that answers one number from the scenario key `key` (its own cursor); an empty key is
/// an argument the fake does not know (INVALID_ARGUMENT).
fn one(name: &'static str, device: Handle, out: *mut c_uint, key: &'static str) -> Ret {
    device_call(name, device, !out.is_null() && !key.is_empty(), |d| {
        let v = d.next(key, key)?;
        // SAFETY: non-null.
        unsafe { out.write(v.as_u32()) };
        Ok(())
    })
}

/// A query that answers two numbers (current and pending mode, min and max limit) from two keys.
fn pair(
    name: &'static str,
    device: Handle,
    (a, b): (*mut c_uint, *mut c_uint),
    (ka, kb): (&'static str, &'static str),
    conv: impl Fn(Num) -> c_uint,
) -> Ret {
    device_call(name, device, !a.is_null() && !b.is_null(), |d| {
        let (v, w) = (d.next(ka, ka)?, d.next(kb, kb)?);
        // SAFETY: both non-null.
        unsafe {
            a.write(conv(v));
            b.write(conv(w));
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSerial(
    device: Handle,
    out: *mut c_char,
    length: c_uint,
) -> Ret {
    // SAFETY: the caller provides `length` bytes at `out`.
    unsafe {
        text("nvmlDeviceGetSerial", device, out, length, |d| format!("165092406{:04}", d.index))
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetVbiosVersion(
    device: Handle,
    out: *mut c_char,
    length: c_uint,
) -> Ret {
    // SAFETY: the caller provides `length` bytes at `out`.
    unsafe { text("nvmlDeviceGetVbiosVersion", device, out, length, |_| "96.00.99.00.01".into()) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetInforomImageVersion(
    device: Handle,
    out: *mut c_char,
    length: c_uint,
) -> Ret {
    // SAFETY: the caller provides `length` bytes at `out`.
    unsafe {
        text("nvmlDeviceGetInforomImageVersion", device, out, length, |_| "G520.0200.00.05".into())
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkGeneration(
    device: Handle,
    value: *mut c_uint,
) -> Ret {
    scalar(
        "nvmlDeviceGetCurrPcieLinkGeneration",
        device,
        value,
        "pcie.link.gen.current",
        "pcie.link.gen.current",
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxPcieLinkGeneration(
    device: Handle,
    value: *mut c_uint,
) -> Ret {
    scalar(
        "nvmlDeviceGetMaxPcieLinkGeneration",
        device,
        value,
        "pcie.link.gen.max",
        "pcie.link.gen.max",
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkWidth(device: Handle, value: *mut c_uint) -> Ret {
    scalar(
        "nvmlDeviceGetCurrPcieLinkWidth",
        device,
        value,
        "pcie.link.width.current",
        "pcie.link.width.current",
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxPcieLinkWidth(device: Handle, value: *mut c_uint) -> Ret {
    scalar(
        "nvmlDeviceGetMaxPcieLinkWidth",
        device,
        value,
        "pcie.link.width.max",
        "pcie.link.width.max",
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerManagementDefaultLimit(
    device: Handle,
    value: *mut c_uint,
) -> Ret {
    scalar(
        "nvmlDeviceGetPowerManagementDefaultLimit",
        device,
        value,
        "power.default_limit",
        "power.default_limit",
        |n| c_uint::try_from(n.scaled(1000)).unwrap_or(c_uint::MAX),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerManagementLimitConstraints(
    device: Handle,
    min: *mut c_uint,
    max: *mut c_uint,
) -> Ret {
    pair(
        "nvmlDeviceGetPowerManagementLimitConstraints",
        device,
        (min, max),
        ("power.min_limit", "power.max_limit"),
        |n| c_uint::try_from(n.scaled(1000)).unwrap_or(c_uint::MAX),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeMode(device: Handle, value: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetComputeMode", device, value, "compute_mode", "compute_mode", Num::as_u32)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDisplayMode(device: Handle, value: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetDisplayMode", device, value, "display_mode", "display_mode", Num::as_u32)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDisplayActive(device: Handle, value: *mut c_uint) -> Ret {
    scalar(
        "nvmlDeviceGetDisplayActive",
        device,
        value,
        "display_active",
        "display_active",
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetAccountingMode(device: Handle, value: *mut c_uint) -> Ret {
    scalar(
        "nvmlDeviceGetAccountingMode",
        device,
        value,
        "accounting.mode",
        "accounting.mode",
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerManagementMode(
    device: Handle,
    value: *mut c_uint,
) -> Ret {
    scalar(
        "nvmlDeviceGetPowerManagementMode",
        device,
        value,
        "power.management",
        "power.management",
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetApplicationsClock(
    device: Handle,
    type_: c_uint,
    clock: *mut c_uint,
) -> Ret {
    let key = match type_ {
        0 => "clocks.applications.graphics",
        2 => "clocks.applications.memory",
        _ => "",
    };
    one("nvmlDeviceGetApplicationsClock", device, clock, key)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDefaultApplicationsClock(
    device: Handle,
    type_: c_uint,
    clock: *mut c_uint,
) -> Ret {
    let key = match type_ {
        0 => "clocks.default_applications.graphics",
        2 => "clocks.default_applications.memory",
        _ => "",
    };
    one("nvmlDeviceGetDefaultApplicationsClock", device, clock, key)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCudaComputeCapability(
    device: Handle,
    major: *mut c_int,
    minor: *mut c_int,
) -> Ret {
    device_call(
        "nvmlDeviceGetCudaComputeCapability",
        device,
        !major.is_null() && !minor.is_null(),
        |d| {
            // `compute_cap = 9.0`: major 9, minor 0.
            let tenths = d.next("compute_cap", "compute_cap")?.scaled(10);
            // SAFETY: both non-null.
            unsafe {
                major.write(c_int::try_from(tenths / 10).unwrap_or(0));
                minor.write(c_int::try_from(tenths % 10).unwrap_or(0));
            }
            Ok(())
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetEccMode(
    device: Handle,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> Ret {
    pair(
        "nvmlDeviceGetEccMode",
        device,
        (current, pending),
        ("ecc.mode.current", "ecc.mode.pending"),
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGpuOperationMode(
    device: Handle,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> Ret {
    pair(
        "nvmlDeviceGetGpuOperationMode",
        device,
        (current, pending),
        ("gom.current", "gom.pending"),
        Num::as_u32,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetEncoderStats(
    device: Handle,
    sessions: *mut c_uint,
    fps: *mut c_uint,
    latency: *mut c_uint,
) -> Ret {
    device_call(
        "nvmlDeviceGetEncoderStats",
        device,
        !sessions.is_null() && !fps.is_null() && !latency.is_null(),
        |d| {
            let s = d.next("encoder.stats.sessionCount", "encoder.stats.sessionCount")?.as_u32();
            let f = d.next("encoder.stats.averageFps", "encoder.stats.averageFps")?.as_u32();
            let l =
                d.next("encoder.stats.averageLatency", "encoder.stats.averageLatency")?.as_u32();
            // SAFETY: all three non-null.
            unsafe {
                sessions.write(s);
                fps.write(f);
                latency.write(l);
            }
            Ok(())
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryErrorCounter(
    device: Handle,
    _error_type: c_uint,
    _counter_type: c_uint,
    _location: c_uint,
    count: *mut c_ulonglong,
) -> Ret {
    scalar(
        "nvmlDeviceGetMemoryErrorCounter",
        device,
        count,
        "ecc.errors.by_location",
        "ecc.errors.by_location",
        |n| n.scaled(1),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSupportedClocksThrottleReasons(
    device: Handle,
    mask: *mut c_ulonglong,
) -> Ret {
    scalar(
        "nvmlDeviceGetSupportedClocksThrottleReasons",
        device,
        mask,
        "clocks_event_reasons.supported",
        "clocks_event_reasons.supported",
        |n| n.scaled(1),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSupportedClocksEventReasons(
    device: Handle,
    mask: *mut c_ulonglong,
) -> Ret {
    scalar(
        "nvmlDeviceGetSupportedClocksEventReasons",
        device,
        mask,
        "clocks_event_reasons.supported",
        "clocks_event_reasons.supported",
        |n| n.scaled(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_global_and_devices() {
        let sc = parse_scenario(
            "# comment\ninit = ok\ncuda_version = 12040   # trailing\n\n[device]\nname = A\n\
             memory.used = 1, 2.5, NOT_SUPPORTED\nclocks_event_reasons.active = 0x4\n\
             processes = 1:2, 3:NA\n[device]\n",
        );
        let sc = match sc {
            Ok(sc) => sc,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(sc.global.init, SUCCESS);
        assert_eq!(sc.global.cuda_version, Ok(12040));
        assert_eq!(sc.devices.len(), 2);
        let d = &sc.devices[0];
        assert_eq!(d.name(), Ok("A".to_string()));
        assert_eq!(
            d.num["memory.used"],
            vec![Ok(Num::Int(1)), Ok(Num::Float(2.5)), Err(ERROR_NOT_SUPPORTED)]
        );
        assert_eq!(d.num["clocks_event_reasons.active"], vec![Ok(Num::Int(4))]);
        assert_eq!(
            d.processes,
            Some(Ok(vec![Proc { pid: 1, used: Some(2 * MIB) }, Proc { pid: 3, used: None }]))
        );
        let d1 = &sc.devices[1];
        assert_eq!(d1.name(), Ok("Fake GPU 1".to_string()));
        assert_eq!(d1.uuid(), Ok("GPU-00000000-0000-0000-0000-000000000001".to_string()));
        assert_eq!(
            d1.pci().map(|p| (p.bus_id, p.legacy, p.bus)),
            Ok(("00000000:02:00.0".to_string(), "0000:02:00.0".to_string(), 2))
        );
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "bogus = 1",
            "[device]\nbogus = 1",
            "[gpu]",
            "[device]\nmemory.used = abc",
            "[device]\nmemory.used = 1,,2",
            "[device]\nmemory.used =",
            "[device]\nname = a\nname = b",
            "init = maybe",
            "[device]\npci.bus_id = 17:00",
            "just a line",
            "[device]\nprocesses = 12",
            "[device]\ngpm = maybe",
            "[device]\ngpm.bogus_util = 1",
            "[device]\ngpm.fail_at = x",
            "[device]\ngpm.fail_at = 3:NOPE",
            "[device]\nevents = xid@3",
            "[device]\nevents = xid:79",
            "[device]\nevents = boom:1@2",
            "[device]\nevents = xid:79:80@2",
            "[device]\nevents = dbe:gi=x@2",
            "[device]\nevents.supported = lots",
            "[device]\nevents.tick_ms = soon",
            "[device]\nprocess_util = 1:sm=x",
            "[device]\nprocess_util = 1:cpu=3",
            "[device]\nprocess_util = 1:sm=1,,2:sm=3",
            "[device]\nprocess_util = 1;;2",
            "[device]\nprocess_util =",
            "[device]\nretired_pages.double_bit = zz",
            "[device]\nretired_pages.double_bit = 0x10:t",
            "[device]\nremapped_rows.correctable = many",
        ] {
            assert!(parse_scenario(bad).is_err(), "accepted: {bad:?}");
        }
    }

    #[test]
    fn parses_gpm_events_process_util_and_pages() {
        let sc = parse_scenario(
            "[device]\ngpm.sm_util = 1, 2.5, UNKNOWN\ngpm.fail_at = 3, 7:GPU_IS_LOST\n\
             events = xid:79@3, dbe@6, xid:94:gi=1:ci=2@4, pstate:7@0\nevents.tick_ms = 50\n\
             process_util = 1:sm=50:mem=20:enc=1:dec=2:ts=9; 2, none, NOT_SUPPORTED\n\
             retired_pages.double_bit = 0x1000:17; 0x2000, none\n\
             [device]\ngpm = unsupported\ngpm.sm_util = 1\nevents = none\n[device]\ngpm = NO_PERMISSION\n",
        );
        let sc = match sc {
            Ok(sc) => sc,
            Err(e) => panic!("{e}"),
        };
        let d = &sc.devices[0];
        assert_eq!(d.gpm_supported(), Ok(true));
        assert_eq!(
            d.num["gpm.sm_util"],
            vec![Ok(Num::Int(1)), Ok(Num::Float(2.5)), Err(ERROR_UNKNOWN)]
        );
        assert_eq!(d.gpm_fail_at, HashMap::from([(3, ERROR_UNKNOWN), (7, ERROR_GPU_IS_LOST)]));
        let ev = |tick, kind, data, gi, ci| Event {
            tick,
            kind,
            data,
            gpu_instance: gi,
            compute_instance: ci,
        };
        assert_eq!(
            d.events,
            Some(vec![
                ev(3, 0x8, 79, NO_INSTANCE, NO_INSTANCE),
                ev(6, 0x2, 0, NO_INSTANCE, NO_INSTANCE),
                ev(4, 0x8, 94, 1, 2),
                ev(0, 0x4, 7, NO_INSTANCE, NO_INSTANCE),
            ])
        );
        assert_eq!(d.events_supported(), Ok(EVENT_KINDS_ALL));
        assert_eq!(d.events_tick_ms, Some(50));
        let p1 = ProcUtil { pid: 1, ts: Some(9), sm: 50, mem: 20, enc: 1, dec: 2 };
        let p2 = ProcUtil { pid: 2, ..ProcUtil::default() };
        assert_eq!(
            d.process_util,
            Some(vec![Ok(vec![p1, p2]), Ok(vec![]), Err(ERROR_NOT_SUPPORTED)])
        );
        let pages =
            vec![Page { address: 0x1000, timestamp: 17 }, Page { address: 0x2000, timestamp: 0 }];
        assert_eq!(d.retired_pages, [None, Some(vec![Ok(pages), Ok(vec![])])]);
        assert_eq!(sc.devices[1].gpm_supported(), Ok(false));
        assert_eq!(sc.devices[1].events_supported(), Ok(EVENT_KINDS_ALL));
        assert_eq!(sc.devices[1].events, Some(vec![]));
        assert_eq!(sc.devices[2].gpm_supported(), Err(4));
        assert_eq!(sc.devices[2].events_supported(), Err(ERROR_NOT_SUPPORTED));
    }

    #[test]
    fn sequences_repeat_last_and_energy_accumulates() {
        let mut sc = match parse_scenario("[device]\npower.draw = 1, 2.5\n") {
            Ok(sc) => sc,
            Err(e) => panic!("{e}"),
        };
        let d = &mut sc.devices[0];
        let got: Vec<_> = (0..4).map(|_| d.energy()).collect();
        assert_eq!(got, vec![Ok(0), Ok(1000), Ok(3500), Ok(6000)]);
        let got: Vec<_> = (0..3).map(|_| d.next("p", "power.draw")).collect();
        assert_eq!(got, vec![Ok(Num::Int(1)), Ok(Num::Float(2.5)), Ok(Num::Float(2.5))]);
    }
}
