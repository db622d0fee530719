"""Whole runs: paper files in, tagged files out, nothing lost.

A local run (:mod:`.local`: rejected records reported, repeated ids warned of, resume, workers,
retag of tagged files) and a run on a Dask cluster (:mod:`.cluster`: partitions, planned and read
by :mod:`.partitions`, one part file each, a manifest; :mod:`.connection` reaches the cluster).
Reads input files through ``io``; tags with ``tagging``; hands on a summary.
"""
