"""hcq's tinygrad device `HCQ`: `hcq.tinygrad.ops_hcq` for tinygrad 0.9.1 (`HCQ=1`) and
`hcq.tinygrad.ops_hcq14` (+ `graph14`) for tinygrad 0.14.x (`DEV=HCQ`). The import hook the wheel
installs serves the one matching the installed tinygrad as `tinygrad.runtime.ops_hcq`
(`hcq.tinygrad._version` decides; other versions get an error naming the supported ones)."""
