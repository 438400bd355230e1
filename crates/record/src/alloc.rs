//! The C allocator's settings for a long recording (the sink hands freed memory back with
//! `gpumon_util::release_freed_memory` after its column passes and compressed flushes).
//!
//! glibc's malloc gives each thread that allocates its own arena (the sampler, the writer, a worker
//! per hung GPU), and the arena of a thread other than the main one gives memory back only from its
//! top, and only while the top is larger than a threshold that glibc raises each time a large block
//! is freed (the "dynamic mmap threshold"). So a recorder's resident memory followed the largest
//! blocks the writer had ever freed (a zstd context, an IPC buffer) and its arenas' fragmentation,
//! not what it holds. A recording therefore fixes the thresholds (blocks of 128 KiB or more always
//! come from `mmap` and go back at `free`) and keeps every thread in one arena, whose free pages
//! `malloc_trim` gives back wherever they are.

/// Blocks of this size or more are mapped on their own and unmapped when freed.
const MMAP_THRESHOLD: i32 = 128 << 10;

/// Free memory at the top of the heap that `free` leaves in place (the explicit trims after a row
/// group give it back): with one arena the writer's per-flush buffers otherwise grew and shrank the
/// heap with `brk` every few ticks, and faulted its pages in again each time.
const TRIM_THRESHOLD: i32 = 1 << 20;

/// Settle the allocator for a recording; call before the recording starts its threads (a thread
/// keeps the arena it first allocated from).
pub fn settle_for_recording() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's malloc parameters; it takes the arena lock itself.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;
    use std::hint::black_box;

    /// Arenas glibc has made so far (`malloc_info` lists one `<heap>` each).
    fn arenas() -> usize {
        let mut buf: *mut libc::c_char = std::ptr::null_mut();
        let mut len: libc::size_t = 0;
        // SAFETY: open_memstream/malloc_info/fclose on a stream we own; the buffer is freed once read.
        let text = unsafe {
            let f = libc::open_memstream(&mut buf, &mut len);
            assert!(!f.is_null());
            assert_eq!(libc::malloc_info(0, f), 0);
            libc::fclose(f);
            let text = String::from_utf8_lossy(std::slice::from_raw_parts(buf.cast::<u8>(), len))
                .into_owned();
            libc::free(buf.cast());
            text
        };
        text.matches("<heap nr=").count()
    }

    // Each test runs in a process of its own (nextest), so the settings do not leak into others.

    #[test]
    fn a_thread_started_after_settling_makes_no_arena_of_its_own() {
        settle_for_recording();
        let before = arenas();
        std::thread::spawn(|| drop(black_box(vec![1u8; 4096]))).join().unwrap();
        assert_eq!(arenas(), before);
    }

    #[test]
    fn a_large_block_is_still_mapped_after_a_larger_one_was_freed() {
        settle_for_recording();
        // Without a fixed threshold, freeing a mapped 4 MiB block raises it to 4 MiB.
        drop(black_box(vec![1u8; 4 << 20]));
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let before = unsafe { libc::mallinfo2() }.hblks;
        let block = black_box(vec![1u8; 512 << 10]);
        // SAFETY: mallinfo2 only reads the allocator's counters.
        assert_eq!(unsafe { libc::mallinfo2() }.hblks, before + 1);
        drop(block);
        // SAFETY: mallinfo2 only reads the allocator's counters.
        assert_eq!(unsafe { libc::mallinfo2() }.hblks, before);
    }

    #[test]
    fn freed_memory_under_the_trim_threshold_stays_in_the_heap() {
        settle_for_recording();
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let before = unsafe { libc::mallinfo2() }.arena;
        let blocks: Vec<Vec<u8>> = (0..10).map(|_| black_box(vec![1u8; 64 << 10])).collect();
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let grown = unsafe { libc::mallinfo2() }.arena;
        assert!(grown >= before + (256 << 10), "{before} -> {grown}");
        drop(blocks);
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let after = unsafe { libc::mallinfo2() }.arena;
        assert_eq!(after, grown, "640 KiB freed at the top was given back");
    }
}
