"""Re-vendor gitleaks' rules: `make update-rules GITLEAKS=<checkout of gitleaks>`.

Copies its config/gitleaks.toml and LICENSE into grimoire_cli/guard/data/
and writes the converted rules (gitleaks_rules.json) with the version they
came from; stops, writing nothing, on a rule that cannot be converted.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grimoire_cli.core.errors import GrimoireError  # noqa: E402
from grimoire_cli.guard.convert import convert_file  # noqa: E402

DATA = ROOT / "grimoire_cli" / "guard" / "data"


def main(checkout: str) -> int:
    source = Path(checkout)
    version = subprocess.run(
        ["git", "-C", str(source), "describe", "--tags", "--always"], capture_output=True, text=True
    ).stdout.strip()
    commit = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    try:
        rules = convert_file(
            source / "config" / "gitleaks.toml",
            f"gitleaks {version or 'unknown version'} ({commit or 'unknown commit'}), MIT licence",
        )
    except GrimoireError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    shutil.copyfile(source / "config" / "gitleaks.toml", DATA / "gitleaks.toml")
    shutil.copyfile(source / "LICENSE", DATA / "LICENSE-gitleaks")
    (DATA / "gitleaks_rules.json").write_text(json.dumps(rules, indent=0) + "\n", encoding="utf-8")
    print(f"{len(rules['rules'])} rules from {rules['source']}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python scripts/update_rules.py <checkout of github.com/gitleaks/gitleaks>", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(sys.argv[1]))
