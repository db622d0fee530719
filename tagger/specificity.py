"""``python -m tagger.specificity``: an older name of this command: it runs
:mod:`tagger.language.specificity`."""

import sys

from .language.specificity import main

if __name__ == "__main__":
    sys.exit(main())
