"""hcq's tinygrad 0.9.1 device `HCQ` (module `hcq.tinygrad.ops_hcq`, served to tinygrad as
`tinygrad.runtime.ops_hcq` by the import hook the wheel installs)."""
