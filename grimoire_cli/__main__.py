from grimoire_cli.cli.main import run

run()
