//! Parquet sizes checked before the parquet crate trusts them: a [`ChunkReader`] that never reads
//! or allocates past the end of the file and checks each page header it hands out, the footer
//! walked for impossible lengths, and every column chunk placed inside the file.
//!
//! Memory bound: a page may decompress to at most [`page_limit`] of its stored size (at least
//! 8 MiB, at most 256 MiB), so one input costs a bounded multiple of its size, never what a damaged
//! header claims. Anything these checks miss is caught by `util::guard` around the decoder calls.

use std::fs::File;
use std::io::{Cursor, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::Bytes;
use parquet::errors::{ParquetError, Result as PqResult};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::{ChunkReader, Length};

use crate::thrift::{self, PageHeader, ThriftError};

/// Smallest decompressed size allowed to any page.
const MIN_PAGE_LIMIT: i64 = 8 << 20;
/// Largest decompressed size allowed to any page (writers cut pages at about 1 MiB).
const MAX_PAGE_LIMIT: i64 = 256 << 20;
/// Decompressed bytes allowed per stored byte above the minimum.
const MAX_RATIO: i64 = 1024;
/// Bytes read first to parse a page header; a longer one (statistics) is read again 4 times larger.
/// Small: the buffer is zeroed before each read, and the page's data follows through `At`.
const HEADER_PEEK: usize = 1024;
/// Longest page header accepted.
const MAX_HEADER: usize = 16 << 20;

/// The largest decompressed size a page stored in `compressed` bytes may claim.
pub(crate) fn page_limit(compressed: i64) -> i64 {
    compressed.max(0).saturating_mul(MAX_RATIO).clamp(MIN_PAGE_LIMIT, MAX_PAGE_LIMIT)
}

/// A Parquet file read with positional reads (no shared offset between threads), every read
/// checked against the file's length before a buffer is allocated.
#[derive(Clone)]
pub(crate) struct BoundedFile {
    file: Arc<File>,
    len: u64,
    /// `get_read` is asked for page headers (row group readers): check each one.
    pages: bool,
}

impl BoundedFile {
    pub(crate) fn new(file: File) -> std::io::Result<BoundedFile> {
        let len = file.metadata()?.len();
        Ok(BoundedFile { file: Arc::new(file), len, pages: false })
    }

    /// The same file for a row group reader: page headers are checked as they are read.
    pub(crate) fn for_pages(&self) -> BoundedFile {
        BoundedFile { pages: true, ..self.clone() }
    }

    /// Read `len` bytes at `start`, checked against the file's length first.
    fn read_exact_at(&self, start: u64, len: usize) -> PqResult<Vec<u8>> {
        if start.checked_add(len as u64).is_none_or(|end| end > self.len) {
            return Err(ParquetError::EOF(format!(
                "a read of {len} bytes at offset {start} runs past the end of the file ({} bytes)",
                self.len
            )));
        }
        let mut buf = vec![0; len];
        self.file.read_exact_at(&mut buf, start)?;
        Ok(buf)
    }

    /// Read and check the page header at `start`: the bytes read so far and what it declares.
    fn checked_header(&self, start: u64) -> PqResult<(Vec<u8>, PageHeader)> {
        let left = self.len.saturating_sub(start);
        let mut want = (HEADER_PEEK as u64).min(left) as usize;
        loop {
            let buf = self.read_exact_at(start, want)?;
            match thrift::page_header(&buf) {
                Ok(s) => {
                    let after = left - s.header_len as u64;
                    if s.compressed < 0 || s.compressed as u64 > after {
                        return Err(general(format!(
                            "the page header at offset {start} gives a stored size of {} bytes, \
                             but {after} bytes remain in the file",
                            s.compressed
                        )));
                    }
                    if s.uncompressed < 0 || s.uncompressed > page_limit(s.compressed) {
                        return Err(general(format!(
                            "the page header at offset {start} claims {} bytes decompressed from {} \
                             (at most {} accepted)",
                            s.uncompressed,
                            s.compressed,
                            page_limit(s.compressed)
                        )));
                    }
                    // A dictionary's values are allocated at once; each takes at least a bit.
                    if let Some(n) = s
                        .dict_values
                        .filter(|&n| n < 0 || n > s.uncompressed.saturating_mul(8) + 64)
                    {
                        return Err(general(format!(
                            "the dictionary page at offset {start} claims {n} values in {} bytes",
                            s.uncompressed
                        )));
                    }
                    return Ok((buf, s));
                }
                Err(ThriftError::Short) if (want as u64) < left && want < MAX_HEADER => {
                    want = (want * 4).min(MAX_HEADER).min(left as usize);
                }
                Err(ThriftError::Short) => {
                    return Err(general(format!("the page header at offset {start} is cut short")));
                }
                Err(ThriftError::Damaged(why)) => {
                    return Err(general(format!(
                        "the page header at offset {start} is damaged: {why}"
                    )));
                }
            }
        }
    }
}

fn general(msg: String) -> ParquetError {
    ParquetError::General(msg)
}

/// Reads a file from a position with `pread`.
pub(crate) struct At {
    file: Arc<File>,
    pos: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Length for BoundedFile {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for BoundedFile {
    type T = std::io::Chain<Cursor<Vec<u8>>, At>;

    fn get_read(&self, start: u64) -> PqResult<Self::T> {
        if start > self.len {
            return Err(ParquetError::EOF(format!("offset {start} lies past the end of the file")));
        }
        let head = if self.pages { self.checked_header(start)?.0 } else { Vec::new() };
        let pos = start + head.len() as u64;
        Ok(Cursor::new(head).chain(At { file: self.file.clone(), pos }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> PqResult<Bytes> {
        self.read_exact_at(start, length).map(Bytes::from)
    }
}

/// Why a Parquet file's footer or chunk layout is refused before (or after) the crate decodes it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Damage {
    #[error("{0} bytes: too short for a Parquet file")]
    TooShort(u64),
    #[error("no Parquet footer at the end (truncated: a file still being written, or cut?)")]
    NoFooter,
    #[error("the footer claims {claimed} bytes of metadata in a file of {len} bytes")]
    FooterTooLong { claimed: u64, len: u64 },
    #[error("the footer metadata is damaged: {0}")]
    Footer(#[from] ThriftError),
    #[error("{0}")]
    Read(#[from] ParquetError),
    #[error("row group {0} has a negative row count")]
    NegativeRows(usize),
    #[error(
        "column chunk {chunk} of row group {group} ({size} bytes at offset {start}) lies outside the file ({len} bytes)"
    )]
    ChunkOutside { chunk: usize, group: usize, size: i64, start: i64, len: u64 },
}

/// Check the footer of a file of `len` bytes before the parquet crate decodes it: the magic, a
/// metadata length that fits, and a Thrift structure whose every length fits inside it.
pub(crate) fn check_footer(f: &BoundedFile) -> Result<(), Damage> {
    if f.len < 12 {
        return Err(Damage::TooShort(f.len));
    }
    let tail = f.read_exact_at(f.len - 8, 8)?;
    if &tail[4..] != b"PAR1" {
        return Err(Damage::NoFooter);
    }
    let meta_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if meta_len + 12 > f.len {
        return Err(Damage::FooterTooLong { claimed: meta_len, len: f.len });
    }
    let meta = f.read_exact_at(f.len - 8 - meta_len, meta_len as usize)?;
    Ok(thrift::check_struct(&meta)?)
}

/// Check that every column chunk of `md` lies inside a file of `len` bytes (the parquet crate
/// asserts on negative offsets and would allocate what a chunk length claims).
pub(crate) fn check_chunks(md: &ParquetMetaData, len: u64) -> Result<(), Damage> {
    for (g, rg) in md.row_groups().iter().enumerate() {
        if rg.num_rows() < 0 {
            return Err(Damage::NegativeRows(g));
        }
        for (c, col) in rg.columns().iter().enumerate() {
            let start = col.dictionary_page_offset().unwrap_or_else(|| col.data_page_offset());
            let size = col.compressed_size();
            // An empty chunk (pyarrow writes one at offset 0 for a row group of no rows) has
            // nothing to read wherever it says it is.
            let empty = size == 0 && rg.num_rows() == 0;
            let inside = empty
                || (start >= 4
                    && size >= 0
                    && (start as u64).checked_add(size as u64).is_some_and(|e| e <= len));
            if !inside {
                return Err(Damage::ChunkOutside { chunk: c, group: g, size, start, len });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_limits() {
        assert_eq!(page_limit(-5), MIN_PAGE_LIMIT);
        assert_eq!(page_limit(100), MIN_PAGE_LIMIT);
        assert_eq!(page_limit(64 << 10), 64 << 20);
        assert_eq!(page_limit(i64::MAX), MAX_PAGE_LIMIT);
    }

    #[test]
    fn reads_past_the_end_allocate_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"PAR1....").unwrap();
        let f = BoundedFile::new(File::open(&p).unwrap()).unwrap();
        assert!(f.get_bytes(4, usize::MAX / 2).is_err());
        assert!(f.get_bytes(u64::MAX - 1, 4).is_err());
        assert_eq!(&f.get_bytes(0, 4).unwrap()[..], b"PAR1");
        assert!(check_footer(&f).is_err());
    }
}
