//! The journal format read back: an Arrow IPC stream (a schema, then one record batch per flush)
//! decoded message by message, so that a damaged message costs only itself. Shared by the readers
//! (summarize a crash's journal) and recovery (rebuild the Parquet piece from it).
//!
//! Every length is checked against the file before anything is allocated: a metadata length above
//! [`MAX_META`] or past the end, a body past the end, a buffer outside its body, a row count no body
//! could hold. A message that fails is skipped: when its frame is intact the next message follows
//! it; when the frame itself is damaged the reader scans forward for the next message that verifies
//! (a continuation marker, a plausible length, a flatbuffer that checks, a batch header that fits),
//! so valid batches after the damage are kept. A cut last message is a *torn tail* (a crash
//! mid-write), which is expected and loses nothing that was flushed; anything else skipped is
//! *damage*, reported with its offset and size. Decoder panics are contained (`util::guard`).

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use anyhow::Result;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_ipc::{MessageHeader, MetadataVersion};
use arrow_schema::SchemaRef;

use gpumon_util::contain;

/// Largest message metadata accepted: gpumon's schema with every field is a few KiB.
pub(crate) const MAX_META: u64 = 1 << 20;
const CONTINUATION: [u8; 4] = [0xFF; 4];
/// Bytes scanned at once when looking for the next message after damage.
const SCAN_CHUNK: usize = 64 * 1024;
/// Damaged regions listed one by one; more are only counted.
const MAX_LISTED: usize = 20;

/// A stretch of the journal that could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Damage {
    /// Where the stretch starts, bytes into the journal.
    pub offset: u64,
    /// Its length in bytes.
    pub bytes: u64,
    /// Why it could not be read.
    pub why: String,
}

/// What reading a journal found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct JournalRead {
    /// Record batches read.
    pub batches: u64,
    /// Rows in them.
    pub rows: u64,
    /// Damaged stretches (the first [`MAX_LISTED`]); `damaged_regions` counts them all.
    pub damage: Vec<Damage>,
    /// Damaged stretches in all.
    pub damaged_regions: u64,
    /// Bytes in the damaged stretches.
    pub damaged_bytes: u64,
    /// Bytes of a cut last message (a crash mid-write); 0 when the journal ends cleanly.
    pub torn_tail: u64,
}

impl JournalRead {
    /// Whether every byte was read or is the torn tail a crash leaves: nothing else was lost.
    pub fn complete(&self) -> bool {
        self.damaged_regions == 0
    }

    /// One line saying what was skipped, if anything was.
    pub fn damage_summary(&self) -> Option<String> {
        if self.complete() {
            return None;
        }
        let first = self
            .damage
            .first()
            .map(|d| format!(" (first at byte {}: {})", d.offset, d.why))
            .unwrap_or_default();
        Some(format!(
            "{} damaged stretch(es) of {} bytes skipped{first}; the {} valid batch(es) before and after were read",
            self.damaged_regions, self.damaged_bytes, self.batches
        ))
    }

    fn damaged(&mut self, offset: u64, bytes: u64, why: String) {
        self.damaged_regions += 1;
        self.damaged_bytes += bytes;
        if self.damage.len() < MAX_LISTED {
            self.damage.push(Damage { offset, bytes, why });
        }
    }
}

/// Why a journal cannot be read at all.
#[derive(Debug, Clone, PartialEq)]
pub enum Unreadable {
    /// Shorter than its schema message: the crash came before anything was written.
    Empty,
    /// The schema message is damaged (the batches cannot be decoded without it).
    Schema(String),
    /// The journal cannot be opened or read.
    Io(String),
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::Empty => {
                f.write_str("the journal holds no complete schema (a crash before the first write)")
            }
            Unreadable::Schema(why) => write!(f, "the journal's schema message is damaged: {why}"),
            Unreadable::Io(e) => write!(f, "cannot read: {e}"),
        }
    }
}

/// One framed message: where its metadata and body lie.
struct Frame {
    meta_len: u64,
    body_len: u64,
}

impl Frame {
    fn total(&self) -> u64 {
        8 + self.meta_len + self.body_len
    }
}

/// Why a frame at an offset is not a message.
enum NoFrame {
    /// The bytes end inside a plausible message.
    Cut,
    Bad(String),
}

/// A journal file opened for reading.
pub struct Journal {
    file: File,
    len: u64,
    schema: SchemaRef,
    /// Offset of the first message after the schema.
    start: u64,
}

impl Journal {
    /// Open a journal and decode its schema.
    pub fn open(file: File) -> Result<Journal, Unreadable> {
        let len = file.metadata().map_err(|e| Unreadable::Io(e.to_string()))?.len();
        let mut j =
            Journal { file, len, schema: Arc::new(arrow_schema::Schema::empty()), start: 0 };
        let frame = match j.frame(0) {
            Ok(f) => f,
            Err(NoFrame::Cut) => return Err(Unreadable::Empty),
            Err(NoFrame::Bad(why)) => return Err(Unreadable::Schema(why)),
        };
        let meta = j.read(8, frame.meta_len).map_err(Unreadable::Io)?;
        let schema = contain(|| -> Result<arrow_schema::Schema, String> {
            let msg = arrow_ipc::root_as_message(&meta).map_err(|e| e.to_string())?;
            let fb = msg.header_as_schema().ok_or("the first message is not a schema")?;
            Ok(arrow_ipc::convert::fb_to_schema(fb))
        })
        .map_err(|p| Unreadable::Schema(format!("the decoder failed: {p}")))?
        .map_err(Unreadable::Schema)?;
        j.schema = Arc::new(schema);
        j.start = frame.total();
        Ok(j)
    }

    /// The Arrow schema of the journal's batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn read(&self, at: u64, n: u64) -> Result<Vec<u8>, String> {
        if at.checked_add(n).is_none_or(|e| e > self.len) {
            return Err(format!("{n} bytes at offset {at} run past the end of the file"));
        }
        let mut buf = vec![0u8; n as usize];
        self.file.read_exact_at(&mut buf, at).map_err(|e| e.to_string())?;
        Ok(buf)
    }

    /// The message framed at `at`: prefix, metadata that verifies, a body inside the file.
    fn frame(&self, at: u64) -> Result<Frame, NoFrame> {
        let left = self.len.saturating_sub(at);
        if left < 8 {
            return Err(NoFrame::Cut);
        }
        let head = self.read(at, 8).map_err(NoFrame::Bad)?;
        if head[..4] != CONTINUATION {
            return Err(NoFrame::Bad("no message marker".into()));
        }
        let meta_len = i32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        if meta_len <= 0 || meta_len as u64 > MAX_META {
            return Err(NoFrame::Bad(format!("a message length of {meta_len}")));
        }
        let meta_len = meta_len as u64;
        if 8 + meta_len > left {
            return Err(NoFrame::Cut);
        }
        let meta = self.read(at + 8, meta_len).map_err(NoFrame::Bad)?;
        let msg = arrow_ipc::root_as_message(&meta)
            .map_err(|e| NoFrame::Bad(format!("bad message metadata: {e}")))?;
        let body = msg.bodyLength();
        if body < 0 {
            return Err(NoFrame::Bad(format!("a body length of {body}")));
        }
        if 8 + meta_len + body as u64 > left {
            return Err(NoFrame::Cut);
        }
        Ok(Frame { meta_len, body_len: body as u64 })
    }

    /// Read every batch, handing each to `on_batch`; damage is skipped and counted.
    pub fn read_batches(
        &self,
        on_batch: &mut dyn FnMut(&RecordBatch) -> Result<()>,
    ) -> Result<JournalRead> {
        let mut out = JournalRead::default();
        let mut dicts: HashMap<i64, ArrayRef> = HashMap::new();
        let mut at = self.start;
        while at < self.len {
            if self.is_eos(at) && (at + 8 == self.len || self.all_zero(at + 8)) {
                break; // end-of-stream marker: the journal was closed
            }
            match self.frame(at) {
                Ok(frame) => {
                    let next = self.after(at, &frame, &mut out);
                    match self.decode(at, &frame, &mut dicts) {
                        Ok(Some(batch)) => {
                            out.batches += 1;
                            out.rows += batch.num_rows() as u64;
                            on_batch(&batch)?;
                        }
                        Ok(None) => {}
                        Err(why) => out.damaged(at, next - at, why),
                    }
                    at = next;
                }
                Err(e) => {
                    let next = self.resync(at + 1, self.len);
                    let skipped = next.unwrap_or(self.len) - at;
                    match (e, next) {
                        (NoFrame::Cut, None) => out.torn_tail = skipped,
                        (_, None) if self.all_zero(at) => out.torn_tail = skipped,
                        (NoFrame::Cut, Some(_)) => {
                            out.damaged(at, skipped, "a message cut short".into())
                        }
                        (NoFrame::Bad(why), _) => out.damaged(at, skipped, why),
                    }
                    match next {
                        Some(n) => at = n,
                        None => break,
                    }
                }
            }
        }
        Ok(out)
    }

    /// Where the message after the one framed at `at` starts. Normally right after it; but when no
    /// message follows there and one starts inside this one's body, the body length was damaged
    /// (it ran into the next message): that one is taken, and the damage counted.
    fn after(&self, at: u64, frame: &Frame, out: &mut JournalRead) -> u64 {
        let next = at + frame.total();
        let follows = next >= self.len
            || self.is_eos(next)
            || matches!(self.frame(next), Ok(_) | Err(NoFrame::Cut));
        if follows {
            return next;
        }
        match self.resync(at + 8 + frame.meta_len, next) {
            Some(n) => {
                out.damaged(
                    at,
                    next - n,
                    "a message length that runs into the next message".into(),
                );
                n
            }
            None => next,
        }
    }

    /// Decode the message framed at `at`: a batch, or None for a dictionary (kept in `dicts`).
    fn decode(
        &self,
        at: u64,
        frame: &Frame,
        dicts: &mut HashMap<i64, ArrayRef>,
    ) -> Result<Option<RecordBatch>, String> {
        let meta = self.read(at + 8, frame.meta_len)?;
        let body = Buffer::from(self.read(at + 8 + frame.meta_len, frame.body_len)?);
        let msg = arrow_ipc::root_as_message(&meta).map_err(|e| e.to_string())?;
        let version = msg.version();
        let schema = self.schema.clone();
        match msg.header_type() {
            MessageHeader::RecordBatch => {
                let b = msg.header_as_record_batch().ok_or("a batch message without its header")?;
                check_batch(&b, frame.body_len)?;
                check_compressed(&b, body.as_slice())?;
                let dicts = &*dicts;
                contain(|| {
                    arrow_ipc::reader::read_record_batch(&body, b, schema, dicts, None, &version)
                })
                .map_err(|p| format!("the decoder failed: {p}"))?
                .map(Some)
                .map_err(|e| e.to_string())
            }
            MessageHeader::DictionaryBatch => {
                let d = msg
                    .header_as_dictionary_batch()
                    .ok_or("a dictionary message without its header")?;
                if let Some(b) = d.data() {
                    check_batch(&b, frame.body_len)?;
                    check_compressed(&b, body.as_slice())?;
                }
                contain(|| arrow_ipc::reader::read_dictionary(&body, d, &schema, dicts, &version))
                    .map_err(|p| format!("the decoder failed: {p}"))?
                    .map(|()| None)
                    .map_err(|e| e.to_string())
            }
            other => Err(format!("an unexpected {other:?} message")),
        }
    }

    fn is_eos(&self, at: u64) -> bool {
        self.read(at, 8).is_ok_and(|h| h[..4] == CONTINUATION && h[4..] == [0; 4])
    }

    fn all_zero(&self, at: u64) -> bool {
        let mut pos = at;
        while pos < self.len {
            let n = (self.len - pos).min(SCAN_CHUNK as u64);
            match self.read(pos, n) {
                Ok(b) if b.iter().all(|&x| x == 0) => pos += n,
                _ => return false,
            }
        }
        true
    }

    /// The offset of the next message in `from..until` whose frame verifies and which is a batch or
    /// dictionary, if any.
    fn resync(&self, from: u64, until: u64) -> Option<u64> {
        let mut pos = from;
        while pos < until && pos + 8 <= self.len {
            let n = (self.len - pos).min(SCAN_CHUNK as u64 + 3);
            let chunk = self.read(pos, n).ok()?;
            for i in 0..chunk.len().saturating_sub(3) {
                let at = pos + i as u64;
                if at >= until {
                    return None;
                }
                if chunk[i..i + 4] == CONTINUATION && self.is_message(at) {
                    return Some(at);
                }
            }
            pos += SCAN_CHUNK as u64;
        }
        None
    }

    fn is_message(&self, at: u64) -> bool {
        let Ok(frame) = self.frame(at) else { return false };
        let Ok(meta) = self.read(at + 8, frame.meta_len) else { return false };
        arrow_ipc::root_as_message(&meta).is_ok_and(|m| {
            m.version() >= MetadataVersion::V4
                && match m.header_type() {
                    MessageHeader::RecordBatch => m
                        .header_as_record_batch()
                        .is_some_and(|b| check_batch(&b, frame.body_len).is_ok()),
                    MessageHeader::DictionaryBatch => true,
                    _ => false,
                }
        })
    }
}

/// Check a batch header against its body before decoding: rows and node lengths a body of this
/// size could hold, every buffer inside the body.
fn check_batch(b: &arrow_ipc::RecordBatch<'_>, body_len: u64) -> Result<(), String> {
    // Every non-empty column needs at least a bit per row; a body this size holds at most this many.
    let max_rows = body_len.saturating_mul(8).saturating_add(64);
    let rows = b.length();
    if rows < 0 || rows as u64 > max_rows {
        return Err(format!("a batch of {rows} rows in a body of {body_len} bytes"));
    }
    for n in b.nodes().iter().flatten() {
        if n.length() < 0
            || n.length() as u64 > max_rows
            || n.null_count() < 0
            || n.null_count() > n.length()
        {
            return Err(format!(
                "a column of {} values ({} null) in a body of {body_len} bytes",
                n.length(),
                n.null_count()
            ));
        }
    }
    for buf in b.buffers().iter().flatten() {
        let end = u64::try_from(buf.offset())
            .ok()
            .and_then(|o| o.checked_add(u64::try_from(buf.length()).ok()?));
        if end.is_none_or(|e| e > body_len) {
            return Err(format!(
                "a buffer ({} bytes at {}) outside the body of {body_len} bytes",
                buf.length(),
                buf.offset()
            ));
        }
    }
    Ok(())
}

/// In a compressed batch every buffer starts with the length it decompresses to, which the
/// decoder allocates before it looks at the data: a damaged length would ask for any amount of
/// memory (an abort, not an error). Refuse lengths no buffer of this size can honestly claim.
fn check_compressed(b: &arrow_ipc::RecordBatch<'_>, body: &[u8]) -> Result<(), String> {
    if b.compression().is_none() {
        return Ok(());
    }
    // zstd and lz4 expand a buffer of constant values by a few thousand times at most.
    const MAX_RATIO: u64 = 4096;
    const FLOOR: u64 = 16 << 20;
    let mut total: u64 = 0;
    for buf in b.buffers().iter().flatten() {
        let (Ok(off), Ok(len)) = (usize::try_from(buf.offset()), usize::try_from(buf.length()))
        else {
            continue;
        };
        let Some(head) = body.get(off..off + len.min(8)).filter(|h| h.len() == 8) else { continue };
        let mut n = [0u8; 8];
        n.copy_from_slice(head);
        let claimed = i64::from_le_bytes(n);
        if claimed < 0 {
            continue; // -1: stored uncompressed
        }
        let claimed = claimed as u64;
        let limit = (len as u64).saturating_mul(MAX_RATIO).max(FLOOR);
        total = total.saturating_add(claimed);
        if claimed > limit || total > (body.len() as u64).saturating_mul(MAX_RATIO).max(FLOOR) {
            return Err(format!(
                "a compressed buffer of {len} bytes that claims to hold {claimed} bytes"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, UInt32Array};
    use arrow_ipc::writer::StreamWriter;
    use arrow_schema::{DataType, Field, Schema};

    /// A journal of `n` batches of 3 rows, and the offsets where each batch message starts.
    fn journal(n: usize) -> (Vec<u8>, Vec<usize>) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("index", DataType::UInt32, true),
            Field::new("utilization.gpu", DataType::Float64, true),
        ]));
        let mut w = StreamWriter::try_new(Vec::new(), &schema).unwrap();
        let mut starts = Vec::new();
        for i in 0..n {
            starts.push(w.get_ref().len());
            let b = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(UInt32Array::from(vec![0, 1, 2])),
                    Arc::new(Float64Array::from(vec![i as f64, 1.0, 2.0])),
                ],
            )
            .unwrap();
            w.write(&b).unwrap();
        }
        w.flush().unwrap();
        (w.into_inner().unwrap(), starts)
    }

    fn read(bytes: &[u8]) -> Result<(JournalRead, Vec<f64>), Unreadable> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        std::fs::write(&p, bytes).unwrap();
        let j = Journal::open(File::open(&p).unwrap())?;
        let mut firsts = Vec::new();
        let r = j
            .read_batches(&mut |b| {
                let c = b.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
                firsts.push(c.value(0));
                Ok(())
            })
            .unwrap();
        Ok((r, firsts))
    }

    #[test]
    fn a_clean_and_a_torn_journal() {
        let (j, starts) = journal(5);
        let (r, firsts) = read(&j).unwrap();
        assert_eq!((r.batches, r.rows, r.complete(), r.torn_tail), (5, 15, true, 0));
        assert_eq!(firsts, [0.0, 1.0, 2.0, 3.0, 4.0]);
        let cut = starts[4] + 20;
        let (r, _) = read(&j[..cut]).unwrap();
        assert_eq!((r.batches, r.complete(), r.torn_tail), (4, true, 20));
        assert_eq!(read(&j[..5]), Err(Unreadable::Empty));
    }

    #[test]
    fn batches_after_a_damaged_length_are_kept() {
        let (mut j, starts) = journal(6);
        // The metadata length of batch 2 set to 0x7FFFFFFF: the frame is lost, the reader resyncs.
        j[starts[2] + 4..starts[2] + 8].copy_from_slice(&0x7FFF_FFFFu32.to_le_bytes());
        let (r, firsts) = read(&j).unwrap();
        assert_eq!(firsts, [0.0, 1.0, 3.0, 4.0, 5.0]);
        assert!(!r.complete());
        assert_eq!(r.damaged_regions, 1);
        assert_eq!(r.damage[0].offset, starts[2] as u64);
        assert_eq!(r.damaged_bytes, (starts[3] - starts[2]) as u64);
        assert!(r.damage_summary().unwrap().contains("1 damaged stretch"), "{r:?}");
    }

    #[test]
    fn damaged_bodies_and_headers_cost_one_batch_each() {
        let (j, starts) = journal(6);
        for at in starts[1]..starts[2] {
            for v in [0x00u8, 0xFF, 0x7F, 0x80] {
                let mut m = j.clone();
                m[at] = v;
                let (r, firsts) = read(&m).unwrap();
                assert!(firsts.len() >= 5, "byte {at} = {v:#x}: {firsts:?} {r:?}");
                assert!(firsts.ends_with(&[2.0, 3.0, 4.0, 5.0]), "byte {at} = {v:#x}: {firsts:?}");
            }
        }
    }

    #[test]
    fn a_damaged_schema_is_unreadable() {
        let (mut j, _) = journal(2);
        j[4..8].copy_from_slice(&0x7FFF_FFFFu32.to_le_bytes());
        assert!(matches!(read(&j), Err(Unreadable::Schema(_))));
    }
}
