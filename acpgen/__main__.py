from acpgen.cli import entry

entry()
