from acpgen.launch import entry

entry()
