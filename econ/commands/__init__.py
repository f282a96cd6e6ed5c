"""CLI subcommands by feature. Each module here defines `register(commands)`, which adds its
subparsers to argparse's subparsers object and sets `run=callable(args) -> int` on each. The CLI
discovers the modules, so a feature adds a command without editing econ/cli.py."""
