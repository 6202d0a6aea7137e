"""The model topology's logic: the rules table, launch lines, NVML discovery, probes, the example deployment and
the topology picture. Models live in :mod:`pipeline.models`; admin, views, tasks and commands only call in here."""
