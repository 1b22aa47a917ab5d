"""Type stubs for the native extension module."""

__version__: str
