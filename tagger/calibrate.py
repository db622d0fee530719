"""``python -m tagger.calibrate``: an older name of this command: it runs
:mod:`tagger.corpus.calibrate`."""

import sys

from .corpus.calibrate import main

if __name__ == "__main__":
    sys.exit(main())
