//! Byte lines of a log: `\n`-terminated with bounded memory, a UTF-8 BOM (or UTF-16LE's, whose
//! ASCII text is read by dropping its NUL bytes), CRLF endings and NUL bytes
//! (inside lines and the run a killed logger leaves at the end) removed, and whether the last line
//! was terminated (a cut last line is not).

use std::borrow::Cow;
use std::io::{self, BufRead};

/// Longest line kept; longer lines are skipped (an nvidia-smi row with every field is ~2 KiB).
pub(super) const MAX_LINE: usize = 64 * 1024;

/// Reads `\n`-terminated lines with bounded memory, dropping NUL bytes and a trailing `\r`.
pub(super) struct LineReader<R> {
    r: R,
    buf: Vec<u8>,
    no: u64,
    pub(super) bytes: u64,
    /// NUL bytes removed from inside the file (not the trailing run).
    pub(super) inner_nuls: u64,
    pub(super) inner_nul_lines: u64,
    pub(super) first_nul_line: u64,
    /// NUL bytes at the very end of the file.
    pub(super) trailing_nuls: u64,
    /// The file starts with a UTF-16LE byte order mark (PowerShell 5's `>`): its NUL bytes are the
    /// high halves of ASCII characters, not damage.
    pub(super) utf16: bool,
}

pub(super) struct LineInfo {
    pub(super) no: u64,
    pub(super) terminated: bool,
    pub(super) overlong: bool,
}

impl<R: BufRead> LineReader<R> {
    pub(super) fn new(r: R) -> Self {
        LineReader {
            r,
            buf: Vec::new(),
            no: 0,
            bytes: 0,
            inner_nuls: 0,
            inner_nul_lines: 0,
            first_nul_line: 0,
            trailing_nuls: 0,
            utf16: false,
        }
    }

    pub(super) fn next_line(&mut self) -> io::Result<Option<LineInfo>> {
        self.buf.clear();
        let mut any = false;
        let mut nuls = 0u64;
        let mut trailing = 0u64;
        let mut overlong = false;
        let terminated = loop {
            let chunk = match self.r.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break false;
            }
            any = true;
            let (part, nl) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            if part.contains(&0) {
                for &b in part {
                    if b == 0 {
                        nuls += 1;
                        trailing += 1;
                    } else {
                        trailing = 0;
                        if self.buf.len() < MAX_LINE {
                            self.buf.push(b);
                        } else {
                            overlong = true;
                        }
                    }
                }
            } else if !part.is_empty() {
                trailing = 0;
                let room = MAX_LINE.saturating_sub(self.buf.len());
                if part.len() > room {
                    overlong = true;
                }
                self.buf.extend_from_slice(&part[..part.len().min(room)]);
            }
            let used = part.len() + usize::from(nl);
            self.bytes += used as u64;
            self.r.consume(used);
            if nl {
                break true;
            }
        };
        if !any {
            return Ok(None);
        }
        self.no += 1;
        if self.no == 1 && self.buf.starts_with(b"\xFF\xFE") {
            self.utf16 = true;
        }
        if !terminated && trailing > 0 {
            self.trailing_nuls = trailing;
            nuls -= trailing;
        }
        if nuls > 0 {
            self.inner_nuls += nuls;
            self.inner_nul_lines += 1;
            if self.first_nul_line == 0 {
                self.first_nul_line = self.no;
            }
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some(LineInfo { no: self.no, terminated, overlong }))
    }

    /// Text of the line last returned by `next_line`.
    pub(super) fn text(&self) -> Cow<'_, str> {
        let b = if self.no == 1 {
            let b = self.buf.strip_prefix(b"\xFF\xFE").unwrap_or(&self.buf);
            b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b)
        } else {
            &self.buf
        };
        String::from_utf8_lossy(b)
    }
}

/// A line held back while the GPU count is inferred.
pub(super) struct Pending {
    pub(super) no: u64,
    pub(super) text: String,
    pub(super) terminated: bool,
}
