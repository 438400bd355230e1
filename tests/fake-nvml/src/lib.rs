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
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

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

const _: () = {
    assert!(size_of::<PciInfo>() == 68);
    assert!(size_of::<Utilization>() == 8);
    assert!(size_of::<Memory>() == 24);
    assert!(size_of::<MemoryV2>() == 40);
    assert!(size_of::<ProcessInfo>() == 24);
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
];

#[derive(Clone, Debug, PartialEq)]
struct Proc {
    pid: u32,
    /// Bytes; `None` = NVML_VALUE_NOT_AVAILABLE.
    used: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
struct Pci {
    bus_id: String,
    legacy: String,
    domain: u32,
    bus: u32,
    device: u32,
}

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
    num: HashMap<&'static str, Vec<Elem>>,
    processes: Option<Result<Vec<Proc>, Ret>>,
    graphics_processes: Option<Result<Vec<Proc>, Ret>>,
    processes_file: Option<PathBuf>,
    lost_after: Option<u64>,
    delay_ms: u64,
    // runtime state
    cursors: HashMap<String, usize>,
    util_reads: u64,
}

#[derive(Debug, Default)]
struct Scenario {
    global: Global,
    devices: Vec<Device>,
}

struct State {
    refcount: u32,
    global: Global,
    devices: Vec<Device>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn lock() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

// ---------------------------------------------------------------------------
// Scenario parsing
// ---------------------------------------------------------------------------

fn error_token(s: &str) -> Option<Ret> {
    let upper = s.trim().to_ascii_uppercase();
    let name = upper.strip_prefix("NVML_ERROR_").unwrap_or(&upper);
    ERRORS.iter().find(|(code, token, _)| *code != SUCCESS && *token == name).map(|(code, _, _)| *code)
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
            let (pid, mib) = item.split_once(':').ok_or_else(|| format!("process `{item}` is not `pid:MiB`"))?;
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

/// Parses `DDDDDDDD:BB:DD.F` (or the legacy `DDDD:BB:DD.F`).
fn parse_bus_id(s: &str) -> Result<Pci, String> {
    let bad = || format!("pci.bus_id `{s}` is not `DDDDDDDD:BB:DD.F`");
    let mut parts = s.split(':');
    let (Some(dom), Some(bus), Some(devfn), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
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
                None => Ok(v.parse().map_err(|_| format!("cuda_version `{v}` is not an integer"))?),
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
    match key {
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
        "lost_after" => d.lost_after = Some(parse_u64(v).ok_or_else(|| format!("lost_after `{v}` is not an integer"))?),
        "delay_ms" => d.delay_ms = parse_u64(v).ok_or_else(|| format!("delay_ms `{v}` is not an integer"))?,
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
    let text =
        std::fs::read_to_string(&path).map_err(|e| LoadError::Bad(format!("cannot read {}: {e}", path.display())))?;
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
        let c = self.cursors.entry(cursor.to_string()).or_insert(0);
        let i = *c;
        *c += 1;
        i
    }

    /// Element `min(i, len-1)` of `key`; `None` if the key is absent.
    fn at(&self, key: &str, i: usize) -> Option<Elem> {
        let seq = self.num.get(key)?;
        seq.get(i.min(seq.len().saturating_sub(1))).copied()
    }

    /// Next value of `key` using `cursor`; NOT_SUPPORTED if absent.
    fn next(&mut self, cursor: &str, key: &str) -> Result<Num, Ret> {
        if !self.has(key) {
            return Err(ERROR_NOT_SUPPORTED);
        }
        let i = self.tick(cursor);
        self.at(key, i).unwrap_or(Err(ERROR_NOT_SUPPORTED))
    }

    fn name(&self) -> Result<String, Ret> {
        self.name.clone().unwrap_or_else(|| Ok(format!("Fake GPU {}", self.index)))
    }

    fn uuid(&self) -> Result<String, Ret> {
        self.uuid.clone().unwrap_or_else(|| Ok(format!("GPU-00000000-0000-0000-0000-{:012}", self.index)))
    }

    fn pci(&self) -> Result<Pci, Ret> {
        match &self.pci {
            Some(p) => p.clone(),
            None => parse_bus_id(&format!("00000000:{:02X}:00.0", self.index + 1)).map_err(|_| ERROR_UNKNOWN),
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

// ---------------------------------------------------------------------------
// FFI plumbing
// ---------------------------------------------------------------------------

fn stderr_line(msg: &str) {
    let _ = writeln!(std::io::stderr(), "fake-nvml: {msg}");
}

fn log_call(name: &str, idx: Option<usize>) {
    let Some(path) = std::env::var_os("FAKE_NVML_LOG") else {
        return;
    };
    if path.is_empty() {
        return;
    }
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

fn handle_index(h: Handle) -> Option<usize> {
    h.addr().checked_sub(1)
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
    guard(|| {
        log_call(name, handle_index(handle));
        let delay = {
            let mut g = lock();
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
            std::thread::sleep(Duration::from_millis(delay));
        }
        let mut g = lock();
        let Some(state) = g.as_mut() else {
            return ERROR_UNINITIALIZED;
        };
        let Some(dev) = handle_index(handle).and_then(|i| state.devices.get_mut(i)) else {
            return ERROR_INVALID_ARGUMENT;
        };
        if dev.is_lost() {
            return ERROR_GPU_IS_LOST;
        }
        status(f(dev))
    })
}

/// Common path of the `nvmlSystem*` calls.
fn system_call(name: &'static str, args_ok: bool, f: impl FnOnce(&State) -> Result<(), Ret>) -> Ret {
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
unsafe fn write_procs(count: *mut c_uint, infos: *mut ProcessInfo, procs: &[Proc]) -> Result<(), Ret> {
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
    device_call(name, device, !count.is_null(), |d| {
        let procs = d.processes(graphics)?;
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
                *g = Some(State { refcount: 1, global: sc.global, devices: sc.devices });
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
        }
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlErrorString(result: Ret) -> *const c_char {
    catch_unwind(|| {
        log_call("nvmlErrorString", None);
        let msg = ERRORS.iter().find(|(code, _, _)| *code == result).map_or(c"Unknown Error", |(_, _, msg)| msg);
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
pub unsafe extern "C" fn nvmlDeviceGetHandleByUUID(uuid: *const c_char, device: *mut Handle) -> Ret {
    guard(|| {
        let g = lock();
        let found = if uuid.is_null() {
            None
        } else {
            // SAFETY: non-null, NUL-terminated per the NVML contract.
            let wanted = unsafe { CStr::from_ptr(uuid) }.to_string_lossy().into_owned();
            g.as_ref().and_then(|s| s.devices.iter().position(|d| d.uuid().is_ok_and(|u| u == wanted)))
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
pub unsafe extern "C" fn nvmlDeviceGetName(device: Handle, name: *mut c_char, length: c_uint) -> Ret {
    device_call("nvmlDeviceGetName", device, !name.is_null(), |d| {
        let v = d.name()?;
        // SAFETY: caller provides `length` bytes.
        unsafe { write_str(name, length, &v) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetUUID(device: Handle, uuid: *mut c_char, length: c_uint) -> Ret {
    device_call("nvmlDeviceGetUUID", device, !uuid.is_null(), |d| {
        let v = d.uuid()?;
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
pub unsafe extern "C" fn nvmlDeviceGetUtilizationRates(device: Handle, utilization: *mut Utilization) -> Ret {
    device_call("nvmlDeviceGetUtilizationRates", device, !utilization.is_null(), |d| {
        d.util_reads += 1;
        if !d.has("utilization.gpu") {
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
    device_call("nvmlDeviceGetMemoryInfo_v2", device, !memory.is_null(), |d| {
        // SAFETY: non-null; only the version field is read.
        let version = unsafe { (&raw const (*memory).version).read() };
        if version != MEMORY_V2_VERSION {
            return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
        }
        let (total, reserved, free, used) = d.memory("memory_v2")?;
        let m = MemoryV2 { version, total, reserved, free, used };
        // SAFETY: non-null.
        unsafe { memory.write(m) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo(device: Handle, memory: *mut Memory) -> Ret {
    device_call("nvmlDeviceGetMemoryInfo", device, !memory.is_null(), |d| {
        let (total, reserved, free, used) = d.memory("memory_v1")?;
        // v1 reports reserved memory as used.
        let m = Memory { total, free, used: used.saturating_add(reserved) };
        // SAFETY: non-null.
        unsafe { memory.write(m) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTemperature(device: Handle, sensor_type: c_uint, temp: *mut c_uint) -> Ret {
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
pub unsafe extern "C" fn nvmlDeviceGetEnforcedPowerLimit(device: Handle, limit: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetEnforcedPowerLimit", device, limit, "enforced_power_limit", "power.limit", |n| {
        c_uint::try_from(n.scaled(1000)).unwrap_or(c_uint::MAX)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerManagementLimit(device: Handle, limit: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetPowerManagementLimit", device, limit, "power_management_limit", "power.limit", |n| {
        c_uint::try_from(n.scaled(1000)).unwrap_or(c_uint::MAX)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTotalEnergyConsumption(device: Handle, energy: *mut c_ulonglong) -> Ret {
    device_call("nvmlDeviceGetTotalEnergyConsumption", device, !energy.is_null(), |d| {
        let mj = d.energy()?;
        // SAFETY: non-null.
        unsafe { energy.write(mj) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetClockInfo(device: Handle, type_: c_uint, clock: *mut c_uint) -> Ret {
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

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetFanSpeed(device: Handle, speed: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetFanSpeed", device, speed, "fan", "fan.speed", Num::as_u32)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetFanSpeed_v2(device: Handle, fan: c_uint, speed: *mut c_uint) -> Ret {
    device_call("nvmlDeviceGetFanSpeed_v2", device, !speed.is_null(), |d| {
        let num_fans = d.num.get("num_fans").and_then(|s| s.iter().find_map(|e| e.ok())).map_or(1, Num::as_u64);
        if u64::from(fan) >= num_fans {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let v = d.next(&format!("fan{fan}"), "fan.speed")?;
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
pub unsafe extern "C" fn nvmlDeviceGetPerformanceState(device: Handle, p_state: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetPerformanceState", device, p_state, "pstate", "pstate", Num::as_u32)
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
    codec_utilization("nvmlDeviceGetEncoderUtilization", device, utilization, sampling_period_us, "utilization.encoder")
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDecoderUtilization(
    device: Handle,
    utilization: *mut c_uint,
    sampling_period_us: *mut c_uint,
) -> Ret {
    codec_utilization("nvmlDeviceGetDecoderUtilization", device, utilization, sampling_period_us, "utilization.decoder")
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPcieThroughput(device: Handle, counter: c_uint, value: *mut c_uint) -> Ret {
    let key = match counter {
        0 => "pcie.tx",
        1 => "pcie.rx",
        _ => "",
    };
    device_call("nvmlDeviceGetPcieThroughput", device, !value.is_null() && !key.is_empty(), |d| {
        let v = d.next(key, key)?;
        // SAFETY: non-null.
        unsafe { value.write(v.as_u32()) };
        Ok(())
    })
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
    device_call("nvmlDeviceGetTotalEccErrors", device, !ecc_counts.is_null() && !key.is_empty(), |d| {
        let v = d.next(key, key)?;
        // SAFETY: non-null.
        unsafe { ecc_counts.write(v.as_u64()) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPersistenceMode(device: Handle, mode: *mut c_uint) -> Ret {
    scalar("nvmlDeviceGetPersistenceMode", device, mode, "persistence_mode", "persistence_mode", Num::as_u32)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    device: Handle,
    current_mode: *mut c_uint,
    pending_mode: *mut c_uint,
) -> Ret {
    device_call("nvmlDeviceGetMigMode", device, !current_mode.is_null() && !pending_mode.is_null(), |d| {
        let v = d.next("mig_mode", "mig_mode")?.as_u32();
        // SAFETY: both non-null.
        unsafe {
            current_mode.write(v);
            pending_mode.write(v);
        }
        Ok(())
    })
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
// Unit tests of the scenario parser
// ---------------------------------------------------------------------------

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
        assert_eq!(d.num["memory.used"], vec![Ok(Num::Int(1)), Ok(Num::Float(2.5)), Err(ERROR_NOT_SUPPORTED)]);
        assert_eq!(d.num["clocks_event_reasons.active"], vec![Ok(Num::Int(4))]);
        assert_eq!(d.processes, Some(Ok(vec![Proc { pid: 1, used: Some(2 * MIB) }, Proc { pid: 3, used: None }])));
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
        ] {
            assert!(parse_scenario(bad).is_err(), "accepted: {bad:?}");
        }
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
