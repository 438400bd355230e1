//! gpumon's own decoder for the Parquet column chunks `summarize` spends its time in: flat numeric
//! columns (INT32, INT64, FLOAT, DOUBLE; required or optional) whose pages are PLAIN or
//! dictionary-encoded, v1 or v2, uncompressed, zstd or snappy. It gives the Arrow arrays the
//! parquet crate's reader gives (the same types, the same conversions, batches of the same rows),
//! decoding straight into them: no zeroed value buffers, no coercion pass, one gather per value.
//! A row group with any other column is left to the parquet crate ([`plan`] says None).
//!
//! Every size is checked before it is trusted: page headers by [`BoundedFile::checked_header`] (a
//! page decompresses to at most `pqbounds::page_limit` of its stored size), pages inside their
//! column chunk, levels and values inside their page, dictionary indexes inside the dictionary.

use std::sync::Arc;

use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type,
    UInt64Type,
};
use arrow_array::{ArrayRef, ArrowPrimitiveType, PrimitiveArray, RecordBatch};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, SchemaRef, TimeUnit};
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use parquet::basic::{Compression, Encoding, Type as Physical};
use parquet::file::metadata::ColumnChunkMetaData;

use crate::read::pqbounds::BoundedFile;
use crate::read::thrift::PageHeader;

type R<T> = Result<T, String>;

/// Bytes of zeros kept after every buffer the bit unpacker reads: it loads 8 bytes at a time.
const PAD: usize = 8;
/// Dictionary indexes unpacked at a time before they are looked up.
const INDEXES: usize = 1024;

/// Page types and encodings of the Parquet format (`parquet.thrift`).
const DATA_PAGE: i32 = 0;
const DICTIONARY_PAGE: i32 = 2;
const DATA_PAGE_V2: i32 = 3;
const PLAIN: i32 = 0;
const PLAIN_DICTIONARY: i32 = 2;
const RLE: i32 = 3;
const RLE_DICTIONARY: i32 = 8;

/// A Parquet physical type read from PLAIN bytes.
trait Phys: Copy {
    const SIZE: usize;
    fn le(b: &[u8]) -> Self;
}

macro_rules! phys {
    ($($t:ty),*) => {$(
        impl Phys for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..Self::SIZE]);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}
phys!(i32, i64, f32, f64);

/// Append the PLAIN values of `bytes` (whole values of `P`), converted by `conv`.
fn plain<P: Phys, T>(bytes: &[u8], conv: impl Fn(P) -> T, out: &mut Vec<T>) {
    out.extend(bytes.chunks_exact(P::SIZE).map(|c| conv(P::le(c))));
}

/// How a page's bytes are compressed.
enum Codec {
    None,
    Zstd(Box<zstd::bulk::Decompressor<'static>>),
    Snappy(snap::raw::Decoder),
}

impl Codec {
    fn of(c: Compression) -> Option<Codec> {
        match c {
            Compression::UNCOMPRESSED => Some(Codec::None),
            Compression::ZSTD(_) => zstd::bulk::Decompressor::new().ok().map(|d| Codec::Zstd(Box::new(d))),
            Compression::SNAPPY => Some(Codec::Snappy(snap::raw::Decoder::new())),
            _ => None,
        }
    }

    /// `src` decompressed into `dst` (replacing what it held), which must come to `len` bytes;
    /// then [`PAD`] zeros.
    fn decompress(&mut self, src: &[u8], len: usize, dst: &mut Vec<u8>) -> R<()> {
        dst.clear();
        match self {
            Codec::None => dst.extend_from_slice(src),
            Codec::Zstd(d) => {
                dst.reserve(len + PAD);
                d.decompress_to_buffer(src, dst).map_err(|e| format!("zstd: {e}"))?;
            }
            Codec::Snappy(d) => {
                dst.resize(len, 0);
                let n = d.decompress(src, dst).map_err(|e| format!("snappy: {e}"))?;
                dst.truncate(n);
            }
        }
        if dst.len() != len {
            return Err(format!("a page holds {} bytes where its header says {len}", dst.len()));
        }
        dst.resize(len + PAD, 0);
        Ok(())
    }
}

/// A run-length / bit-packed hybrid stream (definition levels, dictionary indexes) inside a buffer
/// padded with [`PAD`] zeros: its position, end and the run being read.
#[derive(Default)]
struct Hybrid {
    pos: usize,
    end: usize,
    width: usize,
    rle_left: usize,
    rle_value: u32,
    packed_left: usize,
    /// Bit position of the next packed value.
    bit: usize,
}

impl Hybrid {
    fn new(start: usize, end: usize, width: usize) -> Hybrid {
        Hybrid { pos: start, end, width, ..Hybrid::default() }
    }

    /// Start the next run.
    fn next_run(&mut self, data: &[u8]) -> R<()> {
        let end = "levels or indexes end early";
        let mut header = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *data.get(self.pos).filter(|_| self.pos < self.end).ok_or(end)?;
            self.pos += 1;
            header |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
        }
        let count = usize::try_from(header >> 1).map_err(|_| "a run longer than memory")?;
        if header & 1 == 1 {
            // count groups of 8 values, `width` bytes a group; a last run cut short is read as far
            // as its bytes go.
            let bytes = count.saturating_mul(self.width).min(self.end - self.pos);
            self.packed_left = (bytes * 8).checked_div(self.width).unwrap_or(count.saturating_mul(8));
            self.bit = self.pos * 8;
            self.pos += bytes;
        } else {
            // The value in the fewest whole bytes that hold `width` bits, little-endian.
            let n = self.width.div_ceil(8);
            if self.pos + n > self.end {
                return Err("a run cut short".into());
            }
            self.rle_value = (word(data, self.pos) & ((1u64 << (8 * n)) - 1)) as u32;
            self.rle_left = count;
            self.pos += n;
        }
        Ok(())
    }

    /// Fill `out` with the next values.
    fn fill(&mut self, data: &[u8], out: &mut [u32]) -> R<()> {
        let mut i = 0;
        while i < out.len() {
            if self.rle_left > 0 {
                let k = self.rle_left.min(out.len() - i);
                out[i..i + k].fill(self.rle_value);
                self.rle_left -= k;
                i += k;
            } else if self.packed_left > 0 {
                let k = self.packed_left.min(out.len() - i);
                unpack(data, self.bit, self.width, &mut out[i..i + k]);
                self.bit += k * self.width;
                self.packed_left -= k;
                i += k;
            } else {
                self.next_run(data)?;
            }
        }
        Ok(())
    }

    /// Skip the next `k` values if they are all `value` in one run (true), else read nothing.
    fn skip_run_of(&mut self, data: &[u8], value: u32, k: usize) -> R<bool> {
        while self.rle_left == 0 && self.packed_left == 0 {
            self.next_run(data)?;
        }
        if self.rle_left >= k && self.rle_value == value {
            self.rle_left -= k;
            return Ok(true);
        }
        Ok(false)
    }
}

/// The 8 bytes at `at` of a padded buffer, little-endian (0 past its end).
#[inline]
fn word(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8).and_then(|s| <[u8; 8]>::try_from(s).ok()).map_or(0, u64::from_le_bytes)
}

/// Unpack `out.len()` values of `width` bits (at most 32) from bit `bit` of `data` (padded).
fn unpack(data: &[u8], bit: usize, width: usize, out: &mut [u32]) {
    macro_rules! widths {
        ($($w:literal)*) => {
            match width {
                $($w => unpack_w::<$w>(data, bit, out),)*
                _ => out.fill(0),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);
}

/// [`unpack`] for one width: values one at a time up to a byte boundary, then eight at a time
/// (eight values from a byte boundary take `W` bytes at offsets the compiler knows).
fn unpack_w<const W: usize>(data: &[u8], mut bit: usize, out: &mut [u32]) {
    let mask = (1u64 << W) - 1;
    let word =
        |b: &[u8], at: usize| b.get(at..at + 8).and_then(|s| <[u8; 8]>::try_from(s).ok()).map_or(0, u64::from_le_bytes);
    let mut i = 0;
    while i < out.len() {
        if bit & 7 == 0 && out.len() - i >= 8 {
            let b = bit >> 3;
            if let Some(group) = data.get(b..b + W + 8) {
                for (j, o) in out[i..i + 8].iter_mut().enumerate() {
                    let at = j * W;
                    *o = ((word(group, at >> 3) >> (at & 7)) & mask) as u32;
                }
                i += 8;
                bit += 8 * W;
                continue;
            }
        }
        out[i] = ((word(data, bit >> 3) >> (bit & 7)) & mask) as u32;
        bit += W;
        i += 1;
    }
}

/// Keep a page's definition levels (`src`) in `buf`, padded; their reader.
fn levels(buf: &mut Vec<u8>, src: &[u8]) -> Hybrid {
    buf.clear();
    buf.extend_from_slice(src);
    buf.resize(src.len() + PAD, 0);
    Hybrid::new(0, src.len(), 1)
}

/// How the current page's values are stored.
enum Values {
    /// PLAIN, from this position of the page buffer.
    Plain(usize),
    /// Dictionary indexes.
    Dict(Hybrid),
}

/// One column chunk being decoded into arrays of `O`, from physical type `P` by `C`.
struct Column<P, O: ArrowPrimitiveType, C> {
    name: String,
    conv: C,
    phys: std::marker::PhantomData<fn() -> P>,
    dt: DataType,
    optional: bool,
    codec: Codec,
    /// The next page header and the end of the chunk, in the file.
    pos: u64,
    end: u64,
    dict: Vec<O::Native>,
    /// The page being read: its (decompressed) bytes, its levels, its values and what is left.
    page: Vec<u8>,
    levels: Vec<u8>,
    def: Hybrid,
    values: Values,
    left: usize,
    raw: Vec<u8>,
    scratch: Vec<u32>,
}

/// A column the decoder reads, whatever its types.
trait Decode: Send {
    /// The next `n` values as an array.
    fn read(&mut self, file: &BoundedFile, n: usize) -> R<ArrayRef>;
    fn name(&self) -> &str;
}

impl<P: Phys + Send + 'static, O: ArrowPrimitiveType, C: Fn(P) -> O::Native + Copy + Send + 'static> Column<P, O, C> {
    fn boxed(name: &str, conv: C, dt: &DataType, optional: bool, chunk: &ColumnChunkMetaData) -> Option<Box<dyn Decode>>
    where
        Column<P, O, C>: Decode,
    {
        let ok = [Encoding::PLAIN, Encoding::PLAIN_DICTIONARY, Encoding::RLE_DICTIONARY, Encoding::RLE];
        if !chunk.encodings().all(|e| ok.contains(&e)) {
            return None;
        }
        let start = chunk.dictionary_page_offset().unwrap_or_else(|| chunk.data_page_offset());
        let (start, size) = (u64::try_from(start).ok()?, u64::try_from(chunk.compressed_size()).ok()?);
        Some(Box::new(Column::<P, O, C> {
            name: name.to_string(),
            conv,
            phys: std::marker::PhantomData,
            dt: dt.clone(),
            optional,
            codec: Codec::of(chunk.compression())?,
            pos: start,
            end: start.checked_add(size)?,
            dict: Vec::new(),
            page: Vec::new(),
            levels: Vec::new(),
            def: Hybrid::default(),
            values: Values::Plain(0),
            left: 0,
            raw: Vec::new(),
            scratch: Vec::new(),
        }))
    }

    /// Read the next page: a dictionary is kept, a data page becomes the current one, others are
    /// passed over.
    fn next_page(&mut self, file: &BoundedFile) -> R<()> {
        loop {
            if self.pos >= self.end {
                return Err("the column chunk ends before the row group's last row".into());
            }
            let (_, h) = file.checked_header(self.pos).map_err(|e| e.to_string())?;
            let body = self.pos + h.header_len as u64;
            let next = body + h.compressed as u64;
            if next > self.end {
                return Err(format!("the page at offset {} runs past its column chunk", self.pos));
            }
            file.read_into(body, h.compressed as usize, &mut self.raw).map_err(|e| e.to_string())?;
            self.pos = next;
            match h.kind {
                DICTIONARY_PAGE => self.dictionary(&h)?,
                DATA_PAGE => return self.data_v1(&h),
                DATA_PAGE_V2 => return self.data_v2(&h),
                _ => {}
            }
        }
    }

    fn dictionary(&mut self, h: &PageHeader) -> R<()> {
        if !matches!(h.encoding, Some(PLAIN | PLAIN_DICTIONARY)) {
            return Err(format!("a dictionary page encoded as {:?}", h.encoding));
        }
        self.codec.decompress(&self.raw, h.uncompressed as usize, &mut self.page)?;
        let n = usize::try_from(h.dict_values.unwrap_or(-1)).map_err(|_| "a dictionary without its size")?;
        let bytes = self.page.get(..n.saturating_mul(P::SIZE)).filter(|_| n * P::SIZE + PAD <= self.page.len());
        let bytes = bytes.ok_or_else(|| format!("a dictionary of {n} values in {} bytes", h.uncompressed))?;
        self.dict.clear();
        plain(bytes, self.conv, &mut self.dict);
        Ok(())
    }

    /// The values of a data page from byte `at` of the page buffer (its length without padding).
    fn values_from(&mut self, encoding: Option<i32>, at: usize, len: usize) -> R<()> {
        self.values = match encoding {
            Some(PLAIN) => Values::Plain(at),
            Some(PLAIN_DICTIONARY | RLE_DICTIONARY) => {
                let width = usize::from(*self.page.get(at).filter(|_| at < len).ok_or("no index width")?);
                if width > 32 {
                    return Err(format!("dictionary indexes of {width} bits"));
                }
                Values::Dict(Hybrid::new(at + 1, len, width))
            }
            e => return Err(format!("values encoded as {e:?}")),
        };
        Ok(())
    }

    fn data_v1(&mut self, h: &PageHeader) -> R<()> {
        let len = h.uncompressed as usize;
        self.codec.decompress(&self.raw, len, &mut self.page)?;
        let mut at = 0;
        if self.optional {
            if h.def_encoding != Some(RLE) {
                return Err(format!("definition levels encoded as {:?}", h.def_encoding));
            }
            let n = self.page.get(..4).filter(|_| len >= 4).ok_or("a page too short for its levels")?;
            let n = u32::from_le_bytes([n[0], n[1], n[2], n[3]]) as usize;
            at = 4usize.checked_add(n).filter(|&e| e <= len).ok_or("levels past the end of their page")?;
            self.def = levels(&mut self.levels, &self.page[4..at]);
        }
        self.values_from(h.encoding, at, len)?;
        self.left = usize::try_from(h.values.unwrap_or(-1)).map_err(|_| "a data page without its value count")?;
        Ok(())
    }

    fn data_v2(&mut self, h: &PageHeader) -> R<()> {
        let Some((def, rep, compressed)) = h.v2 else { return Err("a v2 page without its levels".into()) };
        let (def, rep) = (usize::try_from(def).map_err(|_| "bad level size")?, usize::try_from(rep).unwrap_or(1));
        if rep != 0 || def > self.raw.len() || (def > 0 && !self.optional) {
            return Err("levels that do not fit a flat column".into());
        }
        let len =
            usize::try_from(h.uncompressed).map_err(|_| "bad page size")?.checked_sub(def).ok_or("bad page size")?;
        // The levels are never compressed.
        self.def = levels(&mut self.levels, &self.raw[..def]);
        let src = &self.raw[def..];
        if compressed {
            self.codec.decompress(src, len, &mut self.page)?;
        } else {
            Codec::None.decompress(src, len, &mut self.page)?;
        }
        self.values_from(h.encoding, 0, len)?;
        self.left = usize::try_from(h.values.unwrap_or(-1)).map_err(|_| "a data page without its value count")?;
        Ok(())
    }

    /// Append the next `k` values of the page to `out`.
    fn take(&mut self, k: usize, out: &mut Vec<O::Native>) -> R<()> {
        match &mut self.values {
            Values::Plain(at) => {
                let end = *at + k * P::SIZE;
                let b = self.page.get(*at..end).filter(|_| end + PAD <= self.page.len()).ok_or("values end early")?;
                plain(b, self.conv, out);
                *at = end;
            }
            Values::Dict(h) => {
                // Run by run: a repeated index is looked up once.
                let mut need = k;
                self.scratch.resize(INDEXES, 0);
                let dict = &self.dict[..];
                let bad = |i: u32| format!("a dictionary index of {i} in a dictionary of {}", dict.len());
                while need > 0 {
                    if h.rle_left > 0 {
                        let m = h.rle_left.min(need);
                        let v = *dict.get(h.rle_value as usize).ok_or_else(|| bad(h.rle_value))?;
                        out.extend(std::iter::repeat_n(v, m));
                        h.rle_left -= m;
                        need -= m;
                    } else if h.packed_left > 0 {
                        let idx = &mut self.scratch[..h.packed_left.min(need).min(INDEXES)];
                        unpack(&self.page, h.bit, h.width, idx);
                        h.bit += idx.len() * h.width;
                        h.packed_left -= idx.len();
                        need -= idx.len();
                        let top = idx.iter().fold(0u32, |m, &i| m.max(i));
                        if top as usize >= dict.len() {
                            return Err(bad(top));
                        }
                        out.extend(idx.iter().map(|&i| dict[i as usize]));
                    } else {
                        h.next_run(&self.page)?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl<P: Phys + Send + 'static, O: ArrowPrimitiveType, C: Fn(P) -> O::Native + Copy + Send + 'static> Decode
    for Column<P, O, C>
where
    O::Native: Send,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn read(&mut self, file: &BoundedFile, n: usize) -> R<ArrayRef> {
        let mut out: Vec<O::Native> = Vec::with_capacity(n);
        // Validity, from the first null on.
        let mut valid: Option<Vec<bool>> = None;
        let mut levels = Vec::new();
        while out.len() < n {
            if self.left == 0 {
                self.next_page(file)?;
                continue;
            }
            let k = self.left.min(n - out.len());
            if !self.optional || self.def.skip_run_of(&self.levels, 1, k)? {
                self.take(k, &mut out)?;
                if let Some(v) = &mut valid {
                    v.resize(out.len(), true);
                }
            } else {
                levels.resize(k, 0);
                self.def.fill(&self.levels, &mut levels)?;
                if levels.iter().any(|&l| l > 1) {
                    return Err("a definition level above 1".into());
                }
                let present = levels.iter().filter(|&&l| l == 1).count();
                let from = out.len();
                self.take(present, &mut out)?;
                // Spread the values over their rows, back to front; null rows get the default.
                out.resize(from + k, O::Native::default());
                let mut src = from + present;
                for j in (0..k).rev() {
                    if levels[j] == 1 {
                        src -= 1;
                        out[from + j] = out[src];
                    } else {
                        out[from + j] = O::Native::default();
                    }
                }
                let v = valid.get_or_insert_with(|| vec![true; from]);
                v.extend(levels.iter().map(|&l| l == 1));
            }
            self.left -= k;
        }
        let nulls = valid.map(NullBuffer::from);
        let arr = PrimitiveArray::<O>::try_new(ScalarBuffer::from(out), nulls)
            .map_err(|e| e.to_string())?
            .with_data_type(self.dt.clone());
        Ok(Arc::new(arr))
    }
}

/// The decoder for one column chunk, when its types and encodings are ones it reads.
fn column(
    name: &str,
    phys: Physical,
    dt: &DataType,
    optional: bool,
    chunk: &ColumnChunkMetaData,
) -> Option<Box<dyn Decode>> {
    use DataType as D;
    // The conversions of the parquet crate's `coerce_i32`/`coerce_i64`: wrapping casts.
    match (phys, dt) {
        (Physical::INT32, D::Int8) => Column::<i32, Int8Type, _>::boxed(name, |v| v as i8, dt, optional, chunk),
        (Physical::INT32, D::Int16) => Column::<i32, Int16Type, _>::boxed(name, |v| v as i16, dt, optional, chunk),
        (Physical::INT32, D::Int32) => Column::<i32, Int32Type, _>::boxed(name, |v| v, dt, optional, chunk),
        (Physical::INT32, D::UInt8) => Column::<i32, UInt8Type, _>::boxed(name, |v| v as u8, dt, optional, chunk),
        (Physical::INT32, D::UInt16) => Column::<i32, UInt16Type, _>::boxed(name, |v| v as u16, dt, optional, chunk),
        (Physical::INT32, D::UInt32) => Column::<i32, UInt32Type, _>::boxed(name, |v| v as u32, dt, optional, chunk),
        (Physical::INT64, D::Int64) => Column::<i64, Int64Type, _>::boxed(name, |v| v, dt, optional, chunk),
        (Physical::INT64, D::UInt64) => Column::<i64, UInt64Type, _>::boxed(name, |v| v as u64, dt, optional, chunk),
        (Physical::INT64, D::Timestamp(unit, _)) => match unit {
            TimeUnit::Second => Column::<i64, TimestampSecondType, _>::boxed(name, |v| v, dt, optional, chunk),
            TimeUnit::Millisecond => {
                Column::<i64, TimestampMillisecondType, _>::boxed(name, |v| v, dt, optional, chunk)
            }
            TimeUnit::Microsecond => {
                Column::<i64, TimestampMicrosecondType, _>::boxed(name, |v| v, dt, optional, chunk)
            }
            TimeUnit::Nanosecond => Column::<i64, TimestampNanosecondType, _>::boxed(name, |v| v, dt, optional, chunk),
        },
        (Physical::FLOAT, D::Float32) => Column::<f32, Float32Type, _>::boxed(name, |v| v, dt, optional, chunk),
        (Physical::DOUBLE, D::Float64) => Column::<f64, Float64Type, _>::boxed(name, |v| v, dt, optional, chunk),
        _ => None,
    }
}

/// A row group being read by this decoder.
pub struct Group {
    schema: SchemaRef,
    cols: Vec<Box<dyn Decode>>,
    left: usize,
    batch: usize,
}

/// The decoder for row group `rg`'s columns `roots` (root columns of the file's schema, in
/// order), when every one of them is a flat numeric column it reads; None otherwise.
pub fn plan(meta: &ArrowReaderMetadata, rg: usize, roots: &[usize], batch: usize) -> Option<Group> {
    let descr = meta.parquet_schema();
    let group = meta.metadata().row_groups().get(rg)?;
    let mut cols = Vec::with_capacity(roots.len());
    for &root in roots {
        let mut leaves = (0..descr.num_columns()).filter(|&l| descr.get_column_root_idx(l) == root);
        let (Some(leaf), None) = (leaves.next(), leaves.next()) else { return None };
        let c = descr.column(leaf);
        if c.max_rep_level() != 0 || c.max_def_level() > 1 || !c.self_type().is_primitive() {
            return None;
        }
        let field = meta.schema().fields().get(root)?;
        let optional = c.max_def_level() == 1;
        cols.push(column(field.name(), c.physical_type(), field.data_type(), optional, group.columns().get(leaf)?)?);
    }
    let schema = Arc::new(meta.schema().project(roots).ok()?);
    let left = usize::try_from(group.num_rows()).ok()?;
    Some(Group { schema, cols, left, batch: batch.max(1) })
}

impl Group {
    /// The next batch of rows; None after the last.
    pub fn next_batch(&mut self, file: &BoundedFile) -> R<Option<RecordBatch>> {
        if self.left == 0 {
            return Ok(None);
        }
        let n = self.left.min(self.batch);
        let mut arrays = Vec::with_capacity(self.cols.len());
        for c in &mut self.cols {
            arrays.push(c.read(file, n).map_err(|e| format!("column {}: {e}", c.name()))?);
        }
        self.left -= n;
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &opts).map(Some).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    use arrow_array::{Array, Float32Array, Float64Array, StringArray};
    use arrow_schema::{Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
    use parquet::file::properties::{WriterProperties, WriterVersion};

    const ROWS: usize = 70_001;

    /// Values with runs (RLE) and stretches of noise (bit-packed), `distinct` of them, some null.
    fn pattern(seed: u64, distinct: u64, nulls: bool) -> Vec<Option<u64>> {
        let mut x = seed;
        let mut out = Vec::with_capacity(ROWS);
        while out.len() < ROWS {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let v = (x >> 33) % distinct;
            let run = if x & 0x300 == 0 { (x >> 20) as usize % 40 } else { 1 };
            for _ in 0..run.max(1) {
                out.push((!nulls || !(x >> 12).is_multiple_of(17)).then_some(v));
            }
        }
        out.truncate(ROWS);
        out
    }

    fn prim<T: ArrowPrimitiveType>(p: Vec<Option<u64>>, f: impl Fn(u64) -> T::Native) -> ArrayRef {
        Arc::new(p.into_iter().map(|v| v.map(&f)).collect::<PrimitiveArray<T>>())
    }

    fn batch() -> RecordBatch {
        let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let cols: Vec<(&str, DataType, bool, ArrayRef)> = vec![
            ("u8", DataType::UInt8, true, prim::<UInt8Type>(pattern(1, 101, true), |v| v as u8)),
            ("u8_required", DataType::UInt8, false, prim::<UInt8Type>(pattern(2, 256, false), |v| v as u8)),
            ("u16", DataType::UInt16, true, prim::<UInt16Type>(pattern(3, 3000, false), |v| 65535 - v as u16)),
            ("u32", DataType::UInt32, true, prim::<UInt32Type>(pattern(4, 70_000, true), |v| u32::MAX - v as u32)),
            ("u64", DataType::UInt64, true, prim::<UInt64Type>(pattern(5, 5, false), |v| u64::MAX - v)),
            ("i8", DataType::Int8, true, prim::<Int8Type>(pattern(6, 256, true), |v| v as i8)),
            ("i16", DataType::Int16, true, prim::<Int16Type>(pattern(7, 1, false), |v| v as i16 - 7)),
            ("i32", DataType::Int32, true, prim::<Int32Type>(pattern(8, 1 << 31, false), |v| v as i32)),
            ("i64", DataType::Int64, true, prim::<Int64Type>(pattern(9, 1 << 40, true), |v| -(v as i64))),
            ("f32", DataType::Float32, true, prim::<Float32Type>(pattern(10, 500, true), |v| v as f32 / 3.0)),
            ("f64", DataType::Float64, true, prim::<Float64Type>(pattern(11, 90_000, false), |v| v as f64 * 1.5)),
            (
                "ts",
                ts.clone(),
                true,
                Arc::new(
                    prim::<TimestampMicrosecondType>(pattern(12, 1 << 30, true), |v| v as i64)
                        .as_any()
                        .downcast_ref::<PrimitiveArray<TimestampMicrosecondType>>()
                        .unwrap()
                        .clone()
                        .with_timezone("UTC"),
                ),
            ),
            (
                "ms",
                DataType::Timestamp(TimeUnit::Millisecond, None),
                false,
                prim::<TimestampMillisecondType>(pattern(13, 20, false), |v| 1_700_000_000_000 + v as i64),
            ),
        ];
        let fields: Vec<Field> = cols.iter().map(|(n, t, null, _)| Field::new(*n, t.clone(), *null)).collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols.into_iter().map(|c| c.3).collect()).unwrap()
    }

    fn write(path: &std::path::Path, b: &RecordBatch, props: WriterProperties) {
        let mut w = ArrowWriter::try_new(File::create(path).unwrap(), b.schema(), Some(props)).unwrap();
        // Two row groups, the second shorter.
        w.write(&b.slice(0, 50_000)).unwrap();
        w.flush().unwrap();
        w.write(&b.slice(50_000, ROWS - 50_000)).unwrap();
        w.close().unwrap();
    }

    /// Every row group read by both decoders, batch by batch (all columns, then every other one):
    /// the same batches. Returns whether this decoder read them.
    fn same_as_the_parquet_crate(path: &std::path::Path, batch: usize) -> bool {
        let file = File::open(path).unwrap();
        let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).unwrap();
        let bounded = BoundedFile::new(File::open(path).unwrap()).unwrap();
        let n = meta.schema().fields().len();
        let mut ours_read = true;
        for roots in [(0..n).collect::<Vec<_>>(), (0..n).step_by(2).collect()] {
            for rg in 0..meta.metadata().num_row_groups() {
                let mask = parquet::arrow::ProjectionMask::roots(meta.parquet_schema(), roots.clone());
                let theirs: Vec<RecordBatch> =
                    ParquetRecordBatchReaderBuilder::new_with_metadata(File::open(path).unwrap(), meta.clone())
                        .with_projection(mask)
                        .with_row_groups(vec![rg])
                        .with_batch_size(batch)
                        .build()
                        .unwrap()
                        .map(Result::unwrap)
                        .collect();
                let Some(mut g) = plan(&meta, rg, &roots, batch) else {
                    ours_read = false;
                    continue;
                };
                let mut ours = Vec::new();
                while let Some(b) = g.next_batch(&bounded).unwrap() {
                    ours.push(b);
                }
                assert_eq!(ours.len(), theirs.len(), "{path:?} row group {rg}");
                for (a, b) in ours.iter().zip(&theirs) {
                    assert_eq!(a.schema().fields(), b.schema().fields());
                    for c in 0..a.num_columns() {
                        assert_eq!(a.column(c).as_ref(), b.column(c).as_ref(), "{path:?} rg {rg} column {c}");
                    }
                }
            }
        }
        ours_read
    }

    #[test]
    fn the_same_arrays_as_the_parquet_crate_for_every_page_kind_codec_and_encoding() {
        let dir = tempfile::tempdir().unwrap();
        let b = batch();
        let base = || WriterProperties::builder().set_data_page_row_count_limit(3000).set_write_batch_size(1000);
        let variants = [
            ("v1-zstd-dict", base().set_compression(Compression::ZSTD(Default::default()))),
            ("v1-snappy-small-dict", base().set_compression(Compression::SNAPPY).set_dictionary_page_size_limit(700)),
            (
                "v2-snappy-dict",
                base().set_writer_version(WriterVersion::PARQUET_2_0).set_compression(Compression::SNAPPY),
            ),
            ("v1-plain", base().set_dictionary_enabled(false)),
            (
                "v2-plain",
                base()
                    .set_writer_version(WriterVersion::PARQUET_2_0)
                    .set_dictionary_enabled(false)
                    .set_encoding(parquet::basic::Encoding::PLAIN),
            ),
            ("v1-one-page", WriterProperties::builder().set_compression(Compression::ZSTD(Default::default()))),
        ];
        for (name, props) in variants {
            let path = dir.path().join(format!("{name}.parquet"));
            write(&path, &b, props.build());
            assert!(same_as_the_parquet_crate(&path, 64 * 1024), "{name}: read by the parquet crate");
            assert!(same_as_the_parquet_crate(&path, 777), "{name}");
        }
        // Codecs, encodings and types it does not read are left to the parquet crate.
        let path = dir.path().join("lz4.parquet");
        write(&path, &b, base().set_compression(Compression::LZ4_RAW).build());
        assert!(!same_as_the_parquet_crate(&path, 4096));
        let path = dir.path().join("delta.parquet");
        write(&path, &b, base().set_writer_version(WriterVersion::PARQUET_2_0).set_dictionary_enabled(false).build());
        assert!(!same_as_the_parquet_crate(&path, 4096));
        let s: ArrayRef = Arc::new(StringArray::from(vec!["a"; 10]));
        let f: ArrayRef = Arc::new(Float32Array::from(vec![1.0; 10]));
        let d: ArrayRef = Arc::new(Float64Array::from(vec![2.0; 10]));
        let text = RecordBatch::try_from_iter([("s", s), ("f", f), ("d", d)]).unwrap();
        let path = dir.path().join("text.parquet");
        write_one(&path, &text);
        let meta = ArrowReaderMetadata::load(&File::open(&path).unwrap(), ArrowReaderOptions::new()).unwrap();
        assert!(plan(&meta, 0, &[0, 1], 100).is_none());
        assert!(plan(&meta, 0, &[1, 2], 100).is_some());
    }

    fn write_one(path: &std::path::Path, b: &RecordBatch) {
        let mut w = ArrowWriter::try_new(File::create(path).unwrap(), b.schema(), None).unwrap();
        w.write(b).unwrap();
        w.close().unwrap();
    }

    #[test]
    fn damaged_pages_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.parquet");
        write(
            &path,
            &batch(),
            WriterProperties::builder()
                .set_data_page_row_count_limit(2000)
                .set_write_batch_size(500)
                .set_compression(Compression::UNCOMPRESSED)
                .build(),
        );
        let good = std::fs::read(&path).unwrap();
        let meta = ArrowReaderMetadata::load(&File::open(&path).unwrap(), ArrowReaderOptions::new()).unwrap();
        let n = meta.schema().fields().len();
        let roots: Vec<usize> = (0..n).collect();
        let data_end = good.len() - 8 - 4096.min(good.len() / 4);
        let mut errors = 0;
        for k in 0..150 {
            let at = 4 + (k * 7919) % (data_end - 4);
            let mut bad = good.clone();
            bad[at] ^= 0x5a_u8.wrapping_add(k as u8).max(1);
            let bad_path = dir.path().join("bad.parquet");
            std::fs::write(&bad_path, &bad).unwrap();
            let file = BoundedFile::new(File::open(&bad_path).unwrap()).unwrap();
            for rg in 0..meta.metadata().num_row_groups() {
                let mut g = plan(&meta, rg, &roots, 64 * 1024).unwrap();
                loop {
                    match g.next_batch(&file) {
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                        Err(_) => {
                            errors += 1;
                            break;
                        }
                    }
                }
            }
        }
        // Most bytes are values (any value reads); headers, levels and indexes are checked.
        assert!(errors > 10, "only {errors} of 150 damaged files were errors");
    }
}
