//! The field catalogue: every recorded value declared once (name, unit, type, help, source, aggregation, Prometheus kind).
//!
//! The CSV header, the Arrow schema, the nvidia-smi style header, `gpumon fields`
//! and field selection are all generated from [`CATALOG`]. Adding a field means adding
//! one [`Field`] variant and one [`FieldDef`] row, in the same position. A GPU field's row
//! names the NVML reader that yields it (`Gpu(Temperature)`); only a new kind of NVML call
//! needs a new [`NvmlRead`] variant and its call in `source/src/nvml/sample.rs` (a unit test in
//! `nvml/gpu.rs` reads every GPU field through the fake NVML, whose scenario keys are the fields'
//! names).

use std::fmt;

/// Every field gpumon knows. The discriminant is the field's index in [`CATALOG`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(usize)]
pub enum Field {
    /// The `timestamp` column.
    Timestamp,
    /// The `host` column.
    Host,
    /// The `index` column.
    Index,
    /// The `uuid` column.
    Uuid,
    /// The `name` column.
    Name,
    /// The `pci.bus_id` column.
    PciBusId,
    /// The `utilization.gpu` column.
    UtilGpu,
    /// The `utilization.memory` column.
    UtilMemory,
    /// The `memory.used` column.
    MemUsed,
    /// The `memory.total` column.
    MemTotal,
    /// The `memory.free` column.
    MemFree,
    /// The `temperature.gpu` column.
    TempGpu,
    /// The `power.draw` column.
    PowerDraw,
    /// The `power.limit` column.
    PowerLimit,
    /// The `energy.total` column.
    EnergyTotal,
    /// The `clocks.sm` column.
    ClockSm,
    /// The `clocks.mem` column.
    ClockMem,
    /// The `fan.speed` column.
    FanSpeed,
    /// The `pstate` column.
    Pstate,
    /// The `clocks_event_reasons.active` column.
    EventReasons,
    /// The `utilization.encoder` column.
    UtilEncoder,
    /// The `utilization.decoder` column.
    UtilDecoder,
    /// The `pcie.tx` column.
    PcieTx,
    /// The `pcie.rx` column.
    PcieRx,
    /// The `ecc.errors.uncorrected.volatile.total` column.
    EccUncorrected,
    /// The `ecc.errors.corrected.volatile.total` column.
    EccCorrected,
    /// The `memory.reserved` column.
    MemReserved,
    /// The `clocks.gr` column.
    ClockGr,
    /// The `clocks.video` column.
    ClockVideo,
    /// The `clocks.max.graphics` column.
    ClockMaxGr,
    /// The `clocks.max.sm` column.
    ClockMaxSm,
    /// The `clocks.max.memory` column.
    ClockMaxMem,
    /// The `temperature.memory` column.
    TempMemory,
    /// The `power.draw.instant` column.
    PowerInstant,
    /// The `power.draw.average` column.
    PowerAverage,
    /// The `persistence_mode` column.
    PersistenceMode,
    /// The `driver_version` column.
    DriverVersion,
    /// The `vgpu_driver_capability.heterogenous_multivGPU` column.
    VgpuDriverCapabilityHeterogenousMultivGPU,
    /// The `count` column.
    Count,
    /// The `serial` column.
    Serial,
    /// The `pci.domain` column.
    PciDomain,
    /// The `pci.bus` column.
    PciBus,
    /// The `pci.device` column.
    PciDevice,
    /// The `pci.device_id` column.
    PciDeviceId,
    /// The `pci.sub_device_id` column.
    PciSubDeviceId,
    /// The `pci.baseClass` column.
    PciBaseClass,
    /// The `pci.subClass` column.
    PciSubClass,
    /// The `pcie.link.gen.current` column.
    PcieLinkGenCurrent,
    /// The `pcie.link.gen.max` column.
    PcieLinkGenMax,
    /// The `pcie.link.gen.gpumax` column.
    PcieLinkGenGpumax,
    /// The `pcie.link.gen.hostmax` column.
    PcieLinkGenHostmax,
    /// The `pcie.link.width.current` column.
    PcieLinkWidthCurrent,
    /// The `pcie.link.width.max` column.
    PcieLinkWidthMax,
    /// The `display_mode` column.
    DisplayMode,
    /// The `display_active` column.
    DisplayActive,
    /// The `addressing_mode` column.
    AddressingMode,
    /// The `accounting.mode` column.
    AccountingMode,
    /// The `accounting.buffer_size` column.
    AccountingBufferSize,
    /// The `driver_model.current` column.
    DriverModelCurrent,
    /// The `driver_model.pending` column.
    DriverModelPending,
    /// The `vbios_version` column.
    VbiosVersion,
    /// The `inforom.img` column.
    InforomImg,
    /// The `inforom.oem` column.
    InforomOem,
    /// The `inforom.ecc` column.
    InforomEcc,
    /// The `inforom.pwr` column.
    InforomPwr,
    /// The `gom.current` column.
    GomCurrent,
    /// The `gom.pending` column.
    GomPending,
    /// The `clocks_event_reasons.supported` column.
    ClocksEventReasonsSupported,
    /// The `clocks_event_reasons.gpu_idle` column.
    ClocksEventReasonsGpuIdle,
    /// The `clocks_event_reasons.applications_clocks_setting` column.
    ClocksEventReasonsApplicationsClocksSetting,
    /// The `clocks_event_reasons.sw_power_cap` column.
    ClocksEventReasonsSwPowerCap,
    /// The `clocks_event_reasons.hw_slowdown` column.
    ClocksEventReasonsHwSlowdown,
    /// The `clocks_event_reasons.hw_thermal_slowdown` column.
    ClocksEventReasonsHwThermalSlowdown,
    /// The `clocks_event_reasons.hw_power_brake_slowdown` column.
    ClocksEventReasonsHwPowerBrakeSlowdown,
    /// The `clocks_event_reasons.sw_thermal_slowdown` column.
    ClocksEventReasonsSwThermalSlowdown,
    /// The `clocks_event_reasons.sync_boost` column.
    ClocksEventReasonsSyncBoost,
    /// The `compute_mode` column.
    ComputeMode,
    /// The `compute_cap` column.
    ComputeCap,
    /// The `utilization.jpeg` column.
    UtilizationJpeg,
    /// The `utilization.ofa` column.
    UtilizationOfa,
    /// The `encoder.stats.sessionCount` column.
    EncoderStatsSessionCount,
    /// The `encoder.stats.averageFps` column.
    EncoderStatsAverageFps,
    /// The `encoder.stats.averageLatency` column.
    EncoderStatsAverageLatency,
    /// The `dramEncryptionMode.current` column.
    DramEncryptionModeCurrent,
    /// The `dramEncryptionMode.pending` column.
    DramEncryptionModePending,
    /// The `ecc.mode.current` column.
    EccModeCurrent,
    /// The `ecc.mode.pending` column.
    EccModePending,
    /// The `ecc.errors.corrected.volatile.device_memory` column.
    EccErrorsCorrectedVolatileDeviceMemory,
    /// The `ecc.errors.corrected.volatile.dram` column.
    EccErrorsCorrectedVolatileDram,
    /// The `ecc.errors.corrected.volatile.register_file` column.
    EccErrorsCorrectedVolatileRegisterFile,
    /// The `ecc.errors.corrected.volatile.l1_cache` column.
    EccErrorsCorrectedVolatileL1Cache,
    /// The `ecc.errors.corrected.volatile.l2_cache` column.
    EccErrorsCorrectedVolatileL2Cache,
    /// The `ecc.errors.corrected.volatile.texture_memory` column.
    EccErrorsCorrectedVolatileTextureMemory,
    /// The `ecc.errors.corrected.volatile.cbu` column.
    EccErrorsCorrectedVolatileCbu,
    /// The `ecc.errors.corrected.volatile.sram` column.
    EccErrorsCorrectedVolatileSram,
    /// The `ecc.errors.corrected.aggregate.device_memory` column.
    EccErrorsCorrectedAggregateDeviceMemory,
    /// The `ecc.errors.corrected.aggregate.dram` column.
    EccErrorsCorrectedAggregateDram,
    /// The `ecc.errors.corrected.aggregate.register_file` column.
    EccErrorsCorrectedAggregateRegisterFile,
    /// The `ecc.errors.corrected.aggregate.l1_cache` column.
    EccErrorsCorrectedAggregateL1Cache,
    /// The `ecc.errors.corrected.aggregate.l2_cache` column.
    EccErrorsCorrectedAggregateL2Cache,
    /// The `ecc.errors.corrected.aggregate.texture_memory` column.
    EccErrorsCorrectedAggregateTextureMemory,
    /// The `ecc.errors.corrected.aggregate.cbu` column.
    EccErrorsCorrectedAggregateCbu,
    /// The `ecc.errors.corrected.aggregate.sram` column.
    EccErrorsCorrectedAggregateSram,
    /// The `ecc.errors.corrected.aggregate.total` column.
    EccErrorsCorrectedAggregateTotal,
    /// The `ecc.errors.uncorrected.volatile.device_memory` column.
    EccErrorsUncorrectedVolatileDeviceMemory,
    /// The `ecc.errors.uncorrected.volatile.dram` column.
    EccErrorsUncorrectedVolatileDram,
    /// The `ecc.errors.uncorrected.volatile.register_file` column.
    EccErrorsUncorrectedVolatileRegisterFile,
    /// The `ecc.errors.uncorrected.volatile.l1_cache` column.
    EccErrorsUncorrectedVolatileL1Cache,
    /// The `ecc.errors.uncorrected.volatile.l2_cache` column.
    EccErrorsUncorrectedVolatileL2Cache,
    /// The `ecc.errors.uncorrected.volatile.texture_memory` column.
    EccErrorsUncorrectedVolatileTextureMemory,
    /// The `ecc.errors.uncorrected.volatile.cbu` column.
    EccErrorsUncorrectedVolatileCbu,
    /// The `ecc.errors.uncorrected.volatile.sram` column.
    EccErrorsUncorrectedVolatileSram,
    /// The `ecc.errors.uncorrected.aggregate.device_memory` column.
    EccErrorsUncorrectedAggregateDeviceMemory,
    /// The `ecc.errors.uncorrected.aggregate.dram` column.
    EccErrorsUncorrectedAggregateDram,
    /// The `ecc.errors.uncorrected.aggregate.register_file` column.
    EccErrorsUncorrectedAggregateRegisterFile,
    /// The `ecc.errors.uncorrected.aggregate.l1_cache` column.
    EccErrorsUncorrectedAggregateL1Cache,
    /// The `ecc.errors.uncorrected.aggregate.l2_cache` column.
    EccErrorsUncorrectedAggregateL2Cache,
    /// The `ecc.errors.uncorrected.aggregate.texture_memory` column.
    EccErrorsUncorrectedAggregateTextureMemory,
    /// The `ecc.errors.uncorrected.aggregate.cbu` column.
    EccErrorsUncorrectedAggregateCbu,
    /// The `ecc.errors.uncorrected.aggregate.sram` column.
    EccErrorsUncorrectedAggregateSram,
    /// The `ecc.errors.uncorrected.aggregate.total` column.
    EccErrorsUncorrectedAggregateTotal,
    /// The `temperature.gpu.tlimit` column.
    TemperatureGpuTlimit,
    /// The `power.management` column.
    PowerManagement,
    /// The `power.default_limit` column.
    PowerDefaultLimit,
    /// The `power.min_limit` column.
    PowerMinLimit,
    /// The `power.max_limit` column.
    PowerMaxLimit,
    /// The `clocks.applications.graphics` column.
    ClocksApplicationsGraphics,
    /// The `clocks.applications.memory` column.
    ClocksApplicationsMemory,
    /// The `clocks.default_applications.graphics` column.
    ClocksDefaultApplicationsGraphics,
    /// The `clocks.default_applications.memory` column.
    ClocksDefaultApplicationsMemory,
    /// The `mig.mode.current` column.
    MigModeCurrent,
    /// The `mig.mode.pending` column.
    MigModePending,
    /// The `gsp.mode.current` column.
    GspModeCurrent,
    /// The `gsp.mode.default` column.
    GspModeDefault,
    /// The `fabric.state` column.
    FabricState,
    /// The `fabric.status` column.
    FabricStatus,
    /// The `protected_memory.total` column.
    ProtectedMemoryTotal,
    /// The `protected_memory.used` column.
    ProtectedMemoryUsed,
    /// The `protected_memory.free` column.
    ProtectedMemoryFree,
    /// The `sm.active` column.
    SmActive,
    /// The `sm.occupancy` column.
    SmOccupancy,
    /// The `tensor.active` column.
    TensorActive,
    /// The `dram.active` column.
    DramActive,
    /// The `fp16.active` column.
    Fp16Active,
    /// The `fp32.active` column.
    Fp32Active,
    /// The `fp64.active` column.
    Fp64Active,
    /// The `pcie.tx.bytes` column.
    PcieTxBytes,
    /// The `pcie.rx.bytes` column.
    PcieRxBytes,
    /// The `nvlink.tx.bytes` column.
    NvlinkTxBytes,
    /// The `nvlink.rx.bytes` column.
    NvlinkRxBytes,
    /// The `xid.events` column.
    XidEvents,
    /// The `remapped_rows.correctable` column.
    RemappedCorrectable,
    /// The `remapped_rows.uncorrectable` column.
    RemappedUncorrectable,
    /// The `remapped_rows.pending` column.
    RemappedPending,
    /// The `remapped_rows.failure` column.
    RemappedFailure,
    /// The `retired_pages.single_bit_ecc.count` column.
    RetiredSbe,
    /// The `retired_pages.double_bit.count` column.
    RetiredDbe,
    /// The `retired_pages.pending` column.
    RetiredPending,
    /// The `cpu.util` column.
    CpuUtil,
    /// The `cpu.util.max_core` column.
    CpuUtilMaxCore,
    /// The `load.1` column.
    Load1,
    /// The `mem.total` column.
    HostMemTotal,
    /// The `mem.used` column.
    HostMemUsed,
    /// The `mem.available` column.
    HostMemAvailable,
    /// The `swap.used` column.
    SwapUsed,
    /// The `utilization.gpu.max` column.
    UtilGpuMax,
    /// The `memory.used.max` column.
    MemUsedMax,
    /// The `power.draw.max` column.
    PowerDrawMax,
    /// The `temperature.gpu.max` column.
    TempGpuMax,
    /// The `cpu.util.max_core.max` column.
    CpuMaxCoreMax,
    /// The `sm.active.max` column.
    SmActiveMax,
    /// The `tensor.active.max` column.
    TensorActiveMax,
    /// The `dram.active.max` column.
    DramActiveMax,
    /// The `samples` column.
    Samples,
    /// The `job.cpu` column.
    JobCpu,
    /// The `job.rss` column.
    JobRss,
    /// The `job.procs` column.
    JobProcs,
    /// The `job.threads` column.
    JobThreads,
    /// The `job.read` column.
    JobRead,
    /// The `job.write` column.
    JobWrite,
    /// The `job.gpu_memory` column.
    JobGpuMemory,
    /// The `cgroup.mem.used` column.
    CgroupMemUsed,
    /// The `cgroup.mem.limit` column.
    CgroupMemLimit,
    /// The `cgroup.cpu.limit` column.
    CgroupCpuLimit,
    /// The `cgroup.cpu.util` column.
    CgroupCpuUtil,
    /// The `cgroup.oom_kills` column.
    CgroupOomKills,
    /// The `proc.pid` column.
    ProcPid,
    /// The `proc.user` column.
    ProcUser,
    /// The `proc.command` column.
    ProcCommand,
    /// The `proc.gpu_memory` column.
    ProcGpuMemory,
    /// The `proc.job` column.
    ProcJob,
    /// The `proc.sm` column.
    ProcSm,
    /// The `proc.mem_util` column.
    ProcMemUtil,
    /// The `proc.enc` column.
    ProcEnc,
    /// The `proc.dec` column.
    ProcDec,
    /// The `kind` column.
    EventKind,
    /// The `code` column.
    EventCode,
    /// The `detail` column.
    EventDetail,
    /// The `mig.gi` column.
    MigGi,
    /// The `mig.ci` column.
    MigCi,
    /// The `mig.profile` column.
    MigProfile,
    /// The `mig.uuid` column.
    MigUuid,
    /// The `phase` column.
    Phase,
    /// The `missed` column.
    Missed,
}

/// Number of fields in the catalogue.
pub const FIELD_COUNT: usize = Field::Missed as usize + 1;

/// Where a field's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Set by the recorder itself (timestamp, host name).
    Meta,
    /// One NVML query per GPU per tick.
    Gpu,
    /// Host-wide, sampled once per tick and repeated on every GPU row.
    Host,
    /// Computed by gpumon from other fields or from the schedule (interval maxima, counts).
    Derived,
    /// The wrapped or followed process tree (`record -- CMD`, `--pid`); once per tick.
    Job,
    /// The cgroup gpumon runs in (container limits); once per tick.
    Cgroup,
    /// One row per (tick, GPU, process) in the `--processes` output.
    Process,
    /// One row per NVML event (Xid, ECC, clock, power) in the events file beside the main output.
    Event,
}

/// The tables of a recording: the main per-GPU metrics and the two companion files beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The main per-GPU metrics (`run.parquet`).
    Metrics,
    /// `run.procs.parquet` (`--processes`): one row per (tick, GPU, process).
    Procs,
    /// `run.events.parquet`: one row per NVML event.
    Events,
}

impl Table {
    /// The table a set of columns belongs to: a process or event column makes it a companion table.
    pub fn of(fields: impl IntoIterator<Item = Field>) -> Table {
        let mut t = Table::Metrics;
        for f in fields {
            match f.def().source {
                Source::Process => t = Table::Procs,
                Source::Event => return Table::Events,
                _ => {}
            }
        }
        t
    }

    /// The word a companion file adds to the main file's name (`run.procs.parquet`).
    pub fn suffix(self) -> Option<&'static str> {
        match self {
            Table::Metrics => None,
            Table::Procs => Some("procs"),
            Table::Events => Some("events"),
        }
    }

    /// What the table holds, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Table::Metrics => "per-GPU metrics",
            Table::Procs => "a per-process table (record --processes)",
            Table::Events => "an events table (NVML Xid/ECC events beside a recording)",
        }
    }
}

/// How a GPU field is read through NVML. Fields naming the same reader share its one call per
/// GPU per tick (`Utilization` yields utilization.gpu and .memory, `Memory` memory.used, .total
/// and .free); `source/src/nvml/sample.rs` maps each reader to its nvml-wrapper call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NvmlRead {
    /// Read once when the run starts and repeated on every row (index, UUID, name, bus id).
    Identity,
    /// Utilization rates: GPU and memory.
    Utilization,
    /// Memory info: used, total, free.
    Memory,
    /// Yields `temperature.gpu`.
    Temperature,
    /// Yields `power.draw`.
    Power,
    /// Yields `power.limit`.
    PowerLimit,
    /// Yields `energy.total`.
    Energy,
    /// Yields `clocks.sm`.
    ClockSm,
    /// Yields `clocks.mem`.
    ClockMem,
    /// Yields `fan.speed`.
    Fan,
    /// Yields `pstate`.
    Pstate,
    /// Yields `clocks_event_reasons.active`.
    EventReasons,
    /// Yields `utilization.encoder`.
    Encoder,
    /// Yields `utilization.decoder`.
    Decoder,
    /// Yields `pcie.tx`.
    PcieTx,
    /// Yields `pcie.rx`.
    PcieRx,
    /// Yields `ecc.errors.uncorrected.volatile.total`.
    EccUncorrected,
    /// Yields `ecc.errors.corrected.volatile.total`.
    EccCorrected,
    /// Yields `clocks.gr`.
    ClockGr,
    /// Yields `clocks.video`.
    ClockVideo,
    /// `nvmlDeviceGetMaxClockInfo` of the graphics, SM and memory clocks.
    MaxClockGr,
    /// Yields `clocks.max.sm`.
    MaxClockSm,
    /// Yields `clocks.max.memory`.
    MaxClockMem,
    /// `nvmlDeviceGetFieldValues`: one field id per field (memory temperature, instant power).
    MemoryTemp,
    /// Yields `power.draw.instant`.
    PowerInstant,
    /// Yields `power.draw.average`.
    PowerAverage,
    /// Yields `persistence_mode`.
    Persistence,
    /// The GPU's running compute processes, attributed to the job's PID set.
    Processes,
    /// GPM (Hopper and newer): every selected GPM metric from one pair of consecutive samples.
    Gpm,
    /// Counted from the NVML event set watched on its own thread, not queried per tick.
    Events,
    /// Row remapping counts and flags, read once a minute.
    RemappedRows,
    /// Retired pages counts and pending flag, read once a minute.
    RetiredPages,
    /// Yields `serial`.
    Serial,
    /// Yields `vbios_version`.
    Vbios,
    /// Yields `inforom.img`.
    InforomImg,
    /// `nvmlDeviceGetPciInfo`: domain, bus, device and ids as nvidia-smi prints them.
    PciInfo,
    /// Yields `pcie.link.gen.current`.
    PcieGenCurrent,
    /// Yields `pcie.link.gen.max`.
    PcieGenMax,
    /// Yields `pcie.link.width.current`.
    PcieWidthCurrent,
    /// Yields `pcie.link.width.max`.
    PcieWidthMax,
    /// Yields `display_mode`.
    DisplayMode,
    /// Yields `display_active`.
    DisplayActive,
    /// Yields `accounting.mode`.
    AccountingMode,
    /// Yields `power.management`.
    PowerManagement,
    /// Yields `power.default_limit`.
    PowerDefaultLimit,
    /// The power limit's range (min and max from one call).
    PowerConstraints,
    /// Yields `compute_mode`.
    ComputeMode,
    /// Yields `compute_cap`.
    ComputeCap,
    /// Yields `ecc.mode.current`, `ecc.mode.pending`.
    EccMode,
    /// Yields `gom.current`, `gom.pending`.
    GomMode,
    /// Yields `mig.mode.current`, `mig.mode.pending`.
    MigModes,
    /// Yields `clocks.applications.graphics`.
    AppClockGr,
    /// Yields `clocks.applications.memory`.
    AppClockMem,
    /// Yields `clocks.default_applications.graphics`.
    DefaultAppClockGr,
    /// Yields `clocks.default_applications.memory`.
    DefaultAppClockMem,
    /// Encoder sessions, frame rate and latency from one call.
    EncoderStats,
    /// One clock event reason (the field names it) from the active-reasons mask.
    EventReason,
    /// Yields `clocks_event_reasons.supported`.
    EventReasonsSupported,
    /// ECC errors of one kind, counter and memory location (the field names them).
    EccLocation,
    /// Yields `ecc.errors.corrected.aggregate.total`, `ecc.errors.uncorrected.aggregate.total`.
    EccAggregate,
    /// An nvidia-smi name NVML does not give gpumon: always null, written `[N/A]`.
    NotAvailable,
}

impl NvmlRead {
    /// Whether the reader's value depends on the field (one read per selected field, not one per
    /// reader).
    pub fn per_field(self) -> bool {
        matches!(
            self,
            NvmlRead::EventReason
                | NvmlRead::EccLocation
                | NvmlRead::EccAggregate
                | NvmlRead::NotAvailable
        )
    }

    /// Whether the reader's values are properties of the board that do not change while it runs
    /// (highest clocks, link and power limits): read once, at the first tick that yields them,
    /// and repeated on every row after.
    pub fn is_fixed(self) -> bool {
        matches!(
            self,
            NvmlRead::MaxClockGr
                | NvmlRead::MaxClockSm
                | NvmlRead::MaxClockMem
                | NvmlRead::PcieGenMax
                | NvmlRead::PcieWidthMax
                | NvmlRead::PowerDefaultLimit
                | NvmlRead::PowerConstraints
        )
    }

    /// Whether one call of the reader yields a value of its own (not the identity read at start,
    /// the process list that needs a job to attribute processes to, GPM that needs two samples,
    /// or the event count that comes from the event thread).
    pub fn is_query(self) -> bool {
        !matches!(
            self,
            NvmlRead::Identity
                | NvmlRead::Processes
                | NvmlRead::Gpm
                | NvmlRead::Events
                | NvmlRead::NotAvailable
        )
    }
}

/// Storage type; the Arrow type and the CSV rendering follow from it. Integers are signed and
/// sized to the field's range (NVML's values are never negative, but unsigned columns wrap or
/// overflow when users subtract them in pandas, polars or DuckDB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// UTC instant, microsecond precision.
    Timestamp,
    /// Strings (names, UUIDs, states).
    Str,
    /// Percentages (0-100).
    I16,
    /// MiB, MHz, degrees, counts.
    I32,
    /// Counters that may grow past 2^31, and the clock-event bitmask.
    I64,
    /// Floats (watts, joules, rates).
    F64,
    /// Stored as `Value::U(0 | 1)`.
    Bool,
}

impl Ty {
    /// The type in user terms, as `gpumon fields` shows it.
    pub fn user_name(self) -> &'static str {
        match self {
            Ty::Timestamp => "timestamp",
            Ty::Str => "string",
            Ty::I16 | Ty::I32 | Ty::I64 => "integer",
            Ty::F64 => "float",
            Ty::Bool => "boolean",
        }
    }
}

/// How sub-samples of one interval combine into one row (used by interval aggregation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agg {
    /// Same for every sub-sample of a tick (identity, static properties): keep the last.
    Identity,
    /// Gauge averaged over the interval.
    Mean,
    /// Counter or state: the last sub-sample.
    Last,
    /// Maximum over the sub-samples (the `.max` companions).
    Max,
    /// Added up over the sub-samples (counts).
    Sum,
}

/// A statistic `summarize` computes from a field's values over the whole run, reported as
/// `NAME.mean`, `NAME.p50`, `NAME.p95`, `NAME.max` (the `.max` also takes the field's `.max`
/// companion column). Percentiles are of percent fields: whole points for integer types, 0.1 for floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// The mean (`NAME.mean`).
    Mean,
    /// The median (`NAME.p50`).
    P50,
    /// The 95th percentile (`NAME.p95`).
    P95,
    /// The maximum (`NAME.max`).
    Max,
}

impl Reduce {
    /// The suffix of the statistic's name.
    pub fn suffix(self) -> &'static str {
        match self {
            Reduce::Mean => "mean",
            Reduce::P50 => "p50",
            Reduce::P95 => "p95",
            Reduce::Max => "max",
        }
    }

    /// The percentile, for `P50` / `P95`.
    pub fn percentile(self) -> Option<f64> {
        match self {
            Reduce::P50 => Some(50.0),
            Reduce::P95 => Some(95.0),
            Reduce::Mean | Reduce::Max => None,
        }
    }
}

/// Prometheus metric kind for the field, or `Label` for identity fields. `prom::names` derives
/// the metric name, base unit and labels from the catalogue row (see docs/prometheus.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromKind {
    /// Identity: a label on the field's series (`index` -> `gpu`, `uuid`, `name`, `host`), or an
    /// `*_info` series for a non-GPU identity string.
    Label,
    /// A string gauge (`pstate`) is exported as the number in it (`P2` -> 2).
    Gauge,
    /// Cumulative value; the metric name ends in `_total`.
    Counter,
    /// Not exported: the timestamp, and per-row bookkeeping (`samples`, `missed`) that the run
    /// counters `gpumon_ticks_*_total` cover.
    None,
}

/// One row of the catalogue.
#[derive(Debug)]
pub struct FieldDef {
    /// The field this row declares.
    pub field: Field,
    /// Canonical name: nvidia-smi's `--query-gpu` name where it has one.
    pub name: &'static str,
    /// Other names accepted on input (nvidia-smi aliases).
    pub aliases: &'static [&'static str],
    /// Unit as shown in headers (`MiB`, `W`, `%`), empty when unitless.
    pub unit: &'static str,
    /// Whether nvidia-smi prints the unit in header and values (it does not for temperatures).
    pub nvsmi_unit: bool,
    /// The name nvidia-smi prints in its CSV header (its own canonical name), when it differs.
    pub nvsmi_name: Option<&'static str>,
    /// Storage type.
    pub ty: Ty,
    /// Where the value comes from.
    pub source: Source,
    /// For a GPU field (`Gpu(Reader)` in the table): how NVML yields it; None otherwise.
    pub read: Option<NvmlRead>,
    /// How sub-samples of one interval combine.
    pub agg: Agg,
    /// Prometheus metric kind.
    pub prom: PromKind,
    /// Recorded when the user gives no `--fields`.
    pub default: bool,
    /// For a `.max` companion column: the field whose interval maximum it holds.
    pub max_of: Option<Field>,
    /// The statistics `summarize` reports for the field, in report order (none for most fields).
    pub summary: &'static [Reduce],
    /// One-line description, as `gpumon fields` shows it.
    pub help: &'static str,
}

/// `Gpu(Temperature)` in the source column: the reader; a plain source has none.
macro_rules! read {
    () => {
        None
    };
    ($read:ident) => {
        Some(NvmlRead::$read)
    };
}

macro_rules! def {
    ($field:ident, $name:literal, [$($alias:literal),*], $unit:literal, $nvu:literal, $ty:ident, $src:ident $(($read:ident))?, $agg:ident, $prom:ident, $default:literal, $help:literal) => {
        FieldDef {
            field: Field::$field,
            name: $name,
            aliases: &[$($alias),*],
            unit: $unit,
            nvsmi_unit: $nvu,
            nvsmi_name: None,
            ty: Ty::$ty,
            source: Source::$src,
            read: read!($($read)?),
            agg: Agg::$agg,
            prom: PromKind::$prom,
            default: $default,
            max_of: None,
            summary: &[],
            help: $help,
        }
    };
}

/// Set the name nvidia-smi prints in its header for this field.
const fn with_smi_name(mut d: FieldDef, name: &'static str) -> FieldDef {
    d.nvsmi_name = Some(name);
    d
}

/// Declare a `.max` companion: the maximum of `base` over the sub-samples of one interval.
const fn maxof(mut d: FieldDef, base: Field) -> FieldDef {
    d.max_of = Some(base);
    d
}

use Reduce::{Max, Mean, P50, P95};

/// The catalogue, in [`Field`] order. Column order of every output follows it.
#[rustfmt::skip]
pub static CATALOG: [FieldDef; FIELD_COUNT] = [
    def!(Timestamp, "timestamp", [], "", false, Timestamp, Meta, Identity, None, true,
        "Time of the tick (wall clock, UTC); every row of one tick carries the same value."),
    def!(Host, "host", ["hostname"], "", false, Str, Meta, Identity, Label, true,
        "Host name of the machine that recorded the row."),
    def!(Index, "index", ["gpu_index"], "", false, I32, Gpu(Identity), Identity, Label, true,
        "NVML index of the GPU (null on host-only rows)."),
    def!(Uuid, "uuid", ["gpu_uuid"], "", false, Str, Gpu(Identity), Identity, Label, true,
        "Globally unique GPU identifier, e.g. GPU-1f2e...."),
    def!(Name, "name", ["gpu_name"], "", false, Str, Gpu(Identity), Identity, Label, true,
        "Product name of the GPU."),
    def!(PciBusId, "pci.bus_id", ["gpu_bus_id"], "", false, Str, Gpu(Identity), Identity, Label, true,
        "PCI bus id as domain:bus:device.function, e.g. 00000000:17:00.0."),
    def!(UtilGpu, "utilization.gpu", [], "%", true, I16, Gpu(Utilization), Mean, Gauge, true,
        "Percent of the past sample period during which one or more kernels ran on the GPU.").stats(&[Mean, P50, P95, Max]),
    def!(UtilMemory, "utilization.memory", [], "%", true, I16, Gpu(Utilization), Mean, Gauge, true,
        "Percent of the past sample period during which device memory was read or written.").stats(&[Mean]),
    def!(MemUsed, "memory.used", [], "MiB", true, I32, Gpu(Memory), Mean, Gauge, true,
        "Device memory allocated by all processes.").stats(&[Max]),
    def!(MemTotal, "memory.total", [], "MiB", true, I32, Gpu(Memory), Identity, Gauge, true,
        "Total installed device memory."),
    def!(MemFree, "memory.free", [], "MiB", true, I32, Gpu(Memory), Mean, Gauge, true,
        "Unallocated device memory."),
    def!(TempGpu, "temperature.gpu", [], "C", false, I32, Gpu(Temperature), Mean, Gauge, true,
        "Core GPU temperature, degrees Celsius.").stats(&[Max]),
    def!(PowerDraw, "power.draw", [], "W", true, F64, Gpu(Power), Mean, Gauge, true,
        "Power drawn by the whole board, watts.").stats(&[Mean, Max]),
    def!(PowerLimit, "power.limit", ["enforced.power.limit"], "W", true, F64, Gpu(PowerLimit), Last, Gauge, true,
        "Enforced power limit, watts."),
    def!(EnergyTotal, "energy.total", ["total_energy_consumption"], "J", true, F64, Gpu(Energy), Last, Counter, true,
        "Energy consumed by the GPU since the driver was last reloaded, joules (counter)."),
    with_smi_name(def!(ClockSm, "clocks.sm", ["clocks.current.sm"], "MHz", true, I32, Gpu(ClockSm), Mean, Gauge, true,
        "Current SM clock."), "clocks.current.sm"),
    with_smi_name(def!(ClockMem, "clocks.mem", ["clocks.current.memory", "clocks.memory"], "MHz", true, I32, Gpu(ClockMem), Mean, Gauge, true,
        "Current memory clock."), "clocks.current.memory"),
    def!(FanSpeed, "fan.speed", [], "%", true, I16, Gpu(Fan), Mean, Gauge, true,
        "Intended fan speed as a percent of maximum (null on passively cooled boards)."),
    def!(Pstate, "pstate", [], "", false, Str, Gpu(Pstate), Last, Gauge, true,
        "Performance state, P0 (maximum) to P12 (minimum)."),
    def!(EventReasons, "clocks_event_reasons.active", ["clocks_throttle_reasons.active"], "", false, I64, Gpu(EventReasons), Last, Gauge, true,
        "Bitmask of active clock event (throttle) reasons; 0 means none. nvidia-smi prints it in hex."),
    def!(UtilEncoder, "utilization.encoder", [], "%", true, I16, Gpu(Encoder), Mean, Gauge, true,
        "Video encoder utilization."),
    def!(UtilDecoder, "utilization.decoder", [], "%", true, I16, Gpu(Decoder), Mean, Gauge, true,
        "Video decoder utilization."),
    def!(PcieTx, "pcie.tx", ["pcie.tx_throughput"], "KiB/s", true, I32, Gpu(PcieTx), Mean, Gauge, false,
        "PCIe transmit throughput. Off by default: NVML samples for 20 ms per call."),
    def!(PcieRx, "pcie.rx", ["pcie.rx_throughput"], "KiB/s", true, I32, Gpu(PcieRx), Mean, Gauge, false,
        "PCIe receive throughput. Off by default: NVML samples for 20 ms per call."),
    def!(EccUncorrected, "ecc.errors.uncorrected.volatile.total", [], "", false, I64, Gpu(EccUncorrected), Last, Counter, true,
        "Uncorrected ECC errors since the driver was loaded (counter; null when ECC is off)."),
    def!(EccCorrected, "ecc.errors.corrected.volatile.total", [], "", false, I64, Gpu(EccCorrected), Last, Counter, false,
        "Corrected (single-bit) ECC errors since the driver was loaded (counter; null when ECC is off)."),
    def!(MemReserved, "memory.reserved", [], "MiB", true, I32, Gpu(Memory), Mean, Gauge, false,
        "Device memory reserved by the driver and firmware (not counted in memory.used or memory.free)."),
    with_smi_name(def!(ClockGr, "clocks.gr", ["clocks.current.graphics", "clocks.graphics"], "MHz", true, I32, Gpu(ClockGr), Mean, Gauge, false,
        "Current graphics clock."), "clocks.current.graphics"),
    with_smi_name(def!(ClockVideo, "clocks.video", ["clocks.current.video"], "MHz", true, I32, Gpu(ClockVideo), Mean, Gauge, false,
        "Current video encoder/decoder clock."), "clocks.current.video"),
    def!(ClockMaxGr, "clocks.max.graphics", ["clocks.max.gr"], "MHz", true, I32, Gpu(MaxClockGr), Last, Gauge, false,
        "Highest graphics clock the GPU can run at (read once, at the first tick)."),
    def!(ClockMaxSm, "clocks.max.sm", ["clocks.max.streaming_multiprocessor"], "MHz", true, I32, Gpu(MaxClockSm), Last, Gauge, true,
        "Highest SM clock the GPU can run at (read once, at the first tick)."),
    def!(ClockMaxMem, "clocks.max.memory", ["clocks.max.mem"], "MHz", true, I32, Gpu(MaxClockMem), Last, Gauge, false,
        "Highest memory clock the GPU can run at (read once, at the first tick)."),
    def!(TempMemory, "temperature.memory", [], "C", false, I32, Gpu(MemoryTemp), Mean, Gauge, false,
        "HBM memory temperature, degrees Celsius (boards with HBM; [N/A] elsewhere)."),
    def!(PowerInstant, "power.draw.instant", [], "W", true, F64, Gpu(PowerInstant), Mean, Gauge, false,
        "Instantaneous board power, watts (power.draw is averaged over a second on Ampere and newer)."),
    def!(PowerAverage, "power.draw.average", [], "W", true, F64, Gpu(PowerAverage), Mean, Gauge, false,
        "Board power averaged by the driver over about a second, watts (Ampere and newer)."),
    def!(PersistenceMode, "persistence_mode", [], "", false, Str, Gpu(Persistence), Last, None, false,
        "Persistence mode: Enabled keeps the driver loaded with no client (faster CUDA start), Disabled otherwise."),
    def!(DriverVersion, "driver_version", [], "", false, Str, Gpu(Identity), Identity, None, false,
        "Version of the installed NVIDIA display driver, e.g. 550.54.15."),
    // nvidia-smi's other --query-gpu names (docs/query-gpu.md): off by default, read when selected.
    def!(VgpuDriverCapabilityHeterogenousMultivGPU, "vgpu_driver_capability.heterogenous_multivGPU", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's vgpu_driver_capability.heterogenous_multivGPU: not read through NVML by gpumon; written [N/A]."),
    def!(Count, "count", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's count: not read through NVML by gpumon; written [N/A]."),
    def!(Serial, "serial", [], "", false, Str, Gpu(Serial), Last, None, false,
        "The board's serial number (read once a tick; static)."),
    def!(PciDomain, "pci.domain", [], "", false, Str, Gpu(PciInfo), Last, None, false,
        "PCI domain, in hex as nvidia-smi prints it."),
    def!(PciBus, "pci.bus", [], "", false, Str, Gpu(PciInfo), Last, None, false,
        "PCI bus, in hex as nvidia-smi prints it."),
    def!(PciDevice, "pci.device", [], "", false, Str, Gpu(PciInfo), Last, None, false,
        "PCI device, in hex as nvidia-smi prints it."),
    def!(PciDeviceId, "pci.device_id", [], "", false, Str, Gpu(PciInfo), Last, None, false,
        "PCI vendor and device id, in hex as nvidia-smi prints it."),
    def!(PciSubDeviceId, "pci.sub_device_id", [], "", false, Str, Gpu(PciInfo), Last, None, false,
        "PCI subsystem id, in hex as nvidia-smi prints it."),
    def!(PciBaseClass, "pci.baseClass", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's pci.baseClass: not read through NVML by gpumon; written [N/A]."),
    def!(PciSubClass, "pci.subClass", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's pci.subClass: not read through NVML by gpumon; written [N/A]."),
    def!(PcieLinkGenCurrent, "pcie.link.gen.current", ["pcie.link.gen.gpucurrent"], "", false, I32, Gpu(PcieGenCurrent), Last, None, true,
        "Current PCIe link generation (lower when idle to save power)."),
    def!(PcieLinkGenMax, "pcie.link.gen.max", [], "", false, I32, Gpu(PcieGenMax), Last, None, true,
        "Highest PCIe link generation of the GPU and system together (read once, at the first tick)."),
    def!(PcieLinkGenGpumax, "pcie.link.gen.gpumax", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's pcie.link.gen.gpumax: not read through NVML by gpumon; written [N/A]."),
    def!(PcieLinkGenHostmax, "pcie.link.gen.hostmax", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's pcie.link.gen.hostmax: not read through NVML by gpumon; written [N/A]."),
    def!(PcieLinkWidthCurrent, "pcie.link.width.current", [], "", false, I32, Gpu(PcieWidthCurrent), Last, None, true,
        "Current PCIe link width (lanes)."),
    def!(PcieLinkWidthMax, "pcie.link.width.max", [], "", false, I32, Gpu(PcieWidthMax), Last, None, true,
        "Widest PCIe link of the GPU and system together, lanes (read once, at the first tick)."),
    def!(DisplayMode, "display_mode", [], "", false, Str, Gpu(DisplayMode), Last, None, false,
        "Whether a display is connected to any of the GPU's connectors: Enabled or Disabled."),
    def!(DisplayActive, "display_active", [], "", false, Str, Gpu(DisplayActive), Last, None, false,
        "Whether a display is initialized on the GPU: Enabled or Disabled."),
    def!(AddressingMode, "addressing_mode", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's addressing_mode: not read through NVML by gpumon; written [N/A]."),
    def!(AccountingMode, "accounting.mode", [], "", false, Str, Gpu(AccountingMode), Last, None, false,
        "Whether per-process accounting is on: Enabled or Disabled."),
    def!(AccountingBufferSize, "accounting.buffer_size", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's accounting.buffer_size: not read through NVML by gpumon; written [N/A]."),
    def!(DriverModelCurrent, "driver_model.current", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's driver_model.current: not read through NVML by gpumon; written [N/A]."),
    def!(DriverModelPending, "driver_model.pending", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's driver_model.pending: not read through NVML by gpumon; written [N/A]."),
    def!(VbiosVersion, "vbios_version", [], "", false, Str, Gpu(Vbios), Last, None, false,
        "The VBIOS version of the board."),
    def!(InforomImg, "inforom.img", [], "", false, Str, Gpu(InforomImg), Last, None, false,
        "The version of the InfoROM image."),
    def!(InforomOem, "inforom.oem", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's inforom.oem: not read through NVML by gpumon; written [N/A]."),
    def!(InforomEcc, "inforom.ecc", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's inforom.ecc: not read through NVML by gpumon; written [N/A]."),
    def!(InforomPwr, "inforom.pwr", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's inforom.pwr: not read through NVML by gpumon; written [N/A]."),
    def!(GomCurrent, "gom.current", [], "", false, Str, Gpu(GomMode), Last, None, false,
        "GPU operation mode now: All On, Compute or Low Double Precision."),
    def!(GomPending, "gom.pending", [], "", false, Str, Gpu(GomMode), Last, None, false,
        "GPU operation mode after the next reboot."),
    def!(ClocksEventReasonsSupported, "clocks_event_reasons.supported", ["clocks_throttle_reasons.supported"], "", false, Str, Gpu(EventReasonsSupported), Last, None, false,
        "The clock event reasons the GPU can report, as a bit mask (hex)."),
    def!(ClocksEventReasonsGpuIdle, "clocks_event_reasons.gpu_idle", ["clocks_throttle_reasons.gpu_idle"], "", false, Str, Gpu(EventReason), Last, None, false,
        "Whether the gpu_idle clock event reason is active: Active or Not Active."),
    def!(ClocksEventReasonsApplicationsClocksSetting, "clocks_event_reasons.applications_clocks_setting", ["clocks_throttle_reasons.applications_clocks_setting"], "", false, Str, Gpu(EventReason), Last, None, false,
        "Whether the applications_clocks_setting clock event reason is active: Active or Not Active."),
    def!(ClocksEventReasonsSwPowerCap, "clocks_event_reasons.sw_power_cap", ["clocks_throttle_reasons.sw_power_cap"], "", false, Str, Gpu(EventReason), Last, None, false,
        "Whether the sw_power_cap clock event reason is active: Active or Not Active."),
    def!(ClocksEventReasonsHwSlowdown, "clocks_event_reasons.hw_slowdown", ["clocks_throttle_reasons.hw_slowdown"], "", false, Str, Gpu(EventReason), Last, None, false,
        "Whether the hw_slowdown clock event reason is active: Active or Not Active."),
    def!(ClocksEventReasonsHwThermalSlowdown, "clocks_event_reasons.hw_thermal_slowdown", ["clocks_throttle_reasons.hw_thermal_slowdown"], "", false, Str, Gpu(EventReason), Last, None, false,
        "Whether the hw_thermal_slowdown clock event reason is active: Active or Not Active."),
    def!(ClocksEventReasonsHwPowerBrakeSlowdown, "clocks_event_reasons.hw_power_brake_slowdown", ["clocks_throttle_reasons.hw_power_brake_slowdown"], "", false, Str, Gpu(EventReason), Last, None, false,
        "Whether the hw_power_brake_slowdown clock event reason is active: Active or Not Active."),
    def!(ClocksEventReasonsSwThermalSlowdown, "clocks_event_reasons.sw_thermal_slowdown", ["clocks_throttle_reasons.sw_thermal_slowdown"], "", false, Str, Gpu(EventReason), Last, None, false,
        "Whether the sw_thermal_slowdown clock event reason is active: Active or Not Active."),
    def!(ClocksEventReasonsSyncBoost, "clocks_event_reasons.sync_boost", ["clocks_throttle_reasons.sync_boost"], "", false, Str, Gpu(EventReason), Last, None, false,
        "Whether the sync_boost clock event reason is active: Active or Not Active."),
    def!(ComputeMode, "compute_mode", [], "", false, Str, Gpu(ComputeMode), Last, None, false,
        "Compute mode: Default, Exclusive_Thread, Prohibited or Exclusive_Process."),
    def!(ComputeCap, "compute_cap", [], "", false, Str, Gpu(ComputeCap), Last, None, false,
        "CUDA compute capability, e.g. 9.0."),
    def!(UtilizationJpeg, "utilization.jpeg", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's utilization.jpeg: not read through NVML by gpumon; written [N/A]."),
    def!(UtilizationOfa, "utilization.ofa", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's utilization.ofa: not read through NVML by gpumon; written [N/A]."),
    def!(EncoderStatsSessionCount, "encoder.stats.sessionCount", [], "", false, I32, Gpu(EncoderStats), Last, None, false,
        "Active encoder sessions."),
    def!(EncoderStatsAverageFps, "encoder.stats.averageFps", [], "", false, I32, Gpu(EncoderStats), Last, None, false,
        "Average frames per second of the encoder sessions."),
    def!(EncoderStatsAverageLatency, "encoder.stats.averageLatency", [], "", false, I32, Gpu(EncoderStats), Last, None, false,
        "Average latency of the encoder sessions, microseconds."),
    def!(DramEncryptionModeCurrent, "dramEncryptionMode.current", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's dramEncryptionMode.current: not read through NVML by gpumon; written [N/A]."),
    def!(DramEncryptionModePending, "dramEncryptionMode.pending", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's dramEncryptionMode.pending: not read through NVML by gpumon; written [N/A]."),
    def!(EccModeCurrent, "ecc.mode.current", [], "", false, Str, Gpu(EccMode), Last, None, false,
        "ECC mode now: Enabled or Disabled."),
    def!(EccModePending, "ecc.mode.pending", [], "", false, Str, Gpu(EccMode), Last, None, false,
        "ECC mode after the next reboot: Enabled or Disabled."),
    def!(EccErrorsCorrectedVolatileDeviceMemory, "ecc.errors.corrected.volatile.device_memory", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in device memory, since the driver loaded."),
    def!(EccErrorsCorrectedVolatileDram, "ecc.errors.corrected.volatile.dram", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in dram, since the driver loaded."),
    def!(EccErrorsCorrectedVolatileRegisterFile, "ecc.errors.corrected.volatile.register_file", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in register file, since the driver loaded."),
    def!(EccErrorsCorrectedVolatileL1Cache, "ecc.errors.corrected.volatile.l1_cache", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in l1 cache, since the driver loaded."),
    def!(EccErrorsCorrectedVolatileL2Cache, "ecc.errors.corrected.volatile.l2_cache", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in l2 cache, since the driver loaded."),
    def!(EccErrorsCorrectedVolatileTextureMemory, "ecc.errors.corrected.volatile.texture_memory", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in texture memory, since the driver loaded."),
    def!(EccErrorsCorrectedVolatileCbu, "ecc.errors.corrected.volatile.cbu", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in cbu, since the driver loaded."),
    def!(EccErrorsCorrectedVolatileSram, "ecc.errors.corrected.volatile.sram", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in sram, since the driver loaded."),
    def!(EccErrorsCorrectedAggregateDeviceMemory, "ecc.errors.corrected.aggregate.device_memory", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in device memory, over the GPU's life."),
    def!(EccErrorsCorrectedAggregateDram, "ecc.errors.corrected.aggregate.dram", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in dram, over the GPU's life."),
    def!(EccErrorsCorrectedAggregateRegisterFile, "ecc.errors.corrected.aggregate.register_file", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in register file, over the GPU's life."),
    def!(EccErrorsCorrectedAggregateL1Cache, "ecc.errors.corrected.aggregate.l1_cache", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in l1 cache, over the GPU's life."),
    def!(EccErrorsCorrectedAggregateL2Cache, "ecc.errors.corrected.aggregate.l2_cache", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in l2 cache, over the GPU's life."),
    def!(EccErrorsCorrectedAggregateTextureMemory, "ecc.errors.corrected.aggregate.texture_memory", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in texture memory, over the GPU's life."),
    def!(EccErrorsCorrectedAggregateCbu, "ecc.errors.corrected.aggregate.cbu", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in cbu, over the GPU's life."),
    def!(EccErrorsCorrectedAggregateSram, "ecc.errors.corrected.aggregate.sram", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Corrected ECC errors in sram, over the GPU's life."),
    def!(EccErrorsCorrectedAggregateTotal, "ecc.errors.corrected.aggregate.total", [], "", false, I64, Gpu(EccAggregate), Last, None, false,
        "Corrected ECC errors over the GPU's life."),
    def!(EccErrorsUncorrectedVolatileDeviceMemory, "ecc.errors.uncorrected.volatile.device_memory", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in device memory, since the driver loaded."),
    def!(EccErrorsUncorrectedVolatileDram, "ecc.errors.uncorrected.volatile.dram", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in dram, since the driver loaded."),
    def!(EccErrorsUncorrectedVolatileRegisterFile, "ecc.errors.uncorrected.volatile.register_file", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in register file, since the driver loaded."),
    def!(EccErrorsUncorrectedVolatileL1Cache, "ecc.errors.uncorrected.volatile.l1_cache", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in l1 cache, since the driver loaded."),
    def!(EccErrorsUncorrectedVolatileL2Cache, "ecc.errors.uncorrected.volatile.l2_cache", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in l2 cache, since the driver loaded."),
    def!(EccErrorsUncorrectedVolatileTextureMemory, "ecc.errors.uncorrected.volatile.texture_memory", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in texture memory, since the driver loaded."),
    def!(EccErrorsUncorrectedVolatileCbu, "ecc.errors.uncorrected.volatile.cbu", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in cbu, since the driver loaded."),
    def!(EccErrorsUncorrectedVolatileSram, "ecc.errors.uncorrected.volatile.sram", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in sram, since the driver loaded."),
    def!(EccErrorsUncorrectedAggregateDeviceMemory, "ecc.errors.uncorrected.aggregate.device_memory", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in device memory, over the GPU's life."),
    def!(EccErrorsUncorrectedAggregateDram, "ecc.errors.uncorrected.aggregate.dram", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in dram, over the GPU's life."),
    def!(EccErrorsUncorrectedAggregateRegisterFile, "ecc.errors.uncorrected.aggregate.register_file", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in register file, over the GPU's life."),
    def!(EccErrorsUncorrectedAggregateL1Cache, "ecc.errors.uncorrected.aggregate.l1_cache", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in l1 cache, over the GPU's life."),
    def!(EccErrorsUncorrectedAggregateL2Cache, "ecc.errors.uncorrected.aggregate.l2_cache", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in l2 cache, over the GPU's life."),
    def!(EccErrorsUncorrectedAggregateTextureMemory, "ecc.errors.uncorrected.aggregate.texture_memory", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in texture memory, over the GPU's life."),
    def!(EccErrorsUncorrectedAggregateCbu, "ecc.errors.uncorrected.aggregate.cbu", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in cbu, over the GPU's life."),
    def!(EccErrorsUncorrectedAggregateSram, "ecc.errors.uncorrected.aggregate.sram", [], "", false, I64, Gpu(EccLocation), Last, None, false,
        "Uncorrected ECC errors in sram, over the GPU's life."),
    def!(EccErrorsUncorrectedAggregateTotal, "ecc.errors.uncorrected.aggregate.total", [], "", false, I64, Gpu(EccAggregate), Last, None, false,
        "Uncorrected ECC errors over the GPU's life."),
    def!(TemperatureGpuTlimit, "temperature.gpu.tlimit", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's temperature.gpu.tlimit: not read through NVML by gpumon; written [N/A]."),
    def!(PowerManagement, "power.management", [], "", false, Str, Gpu(PowerManagement), Last, None, false,
        "Whether power management (the power limit) is active: Enabled or Disabled."),
    def!(PowerDefaultLimit, "power.default_limit", [], "W", true, F64, Gpu(PowerDefaultLimit), Last, None, true,
        "The power limit the board ships with, watts (read once, at the first tick)."),
    def!(PowerMinLimit, "power.min_limit", [], "W", true, F64, Gpu(PowerConstraints), Last, None, false,
        "The lowest power limit that can be set, watts (read once, at the first tick)."),
    def!(PowerMaxLimit, "power.max_limit", [], "W", true, F64, Gpu(PowerConstraints), Last, None, true,
        "The highest power limit that can be set, watts (read once, at the first tick)."),
    def!(ClocksApplicationsGraphics, "clocks.applications.graphics", [], "MHz", true, I32, Gpu(AppClockGr), Last, None, false,
        "Applications clock of the graphics domain, MHz."),
    def!(ClocksApplicationsMemory, "clocks.applications.memory", [], "MHz", true, I32, Gpu(AppClockMem), Last, None, false,
        "Applications clock of the memory, MHz."),
    def!(ClocksDefaultApplicationsGraphics, "clocks.default_applications.graphics", [], "MHz", true, I32, Gpu(DefaultAppClockGr), Last, None, false,
        "Default applications clock of the graphics domain, MHz."),
    def!(ClocksDefaultApplicationsMemory, "clocks.default_applications.memory", [], "MHz", true, I32, Gpu(DefaultAppClockMem), Last, None, false,
        "Default applications clock of the memory, MHz."),
    def!(MigModeCurrent, "mig.mode.current", [], "", false, Str, Gpu(MigModes), Last, None, false,
        "MIG mode now: Enabled or Disabled."),
    def!(MigModePending, "mig.mode.pending", [], "", false, Str, Gpu(MigModes), Last, None, false,
        "MIG mode after the next reset: Enabled or Disabled."),
    def!(GspModeCurrent, "gsp.mode.current", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's gsp.mode.current: not read through NVML by gpumon; written [N/A]."),
    def!(GspModeDefault, "gsp.mode.default", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's gsp.mode.default: not read through NVML by gpumon; written [N/A]."),
    def!(FabricState, "fabric.state", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's fabric.state: not read through NVML by gpumon; written [N/A]."),
    def!(FabricStatus, "fabric.status", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's fabric.status: not read through NVML by gpumon; written [N/A]."),
    def!(ProtectedMemoryTotal, "protected_memory.total", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's protected_memory.total: not read through NVML by gpumon; written [N/A]."),
    def!(ProtectedMemoryUsed, "protected_memory.used", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's protected_memory.used: not read through NVML by gpumon; written [N/A]."),
    def!(ProtectedMemoryFree, "protected_memory.free", [], "", false, Str, Gpu(NotAvailable), Last, None, false,
        "nvidia-smi's protected_memory.free: not read through NVML by gpumon; written [N/A]."),
    def!(SmActive, "sm.active", [], "%", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "Share of time at least one warp was resident on an SM, averaged over all SMs (GPM SM_UTIL; DCGM_FI_PROF_SM_ACTIVE). Hopper and newer; empty elsewhere.").stats(&[Mean, Max]),
    def!(SmOccupancy, "sm.occupancy", [], "%", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "Resident warps as a share of the SMs' maximum, averaged over the interval (GPM SM_OCCUPANCY; DCGM_FI_PROF_SM_OCCUPANCY). Hopper and newer.").stats(&[Mean]),
    def!(TensorActive, "tensor.active", [], "%", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "Share of time any tensor core pipe was busy (GPM ANY_TENSOR_UTIL; DCGM_FI_PROF_PIPE_TENSOR_ACTIVE). Hopper and newer.").stats(&[Mean, Max]),
    def!(DramActive, "dram.active", [], "%", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "Device memory bandwidth in use, percent of the peak (GPM DRAM_BW_UTIL; DCGM_FI_PROF_DRAM_ACTIVE). Hopper and newer.").stats(&[Mean, Max]),
    def!(Fp16Active, "fp16.active", [], "%", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "Share of time the FP16 pipe was busy (GPM FP16_UTIL; DCGM_FI_PROF_PIPE_FP16_ACTIVE). Hopper and newer.").stats(&[Mean]),
    def!(Fp32Active, "fp32.active", [], "%", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "Share of time the FP32 pipe was busy (GPM FP32_UTIL; DCGM_FI_PROF_PIPE_FP32_ACTIVE). Hopper and newer.").stats(&[Mean]),
    def!(Fp64Active, "fp64.active", [], "%", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "Share of time the FP64 pipe was busy (GPM FP64_UTIL; DCGM_FI_PROF_PIPE_FP64_ACTIVE). Hopper and newer.").stats(&[Mean]),
    def!(PcieTxBytes, "pcie.tx.bytes", [], "MiB/s", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "PCIe bytes sent by the GPU per second (GPM PCIE_TX_PER_SEC; DCGM_FI_PROF_PCIE_TX_BYTES). Hopper and newer.").stats(&[Mean, Max]),
    def!(PcieRxBytes, "pcie.rx.bytes", [], "MiB/s", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "PCIe bytes received by the GPU per second (GPM PCIE_RX_PER_SEC; DCGM_FI_PROF_PCIE_RX_BYTES). Hopper and newer.").stats(&[Mean, Max]),
    def!(NvlinkTxBytes, "nvlink.tx.bytes", [], "MiB/s", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "NVLink bytes sent per second, all links (GPM NVLINK_TOTAL_TX_PER_SEC; DCGM_FI_PROF_NVLINK_TX_BYTES). Hopper and newer.").stats(&[Mean, Max]),
    def!(NvlinkRxBytes, "nvlink.rx.bytes", [], "MiB/s", true, F64, Gpu(Gpm), Mean, Gauge, true,
        "NVLink bytes received per second, all links (GPM NVLINK_TOTAL_RX_PER_SEC; DCGM_FI_PROF_NVLINK_RX_BYTES). Hopper and newer.").stats(&[Mean, Max]),
    def!(XidEvents, "xid.events", [], "", false, I32, Gpu(Events), Sum, Gauge, true,
        "Xid critical error events NVML reported for this GPU during the row's interval (each one is in the events file beside the output); empty when the GPU cannot report events."),
    def!(RemappedCorrectable, "remapped_rows.correctable", [], "", false, I32, Gpu(RemappedRows), Last, Gauge, true,
        "Rows remapped for correctable ECC errors (A100 and newer; read once a minute)."),
    def!(RemappedUncorrectable, "remapped_rows.uncorrectable", [], "", false, I32, Gpu(RemappedRows), Last, Gauge, true,
        "Rows remapped for uncorrectable ECC errors (A100 and newer; read once a minute)."),
    def!(RemappedPending, "remapped_rows.pending", [], "", false, Bool, Gpu(RemappedRows), Last, Gauge, true,
        "A row remap is pending: it takes effect at the next GPU reset (read once a minute)."),
    def!(RemappedFailure, "remapped_rows.failure", [], "", false, Bool, Gpu(RemappedRows), Last, Gauge, true,
        "A row remap failed: the GPU should be reset and, if it recurs, serviced (read once a minute)."),
    def!(RetiredSbe, "retired_pages.single_bit_ecc.count", [], "", false, I32, Gpu(RetiredPages), Last, Gauge, true,
        "Pages retired for multiple single-bit ECC errors (before A100; read once a minute)."),
    def!(RetiredDbe, "retired_pages.double_bit.count", [], "", false, I32, Gpu(RetiredPages), Last, Gauge, true,
        "Pages retired for a double-bit ECC error (before A100; read once a minute)."),
    def!(RetiredPending, "retired_pages.pending", [], "", false, Bool, Gpu(RetiredPages), Last, Gauge, true,
        "A page retirement is pending until the next driver reload or GPU reset (read once a minute)."),
    def!(CpuUtil, "cpu.util", [], "%", true, F64, Host, Mean, Gauge, true,
        "Host CPU utilization over the tick, percent of all cores.").stats(&[Mean, P95, Max]),
    def!(CpuUtilMaxCore, "cpu.util.max_core", [], "%", true, F64, Host, Mean, Gauge, true,
        "Utilization of the busiest single core over the tick, percent (a pegged core next to an idle GPU means input-bound).").stats(&[Mean, P95, Max]),
    def!(Load1, "load.1", ["loadavg.1"], "", false, F64, Host, Last, Gauge, true,
        "One-minute load average."),
    def!(HostMemTotal, "mem.total", [], "MiB", true, I32, Host, Identity, Gauge, true,
        "Host RAM installed."),
    def!(HostMemUsed, "mem.used", [], "MiB", true, I32, Host, Mean, Gauge, true,
        "Host RAM in use (total minus available).").stats(&[Max]),
    def!(HostMemAvailable, "mem.available", [], "MiB", true, I32, Host, Mean, Gauge, true,
        "Host RAM available for new allocations without swapping."),
    def!(SwapUsed, "swap.used", [], "MiB", true, I32, Host, Mean, Gauge, true,
        "Swap space in use.").stats(&[Max]),
    maxof(def!(UtilGpuMax, "utilization.gpu.max", [], "%", true, I16, Derived, Max, Gauge, false,
        "Highest utilization.gpu among the sub-samples of the interval (with --sample-every)."), Field::UtilGpu),
    maxof(def!(MemUsedMax, "memory.used.max", [], "MiB", true, I32, Derived, Max, Gauge, false,
        "Highest memory.used among the sub-samples of the interval (with --sample-every)."), Field::MemUsed),
    maxof(def!(PowerDrawMax, "power.draw.max", [], "W", true, F64, Derived, Max, Gauge, false,
        "Highest power.draw among the sub-samples of the interval (with --sample-every)."), Field::PowerDraw),
    maxof(def!(TempGpuMax, "temperature.gpu.max", [], "C", false, I32, Derived, Max, Gauge, false,
        "Highest temperature.gpu among the sub-samples of the interval (with --sample-every)."), Field::TempGpu),
    maxof(def!(CpuMaxCoreMax, "cpu.util.max_core.max", [], "%", true, F64, Derived, Max, Gauge, false,
        "Highest cpu.util.max_core among the sub-samples of the interval (with --sample-every)."), Field::CpuUtilMaxCore),
    maxof(def!(SmActiveMax, "sm.active.max", [], "%", true, F64, Derived, Max, Gauge, false,
        "Highest sm.active among the sub-samples of the interval (with --sample-every)."), Field::SmActive),
    maxof(def!(TensorActiveMax, "tensor.active.max", [], "%", true, F64, Derived, Max, Gauge, false,
        "Highest tensor.active among the sub-samples of the interval (with --sample-every)."), Field::TensorActive),
    maxof(def!(DramActiveMax, "dram.active.max", [], "%", true, F64, Derived, Max, Gauge, false,
        "Highest dram.active among the sub-samples of the interval (with --sample-every)."), Field::DramActive),
    def!(Samples, "samples", [], "", false, I32, Derived, Sum, None, false,
        "Number of sub-samples summarised by this row (1 without --sample-every)."),
    def!(JobCpu, "job.cpu", [], "%", true, F64, Job, Mean, Gauge, false,
        "CPU used by the job's process tree, percent of one core (400 = four cores busy).").stats(&[Mean, Max]),
    def!(JobRss, "job.rss", [], "MiB", true, I32, Job, Mean, Gauge, false,
        "Resident memory of the job's process tree.").stats(&[Mean, Max]),
    def!(JobProcs, "job.procs", [], "", false, I32, Job, Last, Gauge, false,
        "Processes in the job's tree (DataLoader workers show up here).").stats(&[Mean, Max]),
    def!(JobThreads, "job.threads", [], "", false, I32, Job, Last, Gauge, false,
        "Threads in the job's process tree.").stats(&[Mean, Max]),
    def!(JobRead, "job.read", [], "B/s", true, F64, Job, Mean, Gauge, false,
        "Bytes the job's tree read from storage per second (/proc/PID/io read_bytes).").stats(&[Mean, Max]),
    def!(JobWrite, "job.write", [], "B/s", true, F64, Job, Mean, Gauge, false,
        "Bytes the job's tree wrote to storage per second (/proc/PID/io write_bytes).").stats(&[Mean, Max]),
    def!(JobGpuMemory, "job.gpu_memory", [], "MiB", true, I32, Gpu(Processes), Mean, Gauge, false,
        "GPU memory used on this GPU by processes of the job's tree (NVML running compute processes).").stats(&[Mean, Max]),
    def!(CgroupMemUsed, "cgroup.mem.used", [], "MiB", true, I32, Cgroup, Mean, Gauge, false,
        "Memory charged to gpumon's cgroup (memory.current, or memory.usage_in_bytes on v1).").stats(&[Mean, Max]),
    def!(CgroupMemLimit, "cgroup.mem.limit", [], "MiB", true, I32, Cgroup, Last, Gauge, false,
        "Memory limit of the cgroup (memory.max / memory.limit_in_bytes); null when unlimited.").stats(&[Mean, Max]),
    def!(CgroupCpuLimit, "cgroup.cpu.limit", [], "cores", true, F64, Cgroup, Last, Gauge, false,
        "CPU limit of the cgroup in cores (cpu.max quota/period); null when unlimited.").stats(&[Mean, Max]),
    def!(CgroupCpuUtil, "cgroup.cpu.util", [], "%", true, F64, Cgroup, Mean, Gauge, false,
        "CPU used by the cgroup over the tick, percent of its limit (of all cores when unlimited).").stats(&[Mean, Max]),
    def!(CgroupOomKills, "cgroup.oom_kills", [], "", false, I64, Cgroup, Last, Counter, false,
        "Processes the kernel OOM-killed in the cgroup so far (memory.events oom_kill).").stats(&[Mean, Max]),
    def!(ProcPid, "proc.pid", ["pid"], "", false, I32, Process, Identity, Label, false,
        "Process id as NVML reports it (the host's PID namespace)."),
    def!(ProcUser, "proc.user", ["user"], "", false, Str, Process, Identity, Label, false,
        "Owner of the process (null when the PID is not visible here, e.g. in a container)."),
    def!(ProcCommand, "proc.command", ["command"], "", false, Str, Process, Identity, Label, false,
        "Command line of the process (null when the PID is not visible here)."),
    def!(ProcGpuMemory, "proc.gpu_memory", ["used_gpu_memory"], "MiB", true, I32, Process, Last, Gauge, false,
        "GPU memory the process uses on this GPU."),
    def!(ProcJob, "proc.job", [], "", false, Bool, Process, Last, Gauge, false,
        "Whether the process belongs to the wrapped or followed job."),
    def!(ProcSm, "proc.sm", ["sm_util"], "%", true, I16, Process, Last, Gauge, false,
        "SM (compute) utilization of the process on this GPU, mean of NVML's per-process samples over the row's interval (0 when NVML saw it idle)."),
    def!(ProcMemUtil, "proc.mem_util", ["mem_util"], "%", true, I16, Process, Last, Gauge, false,
        "Device memory bandwidth utilization of the process (NVML per-process utilization)."),
    def!(ProcEnc, "proc.enc", [], "%", true, I16, Process, Last, Gauge, false,
        "Video encoder utilization of the process (NVML per-process utilization)."),
    def!(ProcDec, "proc.dec", [], "%", true, I16, Process, Last, Gauge, false,
        "Video decoder utilization of the process (NVML per-process utilization)."),
    def!(EventKind, "kind", ["event.kind"], "", false, Str, Event, Identity, None, false,
        "Kind of NVML event: xid, dbe (double-bit ECC), sbe (single-bit ECC), clock, power_source."),
    def!(EventCode, "code", ["event.code"], "", false, I32, Event, Identity, None, false,
        "The Xid number of an xid event (see `gpumon summarize` for what it means); empty for other kinds."),
    def!(EventDetail, "detail", ["event.detail"], "", false, Str, Event, Identity, None, false,
        "What NVML said besides kind and code (e.g. an Xid NVML could not name)."),
    def!(MigGi, "mig.gi", ["gpu_instance_id"], "", false, I32, Gpu(Identity), Identity, Label, false,
        "GPU instance id of a MIG instance's row (null on whole-GPU rows). Recorded when a GPU is in MIG mode at start: one row per MIG instance per tick beside its GPU's row, with the GPU's index."),
    def!(MigCi, "mig.ci", ["compute_instance_id"], "", false, I32, Gpu(Identity), Identity, Label, false,
        "Compute instance id of a MIG instance's row (null on whole-GPU rows)."),
    def!(MigProfile, "mig.profile", [], "", false, Str, Gpu(Identity), Identity, Label, false,
        "MIG profile of the instance (`3g.40gb`), from the MIG device's name (null on whole-GPU rows)."),
    def!(MigUuid, "mig.uuid", [], "", false, Str, Gpu(Identity), Identity, Label, false,
        "UUID of the MIG instance (`MIG-...`; null on whole-GPU rows)."),
    def!(Phase, "phase", [], "", false, Str, Meta, Last, None, false,
        "Experiment phase current at the row's timestamp, as marked with `gpumon mark LABEL` (null before the first mark and after `gpumon mark --end`). In the default columns of a wrapped job; --phases adds it otherwise."),
    def!(Missed, "missed", [], "", false, I32, Derived, Sum, None, true,
        "Ticks not recorded just before this row (late scheduler, writer backlog, disk outage); 0 normally."),
];

/// The identity columns of a MIG instance's row, added to the selection when a GPU is in MIG mode.
pub const MIG_IDENTITY: [Field; 4] =
    [Field::MigGi, Field::MigCi, Field::MigProfile, Field::MigUuid];

/// The measured fields a MIG instance's row holds (NVML answers them on a MIG device handle); the
/// GPU's row keeps the rest (power, temperature, clocks, ECC).
pub const MIG_MEASURED: [Field; 4] =
    [Field::MemUsed, Field::MemTotal, Field::MemFree, Field::MemReserved];

/// The GPM fields a MIG instance's row holds (`nvmlGpmMigSampleGet`): its only activity figures.
pub(crate) const MIG_GPM: [Field; 7] = [
    Field::SmActive,
    Field::SmOccupancy,
    Field::TensorActive,
    Field::DramActive,
    Field::Fp16Active,
    Field::Fp32Active,
    Field::Fp64Active,
];

impl Field {
    /// Whether a MIG instance's row holds the field: the GPU identity, the instance's identity and
    /// what NVML answers on a MIG device ([`MIG_MEASURED`]); host and job columns repeat on every row.
    pub fn on_mig_rows(self) -> bool {
        matches!(
            self,
            Field::Index | Field::Uuid | Field::Name | Field::PciBusId | Field::DriverVersion
        ) || MIG_IDENTITY.contains(&self)
            || MIG_MEASURED.contains(&self)
            || MIG_GPM.contains(&self)
    }
}

/// The bits of `clocks_event_reasons.active`: NVML's `nvmlClocksEventReason*` (nvml.h), named as
/// nvidia-smi's `clocks_event_reasons.<name>` query fields.
pub const CLOCK_EVENT_REASONS: [(u64, &str); 9] = [
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
];

impl Field {
    /// The catalogue row of this field.
    pub fn def(self) -> &'static FieldDef {
        &CATALOG[self as usize]
    }

    /// The field's canonical name.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// All fields in catalogue order.
    pub fn all() -> impl Iterator<Item = Field> {
        CATALOG.iter().map(|d| d.field)
    }

    /// Resolve a canonical name or alias (case-insensitive, nvidia-smi style).
    pub fn lookup(name: &str) -> Option<Field> {
        let name = name.trim();
        CATALOG
            .iter()
            .find(|d| {
                d.name.eq_ignore_ascii_case(name)
                    || d.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
            })
            .map(|d| d.field)
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FieldDef {
    /// Declare the statistics `summarize` reports for the field (a catalogue row's `.stats(...)`).
    const fn stats(mut self, summary: &'static [Reduce]) -> FieldDef {
        self.summary = summary;
        self
    }

    /// Column header in nvidia-smi style: its own name for the field, `[unit]` where it prints one.
    pub fn nvsmi_header(&self) -> String {
        let name = self.nvsmi_name.unwrap_or(self.name);
        if self.nvsmi_unit && !self.unit.is_empty() {
            format!("{name} [{}]", self.unit)
        } else {
            name.to_string()
        }
    }
}

/// Names users type for a field from other tools' habits (gpustat, DCGM, pynvml scripts, Grafana
/// panels): not accepted as input (a header must say what it holds), but suggested as the field.
const TYPED: &[(&str, Field)] = &[
    ("gpu_util", Field::UtilGpu),
    ("util", Field::UtilGpu),
    ("gpu_usage", Field::UtilGpu),
    ("mem_util", Field::UtilMemory),
    ("temp", Field::TempGpu),
    ("gpu_temp", Field::TempGpu),
    ("temperature", Field::TempGpu),
    ("mem_used", Field::MemUsed),
    ("mem", Field::MemUsed),
    ("memory", Field::MemUsed),
    ("vram", Field::MemUsed),
    ("mem_total", Field::MemTotal),
    ("mem_free", Field::MemFree),
    ("power", Field::PowerDraw),
    ("power_usage", Field::PowerDraw),
    ("watts", Field::PowerDraw),
    ("sm_clock", Field::ClockSm),
    ("mem_clock", Field::ClockMem),
    ("fan", Field::FanSpeed),
];

/// The words of a name, lower-case and sorted: `gpu_utilization` and `utilization.gpu` agree.
fn words(name: &str) -> Vec<String> {
    let mut w: Vec<String> = name
        .split(['.', '_', '-', ' '])
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    w.sort();
    w
}

/// The field a user most likely means by a name from another tool: a habit in [`TYPED`], or a
/// field name with the same words in another order or joined otherwise (`gpu_utilization`).
fn typed(name: &str) -> Option<Field> {
    let key = words(name).join("_");
    TYPED.iter().find(|(t, _)| words(t).join("_") == key).map(|&(_, f)| f).or_else(|| {
        CATALOG
            .iter()
            .find(|d| {
                std::iter::once(d.name)
                    .chain(d.aliases.iter().copied())
                    .any(|n| words(n).join("_") == key)
            })
            .map(|d| d.field)
    })
}

/// The canonical names closest to `name` (a name from another tool's habits first, then by edit
/// distance over names and aliases), best first; none when nothing is close (a hint naming
/// unrelated fields misleads).
pub fn suggest(name: &str) -> Vec<&'static str> {
    let first = typed(name).map(Field::name);
    let name = name.trim().to_ascii_lowercase();
    let mut scored: Vec<(f64, &'static str)> = CATALOG
        .iter()
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
        .map(|cand| {
            (strsim::normalized_damerau_levenshtein(&name, &cand.to_ascii_lowercase()), cand)
        })
        .filter(|(score, _)| *score >= 0.6)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let mut out: Vec<&'static str> = first.into_iter().collect();
    for (_, cand) in scored {
        let canon = Field::lookup(cand).map_or(cand, Field::name);
        if !out.contains(&canon) {
            out.push(canon);
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_rows_are_in_enum_order() {
        for (i, d) in CATALOG.iter().enumerate() {
            assert_eq!(d.field as usize, i, "{} is out of order", d.name);
        }
    }

    #[test]
    fn gpu_fields_and_only_they_name_a_reader() {
        for d in &CATALOG {
            assert_eq!(
                d.read.is_some(),
                d.source == Source::Gpu,
                "{}: a GPU field names its NVML reader",
                d.name
            );
        }
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for d in &CATALOG {
            for n in std::iter::once(d.name).chain(d.aliases.iter().copied()) {
                assert!(seen.insert(n.to_ascii_lowercase()), "duplicate name {n}");
            }
        }
    }

    #[test]
    fn aliases_resolve() {
        assert_eq!(Field::lookup("clocks.current.sm"), Some(Field::ClockSm));
        assert_eq!(Field::lookup("clocks_throttle_reasons.active"), Some(Field::EventReasons));
        assert_eq!(Field::lookup("gpu_name"), Some(Field::Name));
        assert_eq!(Field::lookup("GPU_UUID"), Some(Field::Uuid));
        assert_eq!(Field::lookup("nope"), None);
    }

    #[test]
    fn suggestions_find_typos() {
        assert_eq!(suggest("utilisation.gpu").first(), Some(&"utilization.gpu"));
        assert!(suggest("memory.usd").contains(&"memory.used"));
        assert_eq!(suggest("clocks.sn").first(), Some(&"clocks.sm"));
        assert!(suggest("qqq_zzz_bogus").is_empty(), "{:?}", suggest("qqq_zzz_bogus"));
        assert_eq!(suggest("persistence_mod").first(), Some(&"persistence_mode"));
        for (typed, field) in [
            ("gpu_util", "utilization.gpu"),
            ("GPU_UTILIZATION", "utilization.gpu"),
            ("temp", "temperature.gpu"),
            ("mem_used", "memory.used"),
            ("memory_used", "memory.used"),
            ("power", "power.draw"),
        ] {
            assert_eq!(suggest(typed).first(), Some(&field), "{typed}: {:?}", suggest(typed));
        }
    }
}
