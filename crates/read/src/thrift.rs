//! A bounds-checking walker over Thrift compact-protocol bytes (the encoding of Parquet footers and
//! page headers), run before the parquet crate decodes them: every list, map and binary length is
//! checked against the bytes that remain and nesting is capped, so a changed length field is an
//! error here instead of a huge allocation there. It also reads the sizes a page header declares.

/// Deepest nesting of structs and containers accepted (Parquet's schema nests a few levels).
const MAX_DEPTH: u32 = 64;

/// Why bytes are not acceptable Thrift: damaged, or cut before the structure ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThriftError {
    /// The bytes end inside the structure (more may be needed).
    #[error("cut short")]
    Short,
    /// The bytes cannot be a valid structure.
    #[error("{0}")]
    Damaged(String),
}

fn damaged<T>(why: impl Into<String>) -> Result<T, ThriftError> {
    Err(ThriftError::Damaged(why.into()))
}

/// A cursor over compact-protocol bytes.
struct Walker<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Walker<'_> {
    fn remaining(&self) -> usize {
        self.b.len() - self.pos
    }

    fn byte(&mut self) -> Result<u8, ThriftError> {
        let v = *self.b.get(self.pos).ok_or(ThriftError::Short)?;
        self.pos += 1;
        Ok(v)
    }

    fn skip_bytes(&mut self, n: usize) -> Result<(), ThriftError> {
        if n > self.remaining() {
            return Err(ThriftError::Short);
        }
        self.pos += n;
        Ok(())
    }

    fn varint(&mut self) -> Result<u64, ThriftError> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return damaged("a varint overflows 64 bits");
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        damaged("a varint longer than 10 bytes")
    }

    fn zigzag(&mut self) -> Result<i64, ThriftError> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A length (list size, binary length) that must fit in the bytes left: every element takes at
    /// least one byte.
    fn length(&mut self, what: &str) -> Result<usize, ThriftError> {
        let n = self.varint()?;
        if n > self.remaining() as u64 {
            return if n > (1 << 31) {
                damaged(format!("a {what} length of {n} (larger than the data)"))
            } else {
                // Could still be a cut read of a real structure; the caller decides.
                Err(ThriftError::Short)
            };
        }
        Ok(n as usize)
    }

    /// Skip one value of compact type `ty`.
    fn skip(&mut self, ty: u8, depth: u32) -> Result<(), ThriftError> {
        if depth > MAX_DEPTH {
            return damaged("nesting deeper than 64 levels");
        }
        match ty {
            1 | 2 => Ok(()),
            3 => self.skip_bytes(1),
            4..=6 => self.varint().map(|_| ()),
            7 => self.skip_bytes(8),
            8 => {
                let n = self.length("binary")?;
                self.skip_bytes(n)
            }
            9 | 10 => self.skip_list(depth),
            11 => self.skip_map(depth),
            12 => self.skip_struct(depth),
            13 => self.skip_bytes(16),
            t => damaged(format!("unknown Thrift type {t}")),
        }
    }

    fn skip_list(&mut self, depth: u32) -> Result<(), ThriftError> {
        let head = self.byte()?;
        let ty = head & 0x0f;
        let n = if head >> 4 == 15 { self.length("list")? } else { usize::from(head >> 4) };
        for _ in 0..n {
            if ty == 1 || ty == 2 {
                // Booleans in a container take one byte each.
                self.skip_bytes(1)?;
            } else {
                self.skip(ty, depth + 1)?;
            }
        }
        Ok(())
    }

    fn skip_map(&mut self, depth: u32) -> Result<(), ThriftError> {
        let n = self.length("map")?;
        if n == 0 {
            return Ok(());
        }
        let kv = self.byte()?;
        for _ in 0..n {
            for ty in [kv >> 4, kv & 0x0f] {
                if ty == 1 || ty == 2 { self.skip_bytes(1)? } else { self.skip(ty, depth + 1)? }
            }
        }
        Ok(())
    }

    /// The next field header of a struct: (field id, compact type), or None at its end.
    fn field(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>, ThriftError> {
        let h = self.byte()?;
        if h == 0 {
            return Ok(None);
        }
        let ty = h & 0x0f;
        let delta = h >> 4;
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).or_else(|_| damaged("a field id out of range"))?
        } else {
            last.saturating_add(i16::from(delta))
        };
        *last = id;
        Ok(Some((id, ty)))
    }

    fn skip_struct(&mut self, depth: u32) -> Result<(), ThriftError> {
        let mut last = 0i16;
        while let Some((_, ty)) = self.field(&mut last)? {
            self.skip(ty, depth + 1)?;
        }
        Ok(())
    }
}

/// The position after the value of compact type `ty` that starts at `pos` in `bytes`, walked with
/// the same checks as the footer (for tools that edit Thrift bytes, like the tests' damaged files).
pub fn skip_value(bytes: &[u8], pos: usize, ty: u8) -> Result<usize, ThriftError> {
    let mut w = Walker { b: bytes, pos };
    w.skip(ty, 0)?;
    Ok(w.pos)
}

/// The varint at `pos` in `bytes`: its value and the position after it.
pub fn varint_at(bytes: &[u8], pos: usize) -> Result<(u64, usize), ThriftError> {
    let mut w = Walker { b: bytes, pos };
    let v = w.varint()?;
    Ok((v, w.pos))
}

/// Check that `bytes` hold exactly one well-formed struct (a Parquet footer's `FileMetaData`) whose
/// lengths all fit inside it.
pub(crate) fn check_struct(bytes: &[u8]) -> Result<(), ThriftError> {
    let mut w = Walker { b: bytes, pos: 0 };
    match w.skip_struct(0) {
        Err(ThriftError::Short) => {
            Err(ThriftError::Damaged("the footer ends inside its own structure".into()))
        }
        r => r,
    }
}

/// What a Parquet page header declares, checked by `pqbounds` before the decoder trusts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct PageHeader {
    /// Length of the header itself.
    pub header_len: usize,
    pub uncompressed: i64,
    pub compressed: i64,
    /// Values in a dictionary page (its decoder allocates them all at once).
    pub dict_values: Option<i64>,
}

/// Read the page header at the start of `bytes`: its length, its two page sizes (fields 2 and 3 of
/// `PageHeader`) and a dictionary page's value count (field 1 of field 7), with every nested
/// length checked.
pub(crate) fn page_header(bytes: &[u8]) -> Result<PageHeader, ThriftError> {
    let mut w = Walker { b: bytes, pos: 0 };
    let (mut uncompressed, mut compressed, mut dict_values) = (None, None, None);
    let mut last = 0i16;
    while let Some((id, ty)) = w.field(&mut last)? {
        match (id, ty) {
            (2, 5) => uncompressed = Some(w.zigzag()?),
            (3, 5) => compressed = Some(w.zigzag()?),
            (7, 12) => {
                let mut inner = 0i16;
                while let Some((id, ty)) = w.field(&mut inner)? {
                    match (id, ty) {
                        (1, 5) => dict_values = Some(w.zigzag()?),
                        _ => w.skip(ty, 2)?,
                    }
                }
            }
            _ => w.skip(ty, 1)?,
        }
    }
    match (uncompressed, compressed) {
        (Some(uncompressed), Some(compressed)) => {
            Ok(PageHeader { header_len: w.pos, uncompressed, compressed, dict_values })
        }
        _ => damaged("a page header without its sizes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page header: type (i32), uncompressed (i32), compressed (i32), then a data page header
    /// struct with num_values.
    fn header(uncompressed: i64, compressed: i64) -> Vec<u8> {
        let zz = |v: i64| -> Vec<u8> {
            let mut u = ((v << 1) ^ (v >> 63)) as u64;
            let mut out = Vec::new();
            loop {
                let b = (u & 0x7f) as u8;
                u >>= 7;
                if u == 0 {
                    out.push(b);
                    return out;
                }
                out.push(b | 0x80);
            }
        };
        let mut h = vec![0x15];
        h.extend(zz(0));
        h.push(0x15);
        h.extend(zz(uncompressed));
        h.push(0x15);
        h.extend(zz(compressed));
        h.push(0x2c); // field 5, struct
        h.push(0x15);
        h.extend(zz(100));
        h.push(0x00);
        h.push(0x00);
        h
    }

    #[test]
    fn page_header_sizes() {
        let h = header(4096, 512);
        let s = page_header(&h).unwrap();
        assert_eq!(
            s,
            PageHeader {
                header_len: h.len(),
                uncompressed: 4096,
                compressed: 512,
                dict_values: None
            }
        );
        let h = header(i64::from(i32::MAX), 512);
        assert_eq!(page_header(&h).unwrap().uncompressed, i64::from(i32::MAX));
        assert_eq!(page_header(&h[..3]), Err(ThriftError::Short));
        // A dictionary page header (field 7) with its value count.
        let mut d = header(4096, 512);
        let n = d.len();
        d[n - 6] = 0x4c; // field 7 (delta 4 from field 3), struct, instead of field 5
        assert_eq!(page_header(&d).unwrap().dict_values, Some(100));
    }

    #[test]
    fn lengths_beyond_the_data_are_refused() {
        // A struct whose field 1 is a binary claiming 2^40 bytes.
        let mut b = vec![0x18];
        b.extend([0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
        b.push(0);
        assert!(check_struct(&b).unwrap_err().to_string().contains("binary length"));
        // A list of structs claiming 10^6 elements in 10 bytes: cut short, never allocated.
        let mut l = vec![0x19, 0xfc, 0xc0, 0x84, 0x3d];
        l.extend([0u8; 5]);
        assert!(check_struct(&l).is_err());
        // Nesting bomb: lists of lists.
        let deep = vec![0x19; 200];
        assert!(check_struct(&deep).is_err());
        assert!(check_struct(&[0x00]).is_ok());
    }
}
