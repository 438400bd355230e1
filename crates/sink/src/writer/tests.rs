//! The writer's thread start-up, rotation and outage handling, driven without a recording.

use std::path::Path;

use gpumon_schema::catalog::Field;
use gpumon_schema::{Row, Value};

use super::rotate::next_boundary;
use super::*;

#[test]
fn boundaries_are_wall_clock_aligned() {
    let t = DateTime::parse_from_rfc3339("2026-12-02T14:17:59.5Z").unwrap().with_timezone(&Utc);
    let b = next_boundary(t, Duration::from_secs(3600)).unwrap();
    assert_eq!(b.to_rfc3339(), "2026-12-02T15:00:00+00:00");
    let b = next_boundary(t, Duration::from_secs(60)).unwrap();
    assert_eq!(b.to_rfc3339(), "2026-12-02T14:18:00+00:00");
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn state(dir: &Path, every: Duration) -> State {
    let meta = RunMeta {
        hostname: "h".into(),
        interval_s: 0.1,
        command: "test".into(),
        start: Utc::now(),
        driver_version: None,
        job: None,
    };
    let target = Target::File(dir.join("t.csv"));
    let cfg = WriterConfig {
        format: Format::Csv,
        target: target.clone(),
        selection: Selection::new(vec![Field::Timestamp, Field::Host, Field::Index, Field::Missed]),
        meta,
        flush: Duration::from_secs(10),
        rotate_size: None,
        rotate_every: Some(every),
        keep: None,
        max_total: None,
        backlog_rows: 100,
        verbose: false,
    };
    State::new(cfg, Some(OutputSet::new(&dir.join("t.csv"))), Arc::new(WriterStats::default()))
}

fn tick(ts: DateTime<Utc>) -> Tick {
    Tick { ts, seq: 0, rows: vec![gpumon_schema::Row::default()], procs: Vec::new() }
}

/// A row of host `h` with `missed` = `i`.
fn host_row(i: u64) -> Row {
    let mut r = Row::default();
    r.set(Field::Host, Value::S("h".into()));
    r.set(Field::Missed, Value::U(i));
    r
}

/// What a write on a full disk fails with.
fn no_space() -> SinkError {
    SinkError::from(std::io::Error::from(std::io::ErrorKind::StorageFull)).context("writing t.csv")
}

#[test]
fn a_full_disk_is_an_outage_of_kind_full_that_keeps_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = state(dir.path(), Duration::from_secs(3600));
    s.on_tick(tick(at("2026-12-02T14:00:00Z")));
    let e = no_space();
    assert_eq!(e.kind(), SinkErrorKind::Full);
    assert!(!outage::is_removed(&e));
    s.enter_outage(&e);
    let o = s.outage.as_ref().unwrap();
    assert_eq!(o.kind, SinkErrorKind::Full);
    assert!(o.error.starts_with("writing t.csv: "), "{}", o.error);
    assert_eq!(s.backlog.len(), 1, "the unflushed tick is kept");
    assert!(outage::is_removed(&SinkError::removed(Path::new("t.csv")).context("flushing")));
}

#[test]
fn a_failed_parquet_flush_requeues_its_ticks_from_the_sinks_own_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = state(dir.path(), Duration::from_secs(3600));
    let path = dir.path().join("t.parquet");
    s.cfg.format = Format::Parquet;
    s.cfg.target = Target::File(path.clone());
    s.cfg.backlog_rows = 10_000;
    s.set = Some(OutputSet::new(&path));
    let start = at("2026-12-02T14:00:00Z");
    let mut sent = Vec::new();
    for i in 0..700u64 {
        let r = host_row(i);
        let mut r1 = r.clone();
        r1.set(Field::Index, Value::U(1));
        let ts = start + chrono::Duration::milliseconds(i as i64);
        let t = Tick { ts, seq: i, rows: vec![r, r1], procs: Vec::new() };
        sent.push(t.clone());
        s.on_tick(t);
    }
    // Flushed at 512 ticks (1,024 rows); the 188 after it are kept by the sink alone.
    assert_eq!(s.unflushed.len(), 188);
    assert!(s.unflushed.iter().all(|u| matches!(u, Unflushed::InSink { .. })));
    s.enter_outage(&no_space());
    let back: Vec<Tick> = s.backlog.iter().cloned().collect();
    assert_eq!(back, sent[512..]);
    assert_eq!(s.backlog_rows, 376);
}

#[test]
fn a_failed_csv_flush_requeues_its_ticks_whole_less_their_process_lists() {
    use gpumon_schema::GpuProc;
    let dir = tempfile::tempdir().unwrap();
    let mut s = state(dir.path(), Duration::from_secs(3600));
    let start = at("2026-12-02T14:00:00Z");
    let mut sent = Vec::new();
    for i in 0..5u64 {
        let mut r = host_row(i);
        // Not selected: kept as it came (sinks write only the selected fields).
        r.set(Field::PowerDraw, Value::F(1.5));
        let procs = vec![GpuProc { row: 0, pid: 7, used_mib: Some(1), util: None }];
        let t =
            Tick { ts: start + chrono::Duration::seconds(i as i64), seq: i, rows: vec![r], procs };
        sent.push(Tick { procs: Vec::new(), ..t.clone() });
        s.on_tick(t);
    }
    // Written, none flushed yet (the first tick's flush waits for the queue to drain).
    assert_eq!(s.unflushed.len(), 5);
    assert!(s.unflushed.iter().all(|u| matches!(u, Unflushed::Copy(_))));
    s.enter_outage(&no_space());
    let back: Vec<Tick> = s.backlog.iter().cloned().collect();
    assert_eq!(back, sent);
}

#[test]
fn time_rotation_recomputes_its_boundary_after_a_step_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = state(dir.path(), Duration::from_secs(1));
    s.open_piece(at("2026-12-02T14:00:00.5Z")).unwrap();
    s.write(tick(at("2026-12-02T14:00:00.6Z"))).unwrap();
    // 30 s back: the 14:00:01 cut would stall rotation for 30 s; it follows the step instead.
    assert!(!s.cut_due(at("2026-12-02T13:59:30.1Z")));
    assert!(s.cut_due(at("2026-12-02T13:59:31.1Z")));
    // An empty piece is never cut: its boundary moves.
    let mut s = state(dir.path(), Duration::from_secs(1));
    s.open_piece(at("2026-12-02T15:00:00.5Z")).unwrap();
    assert!(!s.cut_due(at("2026-12-02T15:00:05.0Z")));
    assert_eq!(s.piece.as_ref().unwrap().boundary, Some(at("2026-12-02T15:00:06Z")));
}

fn rows_in(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count().saturating_sub(1)
}

#[test]
fn the_thread_starts_with_the_second_tick_and_a_1_tick_run_never_starts_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = state(dir.path(), Duration::from_secs(3600)).cfg;
    let now = Utc::now();
    // One tick: written and closed by `finish` on this thread, metadata included.
    let w = Writer::spawn(cfg.clone()).unwrap();
    w.send(tick(now)).unwrap();
    w.add_metadata("k", "v");
    assert!(!w.started());
    let r = w.finish().unwrap();
    assert_eq!((r.written, r.files.len()), (1, 1));
    assert_eq!(rows_in(&r.files[0]), 1);
    // The second tick starts the thread (it comes within --flush of the first).
    let w = Writer::spawn(WriterConfig {
        target: Target::File(dir.path().join("u.csv")),
        ..cfg.clone()
    })
    .unwrap();
    w.send(tick(now)).unwrap();
    w.send(tick(now + chrono::Duration::milliseconds(100))).unwrap();
    assert!(w.started());
    let r = w.finish().unwrap();
    assert_eq!(r.written, 2);
    assert_eq!(rows_in(&r.files[0]), 2);
    // Ticks further apart than --flush, or --flush 0: started at once.
    for (interval_s, flush) in [(20.0, Duration::from_secs(10)), (0.1, Duration::ZERO)] {
        let meta = RunMeta { interval_s, ..cfg.meta.clone() };
        let path = dir.path().join(format!("v{interval_s}.csv"));
        let w =
            Writer::spawn(WriterConfig { target: Target::File(path), meta, flush, ..cfg.clone() })
                .unwrap();
        assert!(w.started());
        w.finish().unwrap();
    }
}

#[test]
fn a_sighup_with_nothing_new_makes_no_file_and_ticks_dropped_by_a_full_backlog_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = state(dir.path(), Duration::from_secs(3600));
    s.open_piece(at("2026-12-02T14:00:00Z")).unwrap();
    s.on_hup();
    assert!(s.piece.as_ref().is_some_and(|p| p.ticks == 0), "nothing to rotate");
    s.on_tick(tick(at("2026-12-02T14:00:01Z")));
    s.on_hup();
    assert!(s.piece.is_none() && s.closed.len() == 1, "a piece with a row is closed");
    s.on_hup();
    assert_eq!(s.closed.len(), 1);
    // An outage with room for 2 rows: ticks 4..=6 are dropped, and counted on tick 7 once the
    // backlog has room again.
    s.cfg.backlog_rows = 2;
    s.outage = Some(Outage {
        since: Instant::now(),
        next_retry: Instant::now(),
        error: "x".into(),
        kind: SinkErrorKind::Io,
        lost: 0,
    });
    for i in 2..=7 {
        s.on_tick(tick(at(&format!("2026-12-02T14:00:0{i}Z"))));
        if i == 6 {
            s.backlog.clear();
            s.backlog_rows = 0;
        }
    }
    let missed: Vec<u64> =
        s.backlog.iter().map(|t| t.rows[0].get(Field::Missed).as_u64().unwrap_or(0)).collect();
    assert_eq!(missed, [3], "the next kept row counts every tick the full backlog dropped");
    assert_eq!(s.outage.as_ref().unwrap().lost, 3);
}
