"""acpgen: generate a typed, stdlib-only Python binding from the Agent Client Protocol schema."""

__version__ = "0.1.0"
