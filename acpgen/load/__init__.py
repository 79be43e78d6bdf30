"""Stage 1: read schema files, check them against the meta-schema, resolve refs, merge unstable."""

from acpgen.load.loader import LoadedSchema, SchemaFile, load_schema

__all__ = ["LoadedSchema", "SchemaFile", "load_schema"]
