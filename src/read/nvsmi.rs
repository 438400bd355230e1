//! nvidia-smi CSV log reader (in progress).
