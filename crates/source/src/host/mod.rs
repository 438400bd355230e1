//! The host and the job: /proc by pread (`proc`), the job's process tree (`job`), cgroups.

pub(crate) mod cgroup;
pub(crate) mod job;
pub(crate) mod proc;
