//! Diagnosis: documented rules over the statistics, each with its thresholds, the evidence it found
//! and the usual fix. All thresholds live in [`Thresholds`] (overridable with `--threshold NAME=VALUE`);
//! [`RULES`] is the single description used by the reports and docs/summarize.md.

use std::fmt::Write;

use crate::acc::{POWER, Reason, THERMAL};
use crate::events::{EventRecord, xid_groups};
use crate::stat::Stat;
use crate::stat_values::StatValues;
use gpumon_schema::InputInfo;
use gpumon_schema::catalog::Field;

/// Every threshold the rules use, with defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    pub(crate) idle_util: f64,
    pub(crate) unused_idle_pct: f64,
    /// See [`CollectConfig::input_bound_util`](crate::collect::CollectConfig).
    pub input_bound_util: f64,
    /// See [`CollectConfig::pegged_core`](crate::collect::CollectConfig).
    pub pegged_core: f64,
    pub(crate) input_bound_pct: f64,
    pub(crate) oom_mem_pct: f64,
    pub(crate) headroom_mem_pct: f64,
    pub(crate) headroom_util: f64,
    pub(crate) throttle_pct: f64,
    pub(crate) imbalance_util: f64,
    pub(crate) swap_mib: f64,
    /// A step longer than this many intervals (the median spacing) is a gap.
    pub gap_intervals: f64,
    pub(crate) busy_util: f64,
    pub(crate) sm_idle: f64,
    pub(crate) tensor_sm_active: f64,
    pub(crate) tensor_idle: f64,
    pub(crate) dram_bound: f64,
    pub(crate) pcie_rx_mib: f64,
    pub(crate) held_mem_mib: f64,
    pub(crate) held_idle_pct: f64,
    pub(crate) straggler_clock_pct: f64,
    pub(crate) hang_util: f64,
    pub(crate) hang_power_pct: f64,
    pub(crate) hang_power_max_pct: f64,
    pub(crate) hang_min_s: f64,
    pub(crate) low_util: f64,
    pub(crate) low_util_min_s: f64,
    pub(crate) host_mem_pct: f64,
    pub(crate) host_mem_min_s: f64,
    pub(crate) hot_gpu_c: f64,
    pub(crate) growth_pct: f64,
    pub(crate) growth_min_s: f64,
    pub(crate) idle_stretch_s: f64,
    pub(crate) idle_lost_pct: f64,
    pub(crate) ecc_corrected_per_h: f64,
    pub(crate) power_limit_low_pct: f64,
    pub(crate) held_idle_min_s: f64,
    pub(crate) clocks_locked_pct: f64,
    pub(crate) shared_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            idle_util: 5.0,
            unused_idle_pct: 99.0,
            input_bound_util: 50.0,
            pegged_core: 90.0,
            input_bound_pct: 30.0,
            oom_mem_pct: 95.0,
            headroom_mem_pct: 30.0,
            headroom_util: 80.0,
            throttle_pct: 5.0,
            imbalance_util: 20.0,
            swap_mib: 64.0,
            gap_intervals: 3.0,
            busy_util: 80.0,
            sm_idle: 30.0,
            tensor_sm_active: 50.0,
            tensor_idle: 1.0,
            dram_bound: 70.0,
            pcie_rx_mib: 4096.0,
            held_mem_mib: 2048.0,
            held_idle_pct: 75.0,
            straggler_clock_pct: 5.0,
            hang_util: 90.0,
            hang_power_pct: 25.0,
            hang_power_max_pct: 40.0,
            hang_min_s: 300.0,
            low_util: 10.0,
            low_util_min_s: 1800.0,
            host_mem_pct: 95.0,
            host_mem_min_s: 600.0,
            hot_gpu_c: 10.0,
            growth_pct: 10.0,
            growth_min_s: 1800.0,
            idle_stretch_s: 60.0,
            idle_lost_pct: 5.0,
            ecc_corrected_per_h: 100.0,
            power_limit_low_pct: 90.0,
            held_idle_min_s: 600.0,
            clocks_locked_pct: 75.0,
            shared_pct: 25.0,
        }
    }
}

type Slot = fn(&mut Thresholds) -> &mut f64;

/// (name, meaning, field) of every threshold.
pub(crate) static THRESHOLDS: [(&str, &str, Slot); 39] = [
    ("idle_util", "utilization.gpu below this (%) counts as idle", |t| &mut t.idle_util),
    ("unused_idle_pct", "a GPU idle in at least this share (%) of its samples is unused", |t| {
        &mut t.unused_idle_pct
    }),
    (
        "input_bound_util",
        "utilization.gpu (and sm.active where recorded) below this (%) counts as not busy for input_bound",
        |t| &mut t.input_bound_util,
    ),
    (
        "pegged_core",
        "job.cpu (percent of one core; without a job, cpu.util.max_core) at or above this (%) counts as a saturated CPU",
        |t| &mut t.pegged_core,
    ),
    (
        "input_bound_pct",
        "input-bound in at least this share (%) of samples fires input_bound",
        |t| &mut t.input_bound_pct,
    ),
    (
        "oom_mem_pct",
        "memory.used peak at or above this share (%) of memory.total fires oom_risk",
        |t| &mut t.oom_mem_pct,
    ),
    (
        "headroom_mem_pct",
        "memory.used peak below this share (%) of memory.total may fire batch_headroom",
        |t| &mut t.headroom_mem_pct,
    ),
    ("headroom_util", "...when mean utilization.gpu is at least this (%)", |t| {
        &mut t.headroom_util
    }),
    (
        "throttle_pct",
        "throttled in more than this share (%) of samples fires a throttling rule",
        |t| &mut t.throttle_pct,
    ),
    (
        "imbalance_util",
        "GPUs of one host whose mean utilization differs by more than this (points)",
        |t| &mut t.imbalance_util,
    ),
    (
        "swap_mib",
        "host swap.used moving by more than this (MiB) during the run fires host_swap",
        |t| &mut t.swap_mib,
    ),
    ("gap_intervals", "a step longer than this many intervals (median spacing) is a gap", |t| {
        &mut t.gap_intervals
    }),
    (
        "busy_util",
        "mean utilization.gpu at or above this (%) counts as busy (sm_idle_under_busy)",
        |t| &mut t.busy_util,
    ),
    (
        "sm_idle",
        "mean sm.active below this (%) counts as SMs mostly idle (sm_idle_under_busy, pcie_bound)",
        |t| &mut t.sm_idle,
    ),
    ("tensor_sm_active", "mean sm.active at or above this (%) may fire no_tensor_cores", |t| {
        &mut t.tensor_sm_active
    }),
    ("tensor_idle", "...when mean tensor.active is below this (%)", |t| &mut t.tensor_idle),
    ("dram_bound", "mean dram.active at or above this (%) fires memory_bound", |t| {
        &mut t.dram_bound
    }),
    (
        "pcie_rx_mib",
        "mean pcie.rx.bytes at or above this (MiB/s) while SMs are mostly idle fires pcie_bound",
        |t| &mut t.pcie_rx_mib,
    ),
    (
        "held_mem_mib",
        "memory.used at or above this (MiB) counts as memory held (idle_allocated, input_bound)",
        |t| &mut t.held_mem_mib,
    ),
    (
        "held_idle_pct",
        "memory held while idle in at least this share (%) of a GPU's samples fires idle_allocated",
        |t| &mut t.held_idle_pct,
    ),
    (
        "held_idle_min_s",
        "...and such samples adding up to at least this long (s) fire idle_allocated",
        |t| &mut t.held_idle_min_s,
    ),
    (
        "straggler_clock_pct",
        "clocks.sm.busy_mean this many % below the median of its siblings' fires straggler",
        |t| &mut t.straggler_clock_pct,
    ),
    (
        "hang_util",
        "utilization.gpu at or above this (%) with sm.active < idle_util (where recorded) and memory held may be a hung collective",
        |t| &mut t.hang_util,
    ),
    (
        "hang_power_pct",
        "...when power.draw is below the GPU's lowest draw plus this share (%) of the way up to power.limit (without it, to the GPU's highest power.draw in the run), and at least this share of it",
        |t| &mut t.hang_power_pct,
    ),
    (
        "hang_power_max_pct",
        "...and at most this share (%) of power.limit (or of the highest power.draw)",
        |t| &mut t.hang_power_max_pct,
    ),
    (
        "hang_min_s",
        "such samples for at least this long (s), after at least this long of other samples, fire hang",
        |t| &mut t.hang_min_s,
    ),
    ("low_util", "mean utilization.gpu below this (%) may fire low_utilization", |t| {
        &mut t.low_util
    }),
    ("low_util_min_s", "...when the GPU's span is at least this long (s)", |t| {
        &mut t.low_util_min_s
    }),
    (
        "host_mem_pct",
        "host mem.used at or above this share (%) of mem.total counts as memory pressure (host_memory)",
        |t| &mut t.host_mem_pct,
    ),
    ("host_mem_min_s", "...for at least this long (s) in all fires host_memory", |t| {
        &mut t.host_mem_min_s
    }),
    (
        "hot_gpu_c",
        "temperature.gpu.mean this many degrees C above the median of its siblings' fires hot_gpu",
        |t| &mut t.hot_gpu_c,
    ),
    (
        "growth_pct",
        "memory.used rising along its fitted line by at least this share (%) of memory.total over the run may fire memory_growth",
        |t| &mut t.growth_pct,
    ),
    ("growth_min_s", "...when the GPU's span is at least this long (s)", |t| &mut t.growth_min_s),
    (
        "idle_stretch_s",
        "a stretch of idle samples (utilization.gpu < idle_util) at least this long (s) counts for idle_stretches",
        |t| &mut t.idle_stretch_s,
    ),
    (
        "idle_lost_pct",
        "...which fires when such stretches add up to at least this share (%) of the span",
        |t| &mut t.idle_lost_pct,
    ),
    (
        "ecc_corrected_per_h",
        "ecc.errors.corrected.volatile.total rising by at least this many per hour of the span (and this many in all) fires memory_health (a corrected-error storm)",
        |t| &mut t.ecc_corrected_per_h,
    ),
    (
        "power_limit_low_pct",
        "power.limit (its highest value in the run) below this share (%) of power.default_limit fires power_limit_low",
        |t| &mut t.power_limit_low_pct,
    ),
    (
        "clocks_locked_pct",
        "clocks.sm.busy_mean below this share (%) of clocks.max.sm, with no thermal or power reason, fires clocks_locked",
        |t| &mut t.clocks_locked_pct,
    ),
    (
        "shared_pct",
        "processes of another job or user beside the job's (or the GPU's main user's) in at least this share (%) of the ticks fires shared_gpu",
        |t| &mut t.shared_pct,
    ),
];

impl Thresholds {
    /// Apply `NAME=VALUE`; the error lists the valid names.
    pub fn set(&mut self, spec: &str) -> Result<(), String> {
        let Some((name, value)) = spec.split_once('=') else {
            return Err(format!("--threshold '{spec}': expected NAME=VALUE, e.g. idle_util=10"));
        };
        let (name, value) = (name.trim(), value.trim().trim_end_matches('%'));
        let Some((_, _, slot)) = THRESHOLDS.iter().find(|(n, _, _)| *n == name) else {
            let names: Vec<&str> = THRESHOLDS.iter().map(|t| t.0).collect();
            return Err(format!("--threshold: unknown name '{name}'; known: {}", names.join(", ")));
        };
        let v: f64 =
            value.parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0).ok_or_else(|| {
                format!("--threshold {name}: '{value}' is not a non-negative number")
            })?;
        *slot(self) = v;
        Ok(())
    }

    /// What idle, busy and memory held mean for the per-row facts the rules read.
    pub fn row_rules(&self) -> crate::rowfacts::RowRules {
        crate::rowfacts::RowRules {
            idle_util: self.idle_util,
            held_mem_mib: self.held_mem_mib,
            busy_util: self.busy_util,
            hang_util: self.hang_util,
            host_mem_pct: self.host_mem_pct,
            idle_stretch_s: self.idle_stretch_s,
        }
    }

    /// (name, value) pairs in table order.
    pub fn values(&self) -> Vec<(&'static str, f64)> {
        let mut t = self.clone();
        THRESHOLDS.iter().map(|(n, _, slot)| (*n, *slot(&mut t))).collect()
    }
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Worth knowing; nothing to fix.
    Info,
    /// Costs time or money, or puts the run at risk: something to fix.
    Warning,
    /// A hardware or driver fault (an Xid): the run was, or may have been, damaged.
    Error,
}

impl Severity {
    /// Its name in reports (`info`, `warning`, `error`).
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A documented rule.
pub struct Rule {
    /// The rule's name, as findings carry it.
    pub id: &'static str,
    /// The severity of its findings.
    pub severity: Severity,
    /// When it fires, naming the thresholds.
    pub when: &'static str,
    /// What to do about it.
    pub fix: &'static str,
}

/// Every rule the findings come from.
pub static RULES: [Rule; 28] = [
    Rule {
        id: "job_failed",
        severity: Severity::Error,
        when: "the command gpumon wrapped (record -- CMD) exited with a non-zero code (128 + N: ended by signal N); \
               the evidence names the command, the code and when it ended",
        fix: "read the job's own output for why it failed; the figures cover the run only up to its end, so compare \
              them with a run that succeeded before drawing conclusions",
    },
    Rule {
        id: "gpu_lost",
        severity: Severity::Error,
        when: "the GPU's rows are empty (every reading null: it no longer answers), or missing while the host's \
               other GPUs still have rows, from some time to the end of the recording, for longer than gap_intervals \
               (3) intervals; coverage_pct counts empty rows as a gap, empty_rows counts them",
        fix: "the GPU fell off the bus or hung: drain the node, look for Xid 79/119 in the kernel log (dmesg), reset or \
              reboot; check power, cooling and PCIe seating; service the GPU if it recurs",
    },
    Rule {
        id: "xid",
        severity: Severity::Error,
        when: "NVML reported an Xid critical error for a GPU (the events file beside the recording); one finding per \
               GPU and Xid, with its first time. An event recorded without a GPU (older recordings of a GPU that \
               fell off the bus) is put on the host's lost GPU when exactly one was lost, or on its only GPU",
        fix: "the Xid's usual action (NVIDIA's Xid catalogue, https://docs.nvidia.com/deploy/xid-errors/)",
    },
    Rule {
        id: "memory_health",
        severity: Severity::Warning,
        when: "remapped_rows.failure.max = 1 (error: a row could not be remapped), or remapped_rows.pending.max = 1, \
               retired_pages.pending.max = 1, ecc.errors.uncorrected.volatile.total.increase > 0, or \
               ecc.errors.corrected.volatile.total rising by at least ecc_corrected_per_h (100) an hour of the span \
               and that many in all (a corrected-error storm) (warning)",
        fix: "drain the node and reset the GPU so pending remaps and retirements take effect; a failed remap or \
              uncorrected errors that keep rising: service the GPU (RMA)",
    },
    Rule {
        id: "idle_allocated",
        severity: Severity::Warning,
        when: "in at least held_idle_pct (75) % of the GPU's samples, adding up to at least held_idle_min_s (600) \
               s, memory.used >= held_mem_mib (2048) MiB while utilization.gpu (and sm.active where recorded; \
               sm.active alone on a MIG instance) < idle_util (5) % and, where power.draw is recorded, the board \
               draws about its idle power (below the same draw as hang's: power above it is work the \
               utilization sampling missed): memory held by a process that does nothing (a forgotten notebook or \
               a hung job). When the GPU worked in at least 1 % of its samples, the evidence says the holder may \
               be a server keeping a model loaded between requests, and the fix says what to do then",
        fix: "find the process holding it (nvidia-smi --query-compute-apps=pid,used_memory, or record --processes) \
              and end it or free its memory (torch.cuda.empty_cache(), restart the kernel)",
    },
    Rule {
        id: "unused_gpu",
        severity: Severity::Info,
        when: "utilization.gpu < idle_util (5) % in >= unused_idle_pct (99) % of the samples, and no memory held \
               (memory.held_idle_pct below held_idle_pct: a GPU holding memory is idle_allocated, or nothing \
               when that was for less than held_idle_min_s): the GPU sat idle",
        fix: "if the job should use it, check CUDA_VISIBLE_DEVICES, the launcher's world size (--nproc_per_node) and \
              device placement; otherwise nothing to do",
    },
    Rule {
        id: "input_bound",
        severity: Severity::Warning,
        when: "input_bound_pct >= input_bound_pct (30): in that share of the GPU's samples the GPU had work on it \
               (job.gpu_memory > 0 where recorded, else memory.used >= held_mem_mib (2048) MiB), was not busy \
               (utilization.gpu, and sm.active where recorded, < input_bound_util (50) %) and the CPU was saturated \
               (job.cpu >= pegged_core (90) % of a core where the job is recorded, else cpu.util.max_core >= \
               pegged_core); a GPU that fires idle_allocated or unused_gpu is left out",
        fix: "feed the GPU faster: raise DataLoader num_workers, set pin_memory=True and persistent_workers=True, \
              prefetch, move decoding/augmentation out of the main process",
    },
    Rule {
        id: "straggler",
        severity: Severity::Warning,
        when: "among the GPUs of one host and model in use (those with job.gpu_memory > 0 when the job is recorded), \
               a GPU's clocks.sm.busy_mean (SM clock while utilization.gpu >= busy_util (80) %) is more than \
               straggler_clock_pct (5) % below the median of its siblings': in synchronous training the others wait \
               for it every step",
        fix: "find why its clock is low (thermal_throttling or power_throttling on it, clocks_event_reasons), fix the \
              cooling or power of that GPU, or leave it out of the job",
    },
    Rule {
        id: "oom_risk",
        severity: Severity::Warning,
        when: "memory.used.max_pct >= oom_mem_pct (95): memory.used peak at or above that share of memory.total",
        fix: "leave headroom: smaller batch with gradient accumulation, mixed precision (bf16/fp16), activation \
              checkpointing",
    },
    Rule {
        id: "batch_headroom",
        severity: Severity::Info,
        when: "memory.used.max_pct < headroom_mem_pct (30) while utilization.gpu.mean >= headroom_util (80) %, on a \
               GPU that does not fire hang",
        fix: "room for a bigger batch (scale the learning rate with it) or a bigger model on this GPU",
    },
    Rule {
        id: "thermal_throttling",
        severity: Severity::Warning,
        when: "throttle.thermal_pct > throttle_pct (5): sw_thermal_slowdown or hw_thermal_slowdown active in more than \
               that share of the GPU's samples",
        fix: "cool the GPU: airflow, fan speed, dusty or blocked intakes, ambient temperature, hot neighbours",
    },
    Rule {
        id: "power_throttling",
        severity: Severity::Warning,
        when: "warning for a GPU: throttle.hw_slowdown_pct or throttle.hw_power_brake_slowdown_pct > throttle_pct (5) \
               (hardware slowdown: power supply, brake signal, overheating board). Info, one line for the host: \
               throttle.sw_power_cap_pct > throttle_pct on some GPUs (the board at its power limit: normal at full \
               load)",
        fix: "hw_slowdown / hw_power_brake_slowdown: check the PSUs, the rack power and the board (nvidia-smi -q -d \
              PERFORMANCE); sw_power_cap at full load needs nothing unless power.limit is below the board default \
              (nvidia-smi -q -d POWER)",
    },
    Rule {
        id: "imbalance",
        severity: Severity::Warning,
        when: "the mean utilization.gpu of two GPUs of one host, each over its busy span (from its first to its \
               last sample at or above idle_util (5) %), differs by > imbalance_util (20) points, and their busy \
               spans start and end within 10 % of the longer one (or gap_intervals (3) intervals) of each other: \
               GPUs busy at different times are separate jobs, not one job's uneven ranks (GPUs that fire \
               unused_gpu or idle_allocated left out)",
        fix: "spread the work evenly: data sharding (DistributedSampler), DistributedDataParallel instead of \
              DataParallel, balanced pipeline stages, stragglers",
    },
    Rule {
        id: "host_swap",
        severity: Severity::Warning,
        when: "host swap.used.range > swap_mib (64) MiB: swap in use grew (or shrank) by more than that during the \
               run: host memory pressure (swap that stays put is old pages, not pressure)",
        fix: "fewer DataLoader workers or smaller prefetch buffers, memory-map the dataset, look for a leak \
              (job.rss), or add RAM",
    },
    Rule {
        id: "sm_idle_under_busy",
        severity: Severity::Warning,
        when: "utilization.gpu.mean >= busy_util (80) % but sm.active.mean < sm_idle (30) %: some kernel runs all the \
               time, yet few SMs are busy (small kernels, launch-bound)",
        fix: "give each kernel more work: a bigger batch, CUDA graphs (torch.compile mode=\"reduce-overhead\"), \
              torch.compile to fuse small ops, no host syncs (.item(), .cpu()) inside the step",
    },
    Rule {
        id: "no_tensor_cores",
        severity: Severity::Warning,
        when: "sm.active.mean >= tensor_sm_active (50) % while tensor.active.mean < tensor_idle (1) % and \
               dram.active.mean < dram_bound (70) %: the SMs are busy but the tensor cores idle (FP32 math, not \
               memory-bound kernels)",
        fix: "use the tensor cores: bf16/fp16 autocast (torch.autocast), TF32 matmuls \
              (torch.set_float32_matmul_precision(\"high\")), matrix dimensions multiple of 8",
    },
    Rule {
        id: "memory_bound",
        severity: Severity::Info,
        when: "dram.active.mean >= dram_bound (70) %: device memory bandwidth near its ceiling",
        fix: "move fewer bytes: fuse element-wise ops (torch.compile), fused kernels (FlashAttention, fused \
              optimizers), bf16/fp8 activations, bigger matmuls per byte read",
    },
    Rule {
        id: "pcie_bound",
        severity: Severity::Warning,
        when: "pcie.rx.bytes.mean >= pcie_rx_mib (4096) MiB/s while sm.active.mean < sm_idle (30) %: the GPU waits on \
               host-to-device copies",
        fix: "pinned memory (DataLoader pin_memory=True) with .to(device, non_blocking=True), keep tensors on the GPU \
              between steps, move decoding/augmentation to the GPU (DALI, torchvision v2 on CUDA tensors), send \
              uint8 instead of float32",
    },
    Rule {
        id: "hang",
        severity: Severity::Error,
        when: "samples adding up to at least hang_min_s (300) s, their stretch (that many samples up to the last \
               of them: a few stray ones earlier do not move its start) starting at least as long after the GPU's \
               first sample, have utilization.gpu >= hang_util (90) % \
               while power.draw is near the board's idle draw: below its lowest power.draw in the run plus \
               hang_power_pct (25) % of the way up to power.limit (without power.limit: to the GPU's highest \
               power.draw in the run), that threshold kept between hang_power_pct and hang_power_max_pct (40) % \
               of the same reference; sm.active < idle_util (5) % where recorded and memory.used >= \
               held_mem_mib where recorded: a kernel that never ends on idle SMs, i.e. a hung NCCL/collective \
               (the job still alive); the evidence says when it started and how long it lasted. \
               sm_idle_under_busy does not fire on such a GPU",
        fix: "the job is stuck, not slow: take stack traces (py-spy dump --pid, or NCCL_DEBUG=INFO and \
              TORCH_NCCL_ASYNC_ERROR_HANDLING=1 with a collective timeout so a hang fails fast), look for a rank \
              that died, diverged or is waiting elsewhere (data, checkpoint), then kill and restart from the last \
              checkpoint",
    },
    Rule {
        id: "low_utilization",
        severity: Severity::Info,
        when: "utilization.gpu.mean < low_util (10) % over a span of at least low_util_min_s (1800) s, memory \
               recorded or not (beside idle_allocated when it holds memory), on a GPU that does not fire \
               unused_gpu (which does nothing at all): the GPU does almost nothing",
        fix: "share the GPU (MIG, MPS, a smaller instance), batch requests, or move the job to a smaller GPU; for \
              training, look for what it waits on most (input_bound, host-side work between steps)",
    },
    Rule {
        id: "host_memory",
        severity: Severity::Warning,
        when: "host mem.used >= host_mem_pct (95) % of mem.total in ticks adding up to at least host_mem_min_s \
               (600) s: host RAM nearly full for a long time, swap or no swap (a host without swap is next \
               to the OOM killer)",
        fix: "fewer DataLoader workers or smaller prefetch buffers, memory-map or stream the dataset instead of \
              loading it, look for a leak (job.rss rising), or add RAM",
    },
    Rule {
        id: "memory_growth",
        severity: Severity::Warning,
        when: "over a span of at least growth_min_s (1800) s, the least-squares line through memory.used over time \
               rises by at least growth_pct (10) % of memory.total, fits well (r² >= 0.8: a steady rise, not a \
               ramp at start-up that levels off) and memory.used reaches its peak in the last fifth of the span \
               (still rising at the end); the evidence gives the rate and when the line would reach memory.total",
        fix: "look for what keeps growing: tensors kept across steps (losses appended without .item() or \
              .detach(), a growing cache or list of outputs), a dataset or KV cache on the GPU that grows, \
              fragmentation (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True); torch.cuda.memory_summary() at \
              two steps tells which",
    },
    Rule {
        id: "idle_stretches",
        severity: Severity::Warning,
        when: "at least three stretches of idle samples (utilization.gpu, and sm.active where recorded, < idle_util \
               (5) %), each at least idle_stretch_s (60) s long and inside the run (not before the first busy \
               sample or after the last), add up to at least idle_lost_pct (5) % of the span, and start at a \
               regular period (the steps between their starts vary by at most half their mean), and between them \
               the GPU is busy (its mean utilization.gpu over the time outside them, taken as its whole-run mean \
               times span / (span - stretches), >= busy_util (80) %: not a load that comes and goes); the GPU fires \
               neither unused_gpu, idle_allocated nor low_utilization. The evidence gives the share of the run \
               lost, the period and the typical length",
        fix: "find what the GPUs wait on every period: checkpoint writes (save asynchronously, \
              torch.distributed.checkpoint.async_save, or less often), evaluation on one rank (shard it across \
              ranks), DataLoader workers restarted each epoch (persistent_workers=True)",
    },
    Rule {
        id: "power_limit_low",
        severity: Severity::Warning,
        when: "the GPU's power.limit (its highest value in the run) is below power_limit_low_pct (90) % of \
               power.default_limit (the board's own default): someone capped the board, and its work runs \
               slower (nvidia-smi -pl, a datacenter power policy)",
        fix: "if the cap is not deliberate, restore the default: nvidia-smi -i N -pl DEFAULT (as root), or ask \
              whoever set the site's power policy; nvidia-smi -q -d POWER shows the limits",
    },
    Rule {
        id: "pcie_link",
        severity: Severity::Warning,
        when: "pcie.link.width.current never reaches pcie.link.width.max during the run (e.g. x8 of x16), or, on \
               a GPU busy at times (utilization.gpu >= busy_util (80) %), pcie.link.gen.current never reaches \
               pcie.link.gen.max (a link that drops to gen 1 at idle and comes back under load is power saving): \
               the link trained narrower or slower than the GPU and the system support (a badly seated card, a \
               riser, a dirty or damaged slot); host-device copies run at a fraction of their speed",
        fix: "reseat the GPU or its riser, check the slot and the BIOS's PCIe settings (lane bifurcation, link \
              speed), move the card to another slot to tell card from slot; nvidia-smi -q -d PCIE shows the link",
    },
    Rule {
        id: "clocks_locked",
        severity: Severity::Warning,
        when: "clocks.sm.busy_mean (the SM clock while utilization.gpu >= busy_util (80) %, sw_power_cap rows \
               left out) is below clocks_locked_pct (75) % of clocks.max.sm over at least 10 busy samples, with \
               no thermal or hardware power reason active in more than throttle_pct (5) % of the samples; \
               without the clock event reasons recorded, only when power.draw stays below 90 % of power.limit \
               (a board at its power limit may be capped unseen): the clocks were locked or capped \
               (application clocks, nvidia-smi -lgc / -ac), not slowed by heat or power",
        fix: "if the lock is not deliberate, reset it: nvidia-smi -i N -rgc (locked clocks) and -rac \
              (application clocks), as root; nvidia-smi -q -d CLOCK shows the clocks and what holds them",
    },
    Rule {
        id: "shared_gpu",
        severity: Severity::Warning,
        when: "in the per-process table (record --processes), processes of another job (proc.job false) on a GPU \
               the job uses, in the same ticks as the job's, in at least shared_pct (25) % of the ticks the job \
               is on it; without a job recorded, processes of a second user beside the GPU's main user (the one \
               on it most) in that share of its ticks. The job's GPUs that nobody else used are not flagged",
        fix: "ask the scheduler for exclusive GPUs (Slurm --exclusive or --gres with a cgroup-constrained \
              device list, Kubernetes device plugins), set the compute mode to EXCLUSIVE_PROCESS \
              (nvidia-smi -c 3), or find who runs there (the evidence names the user and command)",
    },
    Rule {
        id: "hot_gpu",
        severity: Severity::Warning,
        when: "among at least three GPUs of one host and model in use, a GPU's temperature while busy is at least \
               hot_gpu_c (10) C above the median of its siblings' (each the mean temperature.gpu over the samples \
               with utilization.gpu >= busy_util (80) %; over all samples when one of them is never that busy) \
               while its utilization.gpu.mean is within \
               imbalance_util (20) points of theirs (the same load), and it does not fire thermal_throttling: \
               its cooling is failing before any throttle shows",
        fix: "check that GPU's cooling: its fan (nvidia-smi fan.speed, the chassis fans), a blocked or dusty \
              intake, the heatsink's seating and thermal paste; swap it with a sibling's slot to tell board from \
              slot",
    },
];

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The rule that fired ([`Rule::id`]).
    pub rule: &'static str,
    /// The rule's severity.
    pub severity: Severity,
    /// The host it holds for.
    pub host: String,
    /// GPU label (index, or uuid), or None for a host-wide finding.
    pub gpu: Option<String>,
    /// The figures that made it fire.
    pub evidence: String,
    /// What to do about it ([`Rule::fix`]).
    pub fix: &'static str,
}

fn rule(id: &str) -> &'static Rule {
    RULES.iter().find(|r| r.id == id).unwrap_or(&RULES[0])
}

/// A figure of the evidence with `digits` decimals, `-` when missing.
fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

/// A UTC µs instant as text.
fn when(us: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_micros(us)
        .map_or_else(|| "-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

/// What the rules need of one GPU.
pub(crate) struct GpuView<'a> {
    pub label: String,
    pub stats: &'a StatValues,
    /// The GPU's model, to compare it with its own kind only.
    pub name: Option<String>,
    pub uuid: Option<String>,
    /// The last row with readings and the last row of the GPU, empty ones included (UTC µs).
    pub(crate) last_data: i64,
    pub(crate) last_row: i64,
    /// The first row with readings (UTC µs).
    pub(crate) first_data: i64,
    /// The per-row facts beyond the statistics (None: a GPU known only by its statistics).
    pub(crate) facts: Option<&'a crate::facts::FactsAcc>,
    /// The lowest power.draw of the GPU (its floor: idle, or a hang's draw).
    pub(crate) power_min: Option<f64>,
}

#[cfg(test)]
impl<'a> GpuView<'a> {
    /// A GPU known only by its statistics (no empty rows).
    pub(crate) fn new(label: String, stats: &'a StatValues) -> GpuView<'a> {
        GpuView {
            label,
            stats,
            name: None,
            uuid: None,
            last_data: 0,
            last_row: 0,
            first_data: 0,
            facts: None,
            power_min: None,
        }
    }
}

const UTIL_MEAN: Stat = Stat::mean(Field::UtilGpu);
const SM_MEAN: Stat = Stat::mean(Field::SmActive);

/// The findings of one host, as the rules add them.
struct Findings<'a> {
    host: &'a str,
    list: Vec<Finding>,
}

impl Findings<'_> {
    fn push(&mut self, id: &'static str, gpu: Option<&str>, evidence: String) {
        let r = rule(id);
        self.push_as(id, r.severity, gpu, evidence);
    }

    /// A finding of a rule whose severity depends on the evidence.
    fn push_as(
        &mut self,
        id: &'static str,
        severity: Severity,
        gpu: Option<&str>,
        evidence: String,
    ) {
        let r = rule(id);
        self.list.push(Finding {
            rule: r.id,
            severity,
            host: self.host.to_string(),
            gpu: gpu.map(str::to_string),
            evidence,
            fix: r.fix,
        });
    }
}

/// `gpu_lost`; whether the GPU stopped answering before the end of its host's recording (`end`).
fn gpu_lost(out: &mut Findings<'_>, g: &GpuView<'_>, end: i64, th: &Thresholds) -> bool {
    let s = g.stats;
    let Some(iv) = s.get(Stat::IntervalS) else { return false };
    let empty = s.get(Stat::EmptyRows).unwrap_or(0.0);
    let tail_s = (end - g.last_data) as f64 / 1e6;
    if tail_s <= th.gap_intervals * iv {
        return false;
    }
    let how = if g.last_row > g.last_data {
        format!("its rows are empty ({} empty rows)", num(Some(empty), 0))
    } else {
        "it has no rows while the host's other GPUs do".to_string()
    };
    let evidence = format!(
        "no reading after {} UTC: {how} until the end of the recording at {} UTC ({} s); coverage_pct {}",
        when(g.last_data),
        when(end),
        num(Some(tail_s), 0),
        num(s.get(Stat::CoveragePct), 1)
    );
    out.push("gpu_lost", Some(&g.label), evidence);
    true
}

/// `memory_health`: pending or failed row remaps, pending page retirements, rising uncorrected ECC.
fn memory_health(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    let at_least_one = |f: Field| s.get(Stat::HealthMax(f)).is_some_and(|v| v >= 1.0);
    let failed = at_least_one(Field::RemappedFailure);
    let rising = s.get(Stat::EccIncrease).is_some_and(|v| v > 0.0);
    // A corrected-error storm: many corrected errors an hour (an ageing or failing memory).
    let corrected = g.facts.and_then(|d| d.corrected_increase());
    let hours = s.get(Stat::SpanS).unwrap_or(0.0).max(1.0) / 3600.0;
    let storm = corrected
        .is_some_and(|c| c >= th.ecc_corrected_per_h && c / hours >= th.ecc_corrected_per_h);
    if !(failed
        || rising
        || storm
        || at_least_one(Field::RemappedPending)
        || at_least_one(Field::RetiredPending))
    {
        return;
    }
    let mut e = String::new();
    for field in crate::facts::HEALTH {
        if let Some(v) = s.get(Stat::HealthMax(field)) {
            let _ = write!(
                e,
                "{}{} {}",
                if e.is_empty() { "" } else { ", " },
                Stat::HealthMax(field),
                num(Some(v), 0)
            );
        }
    }
    if let Some(v) = s.get(Stat::EccIncrease) {
        let _ = write!(
            e,
            "{}{} {}",
            if e.is_empty() { "" } else { ", " },
            Stat::EccIncrease,
            num(Some(v), 0)
        );
    }
    if let Some(c) = corrected.filter(|_| storm) {
        let _ = write!(
            e,
            "{}ecc.errors.corrected.volatile.total rose by {} ({} an hour)",
            if e.is_empty() { "" } else { ", " },
            num(Some(c), 0),
            num(Some(c / hours), 0)
        );
    }
    let severity = if failed { Severity::Error } else { Severity::Warning };
    out.push_as("memory_health", severity, Some(&g.label), e);
}

/// The draw (W) under which a board counts as idle: its lowest draw in the run plus
/// `hang_power_pct` of the way up to a reference (its power limit, else its highest draw in the run),
/// kept between `hang_power_pct` and `hang_power_max_pct` of the reference.
struct IdleDraw {
    watts: f64,
    floor: f64,
    reference: f64,
    of: &'static str,
}

fn idle_draw(g: &GpuView<'_>, limit: Option<f64>, th: &Thresholds) -> Option<IdleDraw> {
    let limit = limit.filter(|&l| l.is_finite() && l > 0.0);
    let (reference, of) = match (limit, g.stats.get(Stat::max(Field::PowerDraw))) {
        (Some(l), _) => (l, "power.limit"),
        (None, Some(m)) if m > 0.0 => (m, "the highest power.draw of the run"),
        _ => return None,
    };
    let pct = th.hang_power_pct / 100.0;
    let floor = g.power_min.filter(|&m| m.is_finite() && m >= 0.0).unwrap_or(0.0);
    let (lo, hi) =
        (pct * reference, (th.hang_power_max_pct / 100.0 * reference).max(pct * reference));
    let watts = (floor + pct * (reference - floor)).clamp(lo, hi);
    Some(IdleDraw { watts, floor, reference, of })
}

/// What `idle_allocated` says when the GPU worked now and then: a server keeps its model loaded.
const SERVER_FIX: &str = "if the holder is a server keeping a model loaded between requests (vLLM, Triton, \
     a notebook's model), the memory is its working set: share the GPU (MIG, MPS), scale the server to zero \
     when idle, or accept it; otherwise find the process (nvidia-smi --query-compute-apps=pid,used_memory, \
     or record --processes) and end it or free its memory";

/// `idle_allocated`; whether the GPU held memory while idle for most of the run: memory held,
/// utilization idle and, where power.draw is recorded, the board near its idle draw, for at least
/// `held_idle_min_s` in all.
fn idle_allocated(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) -> bool {
    let s = g.stats;
    let Some(p) = s.get(Stat::HeldIdlePct).filter(|&p| p > 0.0) else { return false };
    let samples = s.get(Stat::Samples).unwrap_or(0.0);
    // Power above the board's idle draw is work (a kernel the utilization sampling missed).
    let limit = g.facts.and_then(|d| d.config_range(Field::PowerLimit)).map(|r| r.1);
    let (p, quiet) = match (g.facts, idle_draw(g, limit, th)) {
        (Some(d), Some(w)) if d.held_idle_n > 0 => {
            let n = d.held_idle_below(w.watts);
            let note = format!(
                " and power.draw < {} W (near the board's idle draw)",
                num(Some(w.watts), 0)
            );
            (p * n as f64 / d.held_idle_n as f64, note)
        }
        _ => (p, String::new()),
    };
    let held_s = s.get(Stat::IntervalS).map(|iv| samples * p / 100.0 * iv);
    if p < th.held_idle_pct || held_s.is_some_and(|h| h < th.held_idle_min_s) {
        return false;
    }
    // A MIG instance's activity is its GPM sm.active (NVML gives no utilization.gpu per instance).
    let by = if s.get(UTIL_MEAN).is_none() && s.get(SM_MEAN).is_some() {
        ("sm.active", SM_MEAN)
    } else {
        ("utilization.gpu", UTIL_MEAN)
    };
    let active = s.get(Stat::IdlePct).map_or(0.0, |i| 100.0 - i);
    let server = active >= 1.0;
    let mut evidence = format!(
        "memory.used >= {} MiB with {} < {}%{quiet} in {}% of {} samples ({}); memory.used peak {} MiB, {} \
         mean {}%",
        th.held_mem_mib,
        by.0,
        th.idle_util,
        num(Some(p), 1),
        num(Some(samples), 0),
        held_s.map_or_else(|| "-".to_string(), dur),
        num(s.get(Stat::max(Field::MemUsed)), 0),
        by.0,
        num(s.get(by.1), 1)
    );
    if server {
        let _ = write!(
            evidence,
            "; it worked in {}% of the samples between idle stretches: the holder may be a server keeping \
             a model loaded between requests",
            num(Some(active), 1)
        );
    }
    out.push("idle_allocated", Some(&g.label), evidence);
    if let (true, Some(last)) = (server, out.list.last_mut()) {
        last.fix = SERVER_FIX;
    }
    true
}

/// `unused_gpu`; whether the GPU is unused.
fn unused_gpu(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) -> bool {
    let s = g.stats;
    let idle = s.get(Stat::IdlePct);
    let unused = idle.is_some_and(|i| i >= th.unused_idle_pct);
    // Memory held while idle, for too short a time to be idle_allocated: not unused either.
    let held = s.get(Stat::HeldIdlePct).is_some_and(|p| p >= th.held_idle_pct);
    if unused && !held {
        let evidence = format!(
            "utilization.gpu < {}% in {}% of {} samples (max {}%), memory.used peak {} MiB",
            th.idle_util,
            num(idle, 1),
            num(s.get(Stat::Samples), 0),
            num(s.get(Stat::max(Field::UtilGpu)), 0),
            num(s.get(Stat::max(Field::MemUsed)), 0)
        );
        out.push("unused_gpu", Some(&g.label), evidence);
    }
    unused
}

fn input_bound(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    if let Some(ib) = s.get(Stat::InputBoundPct)
        && ib >= th.input_bound_pct
    {
        let by = if s.get(SM_MEAN).is_some() {
            "utilization.gpu and sm.active"
        } else {
            "utilization.gpu"
        };
        let cpu = if s.get(Stat::max(Field::JobGpuMemory)).is_some() {
            "job.cpu"
        } else {
            "cpu.util.max_core"
        };
        let evidence = format!(
            "in {}% of samples (input_bound_pct) the GPU held work, {by} < {}% and {cpu} >= {}% (utilization.gpu \
             mean {}%, memory.used peak {} MiB)",
            num(Some(ib), 0),
            th.input_bound_util,
            th.pegged_core,
            num(s.get(UTIL_MEAN), 1),
            num(s.get(Stat::max(Field::MemUsed)), 0)
        );
        out.push("input_bound", Some(&g.label), evidence);
    }
}

/// `oom_risk` and `batch_headroom` (not on a hung GPU: its utilization is no sign of work).
fn memory(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds, hung: bool) {
    let s = g.stats;
    let mem_pct = s.get(Stat::MemoryUsedMaxPct);
    if let Some(p) = mem_pct
        && p >= th.oom_mem_pct
    {
        let evidence = format!(
            "memory.used peak {} MiB = {}% of {} MiB",
            num(s.get(Stat::max(Field::MemUsed)), 0),
            num(Some(p), 1),
            num(s.get(Stat::MemoryTotal), 0)
        );
        out.push("oom_risk", Some(&g.label), evidence);
    }
    if let (Some(p), Some(u)) = (mem_pct, s.get(UTIL_MEAN))
        && p < th.headroom_mem_pct
        && u >= th.headroom_util
        && !hung
    {
        let evidence = format!(
            "memory.used peak {}% of memory.total at mean utilization {}%",
            num(Some(p), 1),
            num(Some(u), 1)
        );
        out.push("batch_headroom", Some(&g.label), evidence);
    }
}

/// The reasons among `reasons` a GPU had, with their shares.
fn reason_list(s: &StatValues, reasons: &[Reason]) -> String {
    let mut e = String::new();
    for &r in reasons {
        if let Some(v) = s.get(Stat::Throttle(r)).filter(|&v| v > 0.0) {
            let _ = write!(
                e,
                "{}{} {}%",
                if e.is_empty() { "" } else { ", " },
                r.name(),
                num(Some(v), 1)
            );
        }
    }
    e
}

/// Hardware power reasons: a warning on the GPU.
const HW_POWER: [Reason; 2] = [Reason::HwSlowdown, Reason::HwPowerBrakeSlowdown];

/// `thermal_throttling`, and `power_throttling` for the hardware power reasons.
fn throttling(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    if let Some(t) = s.get(Stat::ThrottleThermalPct)
        && t > th.throttle_pct
    {
        let evidence = format!(
            "thermal slowdown in {}% of samples ({}); temperature.gpu max {} C",
            num(Some(t), 1),
            reason_list(s, &THERMAL),
            num(s.get(Stat::max(Field::TempGpu)), 0)
        );
        out.push("thermal_throttling", Some(&g.label), evidence);
    }
    if HW_POWER.iter().any(|&r| s.get(Stat::Throttle(r)).is_some_and(|v| v > th.throttle_pct)) {
        let evidence = format!(
            "hardware power slowdown ({}); power.draw mean {} W, max {} W",
            reason_list(s, &POWER),
            num(s.get(Stat::mean(Field::PowerDraw)), 0),
            num(s.get(Stat::max(Field::PowerDraw)), 0)
        );
        out.push("power_throttling", Some(&g.label), evidence);
    }
}

/// `power_throttling` as one info line for the host: the GPUs held at their power limit
/// (sw_power_cap), normal at full load.
fn power_cap(out: &mut Findings<'_>, gpus: &[GpuView<'_>], th: &Thresholds) {
    let mut e = String::new();
    let (mut util, mut power) = (Vec::new(), Vec::new());
    for g in gpus {
        if let Some(v) =
            g.stats.get(Stat::Throttle(Reason::SwPowerCap)).filter(|&v| v > th.throttle_pct)
        {
            let _ = write!(
                e,
                "{}GPU {} {}%",
                if e.is_empty() { "" } else { ", " },
                g.label,
                num(Some(v), 1)
            );
            util.extend(g.stats.get(UTIL_MEAN));
            power.extend(g.stats.get(Stat::max(Field::PowerDraw)));
        }
    }
    if e.is_empty() {
        return;
    }
    let lo = num(util.iter().copied().reduce(f64::min), 1);
    let hi = num(util.iter().copied().reduce(f64::max), 1);
    let range = if lo == hi { lo } else { format!("{lo}-{hi}") };
    let evidence = format!(
        "throttle.sw_power_cap_pct: {e}; utilization.gpu mean {range}%, power.draw max {} W: the boards reached \
         their power limit",
        num(power.iter().copied().reduce(f64::max), 0)
    );
    out.push_as("power_throttling", Severity::Info, None, evidence);
}

/// `straggler`: the GPUs in use, grouped by model, each against the median SM clock of the others
/// while busy.
fn straggler(out: &mut Findings<'_>, gpus: &[&GpuView<'_>], th: &Thresholds) {
    let job_known = gpus.iter().any(|g| g.stats.get(Stat::max(Field::JobGpuMemory)).is_some());
    let in_job = |g: &GpuView<'_>| {
        !job_known || g.stats.get(Stat::max(Field::JobGpuMemory)).is_some_and(|m| m > 0.0)
    };
    let clocked: Vec<(&GpuView<'_>, f64)> = gpus
        .iter()
        .filter(|g| in_job(g))
        .filter_map(|g| g.stats.get(Stat::BusyClock).map(|c| (*g, c)))
        .collect();
    for &(g, clock) in &clocked {
        let mut others: Vec<(&str, f64)> = clocked
            .iter()
            .filter(|(o, _)| o.label != g.label && o.name == g.name)
            .map(|(o, c)| (o.label.as_str(), *c))
            .collect();
        if others.is_empty() {
            continue;
        }
        others.sort_by(|a, b| a.1.total_cmp(&b.1));
        let k = others.len();
        let median = if k % 2 == 1 {
            others[k / 2].1
        } else {
            (others[k / 2 - 1].1 + others[k / 2].1) / 2.0
        };
        let below = 100.0 * (median - clock) / median;
        if median > 0.0 && below > th.straggler_clock_pct {
            let mut names: Vec<&str> = others.iter().map(|o| o.0).collect();
            names.sort_unstable();
            let evidence = format!(
                "clocks.sm.busy_mean {} MHz, {}% below the median {} MHz of GPUs {} (SM clock while utilization.gpu \
                 >= {}% without sw_power_cap); throttle.thermal_pct {}, throttle.power_pct {}",
                num(Some(clock), 0),
                num(Some(below), 1),
                num(Some(median), 0),
                names.join(", "),
                th.busy_util,
                num(g.stats.get(Stat::ThrottleThermalPct), 1),
                num(g.stats.get(Stat::ThrottlePowerPct), 1)
            );
            out.push("straggler", Some(&g.label), evidence);
        }
    }
}

/// A GPU's mean utilization.gpu over its busy span: the GPU, the mean and the span (first to last
/// sample at or above idle_util; None without the per-row facts, the mean then the whole run's).
#[derive(Clone, Copy)]
struct BusyMean<'a> {
    label: &'a str,
    mean: f64,
    span: Option<(i64, i64)>,
}

fn busy_mean<'a>(g: &'a GpuView<'_>) -> Option<BusyMean<'a>> {
    let mean = g.stats.get(UTIL_MEAN)?;
    let span = g.facts.map(|d| d.busy_span);
    let label = g.label.as_str();
    Some(match span.and_then(|b| b.inside().zip(b.range())) {
        Some((inside, range)) => {
            BusyMean { label, mean: (mean / inside).min(100.0), span: Some(range) }
        }
        None => BusyMean { label, mean, span: None },
    })
}

/// `imbalance` between the GPUs in use, each over its busy span; none between GPUs whose busy
/// spans differ (separate jobs, not one job's uneven ranks).
fn imbalance(out: &mut Findings<'_>, used: &[&GpuView<'_>], th: &Thresholds) {
    let means: Vec<BusyMean<'_>> = used.iter().filter_map(|g| busy_mean(g)).collect();
    let (Some(hi), Some(lo)) = (
        means.iter().copied().max_by(|a, b| a.mean.total_cmp(&b.mean)),
        means.iter().copied().min_by(|a, b| a.mean.total_cmp(&b.mean)),
    ) else {
        return;
    };
    if means.len() < 2 || hi.mean - lo.mean <= th.imbalance_util {
        return;
    }
    let iv =
        median(used.iter().filter_map(|g| g.stats.get(Stat::IntervalS)).collect()).unwrap_or(0.0);
    if let (Some(a), Some(b)) = (hi.span, lo.span) {
        let longest = (a.1 - a.0).max(b.1 - b.0) as f64 / 1e6;
        let slack = (0.1 * longest).max(th.gap_intervals * iv) * 1e6;
        if ((a.0 - b.0).abs() as f64) > slack || ((a.1 - b.1).abs() as f64) > slack {
            return;
        }
    }
    let evidence = format!(
        "mean utilization.gpu over each GPU's busy span: GPU {} {}% vs GPU {} {}% ({} points apart)",
        hi.label,
        num(Some(hi.mean), 1),
        lo.label,
        num(Some(lo.mean), 1),
        num(Some(hi.mean - lo.mean), 1)
    );
    out.push("imbalance", None, evidence);
}

fn host_swap(out: &mut Findings<'_>, host_stats: &StatValues, th: &Thresholds) {
    if let Some(sw) = host_stats.get(Stat::SwapRange)
        && sw > th.swap_mib
    {
        let evidence = format!(
            "swap.used.range {} MiB (swap.used peak {} MiB); mem.used peak {}% of mem.total",
            num(Some(sw), 0),
            num(host_stats.get(Stat::max(Field::SwapUsed)), 0),
            num(host_stats.get(Stat::MemUsedMaxPct), 1)
        );
        out.push("host_swap", None, evidence);
    }
}

/// `host_memory`: host RAM nearly full for `host_mem_min_s` or more (`pressed` ticks at the
/// GPUs' median sample spacing).
fn host_memory(
    out: &mut Findings<'_>,
    gpus: &[GpuView<'_>],
    host_stats: &StatValues,
    pressed: u64,
    th: &Thresholds,
) {
    let Some(iv) = median(gpus.iter().filter_map(|g| g.stats.get(Stat::IntervalS)).collect())
    else {
        return;
    };
    let held = pressed as f64 * iv;
    if pressed == 0 || held < th.host_mem_min_s {
        return;
    }
    let ticks = host_stats.get(Stat::Ticks).unwrap_or(0.0);
    let evidence = format!(
        "mem.used >= {}% of mem.total ({} MiB) in {pressed} of {} ticks ({} of the run); mem.used peak {}%; \
         swap.used peak {} MiB",
        th.host_mem_pct,
        num(host_stats.get(Stat::MemTotal), 0),
        num(Some(ticks), 0),
        dur(held),
        num(host_stats.get(Stat::MemUsedMaxPct), 1),
        num(host_stats.get(Stat::max(Field::SwapUsed)), 0)
    );
    out.push("host_memory", None, evidence);
}

/// The factor that turns a GPU's GPM columns into percent: 100 when a busy GPU (utilization.gpu
/// mean >= 50 %) has every GPM maximum at most 1, i.e. the columns were written as fractions 0-1
/// (DCGM's convention) rather than the catalogue's percent; else 1.
fn gpm_scale(s: &StatValues) -> f64 {
    let maxima: Vec<f64> = [Field::SmActive, Field::TensorActive, Field::DramActive]
        .iter()
        .filter_map(|&f| s.get(Stat::max(f)))
        .collect();
    let busy = s.get(UTIL_MEAN).is_some_and(|u| u >= 50.0);
    if busy && !maxima.is_empty() && maxima.iter().all(|&m| m <= 1.0) { 100.0 } else { 1.0 }
}

/// A GPM statistic in percent ([`gpm_scale`]).
fn gpm_percent(s: &StatValues, stat: Stat) -> Option<f64> {
    s.get(stat).map(|v| v * gpm_scale(s))
}

/// What the evidence of a GPM rule adds when the columns were fractions.
fn gpm_note(s: &StatValues) -> &'static str {
    if gpm_scale(s) > 1.0 {
        " (GPM columns recorded as fractions 0-1, read as percent)"
    } else {
        ""
    }
}

/// A duration in seconds as text: `42 s`, `12 min`, `3.5 h`.
fn dur(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// `hang`; whether the GPU shows a hung collective: utilization.gpu pinned high while the board
/// draws about its idle power (a share of its power limit, or of its own highest draw in the run),
/// the SMs idle where recorded and memory held, for `hang_min_s` and more after at least as long
/// of other samples.
fn hang(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) -> bool {
    let s = g.stats;
    let (Some(d), Some(iv)) = (g.facts, s.get(Stat::IntervalS).filter(|&v| v > 0.0)) else {
        return false;
    };
    let Some(IdleDraw { watts, floor, reference, of }) = idle_draw(g, Some(d.power_limit), th)
    else {
        return false;
    };
    let Some(below) = d.hang.below(watts) else { return false };
    let (n, first, end) = (below.n, below.first, below.last);
    let held = n as f64 * iv;
    // The stretch: the `n` samples up to the last one (a few stray samples earlier, as training
    // starts, do not move its start), from the first one at the earliest.
    let start = first.max(end - ((n - 1) as f64 * iv * 1e6) as i64);
    let lasted = (end - start) as f64 / 1e6 + iv;
    let before = (start - g.first_data) as f64 / 1e6;
    // Long enough, after a while of other work (a job on small kernels from its start is no hang).
    if held < th.hang_min_s || before < th.hang_min_s {
        return false;
    }
    let until = if g.last_data - end <= (th.gap_intervals * iv * 1e6) as i64 {
        "until the end of the recording (still hung)".to_string()
    } else {
        format!("until {} UTC", when(end))
    };
    let sm = if s.get(SM_MEAN).is_some() {
        format!(", sm.active < {}%", th.idle_util)
    } else {
        String::new()
    };
    let mem = if s.get(Stat::max(Field::MemUsed)).is_some() {
        "memory held"
    } else {
        "memory.used not recorded"
    };
    let evidence = format!(
        "from {} UTC, {} into the run, for {} {until}: utilization.gpu >= {}% while power.draw < {} W (the \
         board's lowest draw {} W plus {}% of the way to {of}, {} W){sm}, {mem}, in {n} samples; power.draw \
         max {} W",
        when(start),
        dur(before),
        dur(lasted),
        th.hang_util,
        num(Some(watts), 0),
        num(Some(floor), 0),
        th.hang_power_pct,
        num(Some(reference), 0),
        num(s.get(Stat::max(Field::PowerDraw)), 0)
    );
    out.push("hang", Some(&g.label), evidence);
    true
}

/// `power_limit_low` and `pcie_link`: the board's configuration as recorded.
fn board_config(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let Some(d) = g.facts else { return };
    if let (Some((_, limit)), Some((_, default))) =
        (d.config_range(Field::PowerLimit), d.config_range(Field::PowerDefaultLimit))
        && default > 0.0
        && limit < th.power_limit_low_pct / 100.0 * default
    {
        let evidence = format!(
            "power.limit {} W, {}% of power.default_limit {} W; power.draw max {} W",
            num(Some(limit), 0),
            num(Some(100.0 * limit / default), 0),
            num(Some(default), 0),
            num(g.stats.get(Stat::max(Field::PowerDraw)), 0)
        );
        out.push("power_limit_low", Some(&g.label), evidence);
    }
    // The width does not change with the load; the generation drops at idle to save power, so it
    // counts only on a GPU that was busy at times.
    let busy = d.busy_clock_n > 0
        || g.stats.get(Stat::max(Field::UtilGpu)).is_some_and(|u| u >= th.busy_util);
    let mut short = Vec::new();
    let links = [
        (Field::PcieLinkWidthCurrent, Field::PcieLinkWidthMax, "x", true),
        (Field::PcieLinkGenCurrent, Field::PcieLinkGenMax, "gen ", busy),
    ];
    for (cur, max, unit, counts) in links {
        if let (Some((_, now)), Some((_, top)), true) =
            (d.config_range(cur), d.config_range(max), counts)
            && now > 0.0
            && now < top
        {
            short.push(format!("{cur} at most {unit}{now} during the run, of {unit}{top} ({max})"));
        }
    }
    if !short.is_empty() {
        let while_busy = if busy { " (busy at times)" } else { "" };
        out.push("pcie_link", Some(&g.label), format!("{}{while_busy}", short.join("; ")));
    }
}

/// `clocks_locked`: the SM clock held far below the board's maximum under load, with no thermal
/// or power reason for it (application clocks, `nvidia-smi -lgc`).
fn clocks_locked(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    let (Some(d), Some(busy)) = (g.facts, s.get(Stat::BusyClock)) else { return };
    let Some((_, max)) = d.config_range(Field::ClockMaxSm).filter(|r| r.1 > 0.0) else { return };
    let share = 100.0 * busy / max;
    if d.busy_clock_n < 10 || share >= th.clocks_locked_pct {
        return;
    }
    let over = |r: &[Reason]| {
        r.iter().any(|&x| s.get(Stat::Throttle(x)).is_some_and(|v| v > th.throttle_pct))
    };
    if over(&THERMAL) || over(&HW_POWER) {
        return;
    }
    // Without the clock event reasons, a board at its power limit may be capped unseen.
    let limit = d.config_range(Field::PowerLimit).map(|r| r.1);
    let draw = s.get(Stat::max(Field::PowerDraw));
    let reasons = s.get(Stat::ThrottleThermalPct).is_some();
    let capped = match (draw, limit) {
        (Some(p), Some(l)) => p >= 0.9 * l,
        _ => !reasons,
    };
    if capped && !reasons {
        return;
    }
    let why = if reasons {
        format!(
            "no thermal or hardware power reason (throttle.thermal_pct {}, throttle.power_pct {})",
            num(s.get(Stat::ThrottleThermalPct), 1),
            num(s.get(Stat::ThrottlePowerPct), 1)
        )
    } else {
        "clock event reasons not recorded".to_string()
    };
    let evidence = format!(
        "clocks.sm.busy_mean {} MHz, {}% of clocks.max.sm {} MHz, in {} busy samples (utilization.gpu >= {}%); \
         {why}; power.draw max {} W of power.limit {} W",
        num(Some(busy), 0),
        num(Some(share), 0),
        num(Some(max), 0),
        d.busy_clock_n,
        th.busy_util,
        num(draw, 0),
        num(limit, 0)
    );
    out.push("clocks_locked", Some(&g.label), evidence);
}

/// `memory_growth`: memory.used rising steadily to the end of the run.
fn memory_growth(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    let (Some(d), Some(span), Some(total)) =
        (g.facts, s.get(Stat::SpanS), s.get(Stat::MemoryTotal).filter(|&t| t > 0.0))
    else {
        return;
    };
    let Some(fit) = d.mem_trend.fit() else { return };
    let rise = fit.slope * span;
    let late = d.mem_trend.max_ts >= g.last_data - (0.2 * span * 1e6) as i64;
    if span < th.growth_min_s || rise < th.growth_pct / 100.0 * total || fit.r2 < 0.8 || !late {
        return;
    }
    let now = fit.at(g.last_data);
    let left_s = (total - now) / fit.slope;
    let reach = if left_s <= 0.0 {
        "it is at memory.total already".to_string()
    } else {
        let at = g.last_data.saturating_add((left_s * 1e6) as i64);
        format!(
            "at this rate it reaches memory.total ({} MiB) in {} (at {} UTC)",
            num(Some(total), 0),
            dur(left_s),
            when(at)
        )
    };
    let evidence = format!(
        "memory.used rises {} MiB/h (fitted over {}, r² {}): from {} to {} MiB along the line, peak {} MiB at {} UTC; \
         {reach}",
        num(Some(fit.slope * 3600.0), 0),
        dur(span),
        num(Some(fit.r2), 2),
        num(Some(fit.at(g.first_data)), 0),
        num(Some(now), 0),
        num(Some(d.mem_trend.max), 0),
        when(d.mem_trend.max_ts)
    );
    out.push("memory_growth", Some(&g.label), evidence);
}

/// `idle_stretches`: the GPU stops for minutes at a regular period.
fn idle_stretches(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    let (Some(d), Some(span), Some(iv)) = (g.facts, s.get(Stat::SpanS), s.get(Stat::IntervalS))
    else {
        return;
    };
    let seq = d.stretches.closed;
    let Some((period, cv)) = seq.period() else { return };
    // Each stretch's length counts its last sample's interval.
    let lost = seq.len_us as f64 / 1e6 + seq.k as f64 * iv;
    let share = 100.0 * lost / span.max(1.0);
    // Busy between the stops (training), not a load that comes and goes (an inference server).
    let between = s.get(UTIL_MEAN).map(|u| u * span / (span - lost).max(1.0));
    if seq.k < 3 || share < th.idle_lost_pct || cv > 0.5 || between.is_none_or(|b| b < th.busy_util)
    {
        return;
    }
    let evidence = format!(
        "{} stretches of utilization.gpu < {}% lasting at least {} s, {} long on average, every {} (from {} UTC \
         to {} UTC): {} of the run lost ({}%); utilization.gpu about {}% between them",
        seq.k,
        th.idle_util,
        th.idle_stretch_s,
        dur(lost / seq.k as f64),
        dur(period),
        when(seq.first),
        when(seq.last),
        dur(lost),
        num(Some(share), 1),
        num(between, 0)
    );
    out.push("idle_stretches", Some(&g.label), evidence);
}

/// `low_utilization`; whether the GPU does almost nothing over a long run.
fn low_utilization(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) -> bool {
    let s = g.stats;
    let (Some(u), Some(span)) = (s.get(UTIL_MEAN), s.get(Stat::SpanS)) else { return false };
    if u >= th.low_util || span < th.low_util_min_s {
        return false;
    }
    let evidence = format!(
        "mean utilization.gpu {}% over {} ({} samples, p95 {}%, max {}%); idle (< {}%) in {}% of them; \
         memory.used peak {} MiB",
        num(Some(u), 1),
        dur(span),
        num(s.get(Stat::Samples), 0),
        num(s.get(Stat::p95(Field::UtilGpu)), 0),
        num(s.get(Stat::max(Field::UtilGpu)), 0),
        th.idle_util,
        num(s.get(Stat::IdlePct), 1),
        num(s.get(Stat::max(Field::MemUsed)), 0)
    );
    out.push("low_utilization", Some(&g.label), evidence);
    true
}

/// The median of some values (None: none).
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let k = v.len();
    match k {
        0 => None,
        _ if k % 2 == 1 => Some(v[k / 2]),
        _ => Some((v[k / 2 - 1] + v[k / 2]) / 2.0),
    }
}

/// `hot_gpu`: among at least three GPUs of one host and model in use, under the same load (mean
/// utilization.gpu within imbalance_util points of its siblings' median), one runs hot_gpu_c or
/// more above the median of its siblings' temperatures while busy; GPUs already thermal-throttling are left to
/// thermal_throttling.
fn hot_gpu(out: &mut Findings<'_>, gpus: &[&GpuView<'_>], th: &Thresholds) {
    let temp = |g: &GpuView<'_>, busy: bool| g.facts.and_then(|d| d.temp(busy));
    for g in gpus {
        let sib: Vec<&&GpuView<'_>> =
            gpus.iter().filter(|o| o.label != g.label && o.name == g.name).collect();
        // While busy when every one of them was busy at times, else over all samples.
        let busy = temp(g, true).is_some() && sib.iter().all(|o| temp(o, true).is_some());
        let (Some(t), Some(u)) = (temp(g, busy), g.stats.get(UTIL_MEAN)) else { continue };
        let temps: Vec<f64> = sib.iter().filter_map(|o| temp(o, busy)).collect();
        let utils: Vec<f64> = sib.iter().filter_map(|o| o.stats.get(UTIL_MEAN)).collect();
        if temps.len() < 2 {
            continue;
        }
        let (Some(mt), Some(mu)) = (median(temps), median(utils)) else { continue };
        let throttled = g.stats.get(Stat::ThrottleThermalPct).is_some_and(|v| v > th.throttle_pct);
        if t - mt >= th.hot_gpu_c && (u - mu).abs() <= th.imbalance_util && !throttled {
            let evidence = format!(
                "temperature.gpu mean {} C {} (max {} C), {} C above the median {} C of its {} siblings at about the \
                 same load (utilization.gpu mean {}% vs {}%); throttle.thermal_pct {}",
                num(Some(t), 1),
                if busy {
                    format!("while busy (utilization.gpu >= {}%)", th.busy_util)
                } else {
                    "over all samples".into()
                },
                num(g.stats.get(Stat::max(Field::TempGpu)), 0),
                num(Some(t - mt), 1),
                num(Some(mt), 1),
                sib.len(),
                num(Some(u), 1),
                num(Some(mu), 1),
                num(g.stats.get(Stat::ThrottleThermalPct), 1)
            );
            out.push("hot_gpu", Some(&g.label), evidence);
        }
    }
}

/// `sm_idle_under_busy`: utilization.gpu says busy, sm.active says few SMs work.
fn sm_idle_under_busy(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    if let (Some(u), Some(sm)) = (s.get(UTIL_MEAN), gpm_percent(s, SM_MEAN))
        && u >= th.busy_util
        && sm < th.sm_idle
    {
        let evidence = format!(
            "mean utilization.gpu {}% but mean sm.active {}% (max {}%): kernels are running, on few SMs",
            num(Some(u), 1),
            num(Some(sm), 1),
            num(gpm_percent(s, Stat::max(Field::SmActive)), 1)
        );
        out.push("sm_idle_under_busy", Some(&g.label), evidence + gpm_note(s));
    }
}

/// `no_tensor_cores`: busy SMs, idle tensor cores.
fn no_tensor_cores(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    // Memory-bound kernels would not run faster on tensor cores.
    let memory_bound =
        gpm_percent(s, Stat::mean(Field::DramActive)).is_some_and(|d| d >= th.dram_bound);
    if let (Some(sm), Some(t)) =
        (gpm_percent(s, SM_MEAN), gpm_percent(s, Stat::mean(Field::TensorActive)))
        && sm >= th.tensor_sm_active
        && t < th.tensor_idle
        && !memory_bound
    {
        let evidence = format!(
            "mean sm.active {}% but mean tensor.active {}% (max {}%); fp32.active mean {}%, dram.active mean {}%",
            num(Some(sm), 1),
            num(Some(t), 2),
            num(gpm_percent(s, Stat::max(Field::TensorActive)), 1),
            num(gpm_percent(s, Stat::mean(Field::Fp32Active)), 1),
            num(gpm_percent(s, Stat::mean(Field::DramActive)), 1)
        );
        out.push("no_tensor_cores", Some(&g.label), evidence + gpm_note(s));
    }
}

/// `memory_bound`: DRAM bandwidth near its ceiling.
fn memory_bound(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    if let Some(d) = gpm_percent(s, Stat::mean(Field::DramActive))
        && d >= th.dram_bound
    {
        let evidence = format!(
            "mean dram.active {}% (max {}%) with mean sm.active {}%",
            num(Some(d), 1),
            num(gpm_percent(s, Stat::max(Field::DramActive)), 1),
            num(gpm_percent(s, SM_MEAN), 1)
        );
        out.push("memory_bound", Some(&g.label), evidence + gpm_note(s));
    }
}

/// `pcie_bound`: heavy host-to-device traffic while the SMs wait.
fn pcie_bound(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    if let (Some(rx), Some(sm)) = (s.get(Stat::mean(Field::PcieRxBytes)), gpm_percent(s, SM_MEAN))
        && rx >= th.pcie_rx_mib
        && sm < th.sm_idle
    {
        let evidence = format!(
            "mean pcie.rx.bytes {} MiB/s (max {}) while mean sm.active is {}%",
            num(Some(rx), 0),
            num(s.get(Stat::max(Field::PcieRxBytes)), 0),
            num(Some(sm), 1)
        );
        out.push("pcie_bound", Some(&g.label), evidence + gpm_note(s));
    }
}

/// `xid`: one finding per GPU and Xid of this host's events, with the Xid's usual action. An event
/// recorded without a GPU index is named by its uuid, or (an older recorder could not name a GPU that
/// fell off the bus) put on `fallback` when that is one GPU: the host's one lost GPU, or its only GPU.
fn xid(out: &mut Findings<'_>, events: &[EventRecord], gpus: &[GpuView<'_>], fallback: &[&str]) {
    let mut guessed = Vec::new();
    let resolved: Vec<EventRecord> = events
        .iter()
        .filter(|e| e.host == out.host && e.kind == "xid")
        .map(|e| {
            let mut e = e.clone();
            let uuid = e.uuid.as_deref().filter(|u| !u.is_empty());
            if e.gpu.is_none() {
                let by_uuid = uuid.and_then(|u| gpus.iter().find(|g| g.uuid.as_deref() == Some(u)));
                e.gpu = match (by_uuid, fallback) {
                    (Some(g), _) => g.label.parse().ok(),
                    (None, [one]) if uuid.is_none() => {
                        guessed.push(e.ts);
                        one.parse().ok()
                    }
                    _ => None,
                };
            }
            e
        })
        .collect();
    for (gpu, group) in xid_groups(out.host, &resolved) {
        let Some(first) = group.first() else { continue };
        let times = match group.last() {
            Some(last) if group.len() > 1 => {
                format!(" ({} times, last at {} UTC)", group.len(), when(last.ts))
            }
            _ => String::new(),
        };
        let note = match gpu {
            Some(g) if group.iter().any(|e| guessed.contains(&e.ts)) => {
                format!(" (recorded without a GPU; GPU {g} is the host's one lost or only GPU)")
            }
            _ => String::new(),
        };
        let evidence = format!(
            "{} at {} UTC{times}: {}{note}",
            first.label(),
            when(first.ts),
            first.meaning()
        );
        out.push("xid", gpu.map(|g| g.to_string()).as_deref(), evidence);
        if let (Some(action), Some(f)) = (first.action(), out.list.last_mut()) {
            f.fix = action;
        }
    }
}

/// A failed wrapped command of each input of `host` that records one: its command, exit code and
/// when it ended (the input's last row when the file does not say).
pub(crate) fn job_failed(host: &str, inputs: &[InputInfo], last_row: Option<i64>) -> Vec<Finding> {
    let mut out = Findings { host, list: Vec::new() };
    for i in inputs.iter().filter(|i| i.default_host == host) {
        let Some(j) = i.job.as_ref().filter(|j| j.failed()) else { continue };
        let code = j.exit_code.unwrap_or_default();
        let signal = if code > 128 { format!(" (signal {})", code - 128) } else { String::new() };
        let at = j.end.or(last_row).map_or_else(String::new, |t| format!(" at {} UTC", when(t)));
        let evidence = format!("`{}` exited with code {code}{signal}{at}", j.command);
        out.push("job_failed", None, evidence);
    }
    out.list
}

/// `shared_gpu` for each GPU of `host` that processes of another job (or, without job marks, another
/// user) shared with the job (or with its main user) in at least `shared_pct` % of the ticks.
pub(crate) fn shared_gpu(
    host: &str,
    sharing: &[crate::usage::Sharing],
    th: &Thresholds,
) -> Vec<Finding> {
    let mut out = Findings { host, list: Vec::new() };
    for s in sharing.iter().filter(|s| s.host == host) {
        let by_job = s.job_ticks > 0;
        let (shared, of, whose) = if by_job {
            (s.shared_job_ticks, s.job_ticks, "the job's")
        } else {
            (s.multi_user_ticks, s.ticks, "its main user's")
        };
        let pct = 100.0 * shared as f64 / of.max(1) as f64;
        if shared == 0 || pct < th.shared_pct {
            continue;
        }
        let main = s.user_ticks.iter().max_by_key(|(_, n)| **n).map(|(u, _)| u.as_str());
        let others: Vec<String> = if by_job {
            s.others.iter().map(|(u, c)| format!("{u} `{c}`")).collect()
        } else {
            s.user_ticks.keys().filter(|u| Some(u.as_str()) != main).cloned().collect()
        };
        let mem = s.other_mem_max.map_or_else(String::new, |m| {
            format!("; their proc.gpu_memory peak {} MiB", num(Some(m), 0))
        });
        let evidence = format!(
            "processes of {} beside {whose}{} in {shared} of {of} ticks ({}%): {}{mem}",
            if by_job { "another job" } else { "another user" },
            main.filter(|_| !by_job).map_or_else(String::new, |u| format!(" ({u})")),
            num(Some(pct), 1),
            others.join(", ")
        );
        let label = s.gpu.map(|g| g.to_string());
        out.push("shared_gpu", label.as_deref(), evidence);
    }
    out.list
}

/// Findings for one host, GPUs in report order, then the host-wide ones and the Xid events.
pub(crate) fn diagnose(
    host: &str,
    gpus: &[GpuView<'_>],
    host_stats: &StatValues,
    pressed_ticks: u64,
    events: &[EventRecord],
    th: &Thresholds,
) -> Vec<Finding> {
    let mut out = Findings { host, list: Vec::new() };
    let mut in_use: Vec<&GpuView<'_>> = Vec::new();
    let mut lost: Vec<&str> = Vec::new();
    let end = gpus.iter().map(|g| g.last_row).max().unwrap_or(0);
    for g in gpus {
        if gpu_lost(&mut out, g, end, th) {
            lost.push(&g.label);
        }
        memory_health(&mut out, g, th);
        let allocated = idle_allocated(&mut out, g, th);
        let idle = allocated || unused_gpu(&mut out, g, th);
        // Memory held or not: a GPU that does almost nothing (an unused one does nothing).
        let low = (allocated || !idle) && low_utilization(&mut out, g, th);
        let mut hung = false;
        if !idle {
            in_use.push(g);
            input_bound(&mut out, g, th);
            // A hung collective keeps utilization.gpu up with idle SMs: not a batch to grow.
            hung = hang(&mut out, g, th);
            if !hung {
                sm_idle_under_busy(&mut out, g, th);
            }
            if !low {
                idle_stretches(&mut out, g, th);
            }
            no_tensor_cores(&mut out, g, th);
            memory_bound(&mut out, g, th);
            pcie_bound(&mut out, g, th);
        }
        memory(&mut out, g, th, hung);
        memory_growth(&mut out, g, th);
        board_config(&mut out, g, th);
        if !idle && !hung {
            clocks_locked(&mut out, g, th);
        }
        throttling(&mut out, g, th);
    }
    straggler(&mut out, &in_use, th);
    hot_gpu(&mut out, &in_use, th);
    power_cap(&mut out, gpus, th);
    imbalance(&mut out, &in_use, th);
    host_swap(&mut out, host_stats, th);
    host_memory(&mut out, gpus, host_stats, pressed_ticks, th);
    // An event without a GPU belongs to the one lost GPU, or to the host's only GPU.
    let only: Vec<&str> = gpus.iter().map(|g| g.label.as_str()).collect();
    xid(&mut out, events, gpus, if lost.is_empty() && only.len() == 1 { &only } else { &lost });
    out.list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stat::Scope;

    fn stats(scope: Scope, pairs: &[(Stat, f64)]) -> StatValues {
        let mut s = StatValues::empty(scope);
        for &(n, v) in pairs {
            s.set(n, Some(v));
        }
        s
    }

    #[test]
    fn thresholds_parse_and_reject() {
        let mut t = Thresholds::default();
        t.set("idle_util=10").unwrap();
        assert_eq!(t.idle_util, 10.0);
        t.set(" oom_mem_pct = 90% ").unwrap();
        assert_eq!(t.oom_mem_pct, 90.0);
        assert!(t.set("nope=1").unwrap_err().contains("idle_util"));
        assert!(t.set("idle_util").is_err());
        assert!(t.set("idle_util=x").is_err());
        assert_eq!(t.values().len(), THRESHOLDS.len());
    }

    #[test]
    fn rules_fire_and_stay_silent() {
        let th = Thresholds::default();
        let healthy = stats(
            Scope::Gpu,
            &[
                (UTIL_MEAN, 90.0),
                (Stat::IdlePct, 2.0),
                (Stat::MemoryUsedMaxPct, 60.0),
                (Stat::ThrottleThermalPct, 0.0),
                (Stat::ThrottlePowerPct, 1.0),
                (Stat::InputBoundPct, 0.0),
            ],
        );
        let g = [GpuView::new("0".into(), &healthy), GpuView::new("1".into(), &healthy)];
        assert!(diagnose("h", &g, &StatValues::empty(Scope::Host), 0, &[], &th).is_empty());
        let hot = stats(
            Scope::Gpu,
            &[
                (UTIL_MEAN, 40.0),
                (Stat::IdlePct, 2.0),
                (Stat::MemoryUsedMaxPct, 97.0),
                (Stat::ThrottleThermalPct, 20.0),
                (Stat::Throttle(Reason::SwThermalSlowdown), 20.0),
                (Stat::InputBoundPct, 60.0),
            ],
        );
        let g = [GpuView::new("0".into(), &healthy), GpuView::new("1".into(), &hot)];
        let swap = stats(Scope::Host, &[(Stat::SwapRange, 900.0)]);
        let found = diagnose("h", &g, &swap, 0, &[], &th);
        let ids: Vec<&str> = found.iter().map(|f| f.rule).collect();
        assert_eq!(
            ids,
            ["input_bound", "oom_risk", "thermal_throttling", "imbalance", "host_swap"]
        );
        assert!(found[2].evidence.contains("(sw_thermal_slowdown 20.0%)"), "{}", found[2].evidence);
    }

    /// A GPU of a one-second recording from 0 to `end_s`, with these hang-like samples (draw, second).
    fn hang_view<'a>(s: &'a StatValues, d: &'a crate::facts::FactsAcc, end_s: i64) -> GpuView<'a> {
        GpuView { last_data: end_s * 1_000_000, facts: Some(d), ..GpuView::new("0".into(), s) }
    }

    /// `hang`: 100 % utilization at idle power after a while of work fires it (and not
    /// sm_idle_under_busy); the same from the start of the run, or at a working draw, does not.
    #[test]
    fn hang_fires_after_work_at_idle_power_only() {
        let th = Thresholds::default();
        let s = stats(
            Scope::Gpu,
            &[
                (UTIL_MEAN, 99.0),
                (Stat::IdlePct, 0.0),
                (SM_MEAN, 19.0),
                (Stat::IntervalS, 1.0),
                (Stat::max(Field::PowerDraw), 700.0),
            ],
        );
        let rows = |watts: f64, from: i64, stray: bool| {
            let mut d = crate::facts::FactsAcc::default();
            for t in from..3600 {
                d.hang.add(watts, t * 1_000_000);
            }
            if stray {
                d.hang.add(watts, 2_000_000);
            }
            d
        };
        let ids = |d: &crate::facts::FactsAcc| -> Vec<(&'static str, String)> {
            diagnose("h", &[hang_view(&s, d, 3599)], &StatValues::empty(Scope::Host), 0, &[], &th)
                .into_iter()
                .map(|f| (f.rule, f.evidence))
                .collect()
        };
        let hung = ids(&rows(100.0, 900, true));
        assert_eq!(hung.len(), 1, "{hung:?}");
        assert_eq!(hung[0].0, "hang");
        assert!(
            hung[0].1.contains("from 2026") || hung[0].1.contains("from 1970"),
            "{}",
            hung[0].1
        );
        assert!(
            hung[0].1.contains("15 min into the run, for 45 min until the end"),
            "{}",
            hung[0].1
        );
        // Without power.limit, the highest draw of the run is the reference (175 W of 700 W).
        assert!(hung[0].1.contains("highest power.draw"), "{}", hung[0].1);
        let mut limited = rows(80.0, 900, false);
        limited.power_limit = 400.0;
        assert!(
            ids(&limited)[0].1.contains("25% of the way to power.limit, 400 W"),
            "{:?}",
            ids(&limited)
        );
        for quiet in [rows(100.0, 10, false), rows(300.0, 900, false), rows(100.0, 3400, false)] {
            let found: Vec<&str> = ids(&quiet).iter().map(|f| f.0).collect();
            assert_eq!(found, ["sm_idle_under_busy"]);
        }
    }

    /// `low_utilization`, `hot_gpu` and `host_memory` fire on their cases and stay silent beside.
    #[test]
    fn low_utilization_hot_gpu_and_host_memory() {
        let th = Thresholds::default();
        let gpu = |util: f64, span: f64| {
            stats(
                Scope::Gpu,
                &[
                    (UTIL_MEAN, util),
                    (Stat::IdlePct, 40.0),
                    (Stat::SpanS, span),
                    (Stat::IntervalS, 1.0),
                ],
            )
        };
        let ids = |g: &[GpuView<'_>], pressed: u64| -> Vec<(&'static str, Option<String>)> {
            diagnose("h", g, &StatValues::empty(Scope::Host), pressed, &[], &th)
                .into_iter()
                .map(|f| (f.rule, f.gpu))
                .collect()
        };
        let (low, short, busy) = (gpu(3.0, 9000.0), gpu(3.0, 600.0), gpu(90.0, 9000.0));
        assert_eq!(
            ids(&[GpuView::new("0".into(), &low)], 0),
            [("low_utilization", Some("0".into()))]
        );
        assert!(ids(&[GpuView::new("0".into(), &short)], 0).is_empty());
        assert!(ids(&[GpuView::new("0".into(), &busy)], 0).is_empty());
        // 600 ticks of one second at >= 95 % of mem.total: host_memory; 599 do not.
        assert_eq!(ids(&[GpuView::new("0".into(), &busy)], 600), [("host_memory", None)]);
        assert!(ids(&[GpuView::new("0".into(), &busy)], 599).is_empty());
        // Four GPUs of one model at the same load; one runs 12 C hotter while busy.
        let temps = [65.0, 66.0, 78.0, 64.0];
        let accs: Vec<crate::facts::FactsAcc> = temps
            .iter()
            .map(|&t| {
                let mut d = crate::facts::FactsAcc::default();
                d.busy_temp_sum.add(t * 10.0);
                d.busy_temp_n = 10;
                d
            })
            .collect();
        let views = |n: usize| -> Vec<GpuView<'_>> {
            (0..n)
                .map(|k| GpuView {
                    facts: Some(&accs[k]),
                    name: Some("H100".into()),
                    ..GpuView::new(k.to_string(), &busy)
                })
                .collect()
        };
        assert_eq!(ids(&views(4), 0), [("hot_gpu", Some("2".into()))]);
        // Two siblings are too few to call one of them hot.
        let two: Vec<GpuView<'_>> = views(4).into_iter().skip(1).take(2).collect();
        assert!(ids(&two, 0).is_empty());
    }

    /// The GPM rules and `xid`: each fires on its own case and stays silent on a healthy Hopper GPU.
    #[test]
    fn gpm_rules_and_xid_fire_and_stay_silent() {
        let th = Thresholds::default();
        let gpu = |util: f64, sm: f64, tensor: f64, dram: f64, rx: f64| {
            stats(
                Scope::Gpu,
                &[
                    (UTIL_MEAN, util),
                    (Stat::IdlePct, 0.0),
                    (SM_MEAN, sm),
                    (Stat::mean(Field::TensorActive), tensor),
                    (Stat::mean(Field::DramActive), dram),
                    (Stat::mean(Field::PcieRxBytes), rx),
                ],
            )
        };
        let ids = |s: &StatValues, events: &[EventRecord]| -> Vec<&'static str> {
            let g = [GpuView::new("0".into(), s)];
            diagnose("h", &g, &StatValues::empty(Scope::Host), 0, events, &th)
                .iter()
                .map(|f| f.rule)
                .collect()
        };
        assert!(ids(&gpu(95.0, 70.0, 35.0, 40.0, 300.0), &[]).is_empty(), "healthy");
        assert_eq!(ids(&gpu(98.0, 12.0, 5.0, 10.0, 100.0), &[]), ["sm_idle_under_busy"]);
        assert_eq!(ids(&gpu(98.0, 80.0, 0.2, 30.0, 100.0), &[]), ["no_tensor_cores"]);
        assert_eq!(ids(&gpu(98.0, 60.0, 20.0, 85.0, 100.0), &[]), ["memory_bound"]);
        assert_eq!(ids(&gpu(40.0, 10.0, 2.0, 10.0, 9000.0), &[]), ["pcie_bound"]);
        // GPM columns written as fractions 0-1 (DCGM's convention) are read as percent on a busy GPU.
        let frac = |sm: f64, tensor: f64, dram: f64| {
            let mut s = gpu(98.0, sm, tensor, dram, 100.0);
            for (f, v) in
                [(Field::SmActive, sm), (Field::TensorActive, tensor), (Field::DramActive, dram)]
            {
                s.set(Stat::max(f), Some(v));
            }
            s
        };
        assert!(ids(&frac(0.75, 0.4, 0.45), &[]).is_empty(), "healthy, as fractions");
        assert_eq!(ids(&frac(0.8, 0.002, 0.3), &[]), ["no_tensor_cores"]);
        assert_eq!(ids(&frac(0.5, 0.1, 0.85), &[]), ["memory_bound"]);
        let no_gpm = stats(Scope::Gpu, &[(UTIL_MEAN, 99.0), (Stat::IdlePct, 0.0)]);
        assert!(ids(&no_gpm, &[]).is_empty(), "GPUs without GPM fire none of them");
        let ev = |ts: i64, code: u64| EventRecord {
            ts,
            host: "h".into(),
            gpu: Some(0),
            uuid: None,
            kind: "xid".into(),
            code: Some(code),
            detail: None,
        };
        let healthy = gpu(95.0, 70.0, 35.0, 40.0, 300.0);
        let g = [GpuView::new("0".into(), &healthy)];
        let events = [ev(1_767_225_600_000_000, 79), ev(1_767_225_601_000_000, 79)];
        let found = diagnose("h", &g, &StatValues::empty(Scope::Host), 0, &events, &th);
        assert_eq!(found.len(), 1);
        let x = &found[0];
        assert_eq!((x.rule, x.severity, x.gpu.as_deref()), ("xid", Severity::Error, Some("0")));
        assert!(
            x.evidence.starts_with("Xid 79 at 2026-01-01 00:00:00 UTC (2 times"),
            "{}",
            x.evidence
        );
        assert!(x.fix.contains("reboot"), "{}", x.fix);
    }
}
