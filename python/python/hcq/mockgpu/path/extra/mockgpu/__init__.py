# extra.mockgpu as tinygrad 0.9.1's ops_amd.py imports it under MOCKGPU=1, backed by hcq-sim
# (see hcq.mockgpu); other modules of a tinygrad checkout's extra/mockgpu stay importable.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)
