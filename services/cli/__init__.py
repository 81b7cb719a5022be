"""The command line: `cardarena <command>`, one module per command group."""
