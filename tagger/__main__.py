"""``python -m tagger`` and the ``tagger`` command: the command line (tagger.cli), and a Ctrl-C
while it loads ending as one that comes later does, with exit code 130 and no traceback."""

from __future__ import annotations

import sys


def run() -> None:
    try:
        from .cli import main
    except KeyboardInterrupt:
        from .errors import STOPPED

        sys.stderr.write(STOPPED.format(what="Interrupted") + "\n")
        sys.exit(130)
    main(prog_name="tagger")


if __name__ == "__main__":
    run()
