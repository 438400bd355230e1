//! The host and the job: /proc by pread (`proc`), the job's process tree (`job`), cgroups.

pub mod cgroup;
pub mod job;
pub mod proc;
