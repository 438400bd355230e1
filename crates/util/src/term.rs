//! A full-screen live view on the terminal (`gpumon watch`): stdin's keys read raw, the alternate
//! screen on stdout, frames redrawn in place at the window's size, a wait for a quit key; the
//! terminal put back as it was at the end.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use rustix::termios::{
    InputModes, LocalModes, OptionalActions, SpecialCodeIndex, Termios, tcgetattr, tcsetattr,
};

/// The terminal's columns and rows (80x24 when it cannot tell).
pub fn size() -> (usize, usize) {
    match rustix::termios::tcgetwinsize(std::io::stdout()) {
        Ok(ws) if ws.ws_col > 0 && ws.ws_row > 0 => {
            (usize::from(ws.ws_col), usize::from(ws.ws_row))
        }
        _ => (80, 24),
    }
}

/// Raw mode on stdin and the alternate screen on stdout, put back as they were when dropped.
pub struct Screen {
    saved: Termios,
}

impl Screen {
    /// Keys raw (no echo, no line editing, no signals from Ctrl-C) and the alternate screen with the
    /// cursor hidden; None when stdin is not a terminal.
    pub fn enter() -> Result<Option<Screen>> {
        let Ok(mut t) = tcgetattr(std::io::stdin()) else { return Ok(None) };
        let saved = t.clone();
        t.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG | LocalModes::IEXTEN);
        t.input_modes.remove(InputModes::IXON | InputModes::ICRNL);
        t.special_codes[SpecialCodeIndex::VMIN] = 0;
        t.special_codes[SpecialCodeIndex::VTIME] = 0;
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &t);
        print!("\x1b[?1049h\x1b[?25l");
        std::io::stdout().flush().context("writing to the terminal")?;
        Ok(Some(Screen { saved }))
    }

    /// Draw the frames `next` gives for the window's (columns, rows), each followed by the wait it
    /// asks for, until `stop` is set or a quit key comes; then put the terminal back.
    pub fn show(
        self,
        stop: &AtomicBool,
        mut next: impl FnMut(usize, usize) -> (Vec<String>, Duration),
    ) -> Result<()> {
        while !stop.load(Ordering::Relaxed) {
            let (w, h) = size();
            let (lines, every) = next(w, h);
            draw(&lines)?;
            if self.quit_key(every) {
                break;
            }
        }
        Ok(())
    }

    /// Wait up to `d` for a key; true when it asks to quit (q, Q, Ctrl-C, Ctrl-D).
    fn quit_key(&self, d: Duration) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let stdin = std::io::stdin();
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        // poll(2) takes whole milliseconds.
        let ms = d.as_millis().min(i32::MAX as u128) as i64;
        let timeout = Timespec { tv_sec: ms / 1000, tv_nsec: ms % 1000 * 1_000_000 };
        if !matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0) {
            return false;
        }
        let mut buf = [0u8; 64];
        match rustix::io::read(&stdin, &mut buf) {
            // A closed stdin (0 bytes) would wake poll at once forever: quit then too.
            Ok(0) => true,
            Ok(n) => buf[..n].iter().any(|b| matches!(b, b'q' | b'Q' | 3 | 4)),
            Err(_) => false,
        }
    }
}

/// One frame over the last, in place: each line cleared to its end, the rows below it cleared.
fn draw(lines: &[String]) -> Result<()> {
    let mut out = String::from("\x1b[H");
    out.push_str(&lines.join("\x1b[K\r\n"));
    out.push_str("\x1b[K\x1b[J");
    let mut o = std::io::stdout().lock();
    o.write_all(out.as_bytes())?;
    o.flush()?;
    Ok(())
}

impl Drop for Screen {
    fn drop(&mut self) {
        print!("\x1b[?25h\x1b[?1049l");
        let _ = std::io::stdout().flush();
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}
