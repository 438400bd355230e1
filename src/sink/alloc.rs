//! The C allocator's settings for a long recording, and handing freed memory back to the system.
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

/// Settle the allocator for a recording; call before the recording starts its threads (a thread
/// keeps the arena it first allocated from).
pub fn settle_for_recording() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's malloc parameters; it takes the arena lock itself.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

/// Hand the memory freed since the last call back to the system (free pages of glibc's arenas).
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of glibc's arenas to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}
