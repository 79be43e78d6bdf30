"""The test kit: `acpgen inspect`, `acpgen conform agent|client` and `acpgen replay`.

A thin layer on a generated binding (its method tables and decoders) that watches, drives and
replays other ACP implementations over stdio."""
