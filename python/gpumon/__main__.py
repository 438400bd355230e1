"""``python -m gpumon ARGS`` runs the gpumon command (useful when the scripts directory is not on PATH)."""

from ._bin import main

main()
