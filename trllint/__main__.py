from trllint.app.cli import entry

entry()
