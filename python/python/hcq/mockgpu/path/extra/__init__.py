# hcq.mockgpu's stand-in for tinygrad's repository package `extra` (python -m hcq.mockgpu puts
# this directory first on PYTHONPATH). Every other `extra` directory on sys.path (a tinygrad
# checkout's) stays importable: this package's path is extended with them.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)
