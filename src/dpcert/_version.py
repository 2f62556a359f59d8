"""The package version (a leaf module, so any layer can read it without importing the facade)."""

__version__ = "0.1.0"
