"""Which device module serves which tinygrad (hcq.tinygrad._version): no tinygrad needed."""
import pytest

from hcq.tinygrad import _version


@pytest.fixture
def installed(monkeypatch):
  def set_version(v):
    monkeypatch.setattr(_version, "tinygrad_version", lambda: v)
  return set_version


@pytest.mark.parametrize("v,series,module", [("0.9.1", "0.9.1", "hcq.tinygrad.ops_hcq"), ("0.14.0", "0.14", "hcq.tinygrad.ops_hcq14"),
                                             ("0.14.2", "0.14", "hcq.tinygrad.ops_hcq14")])
def test_supported_versions_get_their_module(installed, v, series, module):
  installed(v)
  assert _version.series() == series and _version.device_module() == module


@pytest.mark.parametrize("v", ["0.9.2", "0.10.3", "0.13.0", "0.15.0", "unknown"])
def test_other_versions_get_one_error_naming_the_supported_ones(installed, v):
  installed(v)
  assert _version.series() is None
  with pytest.raises(ImportError, match=r"supports tinygrad 0\.9\.1 and 0\.14\.x; the installed tinygrad is " + v.replace(".", r"\.")):
    _version.device_module()
